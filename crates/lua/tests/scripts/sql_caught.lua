-- Fatal SQL errors a script catches with pcall and goes on: each failed statement
-- counts as an error of the run, as in sysbench 1.0.20 (two per event here).
local con

function thread_init()
  con = sysbench.sql.driver():connect()
end

function event()
  for _ = 1, 2 do
    local ok = pcall(con.query, con, "SELECT * FROM no_such_table")
    assert(not ok)
  end
  con:query("SELECT 1")
end
