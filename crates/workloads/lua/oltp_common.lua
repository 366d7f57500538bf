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
local C = ffi.C
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

-- Are ids given explicitly by the loader?
function explicit_ids()
  if not opt_bool("auto_inc") then
    return true
  end
  return driver_name() == "sqlite" and opt_bool("secondary")
end

-- Rows per load transaction on MySQL and PostgreSQL (about 4 MiB of rows: few log
-- flushes, bounded undo).
LOAD_TRX_ROWS = 20000

-- The load window's shared slots (bmk_oltp_tables): made here, at load time, so that
-- the main state allocates them before any worker exists.
shm.block("oltp_tables_finished", shm.MAX_THREADS)

-- The commands' code is in bmk_oltp_tables, loaded by a state on the first call of one
-- of these globals: a worker of `run` never calls them, and would otherwise hold their
-- compiled code (26 KB of the 116 KB the module cost each state). Each global hands its
-- call on; a script may override any of them after the require, as before.
local oltp_tables
for _, name in ipairs({
  "create_table_sql",
  "create_table_only",
  "create_secondary_index",
  "load_chunks",
  "load_insert_statements",
  "create_table",
  "load_window",
  "wait_load_turn",
  "finish_load_turn",
  "load_bulk_rows",
  "loader_chunks",
  "announce_load_window",
  "cmd_prepare",
  "cmd_create",
  "cmd_warmup",
  "cleanup",
}) do
  _G[name] = function(...)
    oltp_tables = oltp_tables or require("bmk_oltp_tables")
    return oltp_tables[name](...)
  end
end
builtin_create_table = create_table
cmd_prewarm = cmd_warmup

sysbench.cmdline.commands = {
  prepare = { function() return cmd_prepare() end, sysbench.cmdline.PARALLEL_COMMAND },
  create = { function() return cmd_create() end, sysbench.cmdline.PARALLEL_COMMAND },
  warmup = { function() return cmd_warmup() end, sysbench.cmdline.PARALLEL_COMMAND },
  prewarm = { function() return cmd_prewarm() end, sysbench.cmdline.PARALLEL_COMMAND },
}
