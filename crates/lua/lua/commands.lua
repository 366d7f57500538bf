-- Finding and running a script's commands, loaded by the prelude when the Rust side
-- or sysbench.cmdline first needs it (the main state, and the states of a parallel
-- command).

local core = ...
local sb = core.sb
local type, rawget, tostring, error = type, rawget, tostring, error

local commands = {}

-- Commands that a global function of the same name implements (the classic API).
local GLOBAL_COMMANDS = { prepare = true, cleanup = true, help = true }

-- The function implementing a command and whether it is parallel: an entry of
-- sysbench.cmdline.commands, else for prepare, cleanup and help a global function of
-- that name. A script that never read sysbench.cmdline declared no commands there, so
-- it is not made for the lookup.
function commands.command_function(name)
  local cmdline = rawget(sb, "cmdline")
  local declared = type(cmdline) == "table" and cmdline.commands
  local entry = type(declared) == "table" and declared[name] or nil
  if type(entry) == "table" and type(entry[1]) == "function" then
    return entry[1], entry[2] == true
  elseif type(entry) == "function" then
    return entry, false
  end
  local global = GLOBAL_COMMANDS[name] and rawget(_G, name)
  if type(global) == "function" then
    return global, false
  end
  return nil, false
end

function commands.command_info(name)
  local f, parallel = commands.command_function(name)
  return f ~= nil, parallel
end

function commands.call_command(name)
  local f = commands.command_function(name)
  if not f then
    error(string.format("unknown command '%s'", tostring(name)), 2)
  end
  return f()
end

return commands
