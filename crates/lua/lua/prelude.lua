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

-- Libraries opened on first use ---------------------------------------------------------
-- `host.lazy_libs` maps a library name (table, math, io, os, debug, bit, jit) to its
-- C opener, which sets the global and package.loaded entry. A global read of the name
-- (through _G's metatable) or require() opens it. A script that takes over _G's
-- metatable gets every library opened first, so it sees plain Lua 5.1 globals.
local lazy_libs = host.lazy_libs
local loaded = package.loaded
local rawget, rawequal = rawget, rawequal
local raw_getmetatable, raw_setmetatable = getmetatable, setmetatable

local G_meta
local open_lib

local function open_all_libs()
  if raw_getmetatable(_G) == G_meta then
    for name in pairs(lazy_libs) do
      open_lib(name)
    end
    raw_setmetatable(_G, nil)
  end
end

-- A metatable function `f` that first opens every library when applied to _G.
local function guarding_G(f)
  return function(t, ...)
    if rawequal(t, _G) then
      open_all_libs()
    end
    return f(t, ...)
  end
end

open_lib = function(name)
  local open = lazy_libs[name]
  if open then
    lazy_libs[name] = nil
    open(name)
    if name == "debug" then
      local dbg = loaded.debug
      dbg.getmetatable = guarding_G(dbg.getmetatable)
      dbg.setmetatable = guarding_G(dbg.setmetatable)
    end
  end
  return loaded[name]
end

G_meta = {
  __index = function(g, name)
    if lazy_libs[name] then
      open_lib(name)
      return rawget(g, name)
    end
  end,
}

getmetatable = guarding_G(raw_getmetatable)
setmetatable = guarding_G(raw_setmetatable)

local preload = package.preload
for name in pairs(lazy_libs) do
  preload[name] = open_lib
end
-- Submodules that opening `jit` registers (rather than preloads, as jit.util is in
-- some LuaJIT versions) load by opening it.
for _, name in ipairs({ "jit.util", "jit.opt" }) do
  if preload[name] == nil then
    preload[name] = function()
      open_lib("jit")
      return loaded[name]
    end
  end
end
raw_setmetatable(_G, G_meta)

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
local type, tostring, xpcall, error = type, tostring, xpcall, error

-- debug.traceback, opening the debug library only when an error needs it.
local function traceback(msg, level)
  local text = _G.debug.traceback(msg, level + 1)
  return text
end

local function max(a, b)
  if a > b then
    return a
  end
  return b
end

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
    strbuf_len = max(max(n, 2 * strbuf_len), 256)
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
  varstring = function(min_len, max_len)
    local buf = scratch(max(min_len, max_len))
    local n = C.sb_rand_varstr(buf, min_len, max_len)
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
-- The rest of sysbench.sql (sql.lua) is loaded on the first sql.driver() call, so that
-- states of scripts that never use SQL do not hold its functions.
function sql.driver(name)
  host.sql_load()(host.sql_raw, sb, sql, RESTART_EVENT)
  return sql.driver(name)
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
