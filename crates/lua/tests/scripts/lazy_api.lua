-- Parts of the API that a state makes on first use behave like plain tables.
local sb = sysbench
local fresh = rawget(sb, "rand") == nil and rawget(sb, "cmdline") == nil
  and rawget(sb, "sql") == nil and rawget(sb.opt, "threads") == nil

-- A first read makes the field, and it stays.
assert(type(sb.rand.uniform) == "function", "sysbench.rand on first read")
assert(rawget(sb, "rand") == sb.rand, "the field stays once made")
assert(sb.sql.type.INT == 3 and type(sb.sql.driver) == "function", "sysbench.sql")
assert(type(sb.histogram.new) == "function", "sysbench.histogram")

-- pairs and next see every field and every option.
local fields = {}
for k in pairs(sb) do
  fields[k] = true
end
for _, k in ipairs({ "version", "version_string", "tid", "opt", "error", "hooks", "cmdline",
  "rand", "sql", "histogram", "report_default", "report_csv", "report_json" }) do
  assert(fields[k], "pairs(sysbench) lists " .. k)
end
local options = {}
for k, v in pairs(sb.opt) do
  options[k] = v
end
assert(options.threads == 2 and options.time == 0, "pairs(sysbench.opt) lists the options")
assert(next(sb.opt) ~= nil, "next(sysbench.opt)")

-- Options read like plain values; unknown names and dashed spellings are nil.
assert(sb.opt.threads == 2)
assert(sb.opt.no_such_option == nil and sb.opt.no_such_option == nil)
assert(sb.opt["lazy-flag"] == nil, "only the underscore spelling")
sb.opt.my_value = 5
assert(sb.opt.my_value == 5, "scripts may add their own values")

-- Every `sb_*` FFI entry point sysbench exports is declared once a script requires ffi.
local ffi = require("ffi")
assert(ffi.C.SB_CNT_MAX == 8 and ffi.C.SB_CNT_ERROR == 4)
assert(type(ffi.C.sb_rand_uniform(1, 10)) == "number")
ffi.C.sb_counter_inc(0, ffi.C.SB_CNT_OTHER)

print(string.format("lazy api ok (untouched at start: %s)", tostring(fresh)))

sysbench.cmdline.options = { lazy_flag = { "a flag", true } }

-- Workers see the script's own options too (the main state once they are declared).
function thread_init()
  local seen = false
  for k, v in pairs(sysbench.opt) do
    seen = seen or (k == "lazy_flag" and v == true)
  end
  assert(seen and sysbench.opt.lazy_flag == true, "pairs lists the script's options")
  print("script options ok")
end

function event()
  return true
end
