-- bmk built-in workload oltp_write_only: one event = BEGIN; index updates; non-index updates; DELETE+INSERTs; COMMIT
-- (the common module is oltp_common.lua)

require("oltp_common")

function prepare_statements()
  if not sysbench.opt.skip_trx then
    prepare_begin()
    prepare_commit()
  end
  prepare_index_updates()
  prepare_non_index_updates()
  prepare_delete_inserts()
end

function event()
  execute_extra_query_before()
  if not sysbench.opt.skip_trx then
    begin()
  end
  execute_index_updates()
  execute_non_index_updates()
  execute_delete_inserts()
  if not sysbench.opt.skip_trx then
    commit()
  end
  execute_extra_query_after()
  check_reconnect()
end
