-- bmk built-in workload bulk_insert: one event = one (n, n) row appended to a bulk INSERT into the worker's own table
-- (the common module is oltp_common.lua)

require("oltp_common")

-- prepare creates <table_name>1 .. <table_name><threads> (id, k); worker t writes
-- table t+1. cleanup drops them.

function cmd_prepare()
  init_worker_settings()
  connect_db()
  local n = sysbench.tid + 1
  local name = get_table_name(n)
  print(string.format("Creating table '%s'...", name))
  con:query(string.format("CREATE TABLE IF NOT EXISTS %s (\n  id INTEGER NOT NULL,\n"
    .. "  k INTEGER DEFAULT '0' NOT NULL,\n  PRIMARY KEY(id)\n)", name))
  con:disconnect()
end

sysbench.cmdline.commands.create = nil
sysbench.cmdline.commands.warmup = nil
sysbench.cmdline.commands.prewarm = nil

function cleanup()
  local d = sysbench.sql.driver()
  local c = d:connect()
  for n = 1, sysbench.opt.threads do
    local t = get_table_name(n)
    print(string.format("Dropping table '%s'...", t))
    c:query("DROP TABLE IF EXISTS " .. t)
  end
  c:disconnect()
end

local next_n = 0

function thread_init()
  init_worker_settings()
  connect_db()
  next_n = 0
  con:bulk_insert_init("INSERT INTO " .. get_table_name(sysbench.tid + 1) .. " VALUES")
  sync_start()
end

function event()
  next_n = next_n + 1
  con:bulk_insert_next(string.format("(%d, %d)", next_n, next_n))
end

function thread_done()
  con:bulk_insert_done()
  con:disconnect()
end
