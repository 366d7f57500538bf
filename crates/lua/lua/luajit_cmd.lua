-- --luajit-cmd: a LuaJIT control command like `luajit -j CMD[=ARG,...]`: on, off and
-- flush switch the JIT; any other name starts module jit.NAME with the arguments. Run
-- by the prelude only when the option is given. A name that is neither a switch nor a
-- module fails with the one line sysbench prints for it.

local cmd = ...
local name, args = cmd:match("^([%w_]+)=?(.*)$")
if not name then
  error("invalid value '" .. cmd .. "' for option --luajit-cmd", 0)
end
if name == "on" or name == "off" or name == "flush" then
  jit[name]()
  return
end
local list = {}
for a in args:gmatch("[^,]+") do
  list[#list + 1] = a
end
local found, module = pcall(require, "jit." .. name)
if not found then
  if type(module) == "string" and module:sub(1, 7) == "module " then
    error("FATAL: unknown luaJIT command or jit.* modules not installed", 0)
  end
  error(module, 0)
end
module.start(unpack(list))
