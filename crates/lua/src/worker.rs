//! The engine side of a script: [`ScriptWorkload`] builds one Lua state per worker thread
//! (script loaded, `thread_init` called) and [`LuaWorker`] runs the event loop in it.

use std::sync::{Arc, Condvar, Mutex, OnceLock};

use bmk_engine::{EventFlow, Worker, WorkerContext, WorkerError, Workload};
use mlua::Value;

use crate::state::{ScriptEnv, ScriptState};

/// A script as an engine [`Workload`].
pub(crate) struct ScriptWorkload {
    pub env: Arc<ScriptEnv>,
}

impl Workload for ScriptWorkload {
    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        let state = {
            let _turn = LOAD_GATE.enter();
            let state =
                ScriptState::new(&self.env, tid).map_err(|e| WorkerError::new(e.message))?;
            // Loading leaves garbage (compiler temporaries, the source text); with
            // thousands of workers a full collection keeps each state's resident
            // memory close to what it really holds, and hands the freed blocks to the
            // next state that loads.
            let _ = state.lua.gc_collect();
            let _ = state.lua.gc_collect();
            state.trim_heap();
            state
        };
        // Outside the gate: thread_init may wait on the server (connecting) or on
        // other workers.
        state
            .call_global("thread_init", tid)
            .map_err(|e| WorkerError::new(e.message))?;
        let _ = state.lua.gc_collect();
        state.trim_heap();
        Ok(Box::new(LuaWorker { state }))
    }
}

/// Limits how many worker states load at once to the number of CPUs.
///
/// A loading state's garbage comes from the shared small-block pool, whose high-water
/// mark stays resident for the rest of the run: with a thousand threads loading at
/// once, a thousand states' load-time garbage could be live at the same moment; through
/// the gate at most one per CPU is. More loaders than CPUs would not load faster
/// anyway. A script's top-level code runs inside the gate, so it must not wait for
/// other workers (`thread_init`, where the `--sync-file` barrier waits, may).
struct LoadGate {
    busy: Mutex<usize>,
    freed: Condvar,
}

static LOAD_GATE: LoadGate = LoadGate {
    busy: Mutex::new(0),
    freed: Condvar::new(),
};

/// A place in the [`LoadGate`], given back on drop.
struct LoadTurn;

impl LoadGate {
    fn enter(&'static self) -> LoadTurn {
        static LIMIT: OnceLock<usize> = OnceLock::new();
        let limit =
            *LIMIT.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        while *busy >= limit {
            busy = self.freed.wait(busy).unwrap_or_else(|p| p.into_inner());
        }
        *busy += 1;
        LoadTurn
    }
}

impl Drop for LoadTurn {
    fn drop(&mut self) {
        let mut busy = LOAD_GATE.busy.lock().unwrap_or_else(|p| p.into_inner());
        *busy -= 1;
        drop(busy);
        LOAD_GATE.freed.notify_one();
    }
}

/// One worker's Lua state.
pub(crate) struct LuaWorker {
    state: ScriptState,
}

impl Worker for LuaWorker {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        let ret = self
            .state
            .call_global("event", self.state.tid)
            .map_err(|e| WorkerError::new(e.message))?;
        let stop = ret
            .and_then(|mut r| r.pop_front())
            .is_some_and(|v| !matches!(v, Value::Nil | Value::Boolean(false)));
        Ok(if stop {
            EventFlow::StopWorker
        } else {
            EventFlow::Continue
        })
    }

    fn run(&mut self, _ctx: &WorkerContext) -> Result<(), WorkerError> {
        self.state
            .thread_run()
            .map_err(|e| WorkerError::new(e.message))
    }

    fn finish(&mut self, _ctx: &WorkerContext) -> Result<(), WorkerError> {
        self.state
            .call_global("thread_done", self.state.tid)
            .map(|_| ())
            .map_err(|e| WorkerError::new(e.message))
    }
}
