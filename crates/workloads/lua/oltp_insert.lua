-- bmk built-in workload oltp_insert: one event = one plain-text INSERT into a random table, no transaction
-- (the common module is oltp_common.lua)

require("oltp_common")

-- With --auto-inc=off ids are client-generated (rand.unique() - 2^31), so prepare
-- creates empty tables.
local common_prepare = cmd_prepare
cmd_prepare = function()
  if not sysbench.opt.auto_inc then
    sysbench.opt.table_size = 0
  end
  return common_prepare()
end

function prepare_statements()
  -- plain-text INSERTs only
end

function event()
  execute_extra_query_before()
  local tnum = get_table_num()
  local k = sysbench.rand.default(1, sysbench.opt.table_size)
  local c = get_c_value()
  local pad = get_pad_value()
  if sysbench.opt.auto_inc and not explicit_ids() then
    con:query(insert_auto_id_sql(tnum, k, c, pad))
  else
    con:query(string.format("INSERT INTO %s (id, k, c, pad) VALUES (%d, %d, '%s', '%s')",
      get_table_name(tnum), sysbench.rand.unique() - 2147483648, k, c, pad))
  end
  execute_extra_query_after()
  check_reconnect()
end
