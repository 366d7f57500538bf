-- sysbench.rand, made by the prelude when a state first reads it: the random number
-- functions over the engine's per-thread generator (FFI calls LuaJIT compiles inline).

local core = ...
local ffi = require("ffi")
local C = core.C

local function max(a, b)
  if a > b then
    return a
  end
  return b
end

-- One buffer per state for generated strings, grown as needed.
local strbuf, strbuf_len = nil, 0
local function scratch(n)
  if n > strbuf_len then
    strbuf_len = max(max(n, 2 * strbuf_len), 256)
    strbuf = ffi.new("char[?]", strbuf_len)
  end
  return strbuf
end

local rand = {
  uniform = function(a, b) return C.sb_rand_uniform(a, b) end,
  default = function(a, b) return C.sb_rand_default(a, b) end,
  gaussian = function(a, b) return C.sb_rand_gaussian(a, b) end,
  pareto = function(a, b) return C.sb_rand_pareto(a, b) end,
  zipfian = function(a, b) return C.sb_rand_zipfian(a, b) end,
  unique = function() return C.sb_rand_unique() end,
  uniform_uint64 = function() return C.sb_rand_uniform_uint64() end,
  uniform_double = function() return C.sb_rand_uniform_double() end,
  string = function(fmt)
    local n = #fmt
    local buf = scratch(n)
    C.sb_rand_str(fmt, buf)
    return ffi.string(buf, n)
  end,
  varstring = function(min_len, max_len)
    -- The same preconditions as sysbench's (and its "assertion failed!" message): the C
    -- side takes both lengths as unsigned, so a negative one would become huge.
    assert(min_len <= max_len)
    assert(max_len > 0)
    local buf = scratch(max_len)
    local n = C.sb_rand_varstr(buf, min_len, max_len)
    return ffi.string(buf, n)
  end,
}

-- sysbench 1.1 removed the "special" distribution from the API; 1.0 scripts call it.
if core.host.api_1_0 then
  rand.special = function(a, b) return C.sb_rand_special(a, b) end
end

return rand
