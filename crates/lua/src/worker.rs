//! The engine side of a script: [`ScriptWorkload`] makes each worker a Lua thread of the
//! state its OS thread's workers share (`loop_state.rs`: script loaded, `thread_init`
//! called) and [`LuaWorker`] runs the event loop in it.
//!
//! A worker runs on a thread of its own or as a coroutine of an event loop (see
//! `bmk_engine::coop`); the script sees no difference. Its globals, `sysbench` table,
//! hooks and modules are its own either way, and everything the Rust side keeps for it
//! between calls is keyed by worker, not by thread (`sql.rs`, `ffi_panic.rs`). On a
//! loop it yields where it would block: in the calls that wait for the server
//! (`sql_waits.rs`), in `ffi.C.usleep` (`usleep.rs`), between events after a time
//! slice (the prelude's `yield_slice`), and here, waiting for its turn to load. What blocks outside these (`os.execute`, `io.read`, a long computation) holds
//! up the loop's other workers: the engine reports it, and
//! [`ScriptWorkload::held_its_loop`] tells the user once.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use bmk_engine::{EventFlow, Worker, WorkerContext, WorkerError, WorkerPhase, Workload};
use bmk_sql::{Driver, DriverConfig, DriverKind};

use crate::loop_state::{LoopState, ThreadWorker};
use crate::state::ScriptEnv;

/// A script as an engine [`Workload`].
pub(crate) struct ScriptWorkload {
    pub env: Arc<ScriptEnv>,
    /// The notice about a worker that held its event loop was printed.
    held_loop_told: AtomicBool,
}

impl ScriptWorkload {
    pub(crate) fn new(env: Arc<ScriptEnv>) -> ScriptWorkload {
        ScriptWorkload {
            env,
            held_loop_told: AtomicBool::new(false),
        }
    }
}

impl Workload for ScriptWorkload {
    /// Whether the workers may share event loops: when the driver `--db-driver` names
    /// (the one `sysbench.sql.driver()` makes) waits for the server in the loop, or is
    /// SQLite, which never waits for a peer — its statements run like computation,
    /// and the loop takes turns between workers at event boundaries. A driver whose
    /// connections block their thread (MySQL over TLS or with compression,
    /// PostgreSQL verifying certificates) would hold its loop for every query: a
    /// thread per worker then. A name that is no driver (a script without SQL, or
    /// one whose `driver()` call will fail and say so) waits for nothing.
    fn cooperative(&self) -> bool {
        let options = &self.env.options;
        let name = options.raw("db-driver").unwrap_or_else(|| "mysql".into());
        match name.parse::<DriverKind>() {
            Ok(DriverKind::Sqlite) | Err(_) => true,
            Ok(kind) => {
                // Only the options given, as `driver()` reads them (see `sql.rs`).
                let get = |n: &str| options.is_given(n).then(|| options.raw(n)).flatten();
                DriverConfig::from_options(kind, &get)
                    .is_ok_and(|cfg| Driver::new(cfg).waits_cooperatively())
            }
        }
    }

    /// Says once, on stderr, which script holds up its event loop and what to do.
    ///
    /// Where in the script it was is not known: the loop learns of it when the worker
    /// has given the thread back, and a worker's Lua stack cannot be read from outside
    /// its own calls (LuaJIT keeps it in registers while compiled code runs).
    fn held_its_loop(&self, tid: u32, phase: WorkerPhase, held: Duration) {
        if self.held_loop_told.swap(true, Ordering::Relaxed) {
            return;
        }
        let place = match phase {
            WorkerPhase::Creating => "while loading the script or in thread_init()",
            WorkerPhase::Running => "in its events",
            WorkerPhase::Finishing => "in thread_done()",
        };
        eprintln!(
            "WARNING: worker thread {tid} of '{}' ran {place} for {:.1} s without giving \
             its event loop back: the loop's other workers waited meanwhile. Something \
             there blocks outside bmk's API (os.execute, io.read, an FFI call that waits, \
             a long computation or SQLite statement); such a script runs as intended \
             with --event-loops=off.",
            self.env.src.display_name(),
            held.as_secs_f64()
        );
    }

    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        let worker = {
            let _turn = LOAD_GATE.enter();
            let legacy = self.env.legacy_options && self.env.legacy_api() != "off";
            LoopState::for_this_thread(&self.env)
                .and_then(|state| state.new_worker(tid, legacy))
                .map_err(|e| WorkerError::new(e.message))?
        };
        // Outside the gate: thread_init may wait on the server (connecting) or on
        // other workers.
        worker
            .call_global("thread_init")
            .map_err(|e| WorkerError::new(e.message))?;
        Ok(Box::new(LuaWorker { worker }))
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
        HELD_HERE.with(|h| h.set(h.get() + 1));
        if bmk_engine::coop::active() && HELD_HERE.with(|h| h.get()) > 1 {
            // Another worker of this event loop holds a place and yielded while
            // loading (its top-level code queried or slept): the condition variable
            // would block the thread, and with it that worker, for good. Wait by
            // yielding instead. (Without such a worker, blocking the thread is safe:
            // the places are held on other threads, which give them back.)
            while !self.try_enter(limit) {
                bmk_engine::coop::sleep(Duration::from_millis(1));
            }
            return LoadTurn;
        }
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        while *busy >= limit {
            busy = self.freed.wait(busy).unwrap_or_else(|p| p.into_inner());
        }
        *busy += 1;
        LoadTurn
    }
}

impl LoadGate {
    /// Takes a place if one of `limit` is free.
    fn try_enter(&self, limit: usize) -> bool {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        if *busy >= limit {
            return false;
        }
        *busy += 1;
        true
    }
}

thread_local! {
    /// Places in the [`LoadGate`] held, or waited for, by workers of this thread: on an
    /// event loop several, by coroutines that may yield while they hold one.
    static HELD_HERE: Cell<usize> = const { Cell::new(0) };
}

impl Drop for LoadTurn {
    fn drop(&mut self) {
        HELD_HERE.with(|h| h.set(h.get() - 1));
        let mut busy = LOAD_GATE.busy.lock().unwrap_or_else(|p| p.into_inner());
        *busy -= 1;
        drop(busy);
        LOAD_GATE.freed.notify_one();
    }
}

/// One worker: a Lua thread of the state its loop's workers share.
pub(crate) struct LuaWorker {
    worker: ThreadWorker,
}

impl Worker for LuaWorker {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        let stop = self
            .worker
            .call_global("event")
            .map_err(|e| WorkerError::new(e.message))?;
        Ok(if stop == Some(true) {
            EventFlow::StopWorker
        } else {
            EventFlow::Continue
        })
    }

    fn run(&mut self, _ctx: &WorkerContext) -> Result<(), WorkerError> {
        self.worker
            .thread_run()
            .map_err(|e| WorkerError::new(e.message))
    }

    fn finish(&mut self, _ctx: &WorkerContext) -> Result<(), WorkerError> {
        self.worker
            .call_global("thread_done")
            .map(|_| ())
            .map_err(|e| WorkerError::new(e.message))
    }
}
