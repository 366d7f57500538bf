-- --luajit-cmd: a LuaJIT control command like `luajit -j CMD[=ARG,...]`: on, off and
-- flush switch the JIT; any other name starts module jit.NAME with the arguments. Run
-- by the prelude only when the option is given.

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
require("jit." .. name).start(unpack(list))
