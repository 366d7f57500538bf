-- dbstress_common: options, schema, deterministic loader, statements and query groups
-- of bmk's built-in dbSTRESS workload, written for bmk; choices are documented in
-- docs/workloads-tpcc-dbstress.md.

local shm = require("bmk_shared")
local ws = require("bmk_workload_support")

local ARG_INT = sysbench.cmdline.ARG_INT
local ARG_STRING = sysbench.cmdline.ARG_STRING
local fmt = string.format
local floor = math.floor

sysbench.cmdline.options = {
  obj_table_size = { "Rows in each OBJECT table (HISTORY gets 20x)", 1000000, ARG_INT },
  obj_tables = { "Number of table sets (ZONE, STAT, SECTION, OBJECT, HISTORY + N)", 1,
    ARG_INT },
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
}
ws.declare_common_options(sysbench.cmdline.options, { "mysql_storage_engine",
  "mysql_table_options", "mysql_table_compression", "mysql_session_options",
  "mysql_check_charset", "sync_file", "sync_wait", "opt_debug" })

-- Shared memory, created at load time by the main state (see bmk_shared).
shm.block("dbstress_prepare", shm.MAX_THREADS + 1)

N_HISTORY = 20
INS_RANGE = 100

-- Scenario option sets (how-to names) -------------------------------------------------------

function apply_scenario()
  local s = ws.opt_str("scenario")
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
  if ws.opt_num("obj_table_size") < 1 then
    error("dbstress: --obj-table-size must be at least 1", 0)
  end
  if ws.opt_num("obj_tables") < 1 then
    error("dbstress: --obj-tables must be at least 1", 0)
  end
  if ws.opt_num("rw_ratio") < 1 then
    sysbench.opt.rw_ratio = 1
  end
end

-- Connections -------------------------------------------------------------------------------

function dbstress_connect()
  drv, con = ws.connect()
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

-- Index names repeat across sets on MySQL (per-table namespace, as the reference);
-- PostgreSQL and SQLite name indexes per schema, so they get the set number appended.
local function idx_name(base, n)
  if ws.driver_kind() == "mysql" then
    return base
  end
  return base .. n
end

-- Creates set n (tables, indexes, reference rows) unless its OBJECT table exists.
function create_set(n)
  if ws.table_exists(con, "OBJECT" .. n) then
    return false
  end
  print(fmt("Creating dbSTRESS set #%d ...", n))
  local o = ws.table_options(con)
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
    ws.opt_bool("hpk") and "UNIQUE " or "", idx_name("history_ref_idx", n), n))
  ws.with_trx(con, function()
    ws.bulk(con, fmt("INSERT INTO STAT%d (REF, NAME, NUMB) VALUES", n), function(add)
      for i = 0, 999 do
        add(fmt("('%03d','%s',0)", i, xpad(fmt("Status %03d ", i), 40)))
      end
    end)
    ws.bulk(con, fmt("INSERT INTO SECTION%d (REF, REF_ZONE, NAME) VALUES", n), function(add)
      for i = 0, 99 do
        add(fmt("('%02d','%02d','%s')", i, i % 10, xpad(fmt("Section %02d ", i), 38)))
      end
    end)
    ws.bulk(con, fmt("INSERT INTO ZONE%d (REF, NAME) VALUES", n), function(add)
      for i = 0, 9 do
        add(fmt("('%02d','%s')", i, xpad(fmt("Zone %02d ", i), 38)))
      end
    end)
  end)
  return true
end

-- Objects [a, b] of set n: one OBJECT bulk insert, then one HISTORY bulk insert.
local function load_chunk(n, a, b)
  ws.bulk(con, fmt("INSERT INTO OBJECT%d (REF, REF_SECTION, NAME, CREATE_DATE, NOTE) "
    .. "VALUES", n), function(add)
    for i = a, b do
      local ref = ds_ref(i)
      add(fmt("('%s','%02d','%s','%s','%s')", ref, i % 100,
        ref .. " NAME " .. string.rep("X", 12), ds_date(i), xpad(ref .. " NOTES ", 96)))
    end
  end)
  ws.bulk(con, fmt("INSERT INTO HISTORY%d (REF_OBJECT, HORDER, REF_STAT, BEGIN_DATE, "
    .. "END_DATE, NOTE) VALUES", n), function(add)
    for i = a, b do
      local ref = ds_ref(i)
      for j = 0, N_HISTORY - 1 do
        local d = ds_date(i + j)
        add(fmt("('%s',%d,'%03d','%s','%s','%s')", ref, j, (i + 10 * j) % 1000, d, d,
          xpad(fmt("%s_%02d HISTORY NOTES ", ref, j), 100)))
      end
    end
  end)
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
  for n = 1, ws.opt_num("obj_tables") do
    create_set(n)
  end
  con:disconnect()
end

-- prepare (PARALLEL_COMMAND): worker 0 creates the sets that do not exist yet (the
-- reference needs a separate `create`), then every worker loads its plan. SQLite (one
-- writer): worker 0 loads everything, one transaction per chunk.
function cmd_prepare()
  dbstress_check_options()
  local T, S = ws.opt_num("obj_tables"), ws.opt_num("obj_table_size")
  ws.parallel_prepare("dbstress_prepare", function(tid, P, barrier)
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
      warn_reference_partitioning(P, T, ws.opt_bool("ordered_load"))
    end
    barrier.wait(tid, 1)
    local t0 = os.time()
    for _, u in ipairs(load_plan(tid, P, T, S, ws.opt_bool("ordered_load"))) do
      for _, c in ipairs(u.chunks) do
        local a = c * INS_RANGE
        local b = math.min(a + INS_RANGE - 1, S - 1)
        ws.with_trx(con, function() load_chunk(u.n, a, b) end)
      end
    end
    print(fmt("=> TOTAL OBJECTs/HISTORY LOAD TIME @thread-%02d : %.2f min.", tid,
      (os.time() - t0) / 60))
    con:disconnect()
  end)
end

function cmd_warmup()
  dbstress_check_options()
  if ws.driver_kind() ~= "mysql" then
    if sysbench.tid == 0 then
      error("dbstress: warmup/prewarm is MySQL-only", 0)
    end
    return
  end
  dbstress_connect()
  con:query("SET SESSION tmp_table_size = 2147483648")
  con:query("SET SESSION max_heap_table_size = 2147483648")
  for n = sysbench.tid + 1, ws.opt_num("obj_tables"), sysbench.opt.threads do
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
  for n = 1, ws.opt_num("obj_tables") do
    print(fmt("Dropping OBJECT set #%d ...", n))
    for _, t in ipairs({ "OBJECT", "HISTORY", "STAT", "SECTION", "ZONE" }) do
      con:query(fmt("DROP TABLE IF EXISTS %s%d", t, n))
    end
  end
  con:disconnect()
end
