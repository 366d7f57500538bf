-- Checks ranges, means and shapes of sysbench.rand.* inside Lua; `draws` prints a
-- seed-dependent sequence; `uniques` prints this thread's unique() values.
local function stats(f, n, a, b)
  local sum, lo, hi = 0, math.huge, -math.huge
  local counts = {}
  for _ = 1, n do
    local v = f(a, b)
    assert(v >= a and v <= b, "out of range: " .. v)
    assert(v == math.floor(v), "not an integer: " .. v)
    sum = sum + v
    lo, hi = math.min(lo, v), math.max(hi, v)
    counts[v] = (counts[v] or 0) + 1
  end
  return sum / n, lo, hi, counts
end

local function near(x, want, tol, what)
  assert(math.abs(x - want) <= tol,
    string.format("%s: got %.4f, want %.4f +- %.4f", what, x, want, tol))
end

sysbench.cmdline.commands = {
  check = {function()
    local r = sysbench.rand
    local n = 200000
    -- uniform: mean (a+b)/2, every value reached, flat
    local mean, lo, hi, counts = stats(r.uniform, n, 1, 100)
    near(mean, 50.5, 0.5, "uniform mean")
    assert(lo == 1 and hi == 100, "uniform covers the range")
    for v = 1, 100 do near(counts[v] / n, 0.01, 0.002, "uniform bucket " .. v) end
    -- gaussian: mean in the middle, most mass near it
    mean, lo, hi, counts = stats(r.gaussian, n, 1, 100)
    near(mean, 50.5, 0.5, "gaussian mean")
    local middle = 0
    for v = 40, 61 do middle = middle + (counts[v] or 0) end
    assert(middle / n > 0.6, "gaussian concentrated: " .. middle / n)
    -- pareto: skewed to the low end (h=0.2: 80% of draws in the lowest 20%)
    mean, lo, hi, counts = stats(r.pareto, n, 1, 1000)
    local low = 0
    for v = 1, 200 do low = low + (counts[v] or 0) end
    near(low / n, 0.8, 0.03, "pareto share of lowest 20%")
    -- zipfian: the first value is the most frequent and frequencies fall
    mean, lo, hi, counts = stats(r.zipfian, n, 1, 1000)
    assert((counts[1] or 0) > (counts[2] or 0) and (counts[2] or 0) > (counts[10] or 0),
      "zipfian decreasing")
    assert(mean < 400, "zipfian skewed: mean " .. mean)
    -- special: the 1% at the centre of the range gets most draws
    -- (sysbench.rand.special is the 1.0 API; the generator stays for --rand-type)
    local special = r.special or function(a, b) return require("ffi").C.sb_rand_special(a, b) end
    mean, lo, hi, counts = stats(special, n, 1, 10000)
    local hot = 0
    for v = 4950, 5051 do hot = hot + (counts[v] or 0) end
    assert(hot / n > 0.7, "special hot share " .. hot / n)
    near(mean, 5000, 100, "special mean")
    -- default follows --rand-type (uniform here)
    mean = stats(r.default, n, 1, 100)
    near(mean, 50.5, 0.5, "default mean")
    -- doubles
    local sum = 0
    for _ = 1, n do
      local d = r.uniform_double()
      assert(d >= 0 and d < 1)
      sum = sum + d
    end
    near(sum / n, 0.5, 0.01, "uniform_double mean")
    -- 64-bit
    local x = r.uniform_uint64()
    assert(type(x) == "cdata", "uniform_uint64 is a uint64_t cdata")
    -- strings
    for _ = 1, 1000 do
      local s = r.string("###-@@@-x")
      assert(#s == 9 and s:match("^%d%d%d%-%l%l%l%-x$"), "string: " .. s)
      local v = r.varstring(5, 12)
      assert(#v >= 5 and #v <= 12 and v:match("^[0-9a-z]+$"), "varstring: " .. v)
    end
    assert(#r.string(string.rep("@", 1000)) == 1000)
    print("rand ok")
  end},
  draws = {function()
    local out = {}
    for _ = 1, 20 do out[#out + 1] = sysbench.rand.uniform(1, 1000000000) end
    out[#out + 1] = sysbench.rand.string("@@@@####")
    out[#out + 1] = sysbench.rand.varstring(3, 20)
    print("tid " .. sysbench.tid .. ": " .. table.concat(out, " "))
  end, sysbench.cmdline.PARALLEL_COMMAND},
  uniques = {function()
    local out = {}
    for i = 1, 20000 do out[i] = sysbench.rand.unique() end
    print("uniques " .. table.concat(out, " "))
  end, sysbench.cmdline.PARALLEL_COMMAND},
}
