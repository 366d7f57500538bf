-- Finding and running a script's commands, loaded by the prelude when the Rust side
-- or sysbench.cmdline first needs it (the main state, and the states of a parallel
-- command).

local core = ...
local sb = core.sb
local type, rawget, tostring, error = type, rawget, tostring, error

local commands = {}

-- Commands that a global function of the same name implements (the classic API).
local GLOBAL_COMMANDS = { prepare = true, cleanup = true, help = true }

-- The function implementing a command, whether it is parallel and whether it is a
-- custom command: an entry of sysbench.cmdline.commands (custom), else for prepare,
-- cleanup and help a global function of that name. A script that never read
-- sysbench.cmdline declared no commands there, so it is not made for the lookup.
function commands.command_function(name)
  local cmdline = rawget(sb, "cmdline")
  local declared = type(cmdline) == "table" and cmdline.commands
  local entry = type(declared) == "table" and declared[name] or nil
  if type(entry) == "table" and type(entry[1]) == "function" then
    return entry[1], entry[2] == true, true
  elseif type(entry) == "function" then
    return entry, false, true
  end
  local global = GLOBAL_COMMANDS[name] and rawget(_G, name)
  if type(global) == "function" then
    return global, false, false
  end
  return nil, false, false
end

function commands.command_info(name)
  local f, parallel, custom = commands.command_function(name)
  return f ~= nil, parallel, custom
end

-- Runs a command; true unless it returned false (or nil from a command that returned
-- a value: any value but false and nil is success, as in sysbench).
function commands.call_command(name)
  local f = commands.command_function(name)
  if not f then
    error(string.format("unknown command '%s'", tostring(name)), 2)
  end
  local rc = f()
  if rc == nil then
    return true
  end
  return rc and true or false
end

return commands
