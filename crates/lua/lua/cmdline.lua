-- sysbench.cmdline, made by the prelude when a state first reads it: the command line
-- as scripts see it, where they declare options and commands.

local core = ...
local host = core.host

local cmdline = {
  argv = host.api("argv"),
  command = host.command,
  script_path = host.script_path,
  options = {},
  commands = {},
  ARG_NULL = 0, ARG_BOOL = 1, ARG_INT = 2, ARG_SIZE = 3, ARG_DOUBLE = 4,
  ARG_STRING = 5, ARG_LIST = 6, ARG_FILE = 7,
  PARALLEL_COMMAND = true,
  read_cmdline_options = host.api("read_cmdline_options"),
  print_test_options = host.api("print_test_options"),
  -- bmk: the value an option dump shows for option `name` ("***" for a password).
  shown_value = host.api("shown_value"),
}

local commands = core.commands()
local command_function = commands.command_function
cmdline.call_command = commands.call_command

function cmdline.command_defined(name)
  return command_function(name) ~= nil
end

function cmdline.command_parallel(name)
  local f, parallel = command_function(name)
  return f ~= nil and parallel
end

return cmdline
