-- bmk built-in workload OLTP_RW-inserts_only (BMK kit):
-- one event = --inserts-only (at least 1) auto-increment INSERTs, no transaction.
-- Users are pinned to tables by default, as in the BMK kit.

require("oltp_common")

sysbench.cmdline.options.pin_tables[2] = true

function prepare_statements()
  if sysbench.opt.inserts_only < 1 then
    sysbench.opt.inserts_only = 1
  end
end

function event()
  execute_extra_query_before()
  execute_inserts_only()
  execute_extra_query_after()
end
