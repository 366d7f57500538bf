-- bmk_oltp_tables: the code of oltp_common's commands (prepare, create, warmup /
-- prewarm, cleanup): table schema, the loaders and their load window.
--
-- oltp_common defines each of these functions as a global that loads this module on
-- its first call and hands the call on, so a state that never runs a command (every
-- worker of `run`) never compiles this code: it is about a third of oltp_common, and
-- each of thousands of worker states would hold it. The functions here call one
-- another through those globals, never directly, so that a script overriding one
-- (`create_table`, say) changes what the others do, as when they were defined in
-- oltp_common itself.

local ffi = require("ffi")
pcall(ffi.cdef, "int getpid(void);")
local C = ffi.C
local sync = require("SYNC_file")
local ws = require("bmk_workload_support")
local shm = require("bmk_shared")

local floor = math.floor

local M = {}

local function index_name(kind, n)
  -- MySQL index names are per table; PostgreSQL and SQLite share one namespace.
  local base = opt_str("table_name")
  if driver_name() == "mysql" then
    return kind
  end
  if base == "sbtest" then
    return kind .. "_" .. n
  end
  return base .. "_" .. kind .. "_" .. n
end

-- The CREATE TABLE statement of table n for the current driver.
function M.create_table_sql(n)
  local d = driver_name()
  local name = get_table_name(n)
  local secondary = opt_bool("secondary")
  local auto_inc = opt_bool("auto_inc")
  local id_def
  if d == "mysql" then
    id_def = auto_inc and "INTEGER NOT NULL AUTO_INCREMENT" or "INTEGER NOT NULL"
  elseif d == "pgsql" then
    id_def = auto_inc and "SERIAL" or "INTEGER NOT NULL"
  else
    if secondary then
      id_def = "INTEGER NOT NULL"
    else
      id_def = auto_inc and "INTEGER PRIMARY KEY" or "INTEGER NOT NULL PRIMARY KEY"
    end
  end
  local cols = {
    "id " .. id_def,
    "k INTEGER DEFAULT '0' NOT NULL",
    "c CHAR(120) DEFAULT '' NOT NULL",
    "pad CHAR(60) DEFAULT '' NOT NULL",
  }
  local extra_type, extra_opts = opt_str("extra_cols_type"), opt_str("extra_cols_options")
  for i = 1, opt_num("extra_cols") do
    local def = "col" .. i .. " " .. extra_type
    if extra_opts ~= "" then
      def = def .. " " .. extra_opts
    end
    cols[#cols + 1] = def
  end
  if d == "mysql" then
    cols[#cols + 1] = secondary and "KEY xid (id)" or "PRIMARY KEY (id)"
  elseif d == "pgsql" and not secondary then
    cols[#cols + 1] = "PRIMARY KEY (id)"
  end
  local sql = "CREATE TABLE " .. name .. "(\n  " .. table.concat(cols, ",\n  ") .. "\n)"
  sql = sql .. ws.engine_clause()
  local cto = opt_str("create_table_options")
  if cto ~= "" then
    sql = sql .. " " .. cto
  end
  sql = sql .. ws.table_extras(con)
  if d == "mysql" then
    local parts = opt_num("mysql_table_partitions")
    if parts > 1 then
      local size = floor(opt_num("table_size") / parts) + 1
      local defs = {}
      for p = 1, parts - 1 do
        defs[#defs + 1] = string.format("partition p%d values less than (%d)", p, p * size)
      end
      defs[#defs + 1] = "partition p00 values less than (MAXVALUE)"
      sql = sql .. " partition by range(id) (" .. table.concat(defs, ", ") .. ")"
    end
  end
  return sql
end

-- Creates table n (no data, no k index). Returns false if it already existed empty;
-- raises an error if it exists with rows.
function M.create_table_only(c, n)
  local name = get_table_name(n)
  if table_exists(c, name) then
    local row = c:query_row("SELECT id FROM " .. name .. " LIMIT 1")
    if row ~= nil then
      error(string.format("table '%s' already exists and is not empty; run cleanup first",
        name), 0)
    end
    print(string.format("Table '%s' exists and is empty: loading it", name))
    return false
  end
  print(string.format("Creating table '%s'...", name))
  local parts = opt_num("mysql_table_partitions")
  if driver_name() == "mysql" and parts > 1 then
    print(string.format("  with %d partitions", parts))
  end
  local comp = opt_str("mysql_table_compression")
  if driver_name() == "mysql" and comp ~= "" and comp:lower() ~= "none"
      and server_is_mariadb(c) then
    print(string.format("  compression '%s' -> PAGE_COMPRESSED=1 (MariaDB: the algorithm "
      .. "is the server's innodb_compression_algorithm)", comp))
  end
  c:query(create_table_sql(n))
  if opt_bool("secondary") and driver_name() ~= "mysql" then
    c:query(string.format("CREATE INDEX %s ON %s(id)", index_name("xid", n), name))
  end
  return true
end

-- Has table n its k index already?
local function k_index_exists(c, n)
  local d = driver_name()
  local name = get_table_name(n)
  local iname = index_name("k", n)
  local q
  if d == "mysql" then
    q = "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = "
      .. "DATABASE() AND table_name = '" .. name .. "' AND index_name = 'k_" .. n .. "'"
  elseif d == "pgsql" then
    q = "SELECT COUNT(*) FROM pg_catalog.pg_indexes WHERE schemaname = current_schema() "
      .. "AND indexname = '" .. iname:lower() .. "'"
  else
    q = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = '" .. iname .. "'"
  end
  return (tonumber(c:query_row(q)) or 0) > 0
end

function M.create_secondary_index(c, n)
  if not opt_bool("create_secondary") or opt_str("pgsql_variant") == "redshift" then
    return
  end
  if k_index_exists(c, n) then
    return
  end
  local name = get_table_name(n)
  print(string.format("Creating a secondary index on '%s'...", name))
  if driver_name() == "mysql" then
    c:query(string.format("CREATE INDEX k_%d ON %s(k)", n, name))
  else
    c:query(string.format("CREATE INDEX %s ON %s(k)", index_name("k", n), name))
  end
end

-- The columns loaded into table n and how insert_generated makes them, for a range of
-- rows starting at id `first`. MySQL gets explicit ids 1..N, the ones its
-- AUTO_INCREMENT would assign (a bulk load may leave gaps in what it reserves);
-- PostgreSQL's SERIAL takes its values (explicit ids would not advance the sequence).
local function generated_columns(first)
  local S = opt_num("table_size")
  local cols = {}
  if explicit_ids() or driver_name() == "mysql" then
    cols[1] = { "id", "seq", first }
  end
  cols[#cols + 1] = { "k", "rand", S }
  cols[#cols + 1] = { "c", "template", c_value_template }
  cols[#cols + 1] = { "pad", "template", pad_value_template }
  for i = 1, opt_num("extra_cols") do
    cols[#cols + 1] = { "col" .. i, "template", opt_str("extra_cols_default") }
  end
  return cols
end

-- Loads the rows of `chunks` ({first, last} id ranges, 1-based, inclusive, ascending)
-- into table n. The rows are made in Rust as the driver sends them
-- (con:insert_generated: MariaDB's bulk execute, PostgreSQL's COPY, multi-row INSERTs
-- elsewhere), so the server parses no SQL per row and the client runs no Lua per row.
-- Adjacent chunks are sent as one range and transactions span chunks: MySQL and
-- PostgreSQL commit every LOAD_TRX_ROWS rows whatever --load-bulk-size is (it used to
-- be a commit per 1000-row chunk with several loaders per table; on MariaDB either way
-- took the same time, within noise); SQLite loads a whole table in one transaction
-- (see create_table).
function M.load_chunks(c, n, chunks)
  local name = get_table_name(n)
  local group = driver_name() ~= "sqlite"
  local ranges = {}
  for _, ch in ipairs(chunks) do
    local last = ranges[#ranges]
    if last and last[2] + 1 == ch[1] then
      last[2] = ch[2]
    else
      ranges[#ranges + 1] = { ch[1], ch[2] }
    end
  end
  local in_trx = 0 -- rows in the open transaction
  for _, range in ipairs(ranges) do
    local first = range[1]
    while first <= range[2] do
      local count = math.min(LOAD_TRX_ROWS - in_trx, range[2] - first + 1)
      if group and in_trx == 0 then
        c:query("BEGIN")
      end
      local got = c:insert_generated(name, generated_columns(first), count)
      if got ~= count then
        error(string.format("loading '%s': %s of %d rows loaded", name, tostring(got),
          count), 0)
      end
      in_trx = in_trx + count
      if in_trx == LOAD_TRX_ROWS then
        if group then
          c:query("COMMIT")
        end
        in_trx = 0
      end
      first = first + count
    end
  end
  if group and in_trx > 0 then
    c:query("COMMIT")
  end
end

-- load_mode=original: sysbench's own way, multi-row INSERT statements of at most 512
-- KiB built here, each in its own transaction (the stock loader's server cost, for
-- comparisons). The text of a statement is one template filled by one sb_rand_str.
function M.load_insert_statements(c, n, S)
  local name = get_table_name(n)
  local explicit = explicit_ids()
  local columns = explicit and "id, k, c, pad" or "k, c, pad"
  local prefix = "INSERT INTO " .. name .. "(" .. columns .. ") VALUES "
  local suffix = ",'" .. c_value_template .. "','" .. pad_value_template .. "')"
  local limit = 512 * 1024
  local rows, nrows, bytes = {}, 0, #prefix
  local buf, buf_len = nil, 0
  local function flush()
    if nrows == 0 then
      return
    end
    local tmpl = table.concat(rows, ",", 1, nrows)
    local len = #tmpl
    if len + 1 > buf_len then
      buf_len = len + 1
      buf = ffi.new("char[?]", buf_len)
    end
    C.sb_rand_str(tmpl, buf)
    c:query(prefix .. ffi.string(buf, len))
    nrows, bytes = 0, #prefix
  end
  for id = 1, S do
    local row
    if explicit then
      row = "(" .. id .. "," .. C.sb_rand_default(1, S) .. suffix
    else
      row = "(" .. C.sb_rand_default(1, S) .. suffix
    end
    if nrows > 0 and bytes + #row + 1 > limit then
      flush()
    end
    nrows = nrows + 1
    rows[nrows] = row
    bytes = bytes + #row + 1
  end
  flush()
end

-- Stock API: create table n, load it with table_size rows, create the k index.
function M.create_table(drv_, con_, table_num)
  local c = con_ or con
  local S = opt_num("table_size")
  create_table_only(c, table_num)
  if S > 0 then
    print(string.format("Inserting %d records into '%s'", S, get_table_name(table_num)))
    ws.with_trx(c, function()
      if opt_str("load_mode") == "original" then
        load_insert_statements(c, table_num, S)
      else
        load_chunks(c, table_num, { { 1, S } })
      end
    end)
  end
  create_secondary_index(c, table_num)
end

-- Load window: the tables prepare loads at the same time ---------------------------

-- Slot n-1 becomes 1 once table n is loaded and indexed (or has failed). Made by
-- oltp_common at load time (so that the main state allocates it before any worker
-- exists); this state's bmk_shared hands back the same block.
local tables_finished = shm.block("oltp_tables_finished", shm.MAX_THREADS)

-- Bytes InnoDB takes per row of an OLTP table (4 + 4 + 120 + 60 bytes of columns, 20
-- of record header, transaction id and roll pointer, pages filled to 15/16), and a
-- guess per extra column.
local INNODB_ROW_BYTES, INNODB_EXTRA_COL_BYTES = 240, 32

-- How many tables are loaded at the same time, and why (nil: all of them). InnoDB
-- builds the k index of a table from its rows in the buffer pool: when the tables
-- loading at once do not fit in it, the first rows of each have been evicted by the
-- time its index is built and are read back (8 x 100 000 rows in the default 128 MiB
-- pool: 10% more server CPU, see BENCHMARKS.md). Auto: as many tables as fill 3/4 of
-- the pool; fewer than 2 would cost more in lost overlap than the re-reads do.
function M.load_window(c)
  local T = opt_num("tables")
  local n = opt_num("load_tables_at_once")
  if n > 0 then
    return n < T and n or nil, "--load-tables-at-once"
  end
  if driver_name() ~= "mysql" or not opt_bool("create_secondary")
      or opt_str("mysql_storage_engine"):lower() ~= "innodb" then
    return nil
  end
  local ok, pool = pcall(c.query_row, c, "SELECT @@innodb_buffer_pool_size")
  pool = ok and tonumber(pool) or nil
  local bytes = opt_num("table_size")
    * (INNODB_ROW_BYTES + INNODB_EXTRA_COL_BYTES * opt_num("extra_cols"))
  if not pool or bytes <= 0 then
    return nil
  end
  local fit = floor(pool * 0.75 / bytes)
  if fit < 2 or fit >= T then
    return nil
  end
  return fit, string.format("as many fit in InnoDB's %d MiB buffer pool while their k "
    .. "indexes are built", floor(pool / 1048576))
end

-- Waits until table n may be loaded: table n-window has finished. Tables are taken in
-- increasing order by every worker, so the lowest unfinished table never waits.
function M.wait_load_turn(n, window)
  if window and n > window and n - window <= shm.MAX_THREADS then
    while tables_finished[n - window - 1] == 0 do
      sync.sleep_ms(5)
    end
  end
end

function M.finish_load_turn(n)
  if n <= shm.MAX_THREADS then
    tables_finished[n - 1] = 1
  end
end

function M.load_bulk_rows()
  local r = opt_num("load_bulk_size")
  if r <= 0 or r > opt_num("table_size") then
    r = 1000
  end
  return r
end

-- Coordination of several loader connections per table (files in the temp dir,
-- keyed by the process id: all loaders are threads of this process).
local function marker(n, what)
  local dir = os.getenv("TMPDIR") or "/tmp"
  return string.format("%s/bmk-prepare-%d-%s.%s", dir, C.getpid(), get_table_name(n), what)
end

local function wait_marker(n, what, failed_what, who)
  while not sync.exists(marker(n, what)) do
    if sync.exists(marker(n, failed_what)) then
      error(string.format("loader %s of table '%s' failed", who, get_table_name(n)), 0)
    end
    sync.sleep_ms(10)
  end
end

-- The id ranges loader j of k loads of a table of S rows, chunks of R rows.
function M.loader_chunks(S, j, k, R, ordered)
  local chunks = {}
  if ordered then
    local nchunks = floor((S + R - 1) / R)
    for ci = j, nchunks - 1, k do
      local a = ci * R + 1
      local b = a + R - 1
      if b > S then
        b = S
      end
      chunks[#chunks + 1] = { a, b }
    end
  else
    local lo = floor(j * S / k) + 1
    local hi = floor((j + 1) * S / k)
    for a = lo, hi, R do
      local b = a + R - 1
      if b > hi then
        b = hi
      end
      chunks[#chunks + 1] = { a, b }
    end
  end
  return chunks
end

-- load_window(c), printed by worker 0.
function M.announce_load_window(c)
  local window, why = load_window(c)
  if window and sysbench.tid == 0 then
    print(string.format("Loading %d table%s at a time (%s)", window,
      window == 1 and "" or "s", why))
  end
  return window
end

-- prepare (parallel command): worker tid of P.
function M.cmd_prepare()
  init_worker_settings()
  drv = sysbench.sql.driver()
  local tid = sysbench.tid
  local P = opt_num("threads")
  local T = opt_num("tables")
  local S = opt_num("table_size")
  local mode = opt_str("load_mode")
  local builtin = create_table == builtin_create_table
  if driver_name() == "sqlite" then
    -- One writer at a time on an SQLite file: worker 0 loads every table.
    if tid == 0 then
      connect_db()
      for n = 1, T do
        create_table(drv, con, n)
      end
      con:disconnect()
    end
    return
  end
  if mode == "original" or P <= T or not builtin then
    -- One loader per table: worker tid takes tables tid+1, tid+1+P, ... (the original
    -- mode all at once, as sysbench does).
    if tid < T then
      local n = tid + 1
      local ok, err = pcall(function()
        connect_db()
        local window = mode ~= "original" and announce_load_window(con) or nil
        while n <= T do
          wait_load_turn(n, window)
          create_table(drv, con, n)
          finish_load_turn(n)
          n = n + P
        end
        con:disconnect()
      end)
      if not ok then
        -- Tables this worker will not load must not hold up the others' turns.
        for rest = n, T, P do
          finish_load_turn(rest)
        end
        error(err, 0)
      end
    end
    return
  end
  -- Several loaders per table: table n gets workers n-1, n-1+T, ...
  local n = (tid % T) + 1
  local j = floor(tid / T)
  local k = floor((P - n) / T) + 1
  local ordered = mode ~= "parallel"
  local R = load_bulk_rows()
  -- Protocol (marker files): the owner (j = 0) removes stale markers, creates the
  -- table and writes "created"; every other loader writes exactly one terminal marker,
  -- "<j>.done" or "<j>.failed" (also when it gives up because the owner wrote
  -- "0.failed"). The owner waits for all terminal markers, then builds the index (or
  -- fails) and removes every marker. Any failure, connect included, is caught, so
  -- nobody waits forever.
  if j == 0 then
    os.remove(marker(n, "0.failed"))
  end
  local ok, err = pcall(function()
    connect_db()
    if j == 0 then
      os.remove(marker(n, "created"))
      create_table_only(con, n)
      sync.touch(marker(n, "created"))
      if S > 0 then
        print(string.format("Inserting %d records into '%s'", S, get_table_name(n)))
        print(string.format("  %d loader connections, load mode %s, %d rows per chunk",
          k, ordered and "parallel_ordered" or "parallel", R))
      end
    else
      wait_marker(n, "created", "0.failed", 0)
    end
    wait_load_turn(n, announce_load_window(con))
    load_chunks(con, n, loader_chunks(S, j, k, R, ordered))
  end)
  if j == 0 then
    if not ok then
      sync.touch(marker(n, "0.failed"))
    end
    -- Wait for every co-loader's terminal marker (bounded when already failing).
    local failed_other = nil
    for other = 1, k - 1 do
      local waited = 0
      while not sync.exists(marker(n, other .. ".done")) do
        if sync.exists(marker(n, other .. ".failed")) then
          failed_other = failed_other or other
          break
        end
        if not ok and waited > 60000 then
          break
        end
        sync.sleep_ms(10)
        waited = waited + 10
      end
    end
    if ok and failed_other then
      ok, err = false, string.format("loader %d of table '%s' failed", failed_other,
        get_table_name(n))
    end
    if ok then
      ok, err = pcall(create_secondary_index, con, n)
    end
    finish_load_turn(n)
    os.remove(marker(n, "created"))
    os.remove(marker(n, "0.failed"))
    for other = 1, k - 1 do
      os.remove(marker(n, other .. ".done"))
      os.remove(marker(n, other .. ".failed"))
    end
  else
    sync.touch(marker(n, j .. (ok and ".done" or ".failed")))
  end
  if con then
    pcall(con.disconnect, con)
  end
  if not ok then
    error(err, 0)
  end
end

-- create (BMK): worker 0 creates every table (no data, no k index).
function M.cmd_create()
  if sysbench.tid ~= 0 then
    return
  end
  init_worker_settings()
  connect_db()
  for n = 1, opt_num("tables") do
    create_table_only(con, n)
  end
  con:disconnect()
end

-- warmup / prewarm: worker tid takes tables tid+1, tid+1+threads, ...
function M.cmd_warmup()
  init_worker_settings()
  connect_db()
  local d = driver_name()
  local S = opt_num("table_size")
  if d == "mysql" then
    con:query("SET SESSION tmp_table_size = 2*1024*1024*1024")
    con:query("SET SESSION max_heap_table_size = 2*1024*1024*1024")
  end
  for n = sysbench.tid + 1, opt_num("tables"), opt_num("threads") do
    local t = get_table_name(n)
    print("Preloading table " .. t)
    if d == "mysql" then
      con:query("ANALYZE TABLE " .. t)
      con:query(string.format("SELECT AVG(id) FROM (SELECT * FROM %s FORCE KEY (PRIMARY) "
        .. "LIMIT %d) t", t, S))
      con:query(string.format("SELECT COUNT(*) FROM (SELECT * FROM %s WHERE k LIKE '%%0%%' "
        .. "LIMIT %d) t", t, S))
    else
      con:query("ANALYZE " .. t)
      con:query(string.format("SELECT AVG(id) FROM (SELECT * FROM %s ORDER BY id LIMIT %d) t",
        t, S))
      con:query(string.format("SELECT COUNT(*) FROM (SELECT k FROM %s WHERE k > 0 "
        .. "ORDER BY k LIMIT %d) t", t, S))
    end
  end
  con:disconnect()
end

-- cleanup: drop every table.
function M.cleanup()
  check_options()
  local d = sysbench.sql.driver()
  local c = d:connect()
  drv = drv or d
  apply_session_options(c)
  for n = 1, opt_num("tables") do
    local t = get_table_name(n)
    print(string.format("Dropping table '%s'...", t))
    c:query("DROP TABLE IF EXISTS " .. t)
  end
  c:disconnect()
end

return M
