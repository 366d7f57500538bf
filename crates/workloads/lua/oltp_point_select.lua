-- bmk built-in workload oltp_point_select: one event = one point select, no transaction
-- (the common module is oltp_common.lua)

require("oltp_common")

sysbench.cmdline.options.point_selects[2] = 1

-- One point select per event whatever --point-selects says, as in sysbench, where the
-- option is common to the family and this workload overrides it: a sweep that passes
-- one option set to every workload gets the same events as there.
function prepare_statements()
  sysbench.opt.point_selects = 1
  prepare_point_selects()
end

function event()
  execute_extra_query_before()
  execute_point_selects()
  execute_extra_query_after()
  check_reconnect()
end
