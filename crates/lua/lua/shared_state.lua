-- Workers sharing one Lua state (the workers of an event loop; see loop_state.rs and
-- docs/ARCHITECTURE.md, "Workers sharing a state"): what the state sets up once, run
-- on its main thread with `setup` from Rust, and `new_worker`, which each worker's own
-- Lua thread runs to get its globals, its `sysbench` table and the script loaded.
--
-- A worker sees what sysbench gives a thread: globals, `sysbench.opt`, hooks and
-- required modules of its own. What the state holds once is code (the prelude's, the
-- script's and its modules' compiled prototypes, which each worker runs in its own
-- global table), the libraries, the FFI declarations and LuaJIT's compiled traces.

local setup = ...
local ffi = require("ffi")
local type, next, tostring, pcall, error = type, next, tostring, pcall, error
local rawget, rawset, setmetatable = rawget, rawset, setmetatable
local setfenv, getfenv = setfenv, getfenv

-- FFI declarations and metatables ------------------------------------------------------
-- They belong to the state, while a script's top level runs once per worker: the same
-- declaration again is skipped (a named struct or enum declared twice is an error),
-- and a type keeps the metatable it got first (a second one is an error too).
local cdef, metatype, typeof = ffi.cdef, ffi.metatype, ffi.typeof
local declared = {}
ffi.cdef = function(def, ...)
  if type(def) ~= "string" then
    return cdef(def, ...)
  end
  if not declared[def] then
    cdef(def, ...)
    declared[def] = true
  end
end
local with_metatable = {}
ffi.metatype = function(ct, mt)
  local key = tostring(typeof(ct))
  local made = with_metatable[key]
  if made == nil then
    made = metatype(ct, mt)
    with_metatable[key] = made
  end
  return made
end

-- ffi.C --------------------------------------------------------------------------------
-- A worker waits only inside a Lua C function, never inside an FFI call (compiled code
-- makes those, and another thread of the state may not enter the VM beneath one): so a
-- script's `ffi.C.usleep` is the Lua C function `setup.usleep`, which lets the loop's
-- other workers run, and its `ffi.C.sb_more_events` (a script's own event loop) is
-- `setup.more_events`, which lets them run after a time slice. Everything else resolves
-- as in `ffi.C` itself, and a function, once looked up, is a plain field of this table.
local real_C = ffi.C
local instead = { usleep = setup.usleep, sb_more_events = setup.more_events }
ffi.C = setmetatable({}, {
  __index = function(t, name)
    local ok, value = pcall(function() return real_C[name] end)
    if not ok then
      -- LuaJIT's message, at the script's line as when it indexes ffi.C itself.
      error((tostring(value):gsub("^[^\n]-:%d+: ", "")), 2)
    end
    value = instead[name] or value
    if type(value) == "function" or (type(value) == "cdata"
        and tostring(typeof(value)):find("%)>$")) then
      rawset(t, name, value)
    end
    return value
  end,
  __newindex = function(_, name, value)
    real_C[name] = value
  end,
})

-- The host table ---------------------------------------------------------------------
-- What the Rust side gives every worker's prelude; its sections are compiled once per
-- state and run in the calling worker's globals, its API values made once per state.
-- `sysbench.sql` is one table per state too: its methods are the FFI metatypes' and
-- look up what is a worker's own (hooks, `sysbench.rand`) from the running thread.
local host = setup.host
host.real_C = real_C
-- What `make` gives for a name, made once per state.
local function made_once(make)
  local values = {}
  return function(name)
    local value = values[name]
    if value == nil then
      value = make(name)
      values[name] = value
    end
    return value
  end
end
local section_of = made_once(host.section)
-- Sections whose value is the state's: run by the first worker that asks.
local state_wide, state_values = { sql = true }, {}
host.section = function(name)
  local f = section_of(name)
  if state_wide[name] then
    return function(core)
      local value = state_values[name]
      if value == nil then
        setfenv(f, getfenv(0))
        value = f(core)
        state_values[name] = value
      end
      return value
    end
  end
  setfenv(f, getfenv(0))
  return f
end
-- The debug library, opened now for the state (a worker's message handler uses it,
-- and after a stack overflow has no room to open it) and a worker's global on first
-- use as before. Its metatable functions complete a worker's lazily made tables first,
-- as the prelude's global getmetatable/setmetatable do: the worker's own `complete`,
-- found from the running thread's globals.
local completers = setmetatable({}, { __mode = "k" })
host.completers = completers
do
  local state_G = getfenv(0)
  setup.lazy_libs.debug("debug")
  state_G.debug = nil
  local lib = package.loaded.debug
  local function completing(f)
    return function(t, ...)
      local complete = completers[getfenv(0)]
      if complete then
        complete(t)
      end
      return f(t, ...)
    end
  end
  lib.getmetatable = completing(lib.getmetatable)
  lib.setmetatable = completing(lib.setmetatable)
end
host.api = made_once(host.api)

-- require ------------------------------------------------------------------------------
-- Each worker loads a Lua module for itself, as each sysbench thread does (a module's
-- locals, such as oltp_common's connection and statements, are the worker's), from a
-- chunk the state found and compiled once. Libraries, preloads and C modules are the
-- state's, through the standard `require`.
local state_require = require
local loaded, preload, loaders = package.loaded, package.preload, package.loaders
local modules = {}
local LOADING = {}

-- A new chunk of module `name` from the Lua file searcher or bmk's built-in library
-- (package.loaders[2] and [3]), or nil.
local function find_module(name)
  for i = 2, 3 do
    local loader = loaders[i]
    if loader then
      local f = loader(name)
      if type(f) == "function" then
        return f
      end
    end
  end
end

local function require_for(env)
  local mine = {}
  return function(name)
    local value = mine[name]
    if value ~= nil then
      if value == LOADING then
        error("loop or previous error loading module '" .. tostring(name) .. "'", 2)
      end
      return value
    end
    local entry = modules[name]
    if entry == nil then
      if type(name) ~= "string" or preload[name] ~= nil or loaded[name] ~= nil then
        return state_require(name)
      end
      local f = find_module(name)
      if f == nil then
        -- The standard require says where it looked.
        return state_require(name)
      end
      entry = { fn = f, busy = false }
      modules[name] = entry
    end
    -- Another worker's run of the chunk may be suspended (its top level waited): the
    -- chunk's environment is that worker's until it ends, so this one gets a copy.
    local f = entry.fn
    local own = not entry.busy
    if own then
      entry.busy = true
    else
      f = find_module(name) or f
    end
    mine[name] = LOADING
    setfenv(f, env)
    value = f(name)
    if own then
      entry.busy = false
    end
    if value == nil then
      value = rawget(loaded, name)
      if value == nil then
        value = true
      end
    end
    mine[name] = value
    return value
  end
end

-- A worker -----------------------------------------------------------------------------
local shared_G = getfenv(0)
local prelude, lazy_libs = setup.prelude, setup.lazy_libs
local host_meta = { __index = host }
local script = { fn = setup.script, busy = false }

-- Runs on the worker's own Lua thread: makes its global table (the state's globals,
-- copied, so that what the script sets stays its own) the thread's, runs the prelude
-- in it, and returns the prelude's internal functions and the script's chunk, ready to
-- run in the worker's globals (`script_done` once it has).
local function new_worker(tid)
  local env = {}
  for k, v in next, shared_G do
    env[k] = v
  end
  env._G = env
  setfenv(0, env)
  env.require = require_for(env)
  local libs = {}
  for k, v in next, lazy_libs do
    libs[k] = v
  end
  local worker_host = setmetatable({ tid = tid, opt = {}, lazy_libs = libs, shared = true },
    host_meta)
  setfenv(prelude, env)
  local internal = prelude(worker_host)
  local f = script.fn
  if script.busy then
    f = setup.compile_script()
  else
    script.busy = true
  end
  setfenv(f, env)
  return internal, f
end

local function script_done(f)
  if f == script.fn then
    script.busy = false
  end
end

return new_worker, script_done
