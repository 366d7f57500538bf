-- Libraries that open on first use behave like plain Lua 5.1 globals and modules.
local unopened = rawget(_G, "math") == nil and rawget(_G, "table") == nil
assert(math.floor(2.5) == 2, "math through a global read")
assert(rawget(_G, "math") == math, "the global stays once opened")
assert(require("table") == table, "require of a lazy library")
assert(require("bit").bor(1, 2) == 3, "bit through require")
assert(package.loaded.os == nil or package.loaded.os == os)
local jit_util = require("jit.util")
assert(type(jit_util.funcinfo) == "function", "jit.util through require")
assert(type(require("jit.opt").start) == "function", "jit.opt through require")
assert(jit.status(), "the compiler is on")
-- A script defining a global named like a library keeps its own value.
io = { mine = true }
assert(io.mine, "a script's global wins")
-- Strict-mode scripts take over _G's metatable: every library is there first.
local mt = getmetatable(_G)
setmetatable(_G, { __index = function(_, k) error("undeclared global " .. k, 2) end })
assert(type(debug.traceback) == "function" and os.time() > 0, "libraries opened before")
local ok = pcall(function() return undeclared_name end)
assert(not ok, "the script's metatable is in effect")
setmetatable(_G, mt)
print(string.format("lazy libraries ok (unopened at start: %s)", tostring(unopened)))

function event()
  return true
end
