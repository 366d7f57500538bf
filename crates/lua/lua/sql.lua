-- sysbench.sql (the API sysbench scripts use to talk to databases), made by the prelude when a state first reads it:
-- connections, statements, bind parameters and result sets over the `bmk_*` FFI entry
-- points of sql.rs, and for the calls that may wait for the server (connect, execute,
-- query, ...) over the Lua C functions of sql_waits.rs.

local core = ...
local sb, RESTART_EVENT = core.sb, core.RESTART_EVENT
local getfenv = getfenv
-- The running worker's `sysbench` table: workers that share a state share this module
-- too (see shared_state.lua), and each has hooks and a generator of its own.
local function worker_sb()
  return getfenv(0).sysbench or sb
end
local raw_sql = core.host.api("sql_raw")
local waits = core.host.api("sql_waits")

local sql = {
  type = {
    NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6,
    TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12,
  },
  error = { NONE = 0, IGNORABLE = 1, FATAL = 2 },
}
local ffi = require("ffi")
local C = core.C
local type, tostring, error, setmetatable, select = type, tostring, error, setmetatable, select
local unpack = unpack

local sql_type_names = {}
for name, code in pairs(sql.type) do
  sql_type_names[code] = name
end

-- Where this file's functions are on the stack: errors are raised at the script's level.
local HERE = debug.getinfo(1, "S").source

-- Raises `msg` at the function that called the API (`up` = 0), or `up` levels further
-- out, as sysbench's error levels do; a C caller (pcall) gives no position.
local function raise(msg, up)
  local level = 2
  local frame = debug.getinfo(level, "S")
  while frame and frame.source == HERE do
    level = level + 1
    frame = debug.getinfo(level, "S")
  end
  if not frame then
    error(msg, 0)
  end
  error(msg, level + up)
end

-- The driver's FATAL lines of a failure, through sysbench's log.
local function log_fatal(lines)
  for i = 1, #lines do
    raw_sql.log(0, lines[i])
  end
end

-- Status of a bmk_* call that misused the API: its ALERT is printed, no SQL error.
local API_ERROR = -2
-- Status of a call of `waits` given something that is not its handle or text.
local BAD_ARGUMENT = -3

-- Turns the errinfo of a failed driver call into sysbench's behaviour (the driver
-- layer has counted the failure already, fatal or not): ignorable errors restart the
-- event; fatal ones may be downgraded by hooks.sql_error_ignorable, else print FATAL
-- lines and raise `SQL error, ...` at the API's caller.
local function sql_failure(con, info)
  local errdesc = {
    connection = con,
    query = info.query,
    sql_errno = info.sql_errno,
    sql_state = info.sql_state,
    sql_errmsg = info.sql_errmsg,
    errcode = RESTART_EVENT,
  }
  if info.kind == "ignorable" then
    error(errdesc, 0)
  end
  log_fatal(info.fatal_lines)
  errdesc.errcode = nil
  local hook = worker_sb().hooks.sql_error_ignorable
  if type(hook) == "function" and hook(errdesc) then
    errdesc.errcode = RESTART_EVENT
    error(errdesc, 0)
  end
  raise(info.message, 0)
end

-- A failed query, execution or next_result: an API misuse is `SQL API error` one
-- level further out than an SQL error (sysbench raises it from a tail call).
local function failed(con, status)
  if status == API_ERROR then
    raise("SQL API error", 1)
  elseif status == BAD_ARGUMENT then
    raise("SQL API error: bad argument", 1)
  end
  sql_failure(con, raw_sql.take_error())
end

-- The SQL objects are Rust objects behind FFI pointers (`bmk_*` entry points, sql.rs),
-- as sysbench's are C objects: a connection is a `bmk_conn *`, a statement a
-- `bmk_stmt *`, a result set a `bmk_rs *` over the handle that holds it (a connection
-- and a statement each own one, refilled by every query / execution). Binding values
-- and reading result sets are FFI calls that LuaJIT compiles into the event's trace;
-- what may wait for the server is a call of `waits`, which ends the trace (see
-- sql_waits.rs). A statement that returns no rows gives a NULL result, which equals
-- nil, as in sysbench.
local lenbuf
local tnew = (function()
  local ok, f = pcall(require, "table.new")
  return ok and f or function() return {} end
end)()

local ResultSet, Connection, Statement = {}, {}, {}
local rs_of, NO_RESULT
-- The connection pointer type, looked up once (a type named by a string is parsed
-- again at every cast).
local conn_ptr, stmt_ptr

local function declare_sql()
  ffi.cdef [[
typedef struct bmk_conn { const uint32_t nrows, nfields; uint32_t cursor; } bmk_conn;
typedef struct bmk_stmt { const uint32_t nrows, nfields; uint32_t cursor; } bmk_stmt;
typedef struct bmk_rs { const uint32_t nrows, nfields; uint32_t cursor; } bmk_rs;
void bmk_conn_free(bmk_conn *);
bool bmk_conn_more_results(bmk_conn *);
void bmk_stmt_free(bmk_stmt *);
void bmk_stmt_bind_reset(bmk_stmt *);
int bmk_stmt_bind_add(bmk_stmt *, uint32_t, double);
void bmk_stmt_set_null(bmk_stmt *, uint32_t);
void bmk_stmt_set_int(bmk_stmt *, uint32_t, int64_t);
void bmk_stmt_set_number(bmk_stmt *, uint32_t, double);
void bmk_stmt_set_text(bmk_stmt *, uint32_t, const char *, size_t);
const char *bmk_rs_cell(const void *, uint32_t, uint32_t, size_t *);
int bmk_rs_free(const void *);
]]
  lenbuf = ffi.new("size_t[1]")
  local rs_ptr = ffi.typeof("bmk_rs *")
  rs_of = function(h)
    return ffi.cast(rs_ptr, h)
  end
  NO_RESULT = ffi.cast(rs_ptr, nil)
  conn_ptr = ffi.typeof("bmk_conn *")
  stmt_ptr = ffi.typeof("bmk_stmt *")
  -- Result sets: rs.nrows, rs.nfields (struct fields), rs:fetch_row(), rs:free().
  function ResultSet.fetch_row(rs)
    if rs == nil then
      return nil
    end
    local row = rs.cursor
    if row >= rs.nrows then
      return nil
    end
    rs.cursor = row + 1
    local n = rs.nfields
    local t = tnew(n, 0)
    for col = 0, n - 1 do
      local p = C.bmk_rs_cell(rs, row, col, lenbuf)
      if p ~= nil then
        t[col + 1] = ffi.string(p, lenbuf[0])
      end
    end
    return t
  end
  function ResultSet.free(rs)
    if C.bmk_rs_free(rs) ~= 0 then
      raise("db_free_results() failed", 0)
    end
    return true
  end
  ffi.metatype("bmk_rs", {
    __index = ResultSet,
    __tostring = function() return "<sql_result>" end,
  })
  ffi.metatype("bmk_conn", {
    __index = Connection,
    __tostring = function() return "<sql_connection>" end,
  })
  ffi.metatype("bmk_stmt", {
    __index = Statement,
    __tostring = function() return "<sql_statement>" end,
  })
end

-- SQL text argument: strings, numbers coerced (as the Lua C API would).
local function sql_text(text)
  if type(text) ~= "string" then
    if type(text) ~= "number" then
      error("bad argument: string expected, got " .. type(text), 3)
    end
    text = tostring(text)
  end
  return text
end

-- Text of a value that is neither nil, number, string nor boolean (64-bit integer
-- cdata print as 123LL / 123ULL).
local function other_text(v)
  local s = tostring(v)
  return (s:gsub("U?LL$", ""))
end

-- Puts `v` as parameter `i` (0-based) of statement `h`.
local function push_value(h, i, v)
  local t = type(v)
  if t == "number" then
    C.bmk_stmt_set_number(h, i, v)
  elseif t == "string" then
    C.bmk_stmt_set_text(h, i, v, #v)
  elseif v == nil then
    C.bmk_stmt_set_null(h, i)
  elseif t == "boolean" then
    C.bmk_stmt_set_int(h, i, v and 1 or 0)
  else
    local s = other_text(v)
    C.bmk_stmt_set_text(h, i, s, #s)
  end
end

-- The types a parameter can have, as sysbench supports them.
local BINDABLE = {}
for _, name in ipairs({ "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE",
    "CHAR", "VARCHAR" }) do
  BINDABLE[sql.type[name]] = true
end
local TEXT = { [sql.type.CHAR] = true, [sql.type.VARCHAR] = true }

-- A bind parameter: its current value and where it is bound (statement handle and
-- 0-based index pairs); setting it puts the value into those statements at once, so
-- executing reads nothing from Lua.
local Param = {}
Param.__index = Param
Param.__tostring = function() return "<sql_param>" end

function Param:set(value)
  self.value = value
  local b = self.bound
  for k = 1, #b, 2 do
    push_value(b[k], b[k + 1], value)
  end
end

function Param:set_rand_str(fmt)
  if not TEXT[self.type] then
    error("Unsupported argument type: " .. tostring(self.type), 2)
  end
  self:set(worker_sb().rand.string(fmt))
end

-- The connection each statement was prepared on (for error descriptors).
local connection_of = setmetatable({}, { __mode = "k" })

function Statement:bind_create(ty, max_len)
  if not BINDABLE[ty] then
    error("Unsupported argument type: " .. tostring(ty), 2)
  end
  return setmetatable({ type = ty, max_len = max_len or 0, bound = {} }, Param)
end

function Statement:bind_param(...)
  local n = select("#", ...)
  if n < 1 then
    return nil
  end
  C.bmk_stmt_bind_reset(self)
  for i = 1, n do
    local p = select(i, ...)
    if C.bmk_stmt_bind_add(self, p.type, tonumber(p.max_len) or 0) ~= 0 then
      error("Unsupported argument type: " .. tostring(p.type), 2)
    end
    local b = p.bound
    for k = #b - 1, 1, -2 do
      if b[k] == self then
        table.remove(b, k + 1)
        table.remove(b, k)
      end
    end
    b[#b + 1] = self
    b[#b + 1] = i - 1
    push_value(self, i - 1, p.value)
  end
  return 0
end

function Statement:execute()
  local r = waits.execute(self)
  if r == 1 then
    return rs_of(self)
  elseif r ~= 0 then
    failed(connection_of[self], r)
  end
  return NO_RESULT
end

-- The next result of a statement that returned several (a stored procedure): they
-- come after its first one on its connection.
function Statement:next_result()
  local con = connection_of[self]
  local r = waits.next_result(con)
  if r == 1 then
    return rs_of(con)
  elseif r ~= 0 then
    failed(con, r)
  end
  return NO_RESULT
end

function Statement:close()
  if waits.close(self) == BAD_ARGUMENT then
    raise("SQL API error: bad argument", 0)
  end
  return 0
end

function Connection:query(text)
  text = sql_text(text)
  local r = waits.query(self, text)
  if r == 1 then
    return rs_of(self)
  elseif r ~= 0 then
    failed(self, r)
  end
  return NO_RESULT
end

function Connection:query_row(text)
  local rs = self:query(text)
  if rs == nil or rs.nrows == 0 then
    return nil
  end
  local row = rs:fetch_row()
  if row == nil then
    return nil
  end
  return unpack(row, 1, rs.nfields)
end

-- The SQL error of each connection's last failed prepare, for `prepare_error()`.
local prepare_error_of = setmetatable({}, { __mode = "k" })

-- bmk extension: the `SQL error, errno = N, state = 'S': ...` text of the last prepare
-- that failed on this connection (sysbench's prepare raises only `SQL API error`), or
-- nil. bmk's workloads read it to tell a missing table from other failures.
function Connection:prepare_error()
  return prepare_error_of[self]
end

function Connection:prepare(text)
  text = sql_text(text)
  local h = waits.prepare(self, text)
  if h == nil then
    -- sysbench prints the driver's lines and raises no SQL error for a prepare.
    local info = raw_sql.take_error()
    if info then
      log_fatal(info.fatal_lines)
      prepare_error_of[self] = info.message
    end
    raise("SQL API error", 0)
  end
  h = ffi.gc(ffi.cast(stmt_ptr, h), C.bmk_stmt_free)
  connection_of[h] = self
  return h
end

-- The bulk calls fail as sysbench's asserts do: the driver's lines, then
-- `db_bulk_insert_<step>() failed` at the caller.
local function bulk_status(r, step)
  if r ~= 0 then
    if r ~= API_ERROR and r ~= BAD_ARGUMENT then
      log_fatal(raw_sql.take_error().fatal_lines)
    end
    raise("db_bulk_insert_" .. step .. "() failed", 0)
  end
  return true
end

function Connection:bulk_insert_init(prefix)
  prefix = sql_text(prefix)
  return bulk_status(waits.bulk_init(self, prefix), "init")
end

function Connection:bulk_insert_next(tuple)
  tuple = sql_text(tuple)
  return bulk_status(waits.bulk_next(self, tuple), "next")
end

function Connection:bulk_insert_done()
  return bulk_status(waits.bulk_done(self), "done")
end

-- bmk extension: loads `data` (a string, or a char pointer with its length `len`) into
-- table(columns) as tab-separated rows (LOAD DATA LOCAL INFILE / COPY FROM STDIN).
-- Returns the number of rows loaded (MySQL skips duplicate keys with a warning), or
-- false, having loaded nothing, when the connection has no such path (SQLite, or the
-- server refused it): the caller falls back to INSERTs.
function Connection:load_text(table_name, columns, data, len)
  len = len or #data
  if type(data) ~= "string" then
    -- A char pointer: its address, which the C function reads `len` bytes at.
    data = tonumber(ffi.cast("uintptr_t", data))
  end
  local r, rows = waits.load_text(self, table_name, columns, data, len)
  if r < 0 then
    failed(self, r)
  end
  return r == 1 and rows
end

-- bmk extension: inserts `nrows` rows made in Rust into `table_name`, the driver's
-- cheapest way (MariaDB bulk execute, PostgreSQL COPY, else multi-row INSERTs), in the
-- current transaction. `columns` is an array of {name, kind, argument}: kind "seq"
-- (integers counting up from the argument), "rand" (rand.default(1, argument)),
-- "template" (rand.string(argument)) or "text" (the argument). Returns the number of
-- rows inserted.
local GENERATED = { seq = "%d", rand = "%d", template = "%s", text = "%s" }
function Connection:insert_generated(table_name, columns, nrows)
  local lines = {}
  for i, col in ipairs(columns) do
    local name, kind, arg = col[1], col[2], col[3]
    local fmt = GENERATED[kind]
    if type(name) ~= "string" or not fmt or arg == nil then
      error(string.format("insert_generated: column %d must be {name, kind, argument} "
        .. "with kind seq, rand, template or text", i), 2)
    end
    local text = string.format(fmt, arg):gsub("\\", "\\\\"):gsub("\n", "\\n")
    lines[i] = name .. "\t" .. kind .. "\t" .. text
  end
  local spec = table.concat(lines, "\n")
  local r, rows = waits.insert_generated(self, table_name, spec, nrows)
  if r < 0 then
    failed(self, r)
  end
  return rows
end

-- sysbench 1.0.20's PostgreSQL driver cannot reconnect: it says so and goes on.
local RECONNECT_UNSUPPORTED = sb.version == "1.0.20"
-- The driver name of each connection, for that check (kept only then: a table entry per
-- connection is work for every connect and the collector).
local driver_name_of = setmetatable({}, { __mode = "k" })

function Connection:reconnect()
  if RECONNECT_UNSUPPORTED and driver_name_of[self] == "pgsql" then
    raw_sql.log(1, "ALERT: reconnect is not supported by the current driver")
    return true
  end
  local r = waits.reconnect(self)
  if r ~= 0 then
    if r ~= API_ERROR and r ~= BAD_ARGUMENT then
      log_fatal(raw_sql.take_error().fatal_lines)
    end
    raise("assertion failed!", 0)
  end
  return true
end

function Connection:disconnect()
  if waits.disconnect(self) == BAD_ARGUMENT then
    raise("SQL API error: bad argument", 0)
  end
  return true
end

function Connection:more_results()
  return C.bmk_conn_more_results(self)
end

function Connection:next_result()
  local r = waits.next_result(self)
  if r == 1 then
    return rs_of(self)
  elseif r ~= 0 then
    failed(self, r)
  end
  return NO_RESULT
end

local Driver = {}
Driver.__index = Driver
Driver.__tostring = function() return "<sql_driver>" end

function Driver:name()
  return self.raw:name()
end

function Driver:connect()
  local raw = self.raw
  local res = waits.connect(raw:handle())
  if res == nil then
    log_fatal(raw_sql.take_error().fatal_lines)
    raise("connection creation failed", 0)
  end
  local h = ffi.gc(ffi.cast(conn_ptr, res), C.bmk_conn_free)
  if RECONNECT_UNSUPPORTED then
    driver_name_of[h] = self.raw:name()
  end
  return h
end

function sql.driver(name)
  local raw, err = raw_sql.driver(name)
  if not raw then
    raw_sql.log(0, "FATAL: " .. err)
    raise("failed to initialize the DB driver", 0)
  end
  return setmetatable({ raw = raw }, Driver)
end

declare_sql()

return sql
