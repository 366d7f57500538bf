//! One benchmark run: start the workers, keep time, collect and hand out statistics.
//!
//! The calling thread is the run's controller: it spawns one OS thread per worker,
//! waits for every `thread_init` (with `--thread-init-timeout`), releases them
//! together, and then sleeps until the next thing due — an intermediate report, a
//! checkpoint, the end of warm-up, the time limit, a signal, or the last worker
//! finishing. Statistics are pulled from the workers' [`ThreadSlot`]s without
//! stopping them. Printing is the [`Observer`]'s job; nothing here formats output.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::latency::{new_histogram, DrainMark, LatencyRecorder};
use crate::stats::{
    Counters, CumulativeStats, IntervalStats, LagStats, ThreadTotals, COUNTER_COUNT,
};
use crate::worker::{Test, WorkerContext, WorkerError};

/// The arrival queue limit at which sysbench aborts in rate mode.
pub const STRICT_QUEUE_LIMIT: usize = 131_072;

/// How a run is limited and reported (the general options of spec 1 §2).
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Worker threads.
    pub threads: u32,
    /// Total events after warm-up (0 = no limit).
    pub events: u64,
    /// Measured duration (None = no limit).
    pub time: Option<Duration>,
    /// Warm-up before measuring.
    pub warmup: Duration,
    /// Grace after the time limit before giving up on workers.
    pub forced_shutdown: Option<Duration>,
    /// Worker stack size in bytes.
    pub thread_stack_size: usize,
    /// How long workers may take to initialise.
    pub thread_init_timeout: Duration,
    /// Open-loop arrival rate per second (0 = closed loop).
    pub rate: f64,
    /// Abort when the arrival queue reaches [`STRICT_QUEUE_LIMIT`] (sysbench behaviour).
    pub strict_queue_limit: bool,
    /// Intermediate report period.
    pub report_interval: Option<Duration>,
    /// Seconds (after the measured start) at which to report cumulatively and reset.
    pub checkpoints: Vec<Duration>,
    /// Event-loop threads for a [`cooperative`](Test::cooperative) test: `None` = one
    /// per CPU, `Some(0)` = a thread per worker (see [`crate::coop`]).
    pub event_loops: Option<u32>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            threads: 1,
            events: 0,
            time: Some(Duration::from_secs(10)),
            warmup: Duration::ZERO,
            forced_shutdown: None,
            thread_stack_size: 64 * 1024,
            thread_init_timeout: Duration::from_secs(30),
            rate: 0.0,
            strict_queue_limit: false,
            report_interval: None,
            checkpoints: Vec::new(),
            event_loops: None,
        }
    }
}

/// Receives the run's progress on the controlling thread.
pub trait Observer {
    /// All workers initialised and released.
    fn threads_started(&mut self) {}
    /// Warm-up is over; measuring starts now.
    fn warmup_finished(&mut self) {}
    /// An intermediate report is due.
    fn interval(&mut self, _stats: &IntervalStats) {}
    /// A checkpoint is due `at` seconds after the measured start; counters restart
    /// after it (`stats` covers the span since the previous checkpoint).
    fn checkpoint(&mut self, _at: f64, _stats: &CumulativeStats) {}
    /// The time limit has passed; workers are being stopped.
    fn time_limit_reached(&mut self) {}
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    /// Limits reached or every worker finished.
    Completed,
    /// Stopped by a signal (its number).
    Interrupted(i32),
    /// A worker failed; its messages.
    Fatal(Vec<String>),
    /// A worker could not be created (`thread_init` failed, no connection): its
    /// messages. No worker was released, nothing was measured.
    InitFailed(Vec<String>),
    /// Workers did not stop within `--forced-shutdown` after the time limit.
    ForcedShutdown,
    /// Workers did not initialise within `--thread-init-timeout`.
    InitTimeout,
    /// Rate mode fell [`STRICT_QUEUE_LIMIT`] arrivals behind in strict mode.
    QueueFull,
}

/// The result of [`run`].
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// How it ended.
    pub status: RunStatus,
    /// What was measured since the start (or the last checkpoint).
    pub stats: CumulativeStats,
    /// Whether the whole `--events` budget was handed out (the event limit ended the
    /// run, unless something else ended it first).
    pub event_limit_reached: bool,
}

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

    fn counters(&self) -> Counters {
        let mut out = [0; COUNTER_COUNT];
        for (o, c) in out.iter_mut().zip(&self.counters) {
            *o = c.load(Ordering::Relaxed);
        }
        Counters(out)
    }
}

/// Arrivals generated by the rate scheduler, waiting for a worker.
pub(crate) struct ArrivalQueue {
    queue: Mutex<VecDeque<u64>>,
    ready: Condvar,
}

impl ArrivalQueue {
    /// Blocks until an arrival is due or the run stops.
    pub(crate) fn take(&self, stop: &AtomicBool) -> Option<u64> {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(at) = q.pop_front() {
                return Some(at);
            }
            q = self
                .ready
                .wait_timeout(q, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn len(&self) -> usize {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[derive(Default)]
struct Control {
    initialized: u32,
    started: bool,
    finished: u32,
    fatal: Vec<String>,
    queue_full: bool,
}

/// State shared by the controller, the workers and the scheduler.
pub(crate) struct Shared {
    pub(crate) config: RunConfig,
    epoch: Instant,
    pub(crate) slots: Vec<ThreadSlot>,
    /// Latency recorders: one per worker up to [`MAX_RECORDERS`] workers; beyond that
    /// worker `t` records into `recorders[t % recorders.len()]` (see [`recorders_for`]).
    pub(crate) recorders: Vec<LatencyRecorder>,
    pub(crate) stop: AtomicBool,
    pub(crate) measuring: AtomicBool,
    pub(crate) events_claimed: AtomicU64,
    pub(crate) arrivals: Option<ArrivalQueue>,
    pub(crate) concurrency: AtomicU64,
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
    /// The recorder worker `tid` records into.
    #[inline]
    pub(crate) fn recorder(&self, tid: u32) -> &LatencyRecorder {
        &self.recorders[tid as usize % self.recorders.len()]
    }

    /// Whether every worker has a recorder of its own.
    fn recorder_per_worker(&self) -> bool {
        self.recorders.len() == self.slots.len()
    }

    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Counts `n` workers whose creation ended (successfully or not).
    pub(crate) fn note_initialized(&self, n: u32) {
        self.control().initialized += n;
        self.changed.notify_all();
    }

    /// Blocks until the controller releases the workers; false when the run stopped
    /// before.
    pub(crate) fn wait_for_start(&self) -> bool {
        let mut ctl = self.control();
        while !ctl.started && !self.stop.load(Ordering::Relaxed) {
            ctl = self
                .changed
                .wait_timeout(ctl, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        ctl.started
    }

    /// Marks worker `tid` finished.
    pub(crate) fn note_finished(&self, tid: u32) {
        self.slots[tid as usize]
            .finished
            .store(true, Ordering::Release);
        self.control().finished += 1;
        self.changed.notify_all();
    }

    fn control(&self) -> std::sync::MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(q) = &self.arrivals {
            let _guard = q.queue.lock();
            q.ready.notify_all();
        }
        self.changed.notify_all();
    }

    pub(crate) fn fail(&self, message: String) {
        self.control().fatal.push(message);
        self.stop();
    }
}

/// Runs `test` under `config`, reporting progress to `observer`.
///
/// `interrupt` holds the number of a signal that asks the run to stop (0 = none); the
/// caller installs the signal handlers. Returns when every worker has finished, or
/// earlier for a forced shutdown or an initialisation timeout (then the workers are left
/// stopping or still starting, and the caller is expected to exit). After a failed
/// initialisation the workers that started are dropped without running (no event, no
/// [`Worker::finish`](crate::Worker::finish)) and their threads are joined, unless one
/// is still starting after a short grace period.
pub fn run(
    config: RunConfig,
    test: Arc<dyn Test>,
    observer: &mut dyn Observer,
    interrupt: &AtomicUsize,
) -> RunOutcome {
    let threads = config.threads.max(1);
    let shared = Arc::new(Shared {
        arrivals: (config.rate > 0.0).then(|| ArrivalQueue {
            queue: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
        }),
        config,
        epoch: Instant::now(),
        slots: (0..threads).map(|_| ThreadSlot::new()).collect(),
        recorders: recorders_for(threads as usize),
        stop: AtomicBool::new(false),
        measuring: AtomicBool::new(false),
        events_claimed: AtomicU64::new(0),
        concurrency: AtomicU64::new(0),
        control: Mutex::new(Control::default()),
        changed: Condvar::new(),
    });
    let mut controller = Controller::new(shared.clone());

    let mut handles = Vec::with_capacity(threads as usize);
    let loops = match shared.config.event_loops {
        _ if !test.cooperative() || shared.arrivals.is_some() => 0,
        Some(n) => n,
        None => thread::available_parallelism().map_or(1, |n| n.get() as u32),
    };
    // As many loops as workers would only add coroutine switches to threads.
    let loops = if loops < threads { loops } else { 0 };
    // Workers whose thread runs: the others count as initialised when a spawn fails,
    // so that the wait below ends.
    let mut spawned_workers = 0u32;
    for index in 0..loops {
        // Loop `index` runs workers index, index+loops, ...: neighbouring tids (often
        // pinned to neighbouring tables) are spread over the loops.
        let tids: Vec<u32> = (index..threads).step_by(loops as usize).collect();
        let loop_workers = tids.len() as u32;
        let worker_shared = shared.clone();
        let test = test.clone();
        let spawned = thread::Builder::new()
            .name(format!("bmk-loop-{index}"))
            .stack_size(shared.config.thread_stack_size.max(1 << 20))
            .spawn(move || crate::coop::loop_main(tids, worker_shared, test));
        match spawned {
            Ok(h) => {
                handles.push(h);
                spawned_workers += loop_workers;
            }
            Err(e) => {
                shared.fail(format!("failed to create event loop thread {index}: {e}"));
                break;
            }
        }
    }
    for tid in (0..threads).filter(|_| loops == 0) {
        let worker_shared = shared.clone();
        let test = test.clone();
        // Rust code, LuaJIT and database clients need more than sysbench's 64K
        // default; stacks are virtual memory, so a floor costs nothing resident.
        let stack = shared.config.thread_stack_size.max(1 << 20);
        let spawned = thread::Builder::new()
            .name(format!("bmk-worker-{tid}"))
            .stack_size(stack)
            .spawn(move || worker_main(tid, worker_shared, test));
        match spawned {
            Ok(h) => {
                handles.push(h);
                spawned_workers += 1;
            }
            Err(e) => {
                shared.fail(format!("failed to create worker thread {tid}: {e}"));
                break;
            }
        }
    }
    shared.note_initialized(threads - spawned_workers);

    // Wait for every thread_init — also after one failed, so that the others' messages
    // come before the verdict rather than after it.
    let init_deadline = Instant::now() + shared.config.thread_init_timeout;
    {
        let mut ctl = shared.control();
        while ctl.initialized < threads {
            let now = Instant::now();
            if now >= init_deadline {
                if !ctl.fatal.is_empty() {
                    break;
                }
                drop(ctl);
                shared.stop();
                return controller.outcome(RunStatus::InitTimeout);
            }
            if interrupt.load(Ordering::Relaxed) != 0 {
                break;
            }
            let wait = (init_deadline - now).min(Duration::from_millis(50));
            ctl = shared
                .changed
                .wait_timeout(ctl, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        // A worker that failed to start says so before it counts as initialised (and a
        // thread that could not be spawned before its workers count), so any failure
        // up to here is one: like sysbench, release nobody and report nothing.
        if !ctl.fatal.is_empty() {
            let fatal = std::mem::take(&mut ctl.fatal);
            drop(ctl);
            shared.stop();
            join_stopped(&shared, handles, spawned_workers, INIT_FAILED_GRACE);
            return controller.outcome(RunStatus::InitFailed(fatal));
        }
        // Without warm-up, measuring starts at the release itself, so no event can
        // slip in unclaimed between the release and the start of the event limit.
        if shared.config.warmup.is_zero() {
            controller.rebase();
            shared.measuring.store(true, Ordering::SeqCst);
        }
        ctl.started = true;
    }
    shared.changed.notify_all();
    let status = controller.drive(observer, interrupt, &mut handles);
    controller.outcome(status)
}

/// How long a failed start waits for the workers that did start to close their
/// connections: they only have to notice the stop, but one still connecting may take
/// up to `--db-connect-timeout`, and the verdict must not wait for that.
const INIT_FAILED_GRACE: Duration = Duration::from_secs(2);

/// After a stop before the release: waits up to `grace` for the `workers` whose threads
/// run to finish, then joins their threads, so that they close their connections
/// before the process exits rather than being cut off by it.
fn join_stopped(
    shared: &Shared,
    handles: Vec<thread::JoinHandle<()>>,
    workers: u32,
    grace: Duration,
) {
    let deadline = Instant::now() + grace;
    let mut ctl = shared.control();
    while ctl.finished < workers {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        ctl = shared
            .changed
            .wait_timeout(ctl, deadline - now)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    let all_finished = ctl.finished >= workers;
    drop(ctl);
    // A worker that counts as finished has only its return left; one that does not is
    // stuck starting and is left to the process exit.
    for h in handles
        .into_iter()
        .filter(|h| all_finished || h.is_finished())
    {
        let _ = h.join();
    }
}

fn worker_main(tid: u32, shared: Arc<Shared>, test: Arc<dyn Test>) {
    crate::rand::seed_thread(tid);
    let ctx = WorkerContext::new(tid, shared.clone());
    let _installed = ctx.install();
    let made = match catch_unwind(AssertUnwindSafe(|| test.create_worker(tid))) {
        Ok(made) => made.map_err(|e| e.message),
        Err(panic) => Err(panic_message(tid, panic)),
    };
    crate::stack::release_unused_stack();
    let mut worker = match made {
        Ok(worker) => worker,
        Err(message) => {
            // The failure is recorded before the worker counts as initialised, so that
            // the controller sees a failed start rather than a complete one.
            shared.fail(message);
            shared.note_initialized(1);
            shared.note_finished(tid);
            return;
        }
    };
    shared.note_initialized(1);
    if !shared.wait_for_start() {
        // The run never started: like sysbench, no event and no `thread_done`; the
        // worker (and its connection) is dropped on the way out.
        shared.note_finished(tid);
        return;
    }
    let body = catch_unwind(AssertUnwindSafe(|| -> Result<(), WorkerError> {
        worker.run(&ctx)?;
        worker.finish(&ctx)
    }));
    let failure = match body {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.message),
        Err(panic) => Some(panic_message(tid, panic)),
    };
    if let Some(message) = failure {
        shared.fail(message);
    }
    shared.note_finished(tid);
}

/// The message of a worker's panic.
pub(crate) fn panic_message(tid: u32, panic: Box<dyn std::any::Any + Send>) -> String {
    format!(
        "worker thread {tid} panicked: {}",
        panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into())
    )
}

/// Rate-mode scheduler: Poisson arrivals, independent of how fast workers are.
fn schedule_arrivals(shared: Arc<Shared>) {
    let queue = shared.arrivals.as_ref().expect("rate mode");
    let mean_gap_ns = 1e9 / shared.config.rate;
    let mut next = shared.now_ns() as f64;
    while !shared.stop.load(Ordering::Relaxed) {
        let now = shared.now_ns();
        if (next as u64) > now {
            thread::sleep(Duration::from_nanos((next as u64 - now).min(50_000_000)));
            continue;
        }
        let mut q = queue.queue.lock().unwrap_or_else(|p| p.into_inner());
        let mut pushed = 0;
        while next as u64 <= now {
            q.push_back(next as u64);
            pushed += 1;
            // Exponential gaps: -ln(U) * mean, U in (0, 1].
            let u = 1.0 - crate::rand::uniform_double();
            next += -u.ln() * mean_gap_ns;
        }
        let full = shared.config.strict_queue_limit && q.len() >= STRICT_QUEUE_LIMIT;
        drop(q);
        if pushed == 1 {
            queue.ready.notify_one();
        } else {
            queue.ready.notify_all();
        }
        if full {
            shared.control().queue_full = true;
            shared.stop();
        }
    }
}

/// Snapshot of one worker's cumulative counters, for differences.
#[derive(Clone, Copy, Default)]
struct SlotMark {
    events: u64,
    latency_sum: u64,
    lag_sum: u64,
    counters: Counters,
}

impl SlotMark {
    fn of(slot: &ThreadSlot) -> SlotMark {
        SlotMark {
            events: slot.events.load(Ordering::Relaxed),
            latency_sum: slot.latency_sum.load(Ordering::Relaxed),
            lag_sum: slot.lag_sum.load(Ordering::Relaxed),
            counters: slot.counters(),
        }
    }
}

/// The controller's side of the statistics: what it has already taken from workers.
struct Controller {
    shared: Arc<Shared>,
    /// Per-recorder bucket counts already drained.
    seen: Vec<DrainMark>,
    /// Samples drained since the last interval report.
    pending: Histogram<u64>,
    /// Scratch for one drain.
    fresh: Histogram<u64>,
    /// Per-recorder number of samples drained so far, and its value at the cumulative
    /// baseline. Cumulative event counts come from these rather than from the workers'
    /// event counters, so that a report's event count and its histogram always agree
    /// even when an event ends while a checkpoint resets the statistics.
    drained: Vec<u64>,
    base_drained: Vec<u64>,
    /// Marks at the last interval report and at the cumulative baseline.
    interval_marks: Vec<SlotMark>,
    base_marks: Vec<SlotMark>,
    cumulative: Histogram<u64>,
    base_ns: u64,
    last_interval_ns: u64,
    end_ns: Option<u64>,
}

impl Controller {
    fn new(shared: Arc<Shared>) -> Controller {
        let n = shared.slots.len();
        let r = shared.recorders.len();
        Controller {
            seen: vec![DrainMark::default(); r],
            drained: vec![0; r],
            base_drained: vec![0; r],
            interval_marks: vec![SlotMark::default(); n],
            base_marks: vec![SlotMark::default(); n],
            cumulative: new_histogram(),
            pending: new_histogram(),
            fresh: new_histogram(),
            base_ns: shared.now_ns(),
            last_interval_ns: shared.now_ns(),
            end_ns: None,
            shared,
        }
    }

    /// Moves new samples from every worker into the pending interval histogram and
    /// the cumulative one.
    fn drain(&mut self) {
        for ((recorder, seen), drained) in self
            .shared
            .recorders
            .iter()
            .zip(self.seen.iter_mut())
            .zip(self.drained.iter_mut())
        {
            *drained += recorder.drain_into(seen, &mut self.fresh);
        }
        self.pending
            .add(&self.fresh)
            .expect("same histogram geometry");
        self.cumulative
            .add(&self.fresh)
            .expect("same histogram geometry");
        self.fresh.reset();
    }

    /// Starts a new measured span, dropping what came before (the warm-up): the same
    /// restart as a checkpoint's, whose statistics nobody reports.
    fn rebase(&mut self) {
        self.span(true);
    }

    /// Statistics since the previous interval; `nominal_ns` is the report's scheduled
    /// time since the measured start, printed instead of the wake-up time so that a
    /// late wake-up on a busy machine does not show as `[ 0.51s ]`.
    fn interval(&mut self, nominal_ns: u64) -> IntervalStats {
        self.drain();
        let hist = std::mem::replace(&mut self.pending, new_histogram());
        let now = self.shared.now_ns();
        let mut events = 0;
        let mut counters = Counters::default();
        let mut running = 0;
        for (i, slot) in self.shared.slots.iter().enumerate() {
            let mark = SlotMark::of(slot);
            events += mark.events - self.interval_marks[i].events;
            counters.add(&mark.counters.since(&self.interval_marks[i].counters));
            self.interval_marks[i] = mark;
            if !slot.finished.load(Ordering::Relaxed) {
                running += 1;
            }
        }
        let stats = IntervalStats {
            time_total: nominal_ns as f64 / 1e9,
            time_interval: (now - self.last_interval_ns) as f64 / 1e9,
            threads_running: running,
            events,
            counters,
            histogram: hist,
            queue_length: self.shared.arrivals.as_ref().map_or(0, |q| q.len() as u64),
            concurrency: self.shared.concurrency.load(Ordering::Relaxed),
            rate_mode: self.shared.arrivals.is_some(),
        };
        self.last_interval_ns = now;
        stats
    }

    fn cumulative(&mut self) -> CumulativeStats {
        self.span(false)
    }

    /// The statistics of the span since the last checkpoint, and a new span started
    /// exactly where they end — the same drain, the same counter marks, the extremes
    /// taken and reset in one swap — so that nothing done while the report prints is
    /// lost between the two spans.
    fn checkpoint(&mut self) -> CumulativeStats {
        self.span(true)
    }

    /// The statistics since the baseline; with `restart`, the baseline then moves to
    /// the point they were taken at.
    fn span(&mut self, restart: bool) -> CumulativeStats {
        self.drain();
        let now = self.end_ns.unwrap_or_else(|| self.shared.now_ns());
        let mut stats = CumulativeStats {
            time_total: now.saturating_sub(self.base_ns) as f64 / 1e9,
            events: 0,
            counters: Counters::default(),
            histogram: self.cumulative.clone(),
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            threads: Vec::with_capacity(self.shared.slots.len()),
            lag: None,
        };
        let mut lag_sum = 0;
        let mut lag_max = 0;
        let own_recorders = self.shared.recorder_per_worker();
        if !own_recorders {
            stats.events = (self.drained.iter())
                .zip(&self.base_drained)
                .map(|(d, b)| d - b)
                .sum();
        }
        for (i, slot) in self.shared.slots.iter().enumerate() {
            let mark = SlotMark::of(slot);
            let base = self.base_marks[i];
            let (min, max, slot_lag_max) = if restart {
                self.base_marks[i] = mark;
                self.interval_marks[i] = mark;
                (
                    slot.latency_min.swap(u64::MAX, Ordering::Relaxed),
                    slot.latency_max.swap(0, Ordering::Relaxed),
                    slot.lag_max.swap(0, Ordering::Relaxed),
                )
            } else {
                (
                    slot.latency_min.load(Ordering::Relaxed),
                    slot.latency_max.load(Ordering::Relaxed),
                    slot.lag_max.load(Ordering::Relaxed),
                )
            };
            // With shared recorders a worker's own event counter gives its share; the
            // total still comes from the histograms so that count and percentiles agree.
            let events = if own_recorders {
                let e = self.drained[i] - self.base_drained[i];
                stats.events += e;
                e
            } else {
                mark.events - base.events
            };
            let busy = mark.latency_sum - base.latency_sum;
            stats.sum_ns += busy;
            stats.counters.add(&mark.counters.since(&base.counters));
            stats.threads.push(ThreadTotals {
                events,
                busy_ns: busy,
            });
            if events > 0 {
                stats.min_ns = stats.min_ns.min(min);
                stats.max_ns = stats.max_ns.max(max);
            }
            lag_sum += mark.lag_sum - base.lag_sum;
            lag_max = lag_max.max(slot_lag_max);
        }
        if restart {
            self.pending.reset();
            self.cumulative.reset();
            self.base_drained.clone_from(&self.drained);
            self.base_ns = now;
            self.last_interval_ns = now;
        }
        if stats.events == 0 {
            stats.min_ns = 0;
        } else if !stats.histogram.is_empty() {
            // A sample racing a checkpoint can miss the exact extremes; the histogram
            // bounds them to within its precision.
            if stats.min_ns == u64::MAX {
                stats.min_ns = stats.histogram.min();
            }
            if stats.max_ns == 0 {
                stats.max_ns = stats.histogram.max();
            }
        }
        if self.shared.arrivals.is_some() {
            stats.lag = Some(LagStats {
                mean_ns: if stats.events > 0 {
                    lag_sum as f64 / stats.events as f64
                } else {
                    0.0
                },
                max_ns: lag_max,
            });
        }
        stats
    }

    fn outcome(&mut self, status: RunStatus) -> RunOutcome {
        let stats = self.cumulative();
        let limit = self.shared.config.events;
        RunOutcome {
            status,
            stats,
            event_limit_reached: limit > 0
                && self.shared.events_claimed.load(Ordering::Relaxed) >= limit,
        }
    }

    /// The controller loop: from release to the last worker's exit.
    fn drive(
        &mut self,
        observer: &mut dyn Observer,
        interrupt: &AtomicUsize,
        handles: &mut Vec<thread::JoinHandle<()>>,
    ) -> RunStatus {
        let shared = self.shared.clone();
        let config = &shared.config;
        let threads = shared.slots.len() as u32;
        let released = shared.now_ns();
        observer.threads_started();

        let scheduler = shared.arrivals.as_ref().map(|_| {
            let s = shared.clone();
            thread::Builder::new()
                .name("bmk-rate".into())
                .spawn(move || schedule_arrivals(s))
                .expect("spawn rate scheduler")
        });

        let measure_from = released + config.warmup.as_nanos() as u64;
        let mut warming = !config.warmup.is_zero();
        let mut time_limit = config.time.map(|t| measure_from + t.as_nanos() as u64);
        let interval = config.report_interval.map(|d| d.as_nanos() as u64);
        let mut next_report = interval.map(|i| measure_from + i);
        let mut checkpoints: VecDeque<u64> = {
            let mut c: Vec<u64> = config
                .checkpoints
                .iter()
                .map(|d| measure_from + d.as_nanos() as u64)
                .collect();
            c.sort_unstable();
            c.into()
        };
        let mut forced_deadline: Option<u64> = None;
        // Workers' 32-bit buckets must be read well before one can wrap.
        let mut next_drain = released + 1_000_000_000;
        let mut status = RunStatus::Completed;

        loop {
            let (finished, fatal, queue_full) = {
                let ctl = shared.control();
                (ctl.finished, !ctl.fatal.is_empty(), ctl.queue_full)
            };
            let now = shared.now_ns();
            if finished >= threads {
                break;
            }
            if status == RunStatus::Completed {
                if queue_full {
                    status = RunStatus::QueueFull;
                } else if fatal {
                    status = RunStatus::Fatal(Vec::new());
                } else {
                    let sig = interrupt.load(Ordering::Relaxed);
                    if sig != 0 {
                        status = RunStatus::Interrupted(sig as i32);
                        shared.stop();
                    }
                }
            }
            if let Some(deadline) = forced_deadline {
                if now >= deadline {
                    self.end_ns = Some(now);
                    return RunStatus::ForcedShutdown;
                }
            }
            if warming && now >= measure_from {
                warming = false;
                self.rebase();
                shared.measuring.store(true, Ordering::SeqCst);
                observer.warmup_finished();
            }
            if !warming && !shared.stop.load(Ordering::Relaxed) {
                if let Some(at) = next_report {
                    if now >= at {
                        let stats = self.interval(at - measure_from);
                        observer.interval(&stats);
                        next_report = Some(at + interval.expect("set with next_report"));
                    }
                }
                while let Some(&c) = checkpoints.front().filter(|&&c| now >= c) {
                    checkpoints.pop_front();
                    let stats = self.checkpoint();
                    let at = (c - measure_from) as f64 / 1e9;
                    observer.checkpoint(at, &stats);
                }
            }
            if let Some(limit) = time_limit {
                if now >= limit {
                    time_limit = None;
                    shared.stop();
                    observer.time_limit_reached();
                    forced_deadline = config.forced_shutdown.map(|d| limit + d.as_nanos() as u64);
                }
            }

            if now >= next_drain {
                self.drain();
                next_drain = now + 1_000_000_000;
            }
            let mut wake = now + 50_000_000;
            for t in [
                time_limit,
                next_report,
                checkpoints.front().copied(),
                forced_deadline,
            ]
            .into_iter()
            .flatten()
            {
                wake = wake.min(t);
            }
            if warming {
                wake = wake.min(measure_from);
            }
            let ctl = shared.control();
            if ctl.finished < threads {
                let _unused = shared
                    .changed
                    .wait_timeout(ctl, Duration::from_nanos(wake.saturating_sub(now).max(1)))
                    .unwrap_or_else(|p| p.into_inner());
            }
        }
        self.end_ns = Some(shared.now_ns());
        shared.stop();
        for h in handles.drain(..) {
            let _ = h.join();
        }
        if let Some(s) = scheduler {
            let _ = s.join();
        }
        let fatal = std::mem::take(&mut shared.control().fatal);
        if !fatal.is_empty() {
            return RunStatus::Fatal(fatal);
        }
        if matches!(status, RunStatus::Fatal(_)) {
            return RunStatus::Completed;
        }
        status
    }
}
