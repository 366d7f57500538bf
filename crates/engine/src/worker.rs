//! What a benchmark plugs into the engine: a [`Workload`] that makes one [`Worker`] per
//! thread, and the [`WorkerContext`] through which a worker asks for events, marks
//! their start and end, and bumps counters.
//!
//! The context is also reachable from C (the `sb_*` FFI functions that Lua scripts
//! call) through [`with_current`], because a worker's own thread is the only one that
//! ever uses it. Everything here is on the per-event path: no locks, no allocation, no
//! formatting, except the blocking wait for arrivals in rate mode.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::shared::Shared;
use crate::stats::Counter;

/// A benchmark the engine can run: the built-in tests, Lua scripts, native workloads.
pub trait Workload: Send + Sync {
    /// Creates the worker for thread `tid`, on that thread (sysbench's `thread_init`).
    /// Runs before the start barrier; an error aborts the run.
    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError>;

    /// Whether the workers wait for I/O in [`crate::coop::wait_readable`], so that
    /// the engine may run them as coroutines on event loops
    /// ([`RunConfig::event_loops`](crate::RunConfig::event_loops)). The default,
    /// false, gives every worker a thread of its own.
    fn cooperative(&self) -> bool {
        false
    }

    /// Told when worker `tid`, on an event loop, kept the loop's thread for `held` (at
    /// least [`HELD_LOOP_BOUND`](crate::coop::HELD_LOOP_BOUND)) without waiting or
    /// yielding, in `phase`: the loop's other workers waited that long. Called on the
    /// loop's thread each time it happens; the engine prints nothing itself, and the
    /// default does nothing.
    fn held_its_loop(&self, _tid: u32, _phase: WorkerPhase, _held: Duration) {}
}

/// Where a worker of an event loop is in its life, for [`Workload::held_its_loop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerPhase {
    /// Being created ([`Workload::create_worker`], sysbench's `thread_init`).
    Creating,
    /// Running its events.
    Running,
    /// Finishing ([`Worker::finish`], sysbench's `thread_done`).
    Finishing,
}

/// What to do after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventFlow {
    /// Keep going.
    Continue,
    /// This worker is done (sysbench: `event()` returned a truthy value).
    StopWorker,
}

/// One worker thread's benchmark state.
pub trait Worker {
    /// Executes one event. Latency is measured around this call by the default loop.
    fn event(&mut self, ctx: &WorkerContext) -> Result<EventFlow, WorkerError>;

    /// The worker's whole event loop. Override to take control of it (sysbench's
    /// `thread_run`); an override must use `ctx.more_events()`, `ctx.event_start()` and
    /// `ctx.event_stop()` itself.
    fn run(&mut self, ctx: &WorkerContext) -> Result<(), WorkerError> {
        while ctx.more_events() {
            ctx.event_start();
            let flow = self.event(ctx)?;
            ctx.event_stop();
            if flow == EventFlow::StopWorker {
                break;
            }
        }
        Ok(())
    }

    /// Called once after the loop (sysbench's `thread_done`).
    fn finish(&mut self, _ctx: &WorkerContext) -> Result<(), WorkerError> {
        Ok(())
    }
}

/// A worker failure that stops the run (the message is already worded for the user).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct WorkerError {
    /// What went wrong.
    pub message: String,
}

impl WorkerError {
    /// A new error.
    pub fn new(message: impl Into<String>) -> WorkerError {
        WorkerError {
            message: message.into(),
        }
    }

    /// The failure of worker `tid` that panicked with `panic`.
    pub(crate) fn from_panic(tid: u32, panic: Box<dyn std::any::Any + Send>) -> WorkerError {
        WorkerError::new(format!(
            "worker thread {tid} panicked: {}",
            panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown cause".into())
        ))
    }
}

/// A worker's handle on the engine. Not `Sync`: it belongs to its worker thread.
pub struct WorkerContext {
    pub(crate) tid: u32,
    pub(crate) shared: Arc<Shared>,
    /// Start of the current event (ns since the run epoch): the scheduled arrival in
    /// rate mode, so that queueing time is part of the latency.
    started_ns: Cell<u64>,
    /// Arrival time taken from the queue by `more_events`, for `event_start`.
    arrival_ns: Cell<Option<u64>>,
    /// Events claimed from the global `--events` budget but not yet run.
    budget: Cell<u64>,
    in_event: Cell<bool>,
    /// Events left until the worker gives back the stack pages its first events
    /// touched (see [`STACK_SETTLE_EVENTS`]); 0 once done.
    settling_events: Cell<u32>,
    /// Whether the event `more_events` just admitted belongs to the measured span (it
    /// was admitted after warm-up, and so was charged to the `--events` budget).
    admitted_measured: Cell<Option<bool>>,
    /// Whether the current event is recorded: events begun during warm-up are not,
    /// even when they end after it.
    measured: Cell<bool>,
}

thread_local! {
    static CURRENT: Cell<*const WorkerContext> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with this thread's worker context, if this thread is a worker in a run.
#[inline]
pub fn with_current<R>(f: impl FnOnce(&WorkerContext) -> R) -> Option<R> {
    CURRENT.with(|c| {
        let ptr = c.get();
        // SAFETY: the pointer is set by `WorkerContext::install` for the lifetime of
        // the worker body and cleared by `Installed::drop` before the context goes away;
        // only this thread reads it.
        (!ptr.is_null()).then(|| f(unsafe { &*ptr }))
    })
}

/// Clears the thread's current-context pointer when dropped.
pub(crate) struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(std::ptr::null()));
    }
}

#[inline]
fn bump(a: &AtomicU64, n: u64) {
    // Single writer (the owning thread): no read-modify-write instruction needed.
    a.store(a.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

/// Events after which a worker releases its stack below the current frame once: the
/// first events run deeper than the steady state (a Lua script runs interpreted until
/// LuaJIT has compiled its loop), and with thousands of workers those pages add up.
const STACK_SETTLE_EVENTS: u32 = 1024;

impl WorkerContext {
    pub(crate) fn new(tid: u32, shared: Arc<Shared>) -> WorkerContext {
        WorkerContext {
            tid,
            shared,
            started_ns: Cell::new(0),
            arrival_ns: Cell::new(None),
            budget: Cell::new(0),
            admitted_measured: Cell::new(None),
            measured: Cell::new(false),
            in_event: Cell::new(false),
            settling_events: Cell::new(STACK_SETTLE_EVENTS),
        }
    }

    /// Makes this context the thread's current one (for the FFI entry points).
    pub(crate) fn install(&self) -> Installed {
        CURRENT.with(|c| c.set(self as *const WorkerContext));
        Installed
    }

    /// This worker's thread id (0-based).
    pub fn thread_id(&self) -> u32 {
        self.tid
    }

    /// Number of worker threads in the run.
    pub fn thread_count(&self) -> u32 {
        self.shared.slots.len() as u32
    }

    /// Whether the run is stopping (time limit, signal, fatal error elsewhere).
    #[inline]
    pub fn stopping(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// Whether another event is due; in rate mode blocks until the next arrival.
    #[inline]
    pub fn more_events(&self) -> bool {
        if self.stopping() {
            return false;
        }
        let limit = self.shared.time_limit_ns.load(Ordering::Relaxed);
        if limit != 0 && self.shared.now_ns() >= limit {
            return false;
        }
        let measuring = self.shared.measuring.load(Ordering::Relaxed);
        if self.shared.config.events > 0 && measuring && !self.claim_event() {
            return false;
        }
        self.admitted_measured.set(Some(measuring));
        if let Some(queue) = &self.shared.arrivals {
            match queue.take(&self.shared.stop, &self.shared.clock) {
                Some(at) => self.arrival_ns.set(Some(at)),
                None => return false,
            }
        }
        true
    }

    fn claim_event(&self) -> bool {
        let left = self.budget.get();
        if left > 0 {
            self.budget.set(left - 1);
            return true;
        }
        let limit = self.shared.config.events;
        let claimed = &self.shared.events_claimed;
        let mut current = claimed.load(Ordering::Relaxed);
        loop {
            if current >= limit {
                return false;
            }
            // Claim in small batches to keep the shared counter off the per-event path,
            // shrinking them near the end so threads finish together.
            let threads = self.thread_count() as u64;
            let take = ((limit - current) / (threads * 8)).clamp(1, 64);
            match claimed.compare_exchange_weak(
                current,
                current + take,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    self.budget.set(take - 1);
                    return true;
                }
                Err(now) => current = now,
            }
        }
    }

    /// Marks the start of an event.
    #[inline]
    pub fn event_start(&self) {
        let now = self.shared.now_ns();
        let start = match self.arrival_ns.take() {
            Some(arrival) => {
                let slot = &self.shared.slots[self.tid as usize];
                let lag = now.saturating_sub(arrival);
                bump(&slot.lag_sum, lag);
                if lag > slot.lag_max.load(Ordering::Relaxed) {
                    slot.lag_max.fetch_max(lag, Ordering::Relaxed);
                }
                self.shared.concurrency.fetch_add(1, Ordering::Relaxed);
                arrival
            }
            None => now,
        };
        self.started_ns.set(start);
        self.in_event.set(true);
        let measured = self
            .admitted_measured
            .take()
            .unwrap_or_else(|| self.shared.measuring.load(Ordering::Relaxed));
        self.measured.set(measured);
    }

    /// Marks the end of an event: records its latency and counts it.
    #[inline]
    pub fn event_stop(&self) {
        if !self.in_event.replace(false) {
            return;
        }
        let settling = self.settling_events.get();
        if settling > 0 {
            self.settling_events.set(settling - 1);
            if settling == 1 {
                crate::stack::release_unused_stack();
            }
        }
        if self.shared.arrivals.is_some() {
            self.shared.concurrency.fetch_sub(1, Ordering::Relaxed);
        }
        // Begun while measuring, or (sysbench's accounting) ended while measuring.
        let straggler = self.shared.config.warmup_stragglers_count
            && self.shared.measuring.load(Ordering::Relaxed);
        if !(self.measured.get() || straggler) {
            return;
        }
        let latency = self.shared.now_ns().saturating_sub(self.started_ns.get());
        let slot = &self.shared.slots[self.tid as usize];
        self.shared.recorder(self.tid).record(latency);
        bump(&slot.events, 1);
        bump(&slot.latency_sum, latency);
        if latency < slot.latency_min.load(Ordering::Relaxed) {
            slot.latency_min.fetch_min(latency, Ordering::Relaxed);
        }
        if latency > slot.latency_max.load(Ordering::Relaxed) {
            slot.latency_max.fetch_max(latency, Ordering::Relaxed);
        }
    }

    /// Ends the current event without recording it, for an event that a stopping run
    /// gives up on before it completed: sysbench restarts an event after an ignorable
    /// error until it completes, which never ends when every attempt conflicts with
    /// another worker's. Returns whether the run is stopping (and the event was ended).
    pub fn abandon_event_if_stopping(&self) -> bool {
        if !self.stopping() {
            return false;
        }
        if self.in_event.replace(false) && self.shared.arrivals.is_some() {
            self.shared.concurrency.fetch_sub(1, Ordering::Relaxed);
        }
        true
    }

    /// Adds one to a counter.
    #[inline]
    pub fn count(&self, counter: Counter) {
        self.count_n(counter, 1);
    }

    /// Adds `n` to a counter.
    #[inline]
    pub fn count_n(&self, counter: Counter, n: u64) {
        bump(
            &self.shared.slots[self.tid as usize].counters[counter as usize],
            n,
        );
    }
}
