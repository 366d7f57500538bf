-- dbstress_common: options, schema, deterministic loader, statements and query groups
-- of bmk's built-in dbSTRESS workload (spec workloads-tpcc-dbstress-bmk §2), written
-- for bmk from the spec; choices are documented in docs/workloads-tpcc-dbstress.md.

local shm = require("bmk_shared")
local sync = require("SYNC_file")

local ARG_INT = sysbench.cmdline.ARG_INT
local ARG_STRING = sysbench.cmdline.ARG_STRING
local fmt = string.format
local floor = math.floor

sysbench.cmdline.options = {
  obj_table_size = { "Rows in each OBJECT table (HISTORY gets 20x)", 1000000, ARG_INT },
  obj_tables = { "Number of table sets (ZONE, STAT, SECTION, OBJECT, HISTORY + N)", 1,
    ARG_INT },
  mysql_storage_engine = { "ENGINE of the tables (MySQL/MariaDB)", "InnoDB", ARG_STRING },
  mysql_table_options = { "Raw table options appended after the engine (MySQL)", "",
    ARG_STRING },
  mysql_table_compression = { "Table compression, e.g. lz4 (MySQL: COMPRESSION='x'; "
    .. "MariaDB: PAGE_COMPRESSED=1)", "", ARG_STRING },
  mysql_session_options = { "SQL statements separated by ';' run on every new "
    .. "connection (default: env MYSQL_SESSION_OPTIONS)", "", ARG_STRING },
  mysql_check_charset = { "Print the connection character set variables (MySQL)",
    false },
  sync_file = { "Start barrier: after initialisation wait until this file (absolute "
    .. "path) is removed", "", ARG_STRING },
  sync_wait = { "Polling interval of the start barrier, ms", 10, ARG_INT },
  ordered_load = { "Load chunks interleaved across the workers of a set (rows arrive "
    .. "in key order) instead of one contiguous slice per worker", false },
  SEL1 = { "SEL1 queries (OBJECT-SECTION-ZONE) per transaction", 1, ARG_INT },
  SEL2 = { "SEL2 queries (HISTORY-STAT, 20 rows) per transaction", 1, ARG_INT },
  updates = { "UPDATE queries per write transaction", 1, ARG_INT },
  delete_inserts = { "DELETE+INSERT pairs per write transaction", 1, ARG_INT },
  rw_ratio = { "One transaction in N also writes (1 = every one)", 1, ARG_INT },
  for_update = { "FOR UPDATE on SEL1 and SEL2", false },
  hpk = { "Make the HISTORY (REF_OBJECT, HORDER) index unique (InnoDB: clustered)",
    false },
  anti_dead = { "Each user works in its own REF range (no lock conflicts)", true },
  same_ref = { "One OBJECT REF (and table set) for all the queries of a transaction",
    true },
  skip_trx = { "No BEGIN/COMMIT: every query autocommits", false },
  scenario = { "Apply a BMK scenario's option set: RO, RO-SEL1, RO-SEL2, RW1, RW10, "
    .. "RW1-UPD, RW10-UPD (+ -xDEAD, -xREF, -trx, -notrx)", "", ARG_STRING },
  opt_debug = { "Worker 0 prints every option and its value", false },
}

-- Shared memory, created at load time by the main state (see bmk_shared).
shm.block("dbstress_prepare", shm.MAX_THREADS + 1)

N_HISTORY = 20
INS_RANGE = 100

local function opt(name)
  local v = sysbench.opt[name]
  if v == nil then
    local d = sysbench.cmdline.options[name]
    v = d and d[2]
  end
  return v
end

function dopt_num(name)
  return tonumber(opt(name)) or 0
end

function dopt_str(name)
  local v = opt(name)
  return v == nil and "" or tostring(v)
end

function dopt_bool(name)
  local v = opt(name)
  if type(v) == "string" then
    v = v:lower()
    return v == "on" or v == "yes" or v == "true" or v == "1"
  end
  return v and true or false
end

function dkind()
  local d = sysbench.opt.db_driver or "mysql"
  if d == "pgsql" or d == "sqlite" then
    return d
  end
  return "mysql"
end

-- Scenario option sets (how-to names) -------------------------------------------------------

function apply_scenario()
  local s = dopt_str("scenario")
  if s == "" then
    return
  end
  local o = sysbench.opt
  local trx = nil
  for tok in s:gmatch("[^-]+") do
    local t = tok:upper()
    local rw = t:match("^RW(%d+)$")
    if t == "RO" then
      o.updates, o.delete_inserts = 0, 0
      if trx == nil then
        trx = false
      end
    elseif rw then
      o.rw_ratio = tonumber(rw)
      if o.updates == 0 then
        o.updates = 1
      end
      if o.delete_inserts == 0 then
        o.delete_inserts = 1
      end
      if trx == nil then
        trx = true
      end
    elseif t == "SEL1" then
      o.SEL2 = 0
    elseif t == "SEL2" then
      o.SEL1 = 0
    elseif t == "UPD" then
      o.delete_inserts = 0
    elseif t == "XDEAD" then
      o.anti_dead = false
    elseif t == "XREF" then
      o.same_ref = false
    elseif t == "TRX" then
      trx = true
    elseif t == "NOTRX" then
      trx = false
    elseif t == "HPK" then
      o.hpk = true
    else
      error("dbstress: unknown scenario element '" .. tok .. "' in --scenario=" .. s, 0)
    end
  end
  if trx ~= nil then
    o.skip_trx = not trx
  end
end

function dbstress_check_options()
  apply_scenario()
  if dopt_num("obj_table_size") < 1 then
    error("dbstress: --obj-table-size must be at least 1", 0)
  end
  if dopt_num("obj_tables") < 1 then
    error("dbstress: --obj-tables must be at least 1", 0)
  end
  if dopt_num("rw_ratio") < 1 then
    sysbench.opt.rw_ratio = 1
  end
end

-- Connections -------------------------------------------------------------------------------

local mariadb = nil
local function is_mariadb()
  if mariadb == nil then
    local v = con:query_row("SELECT VERSION()")
    mariadb = v ~= nil and tostring(v):find("MariaDB") ~= nil
  end
  return mariadb
end

function dbstress_connect()
  drv = sysbench.sql.driver()
  con = drv:connect()
  local text = dopt_str("mysql_session_options")
  if text == "" then
    text = os.getenv("MYSQL_SESSION_OPTIONS") or ""
    if text ~= "" then
      sysbench.opt.mysql_session_options = text
    end
  end
  for piece in text:gmatch("[^;]*") do
    if piece:match("%S") then
      con:query(piece)
    end
  end
  if sysbench.tid == 0 and dopt_bool("mysql_check_charset") and dkind() == "mysql" then
    local rs = con:query("SELECT VARIABLE_NAME, VARIABLE_VALUE FROM "
      .. "performance_schema.session_variables WHERE VARIABLE_NAME IN "
      .. "('character_set_client', 'character_set_connection', "
      .. "'character_set_results', 'collation_connection') ORDER BY VARIABLE_NAME")
    if rs then
      for _ = 1, rs.nrows do
        local row = rs:fetch_row()
        print(fmt("   %-26s : %s", tostring(row[1]), tostring(row[2])))
      end
    end
  end
  return con
end

-- Data (deterministic) -------------------------------------------------------------------------

local function xpad(s, len)
  if #s >= len then
    return s:sub(1, len)
  end
  return s .. string.rep("X", len - #s)
end

function ds_date(k)
  return fmt("%02d/%02d/19%02d", k % 28 + 1, k % 12 + 1, k % 100)
end

function ds_ref(i)
  return fmt("%010d", i)
end

-- Schema ------------------------------------------------------------------------------------------

local function table_exists(name)
  local k = dkind()
  local sql
  if k == "mysql" then
    sql = fmt("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = "
      .. "DATABASE() AND table_name = '%s'", name)
  elseif k == "pgsql" then
    sql = fmt("SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE schemaname = "
      .. "current_schema() AND tablename = '%s'", name:lower())
  else
    sql = fmt("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'",
      name)
  end
  return tonumber(con:query_row(sql)) > 0
end

local function table_opts()
  if dkind() ~= "mysql" then
    return ""
  end
  local s = " ENGINE=" .. dopt_str("mysql_storage_engine")
  local o = dopt_str("mysql_table_options")
  if o ~= "" then
    s = s .. " " .. o
  end
  local c = dopt_str("mysql_table_compression")
  if c ~= "" then
    s = s .. (is_mariadb() and " PAGE_COMPRESSED=1" or (" compression='" .. c .. "'"))
  end
  return s
end

-- Index names repeat across sets on MySQL (per-table namespace, as the reference);
-- PostgreSQL and SQLite name indexes per schema, so they get the set number appended.
local function idx_name(base, n)
  if dkind() == "mysql" then
    return base
  end
  return base .. n
end

local function with_trx(fn)
  if dkind() == "sqlite" then
    con:query("BEGIN")
    fn()
    con:query("COMMIT")
  else
    fn()
  end
end

-- Creates set n (tables, indexes, reference rows) unless its OBJECT table exists.
function create_set(n)
  if table_exists("OBJECT" .. n) then
    return false
  end
  print(fmt("Creating dbSTRESS set #%d ...", n))
  local o = table_opts()
  con:query(fmt("CREATE TABLE ZONE%d (REF CHAR(2) NOT NULL, NAME CHAR(40) NOT NULL)%s", n, o))
  con:query(fmt("CREATE TABLE STAT%d (REF CHAR(3) NOT NULL, NAME CHAR(40) NOT NULL, "
    .. "NUMB INT NOT NULL)%s", n, o))
  con:query(fmt("CREATE TABLE SECTION%d (REF CHAR(2) NOT NULL, REF_ZONE CHAR(2) NOT NULL, "
    .. "NAME CHAR(40) NOT NULL)%s", n, o))
  con:query(fmt("CREATE TABLE OBJECT%d (REF CHAR(10) NOT NULL, REF_SECTION CHAR(2) NOT "
    .. "NULL, NAME CHAR(30) NOT NULL, CREATE_DATE CHAR(12) NOT NULL, NOTE CHAR(100))%s", n,
    o))
  con:query(fmt("CREATE TABLE HISTORY%d (REF_OBJECT CHAR(10) NOT NULL, HORDER INT NOT "
    .. "NULL, REF_STAT CHAR(3) NOT NULL, BEGIN_DATE CHAR(12) NOT NULL, END_DATE CHAR(12), "
    .. "NOTE CHAR(100))%s", n, o))
  con:query(fmt("CREATE UNIQUE INDEX %s ON ZONE%d (REF)", idx_name("zone_ref_idx", n), n))
  con:query(fmt("CREATE UNIQUE INDEX %s ON STAT%d (REF)", idx_name("stat_ref_idx", n), n))
  con:query(fmt("CREATE UNIQUE INDEX %s ON SECTION%d (REF)", idx_name("section_ref_idx", n),
    n))
  con:query(fmt("CREATE UNIQUE INDEX %s ON OBJECT%d (REF)", idx_name("object_ref_idx", n),
    n))
  con:query(fmt("CREATE %sINDEX %s ON HISTORY%d (REF_OBJECT, HORDER)",
    dopt_bool("hpk") and "UNIQUE " or "", idx_name("history_ref_idx", n), n))
  with_trx(function()
    con:bulk_insert_init(fmt("INSERT INTO STAT%d (REF, NAME, NUMB) VALUES", n))
    for i = 0, 999 do
      con:bulk_insert_next(fmt("('%03d','%s',0)", i, xpad(fmt("Status %03d ", i), 40)))
    end
    con:bulk_insert_done()
    con:bulk_insert_init(fmt("INSERT INTO SECTION%d (REF, REF_ZONE, NAME) VALUES", n))
    for i = 0, 99 do
      con:bulk_insert_next(fmt("('%02d','%02d','%s')", i, i % 10,
        xpad(fmt("Section %02d ", i), 38)))
    end
    con:bulk_insert_done()
    con:bulk_insert_init(fmt("INSERT INTO ZONE%d (REF, NAME) VALUES", n))
    for i = 0, 9 do
      con:bulk_insert_next(fmt("('%02d','%s')", i, xpad(fmt("Zone %02d ", i), 38)))
    end
    con:bulk_insert_done()
  end)
  return true
end

-- Objects [a, b] of set n: one OBJECT bulk insert, then one HISTORY bulk insert.
local function load_chunk(n, a, b)
  con:bulk_insert_init(fmt("INSERT INTO OBJECT%d (REF, REF_SECTION, NAME, CREATE_DATE, "
    .. "NOTE) VALUES", n))
  for i = a, b do
    local ref = ds_ref(i)
    con:bulk_insert_next(fmt("('%s','%02d','%s','%s','%s')", ref, i % 100,
      ref .. " NAME " .. string.rep("X", 12), ds_date(i), xpad(ref .. " NOTES ", 96)))
  end
  con:bulk_insert_done()
  con:bulk_insert_init(fmt("INSERT INTO HISTORY%d (REF_OBJECT, HORDER, REF_STAT, "
    .. "BEGIN_DATE, END_DATE, NOTE) VALUES", n))
  for i = a, b do
    local ref = ds_ref(i)
    for j = 0, N_HISTORY - 1 do
      local d = ds_date(i + j)
      con:bulk_insert_next(fmt("('%s',%d,'%03d','%s','%s','%s')", ref, j,
        (i + 10 * j) % 1000, d, d, xpad(fmt("%s_%02d HISTORY NOTES ", ref, j), 100)))
    end
  end
  con:bulk_insert_done()
  if a % 100000 < INS_RANGE then
    print(fmt("Loading OBJECT%d / HISTORY%d: objects %d..%d", n, n, a, b))
  end
end

-- Which (set, chunk) units worker tid of P loads: every object of every set exactly
-- once. P <= T: sets are dealt round-robin to workers. P > T: the workers tid with
-- tid mod T = n-1 share set n; "normal" gives each a contiguous slice of chunks,
-- "ordered" deals the chunks round-robin so rows arrive in key order.
function load_plan(tid, P, T, S, ordered)
  local plan = {}
  local nchunks = floor((S + INS_RANGE - 1) / INS_RANGE)
  for n = 1, T do
    local k, idx
    if P <= T then
      if (n - 1) % P == tid then
        k, idx = 1, 0
      end
    elseif tid % T == n - 1 then
      k = floor(P / T) + ((n - 1) < (P % T) and 1 or 0)
      idx = floor(tid / T)
    end
    if k then
      local chunks = {}
      if ordered then
        for c = idx, nchunks - 1, k do
          chunks[#chunks + 1] = c
        end
      else
        for c = floor(nchunks * idx / k), floor(nchunks * (idx + 1) / k) - 1 do
          chunks[#chunks + 1] = c
        end
      end
      plan[#plan + 1] = { n = n, chunks = chunks }
    end
  end
  return plan
end

local function gcd(a, b)
  while b ~= 0 do
    a, b = b, a % b
  end
  return a
end

-- The reference loader's arithmetic loses or duplicates rows in some shapes; bmk's
-- plan does not, but says so, since the row order differs from the reference's.
function warn_reference_partitioning(P, T, ordered)
  if P <= 1 or T <= 1 then
    return
  end
  local msg
  if P < T and T % P ~= 0 then
    msg = fmt("the reference loader would never load the last %d set(s)", T - P * floor(T / P))
  elseif P > T and not ordered and P % T ~= 0 then
    msg = "the reference loader's object slices would be wrong (threads not a multiple of sets)"
  elseif P > T and ordered and gcd(T, floor(P / T)) ~= 1 then
    msg = "the reference ordered loader would load some chunks twice and others never"
  end
  if msg then
    print(fmt("NOTE: with %d threads and %d sets %s; bmk loads every object once.", P, T, msg))
  end
end

function cmd_create()
  dbstress_check_options()
  if sysbench.tid ~= 0 then
    return
  end
  dbstress_connect()
  for n = 1, dopt_num("obj_tables") do
    create_set(n)
  end
  con:disconnect()
end

-- prepare (PARALLEL_COMMAND): worker 0 creates the sets that do not exist yet (the
-- reference needs a separate `create`), then every worker loads its plan. SQLite (one
-- writer): worker 0 loads everything, one transaction per chunk.
function cmd_prepare()
  dbstress_check_options()
  local tid, P = sysbench.tid, sysbench.opt.threads
  local T, S = dopt_num("obj_tables"), dopt_num("obj_table_size")
  if dkind() == "sqlite" then
    if tid ~= 0 then
      return
    end
    P = 1
  end
  local barrier = shm.barrier("dbstress_prepare", P)
  local ok, err = pcall(function()
    dbstress_connect()
    if tid == 0 then
      for n = 1, T do
        if not create_set(n) and tonumber(con:query_row(fmt("SELECT COUNT(*) FROM OBJECT%d",
            n))) > 0 then
          error(fmt("dbstress: OBJECT%d already holds rows; run cleanup first", n), 0)
        end
      end
    end
    if tid == 0 then
      warn_reference_partitioning(P, T, dopt_bool("ordered_load"))
    end
    barrier.wait(tid, 1)
    local t0 = os.time()
    for _, u in ipairs(load_plan(tid, P, T, S, dopt_bool("ordered_load"))) do
      for _, c in ipairs(u.chunks) do
        local a = c * INS_RANGE
        local b = math.min(a + INS_RANGE - 1, S - 1)
        with_trx(function() load_chunk(u.n, a, b) end)
      end
    end
    print(fmt("=> TOTAL OBJECTs/HISTORY LOAD TIME @thread-%02d : %.2f min.", tid,
      (os.time() - t0) / 60))
    con:disconnect()
  end)
  if not ok then
    barrier.abort()
    error(err, 0)
  end
end

function cmd_warmup()
  dbstress_check_options()
  if dkind() ~= "mysql" then
    if sysbench.tid == 0 then
      error("dbstress: warmup/prewarm is MySQL-only", 0)
    end
    return
  end
  dbstress_connect()
  con:query("SET SESSION tmp_table_size = 2147483648")
  con:query("SET SESSION max_heap_table_size = 2147483648")
  for n = sysbench.tid + 1, dopt_num("obj_tables"), sysbench.opt.threads do
    for _, t in ipairs({ "OBJECT", "HISTORY" }) do
      print(fmt("Preloading table: %s%d", t, n))
      con:query(fmt("ANALYZE TABLE %s%d", t, n))
      con:query(fmt("SELECT COUNT(*) FROM (SELECT * FROM %s%d) t", t, n))
    end
  end
  con:disconnect()
end

function cmd_cleanup()
  dbstress_check_options()
  dbstress_connect()
  for n = 1, dopt_num("obj_tables") do
    print(fmt("Dropping OBJECT set #%d ...", n))
    for _, t in ipairs({ "OBJECT", "HISTORY", "STAT", "SECTION", "ZONE" }) do
      con:query(fmt("DROP TABLE IF EXISTS %s%d", t, n))
    end
  end
  con:disconnect()
end

function dbstress_sync_wait()
  sync.wait(dopt_str("sync_file"), dopt_num("sync_wait"), sysbench.tid,
    sysbench.opt.threads)
end

function dbstress_sync_finish()
  sync.finish(dopt_str("sync_file"))
end
