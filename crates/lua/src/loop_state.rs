//! Workers that share a Lua state: [`LoopState`], the one state of the workers of an
//! OS thread (an event loop's, or a worker thread's own), and [`ThreadWorker`], a worker
//! as a Lua thread of it.
//!
//! A Lua state per worker costs at least what a bare LuaJIT state costs (about 70 KiB
//! resident with the libraries) before the script adds its own; a thousand
//! connections made that the client's memory. Workers of one loop instead share a
//! state: each is a Lua thread with a global table of its own (Lua 5.1's per-thread
//! globals), in which the prelude and the script run once per worker over prototypes
//! compiled once per state (`shared_state.lua` says what is whose). A worker then costs
//! its own tables and closures and its coroutine's stack pages: about 20 KiB for a
//! no-op script (BENCHMARKS.md).
//!
//! What makes sharing safe is where a worker waits: only inside a classic Lua C
//! function (`sql_waits.rs`, the prelude's `yield_slice`, a worker's `ffi.C.usleep` and
//! `ffi.C.sb_more_events` from `shared_state.lua`), where the VM has saved the calling
//! thread's registers and another thread may run. All of a worker's Lua code runs on
//! its own thread, called from here with the raw API, never through
//! `mlua::Function::call`, which runs on the state's main thread; and no mlua callback
//! waits, as mlua's record of the running thread assumes callbacks nest.
//!
//! The main state (`init`, `done`, commands, report hooks) and the states of a
//! parallel command's threads are not shared: `state.rs` makes them.

use std::cell::{Cell, RefCell};
use std::os::raw::c_int;
use std::rc::{Rc, Weak};
use std::sync::Arc;

use mlua::ffi::{self, lua_State};
use mlua::{Function, Lua, RegistryKey};

use crate::error::LuaError;
use crate::heap::OwnedState;
use crate::state::{self, ScriptEnv};

const SHARED_STATE: &str = include_str!("../lua/shared_state.lua");

thread_local! {
    /// The state this thread's workers share, while one of them lives.
    static THIS_THREAD: RefCell<Weak<LoopState>> = const { RefCell::new(Weak::new()) };
}

/// The Lua state the workers of one OS thread share.
pub(crate) struct LoopState {
    /// The script and run it was made for: a later run's workers on this thread get a
    /// state of their own.
    env: Arc<ScriptEnv>,
    lua: Lua,
    /// `new_worker` and `script_done` of `shared_state.lua`.
    new_worker: RegistryKey,
    script_done: RegistryKey,
    /// Workers made so far, for the collections after their creation.
    made: Cell<u32>,
    /// Declared last: closes the state after the handles above are dropped.
    raw: OwnedState,
}

impl LoopState {
    /// This thread's state for `env`, made by the first worker that asks.
    pub(crate) fn for_this_thread(env: &Arc<ScriptEnv>) -> Result<Rc<LoopState>, LuaError> {
        let existing = THIS_THREAD
            .with(|t| t.borrow().upgrade())
            .filter(|state| Arc::ptr_eq(&state.env, env));
        if let Some(state) = existing {
            return Ok(state);
        }
        let state = Rc::new(LoopState::new(env)?);
        THIS_THREAD.with(|t| *t.borrow_mut() = Rc::downgrade(&state));
        Ok(state)
    }

    fn new(env: &Arc<ScriptEnv>) -> Result<LoopState, LuaError> {
        let (raw, lua) = state::new_lua()?;
        state::prepare_state(&lua, env)?;
        let setup = lua.create_table()?;
        setup.set("host", state::shared_host(&lua, env)?)?;
        setup.set("lazy_libs", state::lazy_libs(&lua)?)?;
        setup.set("prelude", state::prelude(&lua)?)?;
        let name = format!("@{}", env.src.display_name());
        let source = env.clone();
        let compile_script = lua.create_function(move |lua, ()| {
            source.script_cache.load(lua, &name, &source.src.text)
        })?;
        setup.set("script", compile_script.call::<Function>(())?)?;
        setup.set("compile_script", compile_script)?;
        // SAFETY: Lua C functions that read at most a number and push one value.
        unsafe {
            setup.set("usleep", lua.create_c_function(crate::usleep::lua_usleep)?)?;
            setup.set(
                "more_events",
                lua.create_c_function(crate::ffi::lua_more_events)?,
            )?;
        }
        let chunk = state::shared_cache().load(&lua, "@<bmk>/shared_state.lua", SHARED_STATE)?;
        let (new_worker, script_done): (Function, Function) = chunk.call(setup)?;
        let state = LoopState {
            env: env.clone(),
            new_worker: lua.create_registry_value(new_worker)?,
            script_done: lua.create_registry_value(script_done)?,
            lua,
            made: Cell::new(0),
            raw,
        };
        let _ = state.lua.gc_collect();
        state.raw.trim();
        Ok(state)
    }

    /// A new worker `tid`: its Lua thread, its globals and API, the script's top level
    /// run in them (and its options made globals when `legacy_options`).
    pub(crate) fn new_worker(
        self: &Rc<Self>,
        tid: u32,
        legacy_options: bool,
    ) -> Result<ThreadWorker, LuaError> {
        let main = self.raw.as_ptr();
        // SAFETY: `main` is this state's main thread, used on the thread that made it;
        // the stack effects are as commented.
        let (thread, thread_ref) = unsafe {
            let t = ffi::lua_newthread(main);
            // Anchored in the registry: a thread nothing refers to is collected.
            (t, ffi::luaL_ref(main, ffi::LUA_REGISTRYINDEX))
        };
        let mut worker = ThreadWorker {
            state: self.clone(),
            thread,
            thread_ref,
            internal_ref: ffi::LUA_NOREF,
            tid,
        };
        // SAFETY: `thread` is a live thread of this state (anchored above), with an
        // empty stack; `new_worker` returns two values.
        let script = unsafe {
            ffi::lua_rawgeti(thread, ffi::LUA_REGISTRYINDEX, self.new_worker.id().into());
            ffi::lua_pushinteger(thread, tid.into());
            if ffi::lua_pcall(thread, 1, 2, 0) != 0 {
                let message = pop_message(thread);
                return Err(LuaError::runtime(message));
            }
            // The script's chunk stays at index 2 while it runs.
            ffi::lua_pushvalue(thread, 1);
            worker.internal_ref = ffi::luaL_ref(thread, ffi::LUA_REGISTRYINDEX);
            ffi::lua_remove(thread, 1);
            ffi::luaL_ref(thread, ffi::LUA_REGISTRYINDEX)
        };
        let ran = worker.call(Callee::Registry(script), None);
        // SAFETY: as above; `script_done` takes the chunk and returns nothing.
        unsafe {
            ffi::lua_rawgeti(thread, ffi::LUA_REGISTRYINDEX, self.script_done.id().into());
            ffi::lua_rawgeti(thread, ffi::LUA_REGISTRYINDEX, script.into());
            let _ = ffi::lua_pcall(thread, 1, 0, 0);
            ffi::lua_settop(thread, 0);
            ffi::luaL_unref(thread, ffi::LUA_REGISTRYINDEX, script);
        }
        ran?;
        if legacy_options {
            worker.call(Callee::Internal("export_options"), None)?;
        }
        self.after_creation();
        Ok(worker)
    }

    /// Collects once the state holds twice the workers of the last collection: loading
    /// leaves garbage (a state's first compilations, each worker's load-time tables),
    /// and a collection of the whole state for every worker would cost the state's
    /// size each time.
    fn after_creation(&self) {
        let made = self.made.get() + 1;
        self.made.set(made);
        if made.is_power_of_two() {
            let _ = self.lua.gc_collect();
            let _ = self.lua.gc_collect();
        }
        self.raw.trim();
    }
}

/// What a worker calls.
#[derive(Clone, Copy)]
enum Callee {
    /// A global function of the worker; nothing is called when there is none.
    Global(&'static str),
    /// One of the prelude's internal functions.
    Internal(&'static str),
    /// A function held in the registry under this reference.
    Registry(c_int),
}

/// A worker: a Lua thread of a [`LoopState`] with its own globals.
pub(crate) struct ThreadWorker {
    state: Rc<LoopState>,
    thread: *mut lua_State,
    /// Registry references of the thread (which anchors it) and of the prelude's
    /// internal functions of this worker.
    thread_ref: c_int,
    internal_ref: c_int,
    pub tid: u32,
}

impl ThreadWorker {
    /// Calls global function `name` with the worker's id, protected; `Ok(None)` when
    /// the script has no such function, else whether it returned a true value.
    pub(crate) fn call_global(&self, name: &'static str) -> Result<Option<bool>, LuaError> {
        self.call(Callee::Global(name), Some(self.tid))
            .map_err(|e| e.in_function(name))
    }

    /// The worker's event loop: the script's `thread_run`, or the prelude's.
    pub(crate) fn thread_run(&self) -> Result<(), LuaError> {
        self.call(Callee::Internal("thread_run"), Some(self.tid))
            .map(|_| ())
            .map_err(|e| e.in_function("thread_run"))
    }

    /// Calls `callee` through the prelude's `call` (a protected call whose error is the
    /// message with its traceback), on the worker's own thread.
    fn call(&self, callee: Callee, arg: Option<u32>) -> Result<Option<bool>, LuaError> {
        let t = self.thread;
        // SAFETY: `t` is a live thread of the state (anchored by `thread_ref`), used on
        // the thread that made it; everything pushed is popped before returning.
        let outcome = unsafe {
            let top = ffi::lua_gettop(t);
            ffi::lua_rawgeti(t, ffi::LUA_REGISTRYINDEX, self.internal_ref.into());
            ffi::lua_getfield(t, -1, c"call".as_ptr());
            let pushed = match callee {
                Callee::Global(name) => {
                    ffi::lua_pushvalue(t, ffi::LUA_GLOBALSINDEX);
                    push_str(t, name);
                    ffi::lua_rawget(t, -2);
                    ffi::lua_remove(t, -2);
                    ffi::lua_type(t, -1) == ffi::LUA_TFUNCTION
                }
                Callee::Internal(name) => {
                    push_str(t, name);
                    ffi::lua_gettable(t, -3);
                    ffi::lua_type(t, -1) == ffi::LUA_TFUNCTION
                }
                Callee::Registry(r) => {
                    ffi::lua_rawgeti(t, ffi::LUA_REGISTRYINDEX, r.into());
                    true
                }
            };
            if !pushed {
                ffi::lua_settop(t, top);
                return Ok(None);
            }
            let nargs = match arg {
                Some(a) => {
                    ffi::lua_pushinteger(t, a.into());
                    2
                }
                None => 1,
            };
            // Stack: internal, call, f[, arg].
            let outcome = if ffi::lua_pcall(t, nargs, 2, 0) != 0 {
                Err(pop_message(t))
            } else if ffi::lua_toboolean(t, -2) != 0 {
                Ok(ffi::lua_toboolean(t, -1) != 0)
            } else {
                Err(message_at(t, -1))
            };
            ffi::lua_settop(t, top);
            outcome
        };
        // A panic an entry point caught fails the call, as in `ScriptState::pcall`.
        let panic = crate::ffi_panic::take_panic();
        match (outcome, panic) {
            (Ok(_), Some(message)) => Err(LuaError::runtime(message)),
            (Ok(v), None) => Ok(Some(v)),
            (Err(message), _) => Err(LuaError::runtime(message)),
        }
    }
}

impl Drop for ThreadWorker {
    fn drop(&mut self) {
        let main = self.state.raw.as_ptr();
        // SAFETY: the references were made in this state's registry; unreferencing the
        // thread lets the collector free it and everything only it holds.
        unsafe {
            ffi::luaL_unref(main, ffi::LUA_REGISTRYINDEX, self.internal_ref);
            ffi::luaL_unref(main, ffi::LUA_REGISTRYINDEX, self.thread_ref);
        }
    }
}

/// Pushes `s` as a Lua string.
///
/// # Safety
/// `l` must be a live Lua state with room on its stack.
unsafe fn push_str(l: *mut lua_State, s: &str) {
    // SAFETY: forwarded; the bytes are copied into the Lua string.
    unsafe { ffi::lua_pushlstring(l, s.as_ptr().cast(), s.len()) };
}

/// The text of the error value at `idx`.
///
/// # Safety
/// `l` must be a live Lua state with a value at `idx`.
unsafe fn message_at(l: *mut lua_State, idx: c_int) -> String {
    // SAFETY: forwarded; the bytes are copied before anything is popped.
    unsafe {
        if ffi::lua_type(l, idx) != ffi::LUA_TSTRING {
            return "unknown error".into();
        }
        let mut len = 0usize;
        let p = ffi::lua_tolstring(l, idx, &mut len);
        String::from_utf8_lossy(std::slice::from_raw_parts(p.cast::<u8>(), len)).into_owned()
    }
}

/// Pops the error value on top of `l`'s stack and returns its text.
///
/// # Safety
/// As [`message_at`].
unsafe fn pop_message(l: *mut lua_State) -> String {
    // SAFETY: forwarded.
    unsafe {
        let m = message_at(l, -1);
        ffi::lua_pop(l, 1);
        m
    }
}
