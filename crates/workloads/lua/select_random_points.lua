-- bmk built-in workload select_random_points: one event = SELECT id, k, c, pad ... WHERE k IN (random_points values)
-- (the common module is oltp_common.lua)

require("oltp_common")

sysbench.cmdline.options.random_points =
  { "Number of random points in the IN() list", 10, sysbench.cmdline.ARG_INT }

-- Only the first table is used. A larger --tables is accepted, as sysbench accepts it
-- in `run`: sweeps pass one option set to every workload.
function prepare_statements()
  local n = sysbench.opt.random_points
  local marks = {}
  for i = 1, n do
    marks[i] = "?"
  end
  stmt.random_points = con:prepare(string.format(
    "SELECT id, k, c, pad FROM %s WHERE k IN (%s)", get_table_name(1),
    table.concat(marks, ", ")))
  param.random_points = {}
  for i = 1, n do
    param.random_points[i] = stmt.random_points:bind_create(sysbench.sql.type.INT)
  end
  stmt.random_points:bind_param(unpack(param.random_points))
end

function close_statements()
  if stmt.random_points then
    stmt.random_points:close()
    stmt.random_points = nil
  end
end

local slice_lo, slice_hi

function event()
  if slice_lo == nil then
    local L = math.floor(sysbench.opt.table_size / sysbench.opt.threads)
    slice_lo = sysbench.tid * L
    slice_hi = slice_lo + L
  end
  local p = param.random_points
  for i = 1, sysbench.opt.random_points do
    p[i]:set(sysbench.rand.default(slice_lo, slice_hi))
  end
  stmt.random_points:execute()
  check_reconnect()
end
