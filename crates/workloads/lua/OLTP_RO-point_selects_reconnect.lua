-- bmk built-in workload OLTP_RO-point_selects_reconnect: the BMK-kit re-connect point-select workload
-- (the common module is oltp_common.lua)

require("oltp_common")

-- One event: extra_query_before; pick the table; disconnect and open a new
-- connection (session options are not re-applied); BEGIN unless --skip-trx; then
-- point_selects plain-text (never prepared) point selects; COMMIT; extra_query_after.
-- Users are pinned to tables by default, as in the BMK kit.
sysbench.cmdline.options.point_selects[2] = 1
sysbench.cmdline.options.pin_tables[2] = true

function prepare_statements()
  -- plain-text queries only: prepared statements make no sense here
end

function event()
  execute_extra_query_before()
  local tnum = get_table_num()
  con:disconnect()
  con = drv:connect()
  local trx = not sysbench.opt.skip_trx
  if trx then
    con:query("BEGIN")
  end
  for _ = 1, sysbench.opt.point_selects do
    con:query(string.format(point_select_text, tnum, get_id()))
    after_each_query()
  end
  if trx then
    con:query("COMMIT")
  end
  execute_extra_query_after()
end
