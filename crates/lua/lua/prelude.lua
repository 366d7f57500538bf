-- bmk's Lua prelude: the Lua half of the `sysbench` table.
--
-- Loaded into every Lua state (main and workers) before the script, with `host`, the
-- table of values and Rust functions that `state.rs` prepared. It declares the FFI
-- entry points of spec 2 §6, builds the sysbench.* API on top of them, and returns the
-- internal functions the Rust side calls: `call` (a protected call with traceback),
-- `thread_run` (the event loop) and `call_command`. Hot paths (event start/stop,
-- counters, random numbers) use ffi.C so LuaJIT compiles them into the loop's trace.

local host = ...
local ffi = require("ffi")

ffi.cdef [[
typedef enum { SB_CNT_OTHER, SB_CNT_READ, SB_CNT_WRITE, SB_CNT_TRX, SB_CNT_ERROR,
               SB_CNT_RECONNECT, SB_CNT_BYTES_READ, SB_CNT_BYTES_WRITTEN, SB_CNT_MAX } sb_counter_type;
void sb_counter_inc(int thread_id, sb_counter_type type);
void sb_event_start(int thread_id);
void sb_event_stop(int thread_id);
bool sb_more_events(int thread_id);
uint64_t sb_rand_uniform_uint64(void);
uint32_t sb_rand_default(uint32_t, uint32_t);
uint32_t sb_rand_uniform(uint32_t, uint32_t);
uint32_t sb_rand_gaussian(uint32_t, uint32_t);
uint32_t sb_rand_pareto(uint32_t, uint32_t);
uint32_t sb_rand_zipfian(uint32_t, uint32_t);
uint32_t sb_rand_unique(void);
void sb_rand_str(const char *fmt, char *buf);
uint32_t sb_rand_varstr(char *buf, uint32_t min, uint32_t max);
double sb_rand_uniform_double(void);
uint32_t sb_rand_special(uint32_t, uint32_t);
]]

local C = ffi.C
local type, tostring, rawget, xpcall, error = type, tostring, rawget, xpcall, error
local traceback = debug.traceback

local RESTART_EVENT = 1

sysbench = {
  version = host.version,
  version_string = host.version_string,
  tid = host.tid,
  opt = host.opt,
  error = { NONE = 0, RESTART_EVENT = RESTART_EVENT },
  hooks = {},
  report_default = host.report_default,
  report_csv = host.report_csv,
  report_json = host.report_json,
  histogram = { new = host.histogram_new },
}
local sb = sysbench

-- Command line ------------------------------------------------------------------------

local cmdline = {
  argv = host.argv,
  command = host.command,
  script_path = host.script_path,
  options = {},
  commands = {},
  ARG_NULL = 0, ARG_BOOL = 1, ARG_INT = 2, ARG_SIZE = 3, ARG_DOUBLE = 4,
  ARG_STRING = 5, ARG_LIST = 6, ARG_FILE = 7,
  PARALLEL_COMMAND = true,
  read_cmdline_options = host.read_cmdline_options,
  print_test_options = host.print_test_options,
}
sb.cmdline = cmdline

-- Commands that a global function of the same name implements (the classic API).
local GLOBAL_COMMANDS = { prepare = true, cleanup = true, help = true }

-- The function implementing a command: an entry of sysbench.cmdline.commands, else
-- for prepare, cleanup and help a global function of that name.
local function command_function(name)
  local commands = sb.cmdline.commands
  local entry = type(commands) == "table" and commands[name] or nil
  if type(entry) == "table" and type(entry[1]) == "function" then
    return entry[1], entry[2] == sb.cmdline.PARALLEL_COMMAND
  elseif type(entry) == "function" then
    return entry, false
  end
  local global = GLOBAL_COMMANDS[name] and rawget(_G, name)
  if type(global) == "function" then
    return global, false
  end
  return nil, false
end

function cmdline.command_defined(name)
  return command_function(name) ~= nil
end

function cmdline.command_parallel(name)
  local f, parallel = command_function(name)
  return f ~= nil and parallel
end

function cmdline.call_command(name)
  local f = command_function(name)
  if not f then
    error(string.format("unknown command '%s'", tostring(name)), 2)
  end
  return f()
end

-- Random numbers ------------------------------------------------------------------------

local strbuf, strbuf_len = nil, 0
local function scratch(n)
  if n > strbuf_len then
    strbuf_len = math.max(n, 2 * strbuf_len, 256)
    strbuf = ffi.new("char[?]", strbuf_len)
  end
  return strbuf
end

sb.rand = {
  uniform = function(a, b) return C.sb_rand_uniform(a, b) end,
  default = function(a, b) return C.sb_rand_default(a, b) end,
  gaussian = function(a, b) return C.sb_rand_gaussian(a, b) end,
  pareto = function(a, b) return C.sb_rand_pareto(a, b) end,
  zipfian = function(a, b) return C.sb_rand_zipfian(a, b) end,
  special = function(a, b) return C.sb_rand_special(a, b) end,
  unique = function() return C.sb_rand_unique() end,
  uniform_uint64 = function() return C.sb_rand_uniform_uint64() end,
  uniform_double = function() return C.sb_rand_uniform_double() end,
  string = function(fmt)
    local n = #fmt
    local buf = scratch(n)
    C.sb_rand_str(fmt, buf)
    return ffi.string(buf, n)
  end,
  varstring = function(min, max)
    local buf = scratch(math.max(min, max))
    local n = C.sb_rand_varstr(buf, min, max)
    return ffi.string(buf, n)
  end,
}

-- Errors -----------------------------------------------------------------------------

-- Text of an error value for the user.
local function describe(e)
  if type(e) == "table" then
    if e.__bmk_failure then
      return e.__bmk_failure
    elseif e.sql_errmsg ~= nil then
      return string.format("SQL error, errno = %s, state = '%s': %s",
        tostring(e.sql_errno), tostring(e.sql_state), tostring(e.sql_errmsg))
    end
  end
  return tostring(e)
end

-- Message handler of protected calls from Rust: message plus traceback, except for
-- failures that already carry their traceback.
local function with_traceback(e)
  if type(e) == "table" and e.__bmk_failure then
    return e.__bmk_failure
  end
  return traceback(describe(e), 2)
end

-- Message handler of the event loop: restartable errors pass through untouched.
local function event_error(e)
  if type(e) == "table" and e.errcode == RESTART_EVENT then
    return e
  end
  if type(e) == "table" and e.__bmk_failure then
    return e
  end
  return { __bmk_failure = traceback(describe(e), 2) }
end

-- SQL ----------------------------------------------------------------------------------

local sql = {
  type = {
    NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5, DOUBLE = 6,
    TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11, VARCHAR = 12,
  },
  error = { NONE = 0, IGNORABLE = 1, FATAL = 2 },
}
sb.sql = sql
local raw_sql = host.sql_raw
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

-- Turns the errinfo of a failed driver call into sysbench's behaviour: ignorable
-- errors (already counted by the driver layer) restart the event; fatal ones may be
-- downgraded by hooks.sql_error_ignorable, else print FATAL lines and abort.
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
    C.sb_counter_inc(sb.tid, C.SB_CNT_ERROR)
    errdesc.errcode = RESTART_EVENT
    error(errdesc, 0)
  end
  print_lines(info.fatal_lines)
  error(info.message, 0)
end

-- The SQL objects are Rust objects behind FFI pointers (`bmk_*` entry points, sql.rs):
-- executing, binding values and reading result sets are FFI calls that LuaJIT compiles
-- into the event's trace. A connection and a statement each own one result set,
-- refilled by every query / execution; the handle itself is the `rs` scripts get, its
-- `nrows` / `nfields` are struct fields. Declared on the first sql.driver() call, so
-- states that never touch SQL do not pay for the declarations.
local sql_declared = false
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
  sql_declared = true
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
  if not sql_declared then
    declare_sql()
  end
  return setmetatable({ raw = raw }, Driver)
end

-- Event loop ---------------------------------------------------------------------------

-- Runs events until the engine says stop or event() returns a truthy value. Kept free
-- of pcall so LuaJIT compiles the whole loop, event() included, into one trace; an
-- error unwinds to default_thread_run, which resumes the interrupted event.
local function run_events(tid)
  while C.sb_more_events(tid) do
    C.sb_event_start(tid)
    local stop = event(tid)
    C.sb_event_stop(tid)
    if stop then
      return
    end
  end
end

local function fail(err)
  if type(err) == "table" and err.__bmk_failure then
    error(err, 0)
  end
  error({ __bmk_failure = describe(err) }, 0)
end

-- Finishes an event whose first attempt raised the restartable `err`: calls
-- before_restart_event and retries until event() completes. Returns its result.
local function restart_event(tid, err)
  while true do
    local hook = sb.hooks.before_restart_event
    if hook then
      hook(err)
    end
    local ok, res = xpcall(event, event_error, tid)
    if ok then
      return res
    end
    if not (type(res) == "table" and res.errcode == RESTART_EVENT) then
      fail(res)
    end
    err = res
  end
end

local function default_thread_run(tid)
  if type(rawget(_G, "event")) ~= "function" then
    error({ __bmk_failure = "the script does not define the event() function" }, 0)
  end
  while true do
    local ok, err = xpcall(run_events, event_error, tid)
    if ok then
      return
    end
    if not (type(err) == "table" and err.errcode == RESTART_EVENT) then
      fail(err)
    end
    local stop = restart_event(tid, err)
    C.sb_event_stop(tid)
    if stop then
      return
    end
  end
end

-- --luajit-cmd: a LuaJIT control command like `luajit -j CMD[=ARG,...]`: on, off and
-- flush switch the JIT; any other name starts module jit.NAME with the arguments.
local function luajit_command(cmd)
  local name, args = cmd:match("^([%w_]+)=?(.*)$")
  if not name then
    error("invalid value '" .. cmd .. "' for option --luajit-cmd", 0)
  end
  if name == "on" or name == "off" or name == "flush" then
    jit[name]()
    return
  end
  local list = {}
  for a in args:gmatch("[^,]+") do
    list[#list + 1] = a
  end
  require("jit." .. name).start(unpack(list))
end

if type(sb.opt.luajit_cmd) == "string" and sb.opt.luajit_cmd ~= "" then
  luajit_command(sb.opt.luajit_cmd)
end

-- Internal functions for the Rust side -----------------------------------------------

local internal = {}

function internal.call(f, ...)
  return xpcall(f, with_traceback, ...)
end

function internal.thread_run(tid)
  local custom = rawget(_G, "thread_run")
  if type(custom) == "function" then
    return custom(tid)
  end
  return default_thread_run(tid)
end

function internal.command_info(name)
  local f, parallel = command_function(name)
  return f ~= nil, parallel
end

internal.call_command = cmdline.call_command
internal.describe = describe

return internal
