-- A point select per event on table `ps` of --rows rows, which `prepare` makes: for
-- runs with many workers.
sysbench.cmdline.options = {
  rows = {"rows of the table", 1000},
}

local con, stmt, id

function prepare()
  local c = sysbench.sql.driver():connect()
  c:query("DROP TABLE IF EXISTS ps")
  c:query("CREATE TABLE ps (id INTEGER PRIMARY KEY, v VARCHAR(20))")
  c:query("BEGIN")
  for i = 1, sysbench.opt.rows do
    c:query(string.format("INSERT INTO ps VALUES (%d, 'v%d')", i, i))
  end
  c:query("COMMIT")
end

function thread_init()
  con = sysbench.sql.driver():connect()
  stmt = con:prepare("SELECT v FROM ps WHERE id = ?")
  id = stmt:bind_create(sysbench.sql.type.INT)
  stmt:bind_param(id)
end

function event()
  local key = sysbench.rand.uniform(1, sysbench.opt.rows)
  id:set(key)
  local row = stmt:execute():fetch_row()
  assert(row[1] == "v" .. key, "wrong row for " .. key)
end

function thread_done()
  con:disconnect()
end
