-- sysbench.sql (the API sysbench scripts use to talk to databases), made by the prelude when a state first reads it:
-- connections, statements, bind parameters and result sets over the `bmk_*` FFI entry
-- points of sql.rs.

local core = ...
local sb, RESTART_EVENT = core.sb, core.RESTART_EVENT
local raw_sql = core.host.api("sql_raw")

local sql = {
  type = {
    NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6,
    TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12,
  },
  error = { NONE = 0, IGNORABLE = 1, FATAL = 2 },
}
local ffi = require("ffi")
local C = ffi.C
local type, tostring, error, setmetatable, select = type, tostring, error, setmetatable, select
local unpack = unpack

local sql_type_names = {}
for name, code in pairs(sql.type) do
  sql_type_names[code] = name
end

local function print_lines(lines)
  for i = 1, #lines do
    io.stdout:write(lines[i], "\n")
  end
  io.stdout:flush()
end

-- Turns the errinfo of a failed driver call into sysbench's behaviour (the driver
-- layer has counted the failure already, fatal or not): ignorable errors restart the
-- event; fatal ones may be downgraded by hooks.sql_error_ignorable, else print FATAL
-- lines and abort.
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
  errdesc.errcode = sql.error.FATAL
  local hook = sb.hooks.sql_error_ignorable
  if hook and hook(errdesc) then
    errdesc.errcode = RESTART_EVENT
    error(errdesc, 0)
  end
  print_lines(info.fatal_lines)
  -- As sysbench's, the message starts with the script line that ran the statement
  -- (the first frame outside this chunk), and so gets a traceback.
  local here = debug.getinfo(1, "S").source
  local level = 2
  local frame = debug.getinfo(level, "S")
  while frame and (frame.source == here or frame.what == "C") do
    level = level + 1
    frame = debug.getinfo(level, "S")
  end
  error(info.message, frame and level or 0)
end

-- The SQL objects are Rust objects behind FFI pointers (`bmk_*` entry points, sql.rs):
-- executing, binding values and reading result sets are FFI calls that LuaJIT compiles
-- into the event's trace. A connection and a statement each own one result set,
-- refilled by every query / execution; the handle itself is the `rs` scripts get, its
-- `nrows` / `nfields` are struct fields.
local lenbuf
local tnew = (function()
  local ok, f = pcall(require, "table.new")
  return ok and f or function() return {} end
end)()

local function declare_sql()
  ffi.cdef [[
typedef struct bmk_conn { const uint32_t nrows, nfields; uint32_t cursor; } bmk_conn;
typedef struct bmk_stmt { const uint32_t nrows, nfields; uint32_t cursor; } bmk_stmt;
void bmk_conn_free(bmk_conn *);
int bmk_conn_query(bmk_conn *, const char *, size_t);
bmk_stmt *bmk_conn_prepare(bmk_conn *, const char *, size_t);
int bmk_conn_bulk_init(bmk_conn *, const char *, size_t);
int bmk_conn_bulk_next(bmk_conn *, const char *, size_t);
int bmk_conn_bulk_done(bmk_conn *);
int bmk_conn_load_text(bmk_conn *, const char *, size_t, const char *, size_t,
  const char *, size_t, uint64_t *);
int bmk_conn_insert_generated(bmk_conn *, const char *, size_t, const char *, size_t,
  uint64_t, uint64_t *);
int bmk_conn_reconnect(bmk_conn *);
void bmk_conn_disconnect(bmk_conn *);
bool bmk_conn_more_results(bmk_conn *);
int bmk_conn_next_result(bmk_conn *);
void bmk_stmt_free(bmk_stmt *);
void bmk_stmt_close(bmk_stmt *);
void bmk_stmt_bind_reset(bmk_stmt *);
int bmk_stmt_bind_add(bmk_stmt *, uint32_t, double);
void bmk_stmt_set_null(bmk_stmt *, uint32_t);
void bmk_stmt_set_int(bmk_stmt *, uint32_t, int64_t);
void bmk_stmt_set_number(bmk_stmt *, uint32_t, double);
void bmk_stmt_set_text(bmk_stmt *, uint32_t, const char *, size_t);
int bmk_stmt_execute(bmk_stmt *);
const char *bmk_rs_cell(const void *, uint32_t, uint32_t, size_t *);
void bmk_rs_free(const void *);
]]
  lenbuf = ffi.new("size_t[1]")
  -- Result sets: rs.nrows, rs.nfields (struct fields), rs:fetch_row(), rs:free().
  local ResultSet = {}
  function ResultSet.fetch_row(rs)
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
    C.bmk_rs_free(rs)
  end
  local mt = { __index = ResultSet }
  ffi.metatype("bmk_conn", mt)
  ffi.metatype("bmk_stmt", mt)
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

local function failed(con)
  sql_failure(con, raw_sql.take_error())
end

-- A bind parameter: a Lua table holding the current value, read by execute().
local Param = {}
Param.__index = Param

function Param:set(value)
  self.value = value
end

function Param:set_rand_str(fmt)
  self.value = sb.rand.string(fmt)
end

local Statement = {}
Statement.__index = Statement

function Statement:bind_create(ty, max_len)
  if sql_type_names[ty] == nil then
    error("invalid sysbench.sql.type value " .. tostring(ty), 2)
  end
  return setmetatable({ type = ty, max_len = max_len or 0 }, Param)
end

function Statement:bind_param(...)
  local params = { ... }
  local n = select("#", ...)
  local h = self.h
  C.bmk_stmt_bind_reset(h)
  for i = 1, n do
    local p = params[i]
    if C.bmk_stmt_bind_add(h, p.type, tonumber(p.max_len) or 0) ~= 0 then
      error("invalid sysbench.sql.type value " .. tostring(p.type), 2)
    end
  end
  self.params = params
  self.nparams = n
end

-- Text of a value that is neither nil, number, string nor boolean (64-bit integer
-- cdata print as 123LL / 123ULL).
local function other_text(v)
  local s = tostring(v)
  return (s:gsub("U?LL$", ""))
end

function Statement:execute()
  local h = self.h
  local ps = self.params
  for i = 1, self.nparams do
    local v = ps[i].value
    local t = type(v)
    if t == "number" then
      C.bmk_stmt_set_number(h, i - 1, v)
    elseif t == "string" then
      C.bmk_stmt_set_text(h, i - 1, v, #v)
    elseif v == nil then
      C.bmk_stmt_set_null(h, i - 1)
    elseif t == "boolean" then
      C.bmk_stmt_set_int(h, i - 1, v and 1 or 0)
    else
      local s = other_text(v)
      C.bmk_stmt_set_text(h, i - 1, s, #s)
    end
  end
  local r = C.bmk_stmt_execute(h)
  if r == 1 then
    return h
  elseif r ~= 0 then
    failed(self.connection)
  end
  return nil
end

function Statement:close()
  C.bmk_stmt_close(self.h)
end

local Connection = {}
Connection.__index = Connection

function Connection:query(text)
  text = sql_text(text)
  local h = self.h
  local r = C.bmk_conn_query(h, text, #text)
  if r == 1 then
    return h
  elseif r ~= 0 then
    failed(self)
  end
  return nil
end

function Connection:query_row(text)
  local rs = self:query(text)
  if rs == nil then
    return nil
  end
  local row = rs:fetch_row()
  if row == nil then
    return nil
  end
  return unpack(row, 1, rs.nfields)
end

function Connection:prepare(text)
  text = sql_text(text)
  local h = C.bmk_conn_prepare(self.h, text, #text)
  if h == nil then
    failed(self)
  end
  return setmetatable({ h = ffi.gc(h, C.bmk_stmt_free), connection = self, params = {},
    nparams = 0 }, Statement)
end

function Connection:bulk_insert_init(prefix)
  prefix = sql_text(prefix)
  if C.bmk_conn_bulk_init(self.h, prefix, #prefix) ~= 0 then
    failed(self)
  end
end

function Connection:bulk_insert_next(tuple)
  tuple = sql_text(tuple)
  if C.bmk_conn_bulk_next(self.h, tuple, #tuple) ~= 0 then
    failed(self)
  end
end

function Connection:bulk_insert_done()
  if C.bmk_conn_bulk_done(self.h) ~= 0 then
    failed(self)
  end
end

-- bmk extension: loads `data` (a string, or a char pointer with its length `len`) into
-- table(columns) as tab-separated rows (LOAD DATA LOCAL INFILE / COPY FROM STDIN).
-- Returns the number of rows loaded (MySQL skips duplicate keys with a warning), or
-- false, having loaded nothing, when the connection has no such path (SQLite, or the
-- server refused it): the caller falls back to INSERTs.
local load_rows
function Connection:load_text(table_name, columns, data, len)
  len = len or #data
  load_rows = load_rows or ffi.new("uint64_t[1]")
  local r = C.bmk_conn_load_text(self.h, table_name, #table_name, columns, #columns, data,
    len, load_rows)
  if r < 0 then
    failed(self)
  end
  return r == 1 and tonumber(load_rows[0])
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
  load_rows = load_rows or ffi.new("uint64_t[1]")
  if C.bmk_conn_insert_generated(self.h, table_name, #table_name, spec, #spec, nrows,
      load_rows) < 0 then
    failed(self)
  end
  return tonumber(load_rows[0])
end

function Connection:reconnect()
  if C.bmk_conn_reconnect(self.h) ~= 0 then
    failed(self)
  end
end

function Connection:disconnect()
  C.bmk_conn_disconnect(self.h)
end

function Connection:more_results()
  return C.bmk_conn_more_results(self.h)
end

function Connection:next_result()
  local h = self.h
  local r = C.bmk_conn_next_result(h)
  if r == 1 then
    return h
  elseif r ~= 0 then
    failed(self)
  end
  return nil
end

local Driver = {}
Driver.__index = Driver

function Driver:name()
  return self.raw:name()
end

function Driver:connect()
  local ok, res = self.raw:connect()
  if not ok then
    print_lines(res.fatal_lines)
    error("connection creation failed", 2)
  end
  local h = ffi.gc(ffi.cast("bmk_conn *", res), C.bmk_conn_free)
  return setmetatable({ h = h, driver = self }, Connection)
end

function sql.driver(name)
  local raw, err = raw_sql.driver(name)
  if not raw then
    error(err, 2)
  end
  return setmetatable({ raw = raw }, Driver)
end

declare_sql()

return sql
