-- bmk built-in workload select_random_ranges: one event = SELECT count(k) ... WHERE k BETWEEN ? AND ? OR ... (number_of_ranges ranges)
-- (the common module is oltp_common.lua)

require("oltp_common")

sysbench.cmdline.options.number_of_ranges =
  { "Number of random BETWEEN ranges", 10, sysbench.cmdline.ARG_INT }
sysbench.cmdline.options.delta =
  { "Size of each BETWEEN range", 5, sysbench.cmdline.ARG_INT }

-- Only the first table is used. A larger --tables is accepted, as sysbench accepts it
-- in `run`: sweeps pass one option set to every workload.
function prepare_statements()
  local n = sysbench.opt.number_of_ranges
  local conds = {}
  for i = 1, n do
    conds[i] = "k BETWEEN ? AND ?"
  end
  stmt.random_ranges = con:prepare(string.format("SELECT count(k) FROM %s WHERE %s",
    get_table_name(1), table.concat(conds, " OR ")))
  param.random_ranges = {}
  for i = 1, 2 * n do
    param.random_ranges[i] = stmt.random_ranges:bind_create(sysbench.sql.type.INT)
  end
  stmt.random_ranges:bind_param(unpack(param.random_ranges))
end

function close_statements()
  if stmt.random_ranges then
    stmt.random_ranges:close()
    stmt.random_ranges = nil
  end
end

local slice_lo, slice_hi

function event()
  if slice_lo == nil then
    local L = math.floor(sysbench.opt.table_size / sysbench.opt.threads)
    slice_lo = sysbench.tid * L
    slice_hi = slice_lo + L
  end
  local p = param.random_ranges
  local delta = sysbench.opt.delta
  for i = 1, sysbench.opt.number_of_ranges do
    local a = sysbench.rand.default(slice_lo, slice_hi)
    p[2 * i - 1]:set(a)
    p[2 * i]:set(a + delta)
  end
  stmt.random_ranges:execute()
  check_reconnect()
end
