//! The engine side of a script: [`LuaTest`] builds one Lua state per worker thread
//! (script loaded, `thread_init` called) and [`LuaWorker`] runs the event loop in it.

use std::sync::Arc;

use bmk_engine::{EventFlow, Test, Worker, WorkerContext, WorkerError};
use mlua::Value;

use crate::state::{ScriptEnv, ScriptState};

/// A script as an engine [`Test`].
pub(crate) struct LuaTest {
    pub env: Arc<ScriptEnv>,
}

impl Test for LuaTest {
    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        let state = ScriptState::new(&self.env, tid).map_err(|e| WorkerError::new(e.message))?;
        state
            .call_global("thread_init", tid)
            .map_err(|e| WorkerError::new(e.message))?;
        // Loading leaves garbage (compiler temporaries, the source text); with
        // thousands of workers a full collection before the first event keeps each
        // state's resident memory close to what it really holds.
        let _ = state.lua.gc_collect();
        let _ = state.lua.gc_collect();
        state.trim_heap();
        Ok(Box::new(LuaWorker { state }))
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
