-- bmk built-in workload oltp_update_non_index: one event = non-index updates (default 1), no transaction
-- (the common module is oltp_common.lua)

require("oltp_common")

function prepare_statements()
  prepare_non_index_updates()
end

function event()
  execute_extra_query_before()
  execute_non_index_updates()
  execute_extra_query_after()
  check_reconnect()
end
