//! The state a run's threads share: the controller, the workers (on threads of their
//! own or as coroutines of an event loop) and the rate scheduler all hold one
//! [`Shared`].
//!
//! Workers write their own [`ThreadSlot`] and latency recorder without locks; the
//! controller reads them without stopping anyone. The only lock, [`Control`], guards
//! the start barrier and the bookkeeping of workers that have started, finished or
//! failed; its condition variable wakes whoever waits for one of those to change.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread;

use crate::arrivals::ArrivalQueue;
use crate::clock::RunClock;
use crate::config::RunConfig;
use crate::latency::LatencyRecorder;
use crate::stats::{Counters, COUNTER_COUNT};

/// Per-worker statistics, written by the worker only and read by the controller.
#[repr(align(128))]
pub(crate) struct ThreadSlot {
    pub(crate) events: AtomicU64,
    pub(crate) latency_sum: AtomicU64,
    pub(crate) latency_min: AtomicU64,
    pub(crate) latency_max: AtomicU64,
    pub(crate) lag_sum: AtomicU64,
    pub(crate) lag_max: AtomicU64,
    pub(crate) counters: [AtomicU64; COUNTER_COUNT],
    finished: AtomicBool,
}

impl ThreadSlot {
    fn new() -> ThreadSlot {
        ThreadSlot {
            events: AtomicU64::new(0),
            latency_sum: AtomicU64::new(0),
            latency_min: AtomicU64::new(u64::MAX),
            latency_max: AtomicU64::new(0),
            lag_sum: AtomicU64::new(0),
            lag_max: AtomicU64::new(0),
            counters: Default::default(),
            finished: AtomicBool::new(false),
        }
    }

    /// The counters' current values.
    pub(crate) fn counters(&self) -> Counters {
        let mut out = [0; COUNTER_COUNT];
        for (o, c) in out.iter_mut().zip(&self.counters) {
            *o = c.load(Ordering::Relaxed);
        }
        Counters(out)
    }

    /// Whether the worker has finished.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Relaxed)
    }
}

/// The workers' progress through start-up and shutdown, and why the run stops.
#[derive(Default)]
pub(crate) struct Control {
    /// Workers whose creation ended (successfully or not).
    pub(crate) initialized: u32,
    /// Whether the controller has released the workers.
    pub(crate) started: bool,
    /// Workers that have finished.
    pub(crate) finished: u32,
    /// Workers' failure messages.
    pub(crate) fatal: Vec<String>,
    /// Whether the rate scheduler found the arrival queue full (strict mode).
    pub(crate) queue_full: bool,
}

/// State shared by the controller, the workers and the scheduler.
pub(crate) struct Shared {
    pub(crate) config: RunConfig,
    pub(crate) clock: RunClock,
    pub(crate) slots: Vec<ThreadSlot>,
    /// Latency recorders: one per worker up to [`MAX_RECORDERS`] workers; beyond that
    /// worker `t` records into `recorders[t % recorders.len()]` (see [`recorders_for`]).
    pub(crate) recorders: Vec<LatencyRecorder>,
    pub(crate) stop: AtomicBool,
    pub(crate) measuring: AtomicBool,
    /// The run-clock time at which the time limit falls (0: none): workers check it
    /// before each event, as sysbench does, so none starts after the limit because
    /// the controller woke late.
    pub(crate) time_limit_ns: AtomicU64,
    pub(crate) events_claimed: AtomicU64,
    pub(crate) arrivals: Option<ArrivalQueue>,
    pub(crate) concurrency: AtomicU64,
    /// Workers the controller stopped waiting for (still in an event when the run's
    /// grace after its stop ran out).
    pub(crate) abandoned: AtomicU32,
    /// Workers that have left their event loop (before `thread_done`), and the run-clock
    /// time the last of them left: the measured time ends there, not after thousands of
    /// workers have closed their connections, which is no part of the load.
    events_done: AtomicU32,
    events_done_at: AtomicU64,
    control: Mutex<Control>,
    changed: Condvar,
}

/// Workers up to which each has a latency recorder of its own. A recorder's resident
/// memory is one 4 KiB page per power of two its latencies span (3 significant
/// digits); with thousands of workers one each would cost more than the workers' own
/// state, so larger runs share [`SHARED_RECORDERS`] recorders, updated with atomic adds
/// (no lock) and drained without a copy.
pub const MAX_RECORDERS: usize = 64;

/// Recorders that the workers of a run above [`MAX_RECORDERS`] workers share: enough
/// that cores rarely add to the same recorder at once, few enough that their pages
/// stay a small part of the run's memory.
pub const SHARED_RECORDERS: usize = 16;

/// The recorders of a run of `threads` workers.
fn recorders_for(threads: usize) -> Vec<LatencyRecorder> {
    if threads <= MAX_RECORDERS {
        (0..threads).map(|_| LatencyRecorder::new()).collect()
    } else {
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        let count = SHARED_RECORDERS.max(cores).min(MAX_RECORDERS);
        (0..count).map(|_| LatencyRecorder::new_shared()).collect()
    }
}

impl Shared {
    /// The state of a run of `threads` workers under `config`, timed by `clock`.
    pub(crate) fn new(config: RunConfig, threads: u32, clock: RunClock) -> Shared {
        Shared {
            arrivals: (config.rate > 0.0).then(|| ArrivalQueue::new(config.arrival_queue_cap)),
            config,
            clock,
            slots: (0..threads).map(|_| ThreadSlot::new()).collect(),
            recorders: recorders_for(threads as usize),
            stop: AtomicBool::new(false),
            measuring: AtomicBool::new(false),
            time_limit_ns: AtomicU64::new(0),
            events_claimed: AtomicU64::new(0),
            concurrency: AtomicU64::new(0),
            abandoned: AtomicU32::new(0),
            events_done: AtomicU32::new(0),
            events_done_at: AtomicU64::new(0),
            control: Mutex::new(Control::default()),
            changed: Condvar::new(),
        }
    }

    /// The recorder worker `tid` records into.
    #[inline]
    pub(crate) fn recorder(&self, tid: u32) -> &LatencyRecorder {
        &self.recorders[tid as usize % self.recorders.len()]
    }

    /// Whether every worker has a recorder of its own.
    pub(crate) fn recorder_per_worker(&self) -> bool {
        self.recorders.len() == self.slots.len()
    }

    /// Nanoseconds since the run's epoch.
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    /// Counts `n` workers whose creation ended (successfully or not).
    pub(crate) fn note_initialized(&self, n: u32) {
        self.control().initialized += n;
        self.notify();
    }

    /// Blocks until the controller releases the workers; false when the run stopped
    /// before.
    pub(crate) fn wait_for_start(&self) -> bool {
        let mut ctl = self.control();
        while !ctl.started && !self.stop.load(Ordering::Relaxed) {
            ctl = self.wait(ctl, self.now_ns() + 100_000_000);
        }
        ctl.started
    }

    /// Releases the workers waiting in [`Shared::wait_for_start`].
    pub(crate) fn release(&self, mut ctl: MutexGuard<'_, Control>) {
        ctl.started = true;
        drop(ctl);
        self.notify();
    }

    /// Notes that a worker left its event loop (its last event ended).
    pub(crate) fn note_events_done(&self) {
        self.events_done_at
            .fetch_max(self.now_ns(), Ordering::AcqRel);
        self.events_done.fetch_add(1, Ordering::AcqRel);
    }

    /// When the measured time of a run that ends at `now` ends: the time the last
    /// worker left its event loop when every worker did, else `now` (a worker still in
    /// an event, or one that never ran).
    pub(crate) fn measured_end(&self, now: u64) -> u64 {
        if self.events_done.load(Ordering::Acquire) as usize == self.slots.len() {
            self.events_done_at.load(Ordering::Acquire).min(now)
        } else {
            now
        }
    }

    /// Marks worker `tid` finished.
    pub(crate) fn note_finished(&self, tid: u32) {
        self.slots[tid as usize]
            .finished
            .store(true, Ordering::Release);
        self.control().finished += 1;
        self.notify();
    }

    /// The start-up and shutdown bookkeeping, locked.
    pub(crate) fn control(&self) -> MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits, holding `ctl`, until the bookkeeping changes or `deadline_ns` passes
    /// (whichever comes first; may return early).
    pub(crate) fn wait<'a>(
        &'a self,
        ctl: MutexGuard<'a, Control>,
        deadline_ns: u64,
    ) -> MutexGuard<'a, Control> {
        self.clock
            .wait(&self.changed, &self.control, ctl, deadline_ns)
    }

    /// Wakes whoever waits for the bookkeeping to change.
    fn notify(&self) {
        self.changed.notify_all();
        self.clock.notify();
    }

    /// Stops the run: workers finish their current event, the scheduler and the
    /// workers waiting for arrivals or for the start return.
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(q) = &self.arrivals {
            q.wake_all(&self.clock);
        }
        self.notify();
    }

    /// Records a worker's failure and stops the run.
    pub(crate) fn fail(&self, message: String) {
        self.control().fatal.push(message);
        self.stop();
    }
}
