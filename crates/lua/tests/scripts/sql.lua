-- sysbench.sql on a real driver (SQLite by default): `check` exercises the API and
-- asserts inside Lua; `run` classifies statements; `fatal` and `hooked` test errors.

local function connect()
  local drv = sysbench.sql.driver()
  return drv, drv:connect()
end

local T = sysbench.sql.type

local function check()
  local drv, con = connect()
  assert(drv:name() == sysbench.opt.db_driver, "driver name " .. drv:name())
  con:query("DROP TABLE IF EXISTS lua_types")
  con:query([[CREATE TABLE lua_types (
      id INTEGER PRIMARY KEY, ti SMALLINT, si SMALLINT, i INTEGER, bi BIGINT,
      f FLOAT, d DOUBLE PRECISION, tm VARCHAR(8), dt VARCHAR(10), dtm VARCHAR(19),
      ts VARCHAR(19), c VARCHAR(10), vc VARCHAR(100))]])
  local stmt = con:prepare(
    "INSERT INTO lua_types VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
  local p = {
    stmt:bind_create(T.INT), stmt:bind_create(T.TINYINT), stmt:bind_create(T.SMALLINT),
    stmt:bind_create(T.INT), stmt:bind_create(T.BIGINT), stmt:bind_create(T.FLOAT),
    stmt:bind_create(T.DOUBLE), stmt:bind_create(T.VARCHAR, 8),
    stmt:bind_create(T.VARCHAR, 10), stmt:bind_create(T.VARCHAR, 19),
    stmt:bind_create(T.VARCHAR, 19), stmt:bind_create(T.CHAR, 10),
    stmt:bind_create(T.VARCHAR, 5),
  }
  -- As in sysbench, times and dates are bound as strings: their types are refused.
  for _, ty in ipairs({ T.NONE, T.TIME, T.DATE, T.DATETIME, T.TIMESTAMP }) do
    local ok, err = pcall(stmt.bind_create, stmt, ty)
    assert(not ok and err == "Unsupported argument type: " .. ty, tostring(err))
  end
  stmt:bind_param(unpack(p))
  local values = {1, 7, 300, 70000, 5000000000, 1.5, 2.25, "12:34:56", "2024-02-29",
                  "2024-02-29 12:34:56", "2024-03-01 00:00:01", "chars", "truncated"}
  for i, v in ipairs(values) do p[i]:set(v) end
  assert(stmt:execute() == nil, "INSERT has no result set")
  -- NULLs in every column but the key
  p[1]:set(2)
  for i = 2, #p do p[i]:set(nil) end
  stmt:execute()
  -- random strings into the CHAR column
  p[1]:set(3)
  p[12]:set_rand_str("##-@@")
  stmt:execute()
  stmt:close()

  local rs = con:query("SELECT * FROM lua_types ORDER BY id")
  assert(rs.nrows == 3, "nrows " .. rs.nrows)
  assert(rs.nfields == 13, "nfields " .. rs.nfields)
  local row = rs:fetch_row()
  local want = {"1", "7", "300", "70000", "5000000000", "1.5", "2.25", "12:34:56",
                "2024-02-29", "2024-02-29 12:34:56", "2024-03-01 00:00:01", "chars", "trunc"}
  for i = 1, 13 do
    assert(row[i] == want[i], string.format("column %d: %s ~= %s", i, tostring(row[i]), want[i]))
  end
  row = rs:fetch_row()
  assert(row[1] == "2")
  for i = 2, 13 do assert(row[i] == nil, "NULL expected in column " .. i) end
  row = rs:fetch_row()
  assert(row[12]:match("^%d%d%-%l%l$"), "rand str " .. tostring(row[12]))
  assert(rs:fetch_row() == nil, "no fourth row")
  rs:free()

  -- values of every Lua type convert to the parameter's type
  con:query("DROP TABLE IF EXISTS lua_conv")
  con:query("CREATE TABLE lua_conv (id INTEGER PRIMARY KEY, b BIGINT, v VARCHAR(20))")
  local ins = con:prepare("INSERT INTO lua_conv VALUES (?, ?, ?)")
  local q = { ins:bind_create(T.INT), ins:bind_create(T.BIGINT), ins:bind_create(T.VARCHAR, 20) }
  ins:bind_param(unpack(q))
  q[1]:set(1); q[2]:set(9000000000LL); q[3]:set(2.5); ins:execute()
  q[1]:set(2); q[2]:set(true); q[3]:set(42); ins:execute()
  q[1]:set("3"); q[2]:set("77"); q[3]:set(12345678901234567890ULL); ins:execute()
  q[1]:set(4); q[2]:set(nil); q[3]:set(string.rep("x", 30)); ins:execute()
  -- a statement's result set is one object, refilled by every execution
  local sel = con:prepare("SELECT b, v FROM lua_conv WHERE id = ?")
  local sp = sel:bind_create(T.INT)
  sel:bind_param(sp)
  sp:set(1)
  local rs1 = sel:execute()
  assert(rs1.nrows == 1 and rs1.nfields == 2, "select nrows/nfields")
  local r = rs1:fetch_row()
  assert(r[1] == "9000000000" and r[2] == "2.5", "row 1: " .. tostring(r[1]) .. " " .. tostring(r[2]))
  assert(rs1:fetch_row() == nil, "one row")
  sp:set(2)
  local rs2 = sel:execute()
  assert(rs2 == rs1, "one result set per statement")
  r = rs2:fetch_row()
  assert(r[1] == "1" and r[2] == "42", "row 2: " .. tostring(r[1]) .. " " .. tostring(r[2]))
  sp:set(3)
  r = sel:execute():fetch_row()
  assert(r[1] == "77" and r[2] == "12345678901234567890", "row 3: " .. tostring(r[2]))
  sp:set(4)
  r = sel:execute():fetch_row()
  assert(r[1] == nil and r[2] == string.rep("x", 20), "row 4: " .. tostring(r[2]))
  sp:set(5)
  assert(sel:execute().nrows == 0, "no row 5")
  sp:set(1)
  rs1 = sel:execute()
  rs1:free()
  assert(rs1.nrows == 0 and rs1:fetch_row() == nil, "freed")
  sel:close()
  -- a query result stays valid while statements of the connection execute
  local qrs = con:query("SELECT id FROM lua_conv ORDER BY id")
  sp:set(2)
  ins:close()
  assert(qrs.nrows == 4 and qrs:fetch_row()[1] == "1", "query result set")

  -- query_row returns the values as multiple results, NULL as nil
  local a, b, c = con:query_row("SELECT 1, NULL, 'x'")
  assert(a == "1" and b == nil and c == "x")
  assert(con:query_row("SELECT 1 WHERE 1 = 0") == nil)

  -- bulk insert
  con:query("DROP TABLE IF EXISTS lua_bulk")
  con:query("CREATE TABLE lua_bulk (id INTEGER, v VARCHAR(64))")
  con:bulk_insert_init("INSERT INTO lua_bulk (id, v) VALUES")
  for i = 1, 20000 do
    con:bulk_insert_next(string.format("(%d, '%s')", i, sysbench.rand.varstring(40, 60)))
  end
  con:bulk_insert_done()
  local n = con:query_row("SELECT COUNT(*) FROM lua_bulk")
  assert(n == "20000", "bulk rows " .. tostring(n))

  -- generated rows (bmk extension): the driver's cheapest way in
  con:query("DROP TABLE IF EXISTS lua_generated")
  con:query("CREATE TABLE lua_generated (id INTEGER PRIMARY KEY, k INTEGER, c VARCHAR(20), "
    .. "t VARCHAR(10))")
  local got = con:insert_generated("lua_generated", {
    { "id", "seq", 101 }, { "k", "rand", 7 }, { "c", "template", "##-@@" },
    { "t", "text", "a\tb" } }, 2500)
  assert(got == 2500, "generated rows " .. tostring(got))
  local lo, hi, kmin, kmax = con:query_row(
    "SELECT MIN(id), MAX(id), MIN(k), MAX(k) FROM lua_generated")
  assert(lo == "101" and hi == "2600", "ids " .. lo .. ".." .. hi)
  assert(tonumber(kmin) >= 1 and tonumber(kmax) <= 7, "k " .. kmin .. ".." .. kmax)
  local c, t = con:query_row("SELECT c, t FROM lua_generated WHERE id = 2000")
  assert(c:match("^%d%d%-%l%l$") and t == "a\tb", "row " .. c .. " " .. t)
  assert(not pcall(con.insert_generated, con, "lua_generated", { { "id", "uuid", 1 } }, 1),
    "unknown column kinds are errors")

  assert(con:more_results() == false)
  con:reconnect()
  assert(con:query_row("SELECT COUNT(*) FROM lua_types") == "3")
  con:disconnect()
  print("sql ok")
end

-- The run: each event reads one row and changes one, in a transaction.
local drv, con, select_stmt, id_param

function thread_init()
  drv, con = connect()
  select_stmt = con:prepare("SELECT COUNT(*) FROM lua_bulk WHERE id = ?")
  id_param = select_stmt:bind_create(T.INT)
  select_stmt:bind_param(id_param)
end

function event()
  con:query("BEGIN")
  id_param:set(sysbench.rand.uniform(1, 20000))
  local rs = select_stmt:execute()
  assert(rs:fetch_row()[1] == "1")
  -- Each UPDATE changes its row, whatever the row holds: MySQL counts an UPDATE that
  -- changes nothing as `other`, and two events, or two runs on the same table, may pick
  -- the same id.
  con:query(string.format(
    "UPDATE lua_bulk SET v = CASE WHEN v = 'a' THEN 'b' ELSE 'a' END WHERE id = %d",
    sysbench.rand.uniform(1, 20000)))
  con:query("COMMIT")
end

function thread_done()
  con:disconnect()
end

local fails = 0
sysbench.cmdline.commands = {
  check = {check},
  fatal = {function()
    local _, c = connect()
    c:query("SELECT * FROM no_such_table")
  end},
  hooked = {function()
    -- A fatal error made ignorable by the hook: the errdesc is raised for a restart.
    sysbench.hooks.sql_error_ignorable = function(err)
      fails = fails + 1
      assert(err.sql_errmsg ~= nil and err.query ~= nil)
      return true
    end
    local _, c = connect()
    local ok, err = pcall(c.query, c, "SELECT * FROM no_such_table")
    assert(not ok and type(err) == "table", "errdesc raised")
    assert(err.errcode == sysbench.error.RESTART_EVENT)
    assert(err.connection == c and err.query == "SELECT * FROM no_such_table")
    assert(err.sql_errno ~= nil and err.sql_state ~= nil)
    print("hooked ok " .. fails)
  end},
}
