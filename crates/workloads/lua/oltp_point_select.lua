-- bmk built-in workload oltp_point_select: one event = point selects (default 1), no transaction
-- (spec 3 §3; the common module is oltp_common.lua)

require("oltp_common")

sysbench.cmdline.options.point_selects[2] = 1

function prepare_statements()
  prepare_point_selects()
end

function event()
  execute_extra_query_before()
  execute_point_selects()
  execute_extra_query_after()
  check_reconnect()
end
