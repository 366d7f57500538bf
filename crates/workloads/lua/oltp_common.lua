-- oltp_common: bmk's common module of the OLTP workload family with the BMK-kit
-- extended options and the --sync-file start barrier.
--
-- Workload scripts (built in or third-party) `require("oltp_common")` and get the
-- sysbench-compatible globals: the option declarations, `thread_init` /
-- `thread_done`, the `prepare_*` statement helpers, the `execute_*` event helpers,
-- `begin` / `commit`, `get_table_num`, `get_id`, `get_c_value`, `get_pad_value`,
-- `create_table`, `cmd_prepare`, `cmd_warmup` / `cmd_prewarm`, `cleanup`, and the
-- `stmt` / `param` / `stmt_defs` / `con` / `drv` tables. Any of them may be overridden
-- by the script after the require.
--
-- Decisions (see also the crate documentation):
--   * Schema: stock column types (INTEGER id and k). SQLite: `id INTEGER PRIMARY KEY`
--     (rowid alias: omitted ids get max(id)+1), no ENGINE clause; with --secondary the
--     id is a plain column and ids are always explicit on SQLite.
--   * The k index (and every index on PostgreSQL/SQLite) is created after the load.
--   * prepare creates the tables that do not exist yet (an existing empty table, e.g.
--     made by the BMK `create` command, is only loaded; a non-empty one is an error).
--   * Table pinning is the option --pin-tables (off: stock uniform choice).
--   * Several loader connections per table (load modes parallel / parallel_ordered)
--     use integer arithmetic: every row is loaded exactly once.

local ffi = require("ffi")
pcall(ffi.cdef, "int usleep(unsigned int usec);")
pcall(ffi.cdef, "int getpid(void);")
local C = ffi.C
local sync = require("SYNC_file")
local ws = require("bmk_workload_support")
local shm = require("bmk_shared")

local floor = math.floor

-- Options --------------------------------------------------------------------------

local ARG_INT = sysbench.cmdline.ARG_INT
local ARG_STRING = sysbench.cmdline.ARG_STRING

sysbench.cmdline.options = {
  table_size = { "Rows loaded into each table", 10000, ARG_INT },
  range_size = { "Ids covered by each range SELECT", 100, ARG_INT },
  tables = { "How many tables <table_name>1..N to use", 1, ARG_INT },
  point_selects = { "Point SELECTs per event", 10, ARG_INT },
  simple_ranges = { "Simple range SELECTs per event", 1, ARG_INT },
  sum_ranges = { "SUM(k) range SELECTs per event", 1, ARG_INT },
  order_ranges = { "ORDER BY c range SELECTs per event", 1, ARG_INT },
  distinct_ranges = { "DISTINCT c range SELECTs per event", 1, ARG_INT },
  index_updates = { "UPDATEs of the indexed column k per event", 1, ARG_INT },
  non_index_updates = { "UPDATEs of the non-indexed column c per event", 1, ARG_INT },
  delete_inserts = { "DELETE + re-INSERT pairs per event", 1, ARG_INT },
  range_selects = { "Run the four kinds of range SELECTs", true },
  auto_inc = { "Let the server assign ids (AUTO_INCREMENT, SERIAL, SQLite rowid); off: "
    .. "the client writes them", true },
  create_table_options = { "Text appended to every CREATE TABLE", "", ARG_STRING },
  skip_trx = { "No BEGIN/COMMIT: every statement autocommits", false },
  secondary = { "Index id with a plain index xid instead of the primary key", false },
  create_secondary = { "Build the index k_N on column k after the load", true },
  reconnect = { "Open a new connection every N events (0 = never)", 0, ARG_INT },
  pgsql_variant = { "PostgreSQL flavour; 'redshift' builds no k index and runs no "
    .. "DELETE/INSERT pairs", "", ARG_STRING },

  -- BMK-kit extensions
  table_name = { "Base name of the tables (tables are <table_name>1..N)", "sbtest",
    ARG_STRING },
  pin_tables = { "Pin users to tables: with threads >= tables, worker t only uses "
    .. "table (t mod tables)+1 (64 users on 8 tables = 8 groups of 8)", false },
  mysql_table_partitions = { "Use N RANGE(id) partitions per table (MySQL, N > 1)", 0,
    ARG_INT },
  rand_data = { "Percentage (0..100) of random characters in c and pad values", 100,
    ARG_INT },
  rnd_data = { "Alias of --rand-data (BMK-kit spelling)", 100, ARG_INT },
  extra_cols = { "Number of extra columns col1..colN added to each table", 0, ARG_INT },
  extra_cols_type = { "SQL type of the extra columns", "VARCHAR(32)", ARG_STRING },
  extra_cols_default = { "Value template loaded into the extra columns ('#' = random "
    .. "digit, '@' = random letter)", "1234567890-1234567890-1234567890", ARG_STRING },
  extra_cols_options = { "Column options of the extra columns (e.g. NOT NULL)", "",
    ARG_STRING },
  extra_query_before = { "SQL executed at the start of every event, before BEGIN", "",
    ARG_STRING },
  extra_query_after = { "SQL executed at the end of every event, after COMMIT", "",
    ARG_STRING },
  select_cols = { "Column list of point selects, simple and order ranges (e.g. *, "
    .. "'id,k', JSON_OBJECT(id,k,c,pad))", "c", ARG_STRING },
  select_star = { "Alias of --select-cols (BMK-kit spelling); wins when set", "",
    ARG_STRING },
  by_secidx = { "Point/range selects and non-index updates use column k instead of id",
    false },
  update_range_size = { "N > 0: index and non-index UPDATEs update a range of N ids", 0,
    ARG_INT },
  inserts_only = { "Number of auto-increment INSERTs per event (inserts-only workload)",
    1, ARG_INT },
  mysql_query_hint = { "Optimizer hint added to every run-time query as /*+ hint */",
    "", ARG_STRING },
  rand_loop = { "Id generator: 0 = rand-type, 1 = chunk, 2 = shift, 3 = loop", 0,
    ARG_INT },
  rnd_loop = { "Alias of --rand-loop (BMK-kit spelling)", 0, ARG_INT },
  sleep_before_commit = { "Sleep N microseconds before each COMMIT", 0, ARG_INT },
  sleep_after_query = { "Sleep N microseconds after each query", 0, ARG_INT },
  load_mode = { "Data load mode of prepare: original, parallel or parallel_ordered",
    "parallel", ARG_STRING },
  load_bulk_size = { "Rows per id chunk when several loaders share a table (commits "
    .. "stay every 20000 rows)", 1000, ARG_INT },
  load_tables_at_once = { "Tables the parallel load modes load at the same time (0 = "
    .. "auto: on InnoDB as many as fit in its buffer pool, elsewhere all)", 0, ARG_INT },
  trx_retry = { "Replay the same ids when a transaction is restarted after a "
    .. "deadlock, lock wait timeout or lost connection", false },
}
ws.declare_common_options(sysbench.cmdline.options, { "mysql_storage_engine",
  "mysql_table_options", "mysql_table_compression", "mysql_session_options",
  "mysql_check_charset", "sync_file", "sync_wait", "opt_debug" })

-- Option access that also works in the main state before the options are parsed
-- (bmk_workload_support; globals so that scripts may override them).
opt_bool = ws.opt_bool
opt_num = ws.opt_num
opt_str = ws.opt_str

-- Effective values of the options that have two spellings.
function get_rand_data()
  local v = opt_num("rnd_data")
  if v == 100 then
    v = opt_num("rand_data")
  end
  return v
end

function get_rand_loop()
  local v = opt_num("rnd_loop")
  if v == 0 then
    v = opt_num("rand_loop")
  end
  return v
end

function get_select_cols()
  local v = opt_str("select_star")
  if v == "" then
    v = opt_str("select_cols")
  end
  if v == "" then
    v = "c"
  end
  return v
end

function get_table_name(n)
  return opt_str("table_name") .. n
end

-- Checks the option values; applies pgsql_variant. Raises an error on bad values.
function check_options()
  local p = get_rand_data()
  if p < 0 or p > 100 then
    error("rand_data must be in [0-100]", 0)
  end
  local rl = get_rand_loop()
  if rl ~= 0 and rl ~= 1 and rl ~= 2 and rl ~= 3 then
    error("rand_loop must be in [0-3]", 0)
  end
  local lm = opt_str("load_mode")
  if lm ~= "original" and lm ~= "parallel" and lm ~= "parallel_ordered"
      and lm ~= "ordered" then
    error("load_mode must be one of original, parallel, parallel_ordered", 0)
  end
  if opt_num("tables") < 1 then
    error("tables must be at least 1", 0)
  end
  if opt_num("load_tables_at_once") < 0 then
    error("load_tables_at_once must be 0 (auto) or more", 0)
  end
  if opt_str("pgsql_variant") == "redshift" then
    sysbench.opt.create_secondary = false
    sysbench.opt.delete_inserts = 0
  end
end

-- Value templates (rand_data) ------------------------------------------------------

local function value_template(groups, p)
  local rnd, fix = {}, {}
  for i = 1, groups do
    rnd[i] = "###########"
    fix[i] = "1234567890X"
  end
  local r = table.concat(rnd, "-")
  local f = table.concat(fix, "-")
  local nr = floor(p * #r / 100)
  return r:sub(1, nr) .. f:sub(1, #r - nr)
end

c_value_template = value_template(10, 100)
pad_value_template = value_template(5, 100)

function init_value_templates()
  local p = get_rand_data()
  c_value_template = value_template(10, p)
  pad_value_template = value_template(5, p)
end

function get_c_value()
  return sysbench.rand.string(c_value_template)
end

function get_pad_value()
  return sysbench.rand.string(pad_value_template)
end

-- Drivers and connections ------------------------------------------------------------

-- "mysql", "pgsql" or "sqlite".
function driver_name()
  return ws.driver_kind(drv)
end

server_is_mariadb = ws.is_mariadb

-- Runs the --mysql-session-options statements (or env MYSQL_SESSION_OPTIONS) on c.
function apply_session_options(c)
  ws.apply_session_options(c)
end

function connect_db()
  drv = sysbench.sql.driver()
  con = drv:connect()
  apply_session_options(con)
  return con
end

-- Table choice and ids -----------------------------------------------------------------

pinned_table = nil

function init_table_pinning()
  pinned_table = nil
  local threads, tables = opt_num("threads"), opt_num("tables")
  if opt_bool("pin_tables") and threads >= tables then
    pinned_table = (sysbench.tid % tables) + 1
  end
end

-- The tables this worker prepares statements for.
function worker_tables()
  if pinned_table then
    return { pinned_table }
  end
  local t = {}
  for i = 1, opt_num("tables") do
    t[i] = i
  end
  return t
end

function get_table_num()
  if pinned_table then
    return pinned_table
  end
  return C.sb_rand_uniform(1, sysbench.opt.tables)
end

-- The id generator of --rand-loop (0 = the --rand-type distribution).
local id_lo, id_hi, id_shift = 1, 10000, 1
local loop_v, loop_n = 0, 0
local rand_loop = 0

local function gen_id_default()
  return C.sb_rand_default(id_lo, id_hi)
end

local function gen_id_shift()
  local x = C.sb_rand_default(1, id_hi)
  local id = x - (x % id_shift) + sysbench.tid + 1
  if id > id_hi and id - id_shift >= 1 then
    id = id - id_shift
  end
  return id
end

local function gen_id_loop()
  if loop_v == 0 or loop_n > 1000000 then
    loop_v = C.sb_rand_default(1, id_hi)
    loop_n = 0
  end
  loop_v = loop_v + 77777
  loop_n = loop_n + 1
  return (loop_v % id_hi) + 1
end

local gen_id = gen_id_default

function init_id_generator()
  local S = opt_num("table_size")
  local P = opt_num("threads")
  local T = opt_num("tables")
  local tid = sysbench.tid
  if S < 1 then
    S = 1
  end
  rand_loop = get_rand_loop()
  id_lo, id_hi = 1, S
  gen_id = gen_id_default
  if rand_loop == 1 then
    local range, chunk
    if P < T then
      range = floor(S / P)
      chunk = tid
    else
      local nb = floor(P / T)
      range = floor(S / nb)
      chunk = floor(tid / T) % nb
    end
    if range < 1 then
      range = 1
    end
    id_lo = 1 + chunk * range
    id_hi = id_lo + range - 1
    if id_hi > S then
      id_hi = S
    end
    if id_lo > id_hi then
      id_lo = id_hi
    end
  elseif rand_loop == 2 then
    id_shift = floor(S / P)
    if id_shift < 1 then
      id_shift = 1
    end
    gen_id = gen_id_shift
  elseif rand_loop == 3 then
    loop_v, loop_n = 0, 0
    gen_id = gen_id_loop
  end
end

-- --trx-retry: ids drawn inside a transaction are recorded so that a restarted
-- transaction replays them. begin() rewinds the cursor, commit() clears the list.
local trx_retry = false
local retry_ids, retry_pos = {}, nil

function get_id()
  if retry_pos then
    local v = retry_ids[retry_pos]
    if v == nil then
      v = gen_id()
      retry_ids[retry_pos] = v
    end
    retry_pos = retry_pos + 1
    return v
  end
  return gen_id()
end

-- Statements ---------------------------------------------------------------------------

local function hint_text()
  local h = opt_str("mysql_query_hint")
  if h == "" then
    return ""
  end
  return "/*+ " .. h .. " */ "
end

-- stmt_defs[key] = { SQL with %u for the table number, bind types... }; a CHAR bind is
-- { sysbench.sql.type.CHAR, length }.
function build_stmt_defs()
  local T = sysbench.sql.type
  local H = hint_text()
  local cols = get_select_cols()
  local key = opt_bool("by_secidx") and "k" or "id"
  local tn = opt_str("table_name"):gsub("%%", "%%%%") .. "%u"
  stmt_defs = {
    point_selects = {
      "SELECT " .. H .. cols .. " FROM " .. tn .. " WHERE " .. key .. "=?", T.INT },
    simple_ranges = {
      "SELECT " .. H .. cols .. " FROM " .. tn .. " WHERE " .. key .. " BETWEEN ? AND ?",
      T.INT, T.INT },
    sum_ranges = {
      "SELECT " .. H .. "SUM(k) FROM " .. tn .. " WHERE " .. key .. " BETWEEN ? AND ?",
      T.INT, T.INT },
    order_ranges = {
      "SELECT " .. H .. cols .. " FROM " .. tn .. " WHERE " .. key
        .. " BETWEEN ? AND ? ORDER BY c", T.INT, T.INT },
    distinct_ranges = {
      "SELECT " .. H .. "DISTINCT c FROM " .. tn .. " WHERE " .. key
        .. " BETWEEN ? AND ? ORDER BY c", T.INT, T.INT },
    index_updates = {
      "UPDATE " .. H .. tn .. " SET k=k+1 WHERE id=?", T.INT },
    index_updates_range = {
      "UPDATE " .. H .. tn .. " SET k=k+1 WHERE id BETWEEN ? AND ?", T.INT, T.INT },
    non_index_updates = {
      "UPDATE " .. H .. tn .. " SET c=? WHERE " .. key .. "=?", { T.CHAR, 120 }, T.INT },
    non_index_updates_range = {
      "UPDATE " .. H .. tn .. " SET c=? WHERE " .. key .. " BETWEEN ? AND ?",
      { T.CHAR, 120 }, T.INT, T.INT },
    deletes = {
      "DELETE " .. H .. "FROM " .. tn .. " WHERE id=?", T.INT },
    inserts = {
      "INSERT " .. H .. "INTO " .. tn .. " (id, k, c, pad) VALUES (?, ?, ?, ?)",
      T.INT, T.INT, { T.CHAR, 120 }, { T.CHAR, 60 } },
  }
  -- Plain-text point select (the reconnect workload): table number, then the id.
  point_select_text = "SELECT " .. H .. cols .. " FROM " .. tn .. " WHERE " .. key .. "=%d"
end

build_stmt_defs()

stmt = {}
param = {}
prepared_kinds = {}

local function note_prepared(key)
  for _, k in ipairs(prepared_kinds) do
    if k == key then
      return
    end
  end
  prepared_kinds[#prepared_kinds + 1] = key
end

function prepare_for_each_table(key)
  local def = stmt_defs[key]
  for _, t in ipairs(worker_tables()) do
    stmt[t] = stmt[t] or {}
    param[t] = param[t] or {}
    local s = con:prepare(string.format(def[1], t))
    stmt[t][key] = s
    local nparam = #def - 1
    if nparam > 0 then
      local ps = {}
      for p = 1, nparam do
        local btype = def[p + 1]
        if type(btype) == "table" then
          ps[p] = s:bind_create(btype[1], btype[2])
        else
          ps[p] = s:bind_create(btype)
        end
      end
      param[t][key] = ps
      s:bind_param(unpack(ps))
    end
  end
  note_prepared(key)
end

function prepare_begin()
  stmt.begin = con:prepare("BEGIN")
end

function prepare_commit()
  stmt.commit = con:prepare("COMMIT")
end

function prepare_point_selects()
  prepare_for_each_table("point_selects")
end

function prepare_simple_ranges()
  prepare_for_each_table("simple_ranges")
end

function prepare_sum_ranges()
  prepare_for_each_table("sum_ranges")
end

function prepare_order_ranges()
  prepare_for_each_table("order_ranges")
end

function prepare_distinct_ranges()
  prepare_for_each_table("distinct_ranges")
end

function prepare_index_updates()
  if opt_num("update_range_size") > 0 then
    prepare_for_each_table("index_updates_range")
  else
    prepare_for_each_table("index_updates")
  end
end

function prepare_non_index_updates()
  if opt_num("update_range_size") > 0 then
    prepare_for_each_table("non_index_updates_range")
  else
    prepare_for_each_table("non_index_updates")
  end
end

function prepare_delete_inserts()
  prepare_for_each_table("deletes")
  prepare_for_each_table("inserts")
end

function prepare_deletes()
  prepare_for_each_table("deletes")
end

function prepare_inserts()
  prepare_for_each_table("inserts")
end

-- Default statement set; workload scripts define their own prepare_statements.
function prepare_statements()
  if not opt_bool("skip_trx") then
    prepare_begin()
    prepare_commit()
  end
  prepare_point_selects()
  if opt_bool("range_selects") then
    prepare_simple_ranges()
    prepare_sum_ranges()
    prepare_order_ranges()
    prepare_distinct_ranges()
  end
  prepare_index_updates()
  prepare_non_index_updates()
  prepare_delete_inserts()
end

function close_statements()
  for t, bykey in pairs(stmt) do
    if type(t) == "number" then
      for _, s in pairs(bykey) do
        s:close()
      end
      stmt[t] = {}
      param[t] = {}
    end
  end
  if stmt.begin then
    stmt.begin:close()
    stmt.begin = nil
  end
  if stmt.commit then
    stmt.commit:close()
    stmt.commit = nil
  end
end

-- Worker life cycle ----------------------------------------------------------------------

local sleep_after_query = 0
local sleep_before_commit = 0
local extra_before, extra_after = "", ""
events_done = 0

local function bmk_options_in_use()
  for _, name in ipairs({ "mysql_query_hint", "select_star", "extra_query_before",
    "extra_query_after", "mysql_session_options", "sync_file" }) do
    if opt_str(name) ~= "" then
      return true
    end
  end
  if get_select_cols() ~= "c" or get_rand_data() ~= 100 or get_rand_loop() ~= 0 then
    return true
  end
  for _, name in ipairs({ "sleep_after_query", "sleep_before_commit", "update_range_size" }) do
    if opt_num(name) ~= 0 then
      return true
    end
  end
  return opt_bool("by_secidx") or opt_bool("trx_retry") or opt_bool("opt_debug")
      or opt_bool("pin_tables")
end

function print_startup()
  if sysbench.tid ~= 0 or not bmk_options_in_use() then
    return
  end
  local h = opt_str("mysql_query_hint")
  if h ~= "" then
    print("=> Using Query HINT : " .. h)
  end
  for _, key in ipairs(prepared_kinds) do
    local count_opt = ({ index_updates_range = "index_updates",
      non_index_updates_range = "non_index_updates", deletes = "delete_inserts",
      inserts = "delete_inserts" })[key] or key
    local line = string.format("=> using %s: %s", key, tostring(sysbench.opt[count_opt]))
    if key:find("_range$") then
      line = line .. " update-range-size: " .. opt_num("update_range_size")
    end
    print(line)
  end
  print(string.format("=> rand_data: %d(%%)", get_rand_data()))
  print("=> rand-type: " .. opt_str("rand_type"))
  print("=> rand-loop: " .. get_rand_loop())
  print("=> where-id-key: " .. (opt_bool("by_secidx") and "k" or "id"))
  print("=> select-cols: " .. get_select_cols())
  print("=> session-ops: " .. opt_str("mysql_session_options"))
  print("=> sleep-after-query: " .. opt_num("sleep_after_query"))
  print("=> sleep-before-commit: " .. opt_num("sleep_before_commit"))
  print("=> extra-query-before-event: " .. opt_str("extra_query_before"))
  print("=> extra-query-after-event: " .. opt_str("extra_query_after"))
  if pinned_table then
    print(string.format("=> pin-tables: %d users on %d tables", opt_num("threads"),
      opt_num("tables")))
  end
  if opt_bool("opt_debug") then
    local names = {}
    for k in pairs(sysbench.opt) do
      names[#names + 1] = k
    end
    table.sort(names)
    for _, k in ipairs(names) do
      local v = sysbench.cmdline.shown_value(k, sysbench.opt[k])
      if type(v) == "table" then
        v = table.concat(v, ",")
      end
      print(string.format("   %-28s = %s", k, tostring(v)))
    end
  end
end

-- Per-worker settings every state needs (workers of run and of parallel commands).
function init_worker_settings()
  check_options()
  init_value_templates()
  init_table_pinning()
  init_id_generator()
  trx_retry = opt_bool("trx_retry")
  retry_ids, retry_pos = {}, nil
  sleep_after_query = opt_num("sleep_after_query")
  sleep_before_commit = opt_num("sleep_before_commit")
  extra_before = opt_str("extra_query_before")
  extra_after = opt_str("extra_query_after")
end

function thread_init()
  init_worker_settings()
  connect_db()
  stmt = {}
  param = {}
  for _, t in ipairs(worker_tables()) do
    stmt[t] = {}
    param[t] = {}
  end
  local ok, err = pcall(prepare_statements)
  if not ok then
    -- A failed prepare raises only `SQL API error`; the SQL error says which.
    if type(err) == "string" and err:find("SQL API error", 1, true) and con ~= nil then
      err = con:prepare_error() or err
    end
    -- Missing tables are the user's to fix: said so, without a traceback.
    if ws.explain_missing_tables(err) then
      err = err:gsub("^[^\n]-:%d+: ", "")
    end
    error(err, 0)
  end
  print_startup()
  sync_start()
end

-- The --sync-file start barrier (end of thread_init).
function sync_start()
  ws.sync_wait()
end

function thread_done()
  close_statements()
  if con then
    con:disconnect()
  end
  if sysbench.tid == 0 then
    ws.sync_finish()
  end
end

function init()
  ws.sync_clean_stale()
end

function done()
  ws.sync_finish()
end

-- Reconnects (--reconnect=N) every N events: statements are re-prepared.
function check_reconnect()
  local n = sysbench.opt.reconnect
  if n and n > 0 then
    events_done = events_done + 1
    if events_done % n == 0 then
      close_statements()
      con:reconnect()
      apply_session_options(con)
      prepare_statements()
    end
  end
end

-- After a lost connection the driver has reconnected; statements are prepared again
-- before the event restarts.
local LOST_CONNECTION = { [2013] = true, [2006] = true, [2055] = true, [2011] = true }
sysbench.hooks.before_restart_event = function(err)
  if type(err) == "table" and LOST_CONNECTION[tonumber(err.sql_errno) or 0] then
    close_statements()
    apply_session_options(con)
    prepare_statements()
  end
end

-- Event helpers -----------------------------------------------------------------------

local function after_query()
  if sleep_after_query > 0 then
    C.usleep(sleep_after_query)
  end
end

-- Sleeps --sleep-after-query microseconds (no-op when 0).
after_each_query = after_query

function begin()
  if trx_retry then
    retry_pos = 1
  end
  stmt.begin:execute()
end

function commit()
  if sleep_before_commit > 0 then
    C.usleep(sleep_before_commit)
  end
  stmt.commit:execute()
  if trx_retry then
    retry_ids = {}
    retry_pos = nil
  end
end

function execute_extra_query_before()
  if extra_before ~= "" then
    con:query(extra_before)
  end
end

function execute_extra_query_after()
  if extra_after ~= "" then
    con:query(extra_after)
  end
end

function execute_point_selects()
  local tnum = get_table_num()
  local s = stmt[tnum].point_selects
  local p = param[tnum].point_selects
  for _ = 1, sysbench.opt.point_selects do
    p[1]:set(get_id())
    s:execute()
    after_query()
  end
end

local function execute_range(key, count)
  local tnum = get_table_num()
  local s = stmt[tnum][key]
  local p = param[tnum][key]
  local rs = sysbench.opt.range_size
  for _ = 1, count do
    local id = get_id()
    p[1]:set(id)
    p[2]:set(id + rs - 1)
    s:execute()
    after_query()
  end
end

function execute_simple_ranges()
  execute_range("simple_ranges", sysbench.opt.simple_ranges)
end

function execute_sum_ranges()
  execute_range("sum_ranges", sysbench.opt.sum_ranges)
end

function execute_order_ranges()
  execute_range("order_ranges", sysbench.opt.order_ranges)
end

function execute_distinct_ranges()
  execute_range("distinct_ranges", sysbench.opt.distinct_ranges)
end

function execute_range_selects()
  execute_simple_ranges()
  execute_sum_ranges()
  execute_order_ranges()
  execute_distinct_ranges()
end

function execute_index_updates()
  local tnum = get_table_num()
  local urs = sysbench.opt.update_range_size
  if urs > 0 then
    local s = stmt[tnum].index_updates_range
    local p = param[tnum].index_updates_range
    local id = get_id()
    for _ = 1, sysbench.opt.index_updates do
      p[1]:set(id)
      p[2]:set(id + urs - 1)
      s:execute()
      after_query()
    end
    return
  end
  local s = stmt[tnum].index_updates
  local p = param[tnum].index_updates
  for _ = 1, sysbench.opt.index_updates do
    p[1]:set(get_id())
    s:execute()
    after_query()
  end
end

function execute_non_index_updates()
  local tnum = get_table_num()
  local urs = sysbench.opt.update_range_size
  if urs > 0 then
    local s = stmt[tnum].non_index_updates_range
    local p = param[tnum].non_index_updates_range
    local id = get_id()
    for _ = 1, sysbench.opt.non_index_updates do
      p[1]:set(get_c_value())
      p[2]:set(id)
      p[3]:set(id + urs - 1)
      s:execute()
      after_query()
    end
    return
  end
  local s = stmt[tnum].non_index_updates
  local p = param[tnum].non_index_updates
  for _ = 1, sysbench.opt.non_index_updates do
    p[1]:set(get_c_value())
    p[2]:set(get_id())
    s:execute()
    after_query()
  end
end

function execute_delete_inserts()
  local tnum = get_table_num()
  local sd, si = stmt[tnum].deletes, stmt[tnum].inserts
  local pd, pi = param[tnum].deletes, param[tnum].inserts
  for _ = 1, sysbench.opt.delete_inserts do
    local id = get_id()
    local k = get_id()
    pd[1]:set(id)
    sd:execute()
    after_query()
    pi[1]:set(id)
    pi[2]:set(k)
    pi[3]:set(get_c_value())
    pi[4]:set(get_pad_value())
    si:execute()
    after_query()
  end
end

-- Text of an INSERT letting the server assign the id (auto_inc), for the current driver.
function insert_auto_id_sql(tnum, k, c, pad)
  local name = driver_name()
  local t = get_table_name(tnum)
  if name == "mysql" then
    return string.format("INSERT %sINTO %s (id, k, c, pad) VALUES (0, %d, '%s', '%s')",
      hint_text(), t, k, c, pad)
  end
  return string.format("INSERT %sINTO %s (k, c, pad) VALUES (%d, '%s', '%s')",
    hint_text(), t, k, c, pad)
end

-- BMK inserts-only helper: inserts_only auto-increment INSERTs.
function execute_inserts_only()
  local tnum = get_table_num()
  for _ = 1, sysbench.opt.inserts_only do
    con:query(insert_auto_id_sql(tnum, get_id(), get_c_value(), get_pad_value()))
    after_query()
  end
end

-- Schema and load -----------------------------------------------------------------------

-- Does table `name` exist? (catalog query per driver)
table_exists = ws.table_exists

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

-- Are ids given explicitly by the loader?
function explicit_ids()
  if not opt_bool("auto_inc") then
    return true
  end
  return driver_name() == "sqlite" and opt_bool("secondary")
end

-- The CREATE TABLE statement of table n for the current driver.
function create_table_sql(n)
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
function create_table_only(c, n)
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

function create_secondary_index(c, n)
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

-- Rows per load transaction on MySQL and PostgreSQL (about 4 MiB of rows: few log
-- flushes, bounded undo).
LOAD_TRX_ROWS = 20000

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
function load_chunks(c, n, chunks)
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
function load_insert_statements(c, n, S)
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
function create_table(drv_, con_, table_num)
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

-- Slot n-1 becomes 1 once table n is loaded and indexed (or has failed). Made here,
-- at load time, so that the main state allocates it before any worker exists.
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
function load_window(c)
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
function wait_load_turn(n, window)
  if window and n > window and n - window <= shm.MAX_THREADS then
    while tables_finished[n - window - 1] == 0 do
      sync.sleep_ms(5)
    end
  end
end

function finish_load_turn(n)
  if n <= shm.MAX_THREADS then
    tables_finished[n - 1] = 1
  end
end

function load_bulk_rows()
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
function loader_chunks(S, j, k, R, ordered)
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
function announce_load_window(c)
  local window, why = load_window(c)
  if window and sysbench.tid == 0 then
    print(string.format("Loading %d table%s at a time (%s)", window,
      window == 1 and "" or "s", why))
  end
  return window
end

-- prepare (parallel command): worker tid of P.
function cmd_prepare()
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
builtin_create_table = create_table

-- create (BMK): worker 0 creates every table (no data, no k index).
function cmd_create()
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
function cmd_warmup()
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
cmd_prewarm = cmd_warmup

-- cleanup: drop every table.
function cleanup()
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

sysbench.cmdline.commands = {
  prepare = { function() return cmd_prepare() end, sysbench.cmdline.PARALLEL_COMMAND },
  create = { function() return cmd_create() end, sysbench.cmdline.PARALLEL_COMMAND },
  warmup = { function() return cmd_warmup() end, sysbench.cmdline.PARALLEL_COMMAND },
  prewarm = { function() return cmd_prewarm() end, sysbench.cmdline.PARALLEL_COMMAND },
}
