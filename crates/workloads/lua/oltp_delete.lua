-- bmk built-in workload oltp_delete: one event = one DELETE by random id, no transaction
-- (the common module is oltp_common.lua)

require("oltp_common")

function prepare_statements()
  prepare_for_each_table("deletes")
end

function event()
  execute_extra_query_before()
  local tnum = get_table_num()
  param[tnum].deletes[1]:set(get_id())
  stmt[tnum].deletes:execute()
  execute_extra_query_after()
  check_reconnect()
end
