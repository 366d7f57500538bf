-- bmk's Lua prelude: the core of the `sysbench` table.
--
-- Loaded into every Lua state (main and workers) before the script, with `host`, the
-- table of values and Rust functions that `state.rs` prepared. It declares the FFI
-- entry points sysbench scripts call (`ffi.C.sb_*`), sets up what every state needs (the event loop, error
-- handling, sysbench.opt, sysbench.hooks) and returns the internal functions the Rust
-- side calls: `call` (a protected call with traceback), `thread_run` (the event loop),
-- `command_info`, `call_command` and `reset_opt`. Hot paths (event start/stop,
-- counters, random numbers) use ffi.C so LuaJIT compiles them into the loop's trace.

local host = ...
local ffi = require("ffi")

-- Made on first use --------------------------------------------------------------------
-- With thousands of workers, what a state holds is multiplied by thousands, and most
-- worker states use little of the API. So these parts are made when first read:
-- * _G's rarely used libraries: `host.lazy_libs` maps a library name (table, math, io,
--   os, debug, bit, jit) to its C opener, which sets the global and package.loaded
--   entry. A global read of the name (through _G's metatable) or require() opens it.
-- * sysbench.opt: a value is fetched from `host.opt_source` when a name is first read.
-- * sysbench.cmdline, .rand and .sql (each the chunk <bmk>/NAME.lua, which
--   `host.section` loads) and .histogram, .report_default/csv/json (from `host.api`).
-- Whatever could see such a table whole (pairs, next, get/setmetatable, also the
-- debug.* versions) completes it first, so scripts see plain Lua 5.1 tables; _G then
-- loses its metatable. rawget() does not: before its first read, rawget of such a name
-- is nil.
local lazy_libs = host.lazy_libs
local loaded = package.loaded
local type, rawget, rawset, rawequal = type, rawget, rawset, rawequal
local raw_getmetatable, raw_setmetatable = getmetatable, setmetatable
local raw_pairs, raw_next, ipairs = pairs, next, ipairs
local xpcall, error, tostring = xpcall, error, tostring

local RESTART_EVENT = 1

local opt = host.opt
local opt_source = host.opt_source
-- Option names read so far that have no value, so that reading one again in an
-- event does not ask Rust each time.
local opt_unset = {}

sysbench = {
  version = host.version,
  version_string = host.version_string,
  tid = host.tid,
  opt = opt,
  error = { NONE = 0, RESTART_EVENT = RESTART_EVENT },
  hooks = {},
}
local sb = sysbench

-- sysbench fields made on first read: `true` for a value from host.api, else the
-- name of the section chunk that returns it.
local sb_lazy = {
  cmdline = "cmdline", rand = "rand", sql = "sql",
  histogram = true, report_default = true, report_csv = true, report_json = true,
}
-- What section chunks get: this state's host table, sysbench table and the core
-- functions they build on.
local core = { host = host, sb = sb, RESTART_EVENT = RESTART_EVENT }

local G_meta
local open_lib

-- sysbench 1.0's compatibility globals (sb_rand, db_query, DB_ERROR_NONE, thread_id,
-- test, ...), which scripts written for sysbench 0.5 and 1.0 call: made, all at once,
-- by the chunk <bmk>/legacy.lua when a state first reads one. A global the script set
-- itself stays. Recognised by name pattern, so that no per-state table lists them.
-- `host.legacy` says whether they exist: "on" at the 1.0 level, "off" invoked as
-- sysbench 1.1 (which removed them), "notice" as bmk, where the first use in the run
-- prints a one-line deprecation notice.
local legacy_mode = host.legacy
local legacy_pending = legacy_mode ~= "off"
local legacy_noticed = legacy_mode ~= "notice"
local function legacy_notice()
  if not legacy_noticed then
    legacy_noticed = true
    host.legacy_notice()
  end
end
local byte, sub = string.byte, string.sub
-- A script may read an unset global in every event, so this stays cheap and free of
-- pattern matching, which LuaJIT does not compile (a trace through it would abort
-- and the event loop would run interpreted: 6 million no-op events/s fell to 0.85).
local function is_legacy(name)
  if type(name) ~= "string" then
    return false
  end
  local first = byte(name)
  if first == 115 then -- s
    return sub(name, 1, 4) == "sb_r"
  elseif first == 100 then -- d
    return sub(name, 1, 3) == "db_"
  elseif first == 68 then -- D
    return sub(name, 1, 9) == "DB_ERROR_"
  elseif first == 116 then -- t
    return name == "thread_id" or name == "test"
  end
  return false
end
-- Two more, for 0.5's schema scripts: the options' values when given, else 0.5's
-- defaults.
local table_option_defaults = { mysql_table_engine = "innodb", myisam_max_rows = 1000000 }
local function legacy_table_option(name)
  if legacy_mode == "off" then
    return nil
  end
  local default = table_option_defaults[name]
  if default ~= nil then
    local value = opt[name]
    if value == nil then
      return default
    end
    return value
  end
end
local function define_legacy()
  if not legacy_pending then
    return
  end
  legacy_pending = false
  for name, value in raw_pairs(host.section("legacy")(core)) do
    if rawget(_G, name) == nil then
      rawset(_G, name, value)
    end
  end
  -- The worker's thread id (0 in the main state) and the script as named on the
  -- command line.
  if rawget(_G, "thread_id") == nil then
    rawset(_G, "thread_id", host.tid)
  end
  if rawget(_G, "test") == nil then
    rawset(_G, "test", host.script_path)
  end
end

-- A script that declares no options reads every option as a global (see
-- internal.export_options); each is fetched on its first read.
local options_as_globals = false

local function complete(t)
  if rawequal(t, _G) then
    if raw_getmetatable(_G) == G_meta then
      for name in raw_pairs(lazy_libs) do
        open_lib(name)
      end
      define_legacy()
      if options_as_globals then
        for _, name in ipairs(opt_source()) do
          local _ = _G[name]
        end
      end
      for name in raw_pairs(table_option_defaults) do
        if rawget(_G, name) == nil then
          rawset(_G, name, legacy_table_option(name))
        end
      end
      raw_setmetatable(_G, nil)
    end
  elseif rawequal(t, opt) then
    for _, name in ipairs(opt_source()) do
      if rawget(opt, name) == nil then
        local _ = opt[name]
      end
    end
  elseif rawequal(t, sb) then
    for name in raw_pairs(sb_lazy) do
      local _ = sb[name]
    end
  end
end

-- A function `f` of a table that first completes it when it is one of those tables.
local function completing(f)
  return function(t, ...)
    complete(t)
    return f(t, ...)
  end
end

-- A worker sharing its state with others (host.shared) reuses a library another worker
-- opened; the state's debug library, opened before any worker, completes the tables of
-- the worker that calls it (shared_state.lua), which finds this worker's `complete` in
-- `host.completers`.
local shares_state = host.shared
if shares_state then
  host.completers[_G] = complete
end
open_lib = function(name)
  local open = lazy_libs[name]
  if open then
    lazy_libs[name] = nil
    -- (While `require` loads a library, its package.loaded entry is a marker.)
    if not (shares_state and type(loaded[name]) == "table") then
      open(name)
    end
    local lib = loaded[name]
    if shares_state then
      rawset(_G, name, lib)
    elseif name == "debug" then
      lib.getmetatable = completing(lib.getmetatable)
      lib.setmetatable = completing(lib.setmetatable)
    end
    return lib
  end
  return loaded[name]
end

G_meta = {
  __index = function(g, name)
    if lazy_libs[name] then
      open_lib(name)
      return rawget(g, name)
    end
    if options_as_globals and type(name) == "string" then
      local value = opt[name]
      if value ~= nil then
        rawset(g, name, value)
        -- db_driver: the old API's name for the driver in use.
        if not legacy_noticed and is_legacy(name) then
          legacy_notice()
        end
        return value
      end
    end
    if legacy_pending and is_legacy(name) then
      define_legacy()
      legacy_notice()
      return rawget(g, name)
    end
    return legacy_table_option(name)
  end,
}

getmetatable = completing(raw_getmetatable)
setmetatable = completing(raw_setmetatable)
pairs = completing(raw_pairs)
next = completing(raw_next)

local preload = package.preload
for name in raw_pairs(lazy_libs) do
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

-- At the 1.0 level two of them are set in every state from the start, as sysbench
-- 1.0 sets them.
if legacy_mode == "on" then
  thread_id = host.tid
  test = host.script_path
end

raw_setmetatable(opt, {
  __index = function(t, name)
    if opt_unset[name] or type(name) ~= "string" then
      return nil
    end
    local value = opt_source(name)
    if value == nil then
      opt_unset[name] = true
    else
      rawset(t, name, value)
    end
    return value
  end,
})

raw_setmetatable(sb, {
  __index = function(t, name)
    local how = sb_lazy[name]
    if how == nil then
      return nil
    end
    sb_lazy[name] = nil
    local value
    if how == true then
      value = host.api(name)
    else
      value = host.section(how)(core)
    end
    rawset(t, name, value)
    return value
  end,
})

-- The FFI entry points scripts may call (`sb_*`, as sysbench exports them). The event loop's are declared now; the rest when
-- the state first requires "ffi" (a script, or a part of the API made on first use),
-- which is the only way a script reaches ffi.C. Every declaration grows LuaJIT's type
-- table, and the whole set doubles it.
ffi.cdef [[
bool sb_more_events(int thread_id);
void sb_event_start(int thread_id);
void sb_event_stop(int thread_id);
bool bmk_slice_due(void);
]]
loaded.ffi = nil
preload.ffi = function()
  ffi.cdef [[
typedef enum { SB_CNT_OTHER, SB_CNT_READ, SB_CNT_WRITE, SB_CNT_TRX, SB_CNT_ERROR,
               SB_CNT_RECONNECT, SB_CNT_BYTES_READ, SB_CNT_BYTES_WRITTEN, SB_CNT_MAX } sb_counter_type;
void sb_counter_inc(int thread_id, sb_counter_type type);
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
  return ffi
end

-- A worker sharing its state gets `ffi.C` as a table in front of the real namespace
-- (shared_state.lua); bmk's own hot calls go to the namespace itself.
local C = host.real_C or ffi.C
core.C = C

-- Commands and errors ------------------------------------------------------------------
-- Both are made on first use too: the main state looks commands up, and a worker
-- needs the error path only once something failed.

local commands
function core.commands()
  if not commands then
    commands = host.section("commands")(core)
  end
  return commands
end

local errors
local function error_path()
  if not errors then
    errors = host.section("errors")(core)
  end
  return errors
end

-- Text of an error value for the user: a table (a failure, an SQL error) is described
-- by the error path, anything else is its tostring.
local function message_of(e)
  if type(e) == "table" then
    return error_path().describe(e)
  end
  return tostring(e)
end

-- The message handlers make the traceback themselves: after a stack overflow there is
-- no room left to load the error path, and a string error never needs it. Neither
-- handler tail-calls, so that the traceback starts where the error was raised.
--
-- A string raised without a position (`error(msg, 0)`) is a message for the user
-- ("table 'sbtest1' already exists ...; run cleanup first") and is shown as it is;
-- every other error (runtime errors, `error(msg)`, error tables, a `require` of a
-- module that does not compile, whose position is on its second line) gets the
-- traceback that locates it.
local function for_the_user(e)
  return type(e) == "string" and not e:find("^[^\n]-:%d+: ")
    and not e:find("^error loading module ")
end

-- The debug library for the message handlers: the state's when it is open (a state
-- that workers share opens it before them), else through the global. After a stack
-- overflow a handler has about forty stack slots; opening the library and a traceback
-- take most of them.
local function debug_lib()
  local lib = loaded.debug
  if type(lib) == "table" then
    return lib
  end
  return _G.debug
end

-- LuaJIT gives a stack overflow no position when the frame that did not fit was being
-- entered (it replaces that frame): the innermost Lua frame left is where it was.
local function located(e)
  if e ~= "stack overflow" then
    return e
  end
  local getinfo = debug_lib().getinfo
  for level = 3, 12 do
    local info = getinfo(level, "Sl")
    if info == nil then
      break
    end
    if info.currentline and info.currentline > 0 then
      return info.short_src .. ":" .. info.currentline .. ": " .. e
    end
  end
  return e
end

-- Message handler of protected calls from Rust: the message plus traceback, except
-- for failures that already carry theirs and messages for the user.
local function with_traceback(e)
  if type(e) == "table" and e.__bmk_failure then
    return e.__bmk_failure
  end
  e = located(e)
  if for_the_user(e) then
    return e
  end
  local text = debug_lib().traceback(message_of(e), 2)
  return text
end

-- Message handler of the event loop: restartable errors pass through untouched,
-- anything else becomes a failure with its traceback (a message for the user: as is).
local function event_error(e)
  if type(e) == "table" and (e.errcode == RESTART_EVENT or e.__bmk_failure) then
    return e
  end
  e = located(e)
  if for_the_user(e) then
    return { __bmk_failure = e }
  end
  local failure = { __bmk_failure = debug_lib().traceback(message_of(e), 2) }
  return failure
end
core.event_error = event_error

-- Event loop ---------------------------------------------------------------------------

-- Runs events until the engine says stop or event() returns a truthy value. Kept free
-- of pcall so LuaJIT compiles the whole loop, event() included, into one trace; an
-- error unwinds to default_thread_run, which resumes the interrupted event.
--
-- On an event loop a worker whose events never wait lets the loop's other workers run
-- once it has had its time slice: through a Lua C function, which ends the trace, as
-- switching workers inside compiled code is not allowed (see sql_waits.rs).
local yield_slice = host.api("yield_slice")
local function run_events(tid)
  while C.sb_more_events(tid) do
    C.sb_event_start(tid)
    local stop = event(tid)
    C.sb_event_stop(tid)
    if stop then
      return
    end
    if C.bmk_slice_due() then
      yield_slice()
    end
  end
end

-- An error ended run_events: it is raised again unless it can be restarted, and the
-- event it interrupted runs again until it completes.
local function default_thread_run(tid)
  if type(rawget(_G, "event")) ~= "function" then
    error({ __bmk_failure = "cannot find the event() function in " .. tostring(host.script_path) }, 0)
  end
  while true do
    local ok, err = xpcall(run_events, event_error, tid)
    if ok or error_path().finish_event(tid, err) then
      return
    end
  end
end

-- --luajit-cmd: a LuaJIT control command, run by its own chunk.
if type(opt.luajit_cmd) == "string" and opt.luajit_cmd ~= "" then
  host.section("luajit_cmd")(opt.luajit_cmd)
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

-- command_info(name) and call_command(name), for the main state.
raw_setmetatable(internal, {
  __index = function(_, name)
    return core.commands()[name]
  end,
})

-- A script that declares no options sees every option as a global too, as in
-- sysbench 1.0 (`oltp_table_size` for --oltp-table-size): from when a worker state has
-- loaded the script, and in the main state from before its command runs. A global the
-- script set and the libraries stay: --debug does not replace the debug library
-- (sysbench's global `debug` is false), which tracebacks need; such a script reads the
-- option as sysbench.opt.debug.
function internal.export_options()
  options_as_globals = true
end

-- After the option values changed (the main state, once the command line is checked).
function internal.reset_opt()
  for name in raw_next, opt do
    opt[name] = nil
  end
  opt_unset = {}
end

return internal
