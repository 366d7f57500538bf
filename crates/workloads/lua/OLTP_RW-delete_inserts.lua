-- bmk built-in workload OLTP_RW-delete_inserts (BMK kit):
-- one event = BEGIN; --delete-inserts (at least 1) DELETE + INSERT pairs; COMMIT.
-- Users are pinned to tables by default, as in the BMK kit.

require("oltp_common")

sysbench.cmdline.options.pin_tables[2] = true

function prepare_statements()
  if sysbench.opt.delete_inserts < 1 then
    sysbench.opt.delete_inserts = 1
  end
  prepare_begin()
  prepare_commit()
  prepare_delete_inserts()
end

function event()
  execute_extra_query_before()
  begin()
  execute_delete_inserts()
  commit()
  execute_extra_query_after()
end
