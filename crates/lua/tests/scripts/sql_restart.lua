-- An ignorable SQL error restarts the event: the first INSERT fails (no table), the
-- restart hook creates the table, and the retried event succeeds.
local con

function thread_init()
  con = sysbench.sql.driver():connect()
  con:query("DROP TABLE IF EXISTS lazy")
end

sysbench.hooks.before_restart_event = function(err)
  assert(err.errcode == sysbench.error.RESTART_EVENT)
  assert(err.connection == con and err.query == "INSERT INTO lazy VALUES (1)")
  con:query("CREATE TABLE lazy (x INTEGER)")
end

function event()
  con:query("INSERT INTO lazy VALUES (1)")
end

function thread_done()
  print("rows " .. con:query_row("SELECT COUNT(*) FROM lazy"))
end
