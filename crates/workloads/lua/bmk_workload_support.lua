-- bmk_workload_support: the helpers every built-in workload family needs (OLTP,
-- TPC-C, dbSTRESS), written once: option access, driver and server detection,
-- connection setup (--mysql-session-options, --mysql-check-charset), MySQL table
-- options, catalog look-ups, transaction wrapping of loads, bulk inserts and the
-- --sync-file barrier wrappers. Not a workload: `require("bmk_workload_support")`.
--
-- Everything takes its connection as an argument; the only global read is the
-- scripts' `drv` (driver_kind), and connect() returns the driver and connection
-- instead of setting globals.

local sync = require("SYNC_file")
local shm = require("bmk_shared")

local M = {}

-- Options ----------------------------------------------------------------------------

local ARG_INT = sysbench.cmdline.ARG_INT
local ARG_STRING = sysbench.cmdline.ARG_STRING

-- The options every family declares alike.
M.COMMON_OPTIONS = {
  mysql_storage_engine = { "ENGINE of the tables (MySQL/MariaDB)", "innodb", ARG_STRING },
  mysql_table_options = { "Raw table options appended after the engine (MySQL)", "",
    ARG_STRING },
  mysql_table_compression = { "Table compression, e.g. lz4 or zlib (MySQL: "
    .. "COMPRESSION='x'; MariaDB: PAGE_COMPRESSED=1)", "", ARG_STRING },
  mysql_session_options = { "SQL statements separated by ';' run on every new "
    .. "connection (default: env MYSQL_SESSION_OPTIONS)", "", ARG_STRING },
  mysql_check_charset = { "Print the connection character set variables (MySQL)",
    false },
  sync_file = { "Start barrier: after initialisation wait until this file (absolute "
    .. "path) is removed", "", ARG_STRING },
  sync_wait = { "Polling interval of the start barrier, ms", 10, ARG_INT },
  opt_debug = { "Worker 0 prints every option and its value", false },
}

-- Adds the COMMON_OPTIONS `names` to the option table `options`.
function M.declare_common_options(options, names)
  for _, n in ipairs(names) do
    options[n] = M.COMMON_OPTIONS[n]
  end
end

-- The declared default of option `name` (nil when not declared).
local function default_of(name)
  local d = sysbench.cmdline.options[name]
  if d ~= nil then
    return d[2]
  end
  return nil
end

-- Option values; these also work in the main state before the options are parsed
-- (the declared default is used then).
function M.opt_raw(name)
  local v = sysbench.opt[name]
  if v == nil then
    v = default_of(name)
  end
  return v
end

local function truthy(v)
  if type(v) == "boolean" then
    return v
  end
  if type(v) == "number" then
    return v ~= 0
  end
  if type(v) == "string" then
    v = v:lower()
    return v == "on" or v == "true" or v == "yes" or v == "1"
  end
  return false
end

-- Boolean options and yes/no string options: on, true, yes, 1 (any case) are true.
function M.opt_bool(name)
  return truthy(M.opt_raw(name))
end

-- A number; a value that is not one falls back to the default, then to 0.
function M.opt_num(name)
  local v = tonumber(sysbench.opt[name])
  if v == nil then
    v = tonumber(default_of(name)) or 0
  end
  return v
end

function M.opt_str(name)
  local v = sysbench.opt[name]
  if v == nil then
    v = default_of(name) or ""
  end
  return tostring(v)
end

-- Drivers and servers --------------------------------------------------------------------

-- "mysql", "pgsql" or "sqlite": the name of driver d (default: the script's global
-- `drv` once connected), else --db-driver, whose "sqlite3" spelling is SQLite; every
-- other name speaks the MySQL dialect.
-- (Called on hot paths: the answer for the last driver object is cached.)
local kind_drv, kind_of_drv = nil, nil

local function kind_of(name)
  if name == "pgsql" or name == "sqlite" then
    return name
  end
  if name == "sqlite3" then
    return "sqlite"
  end
  return "mysql"
end

function M.driver_kind(d)
  d = d or rawget(_G, "drv")
  if d == nil then
    return kind_of(sysbench.opt.db_driver or "mysql")
  end
  if d ~= kind_drv then
    kind_drv, kind_of_drv = d, kind_of(d:name())
  end
  return kind_of_drv
end

local mariadb_cache = nil

-- Is the server behind c MariaDB? (asked once per Lua state)
function M.is_mariadb(c)
  if mariadb_cache == nil then
    local v = c:query_row("SELECT VERSION()")
    mariadb_cache = v ~= nil and tostring(v):find("MariaDB") ~= nil
  end
  return mariadb_cache
end

-- Connections ------------------------------------------------------------------------------

-- Runs the --mysql-session-options statements (default: env MYSQL_SESSION_OPTIONS,
-- which is then recorded as the option's value) on c, and with --mysql-check-charset
-- worker 0 prints the connection character set variables.
function M.apply_session_options(c, kind)
  local text = M.opt_str("mysql_session_options")
  if text == "" then
    text = os.getenv("MYSQL_SESSION_OPTIONS") or ""
    if text ~= "" then
      sysbench.opt.mysql_session_options = text
    end
  end
  for piece in text:gmatch("[^;]*") do
    if piece:match("%S") then
      c:query(piece)
    end
  end
  if sysbench.tid == 0 and M.opt_bool("mysql_check_charset")
      and (kind or M.driver_kind()) == "mysql" then
    -- SHOW works on MySQL and MariaDB whether performance_schema is on or not.
    local rs = c:query("SHOW SESSION VARIABLES WHERE Variable_name IN "
      .. "('character_set_client', 'character_set_connection', "
      .. "'character_set_results', 'collation_connection')")
    if rs ~= nil then
      for _ = 1, rs.nrows do
        local row = rs:fetch_row()
        print(string.format("   %-26s : %s", tostring(row[1]), tostring(row[2])))
      end
    end
  end
end

-- Opens a connection: setup(c, kind) (optional) runs first, then the session options.
-- Returns the driver and the connection.
function M.connect(setup)
  local d = sysbench.sql.driver()
  local c = d:connect()
  local kind = M.driver_kind(d)
  if setup then
    setup(c, kind)
  end
  M.apply_session_options(c, kind)
  return d, c
end

-- Schema -------------------------------------------------------------------------------------

-- Does table `name` exist in the current database / schema?
function M.table_exists(c, name)
  local k = M.driver_kind()
  local sql
  if k == "mysql" then
    sql = "SELECT COUNT(*) FROM information_schema.tables WHERE "
      .. "table_schema = DATABASE() AND table_name = '" .. name .. "'"
  elseif k == "pgsql" then
    sql = "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE "
      .. "schemaname = current_schema() AND tablename = '" .. name:lower() .. "'"
  else
    sql = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '"
      .. name .. "'"
  end
  local n = tonumber(c:query_row(sql))
  return n ~= nil and n > 0
end

-- MySQL/MariaDB: the ENGINE clause of --mysql-storage-engine ("" on other drivers).
function M.engine_clause()
  if M.driver_kind() ~= "mysql" then
    return ""
  end
  return " /*! ENGINE = " .. M.opt_str("mysql_storage_engine") .. " */"
end

-- MySQL/MariaDB: --mysql-table-options, then --mysql-table-compression (MySQL:
-- COMPRESSION='x'; MariaDB: PAGE_COMPRESSED=1 unless x is "none", the algorithm
-- being the server's innodb_compression_algorithm). "" on other drivers.
function M.table_extras(c)
  if M.driver_kind() ~= "mysql" then
    return ""
  end
  local s = ""
  local o = M.opt_str("mysql_table_options")
  if o ~= "" then
    s = s .. " " .. o
  end
  local comp = M.opt_str("mysql_table_compression")
  if comp ~= "" then
    if M.is_mariadb(c) then
      if comp:lower() ~= "none" then
        s = s .. " PAGE_COMPRESSED=1"
      end
    else
      s = s .. " COMPRESSION='" .. comp .. "'"
    end
  end
  return s
end

-- The whole MySQL table option text (engine, options, compression).
function M.table_options(c)
  return M.engine_clause() .. M.table_extras(c)
end

-- Loads ----------------------------------------------------------------------------------------

-- After a fatal SQL error `err` (the Lua error text): when it says a table does not
-- exist (MySQL 1146, PostgreSQL 42P01, SQLite), prints what to do about it (as the
-- native workers say it) and returns true.
function M.explain_missing_tables(err)
  if type(err) == "string" and (err:find("errno = 1146,", 1, true)
      or err:find("state = '42P01'", 1, true) or err:find("no such table", 1, true)) then
    print("FATAL: " .. require("bmk_workload_texts").missing_tables)
    return true
  end
  return false
end

-- Runs f() inside one transaction on SQLite (which otherwise commits, and syncs,
-- every statement); elsewhere f() runs as is.
function M.with_trx(c, f)
  if M.driver_kind() == "sqlite" then
    c:query("BEGIN")
    f()
    c:query("COMMIT")
  else
    f()
  end
end

-- prepare as a PARALLEL_COMMAND: body(tid, P, barrier) runs on every worker tid of P,
-- `barrier` being the bmk_shared phase barrier `barrier_name` over them. SQLite (one
-- writer): only worker 0 runs it, with P = 1. An error in one worker makes the others'
-- barrier waits fail instead of hang, and is raised again.
function M.parallel_prepare(barrier_name, body)
  local tid, P = sysbench.tid, sysbench.opt.threads
  if M.driver_kind() == "sqlite" then
    if tid ~= 0 then
      return
    end
    P = 1
  end
  local barrier = shm.barrier(barrier_name, P)
  local ok, err = pcall(body, tid, P, barrier)
  if not ok then
    barrier.abort()
    error(err, 0)
  end
end

-- One multi-row INSERT batch: rows_fn(add) calls add(tuple_text) for every row.
function M.bulk(c, prefix, rows_fn)
  c:bulk_insert_init(prefix)
  rows_fn(function(tuple)
    c:bulk_insert_next(tuple)
  end)
  c:bulk_insert_done()
end

-- The --sync-file barrier ------------------------------------------------------------------------

-- Main state, init(): removes files left by an earlier run.
function M.sync_clean_stale()
  sync.clean_stale(M.opt_str("sync_file"), M.opt_num("threads"))
end

-- End of thread_init: waits until the start barrier is released.
function M.sync_wait()
  sync.wait(M.opt_str("sync_file"), M.opt_num("sync_wait"), sysbench.tid,
    M.opt_num("threads"))
end

-- thread_done of worker 0 / done(): removes the run's barrier files.
function M.sync_finish()
  sync.finish(M.opt_str("sync_file"))
end

return M
