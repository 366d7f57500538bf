-- A driver that panics in each worker's second event (the SQLite driver built with
-- bmk-sql's `test-panic` feature): the worker fails with the panic's message.
local con
local events = 0

function thread_init()
  con = sysbench.sql.driver():connect()
end

function event()
  events = events + 1
  con:query("SELECT 1")
  if events == 2 then
    con:query("SELECT 'bmk-test: panic'")
  end
end
