//! One benchmark run: start the workers, wait for them to initialise, release them
//! together, hand the controller loop ([`crate::controller`]) the rest, and return how
//! the run ended with what it measured.
//!
//! The calling thread is the run's controller: it spawns one OS thread per worker (or
//! one event-loop thread per CPU for a [cooperative](Workload::cooperative) test), waits
//! for every `thread_init` (with `--thread-init-timeout`), and releases them together.
//! Printing is the [`Observer`]'s job; nothing here formats output.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::clock::{Clock, RunClock};
use crate::collector::Collector;
use crate::config::RunConfig;
use crate::controller;
use crate::observer::Observer;
use crate::outcome::{RunOutcome, RunStatus};
use crate::shared::Shared;
use crate::start_gate::{StartAt, StartGate};
use crate::worker::Workload;
use crate::worker_thread::worker_main;

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
    test: Arc<dyn Workload>,
    observer: &mut dyn Observer,
    interrupt: &AtomicUsize,
) -> RunOutcome {
    run_on(config, test, observer, interrupt, RunClock::system(), None)
}

/// [`run`], with the workers released when `gate` says (see [`StartGate`]) instead of
/// as soon as all are initialised. When the gate refuses, nobody is released and the
/// run ends as [`RunStatus::StartRefused`]; when a signal arrives while it waits, as
/// [`RunStatus::Interrupted`].
pub fn run_gated(
    config: RunConfig,
    test: Arc<dyn Workload>,
    observer: &mut dyn Observer,
    interrupt: &AtomicUsize,
    gate: &mut dyn StartGate,
) -> RunOutcome {
    run_on(
        config,
        test,
        observer,
        interrupt,
        RunClock::system(),
        Some(gate),
    )
}

/// [`run`] on an injected `clock` instead of the system's: every thread of the run is
/// started and waits through it (see [`Clock`]); the run starts at whatever time the
/// clock shows. Workers always get a thread each ([`RunConfig::event_loops`] is not
/// used), since an event loop waits for sockets, which no injected clock can.
pub fn run_with_clock(
    config: RunConfig,
    test: Arc<dyn Workload>,
    observer: &mut dyn Observer,
    interrupt: &AtomicUsize,
    clock: Arc<dyn Clock>,
) -> RunOutcome {
    run_on(
        config,
        test,
        observer,
        interrupt,
        RunClock::Injected(clock),
        None,
    )
}

/// Workers per event loop beyond which `--event-loops=auto` adds loops.
///
/// A loop is one thread for the scheduler. Against a local server that runs a thread
/// per connection, hundreds of server threads share the CPUs with it: while the loop
/// waits for its turn behind them, the answers of all its workers wait unread, and once
/// the server has answered every query it was sent, only the loops are left to run —
/// the CPUs idle or serve other processes until they have sent the next round. With
/// 1024 connections on 2 CPUs, each of 2 loops was runnable but not running most of
/// the time (`/proc` schedstat: 5.9 s waiting against 0.7 s running in a 3 s window);
/// 16 loops kept the server busier and gave 20–50% more queries per second
/// (BENCHMARKS.md, "Against the real local servers").
pub const WORKERS_PER_LOOP: u32 = 64;

/// How many event-loop threads a run of `config` on the system clock uses for a
/// workload whose [`Workload::cooperative`] is `cooperative`; 0 means a thread per
/// worker. Loops need cooperative workers and no `--rate` (the arrival queue hands
/// events to threads), and as many loops as workers would only add coroutine switches.
/// `auto` is one loop per CPU, and one per [`WORKERS_PER_LOOP`] workers when that is
/// more.
pub fn event_loops(config: &RunConfig, cooperative: bool) -> u32 {
    let cpus = thread::available_parallelism().map_or(1, |n| n.get() as u32);
    auto_event_loops(config, cooperative, cpus)
}

/// [`event_loops`] on a machine of `cpus` CPUs.
fn auto_event_loops(config: &RunConfig, cooperative: bool, cpus: u32) -> u32 {
    let threads = config.threads.max(1);
    let loops = match config.event_loops {
        _ if !cooperative || config.rate > 0.0 => 0,
        Some(n) => n,
        None => cpus.max(threads.div_ceil(WORKERS_PER_LOOP)),
    };
    if loops < threads {
        loops
    } else {
        0
    }
}

fn run_on(
    config: RunConfig,
    test: Arc<dyn Workload>,
    observer: &mut dyn Observer,
    interrupt: &AtomicUsize,
    clock: RunClock,
    gate: Option<&mut dyn StartGate>,
) -> RunOutcome {
    let threads = config.threads.max(1);
    let shared = Arc::new(Shared::new(config, threads, clock));
    let mut stats = Collector::new(shared.clone());
    let (mut handles, spawned_workers) = spawn_workers(&shared, &test, threads);
    // Workers whose thread runs: the others count as initialised when a spawn failed,
    // so that the wait for the initialisations ends.
    shared.note_initialized(threads - spawned_workers);
    match wait_for_init(&shared, threads, interrupt) {
        InitWait::Done => {}
        InitWait::TimedOut => {
            shared.stop();
            return outcome(&shared, &mut stats, RunStatus::InitTimeout);
        }
        InitWait::Failed(fatal) => {
            shared.stop();
            join_stopped(&shared, handles, spawned_workers, INIT_FAILED_GRACE);
            return outcome(&shared, &mut stats, RunStatus::InitFailed(fatal));
        }
    }
    let released = match release_time(&shared, gate, interrupt) {
        Ok(at) => at,
        Err(message) => {
            shared.stop();
            join_stopped(&shared, handles, spawned_workers, INIT_FAILED_GRACE);
            let sig = interrupt.load(Ordering::Relaxed);
            let status = if sig != 0 {
                RunStatus::Interrupted(sig as i32)
            } else {
                RunStatus::StartRefused(message)
            };
            return outcome(&shared, &mut stats, status);
        }
    };
    {
        let ctl = shared.control();
        // Without warm-up, measuring starts at the release itself, so no event can
        // slip in unclaimed between the release and the start of the event limit.
        if shared.config.warmup.is_zero() {
            stats.start_at_release(released);
            shared.measuring.store(true, Ordering::SeqCst);
        }
        // Announced before the release, as sysbench does from its start barrier, so
        // that "Threads started!" comes before anything the first events print.
        observer.threads_started();
        shared.release(ctl);
    }
    let status = controller::drive(
        &shared,
        &mut stats,
        observer,
        interrupt,
        &mut handles,
        released,
    );
    outcome(&shared, &mut stats, status)
}

/// Starts the workers: on event-loop threads when the run has loops, else a thread
/// each. Returns the threads and how many workers they run; after a failed spawn
/// (recorded as a failure of the run) no more are started.
fn spawn_workers(
    shared: &Arc<Shared>,
    test: &Arc<dyn Workload>,
    threads: u32,
) -> (Vec<thread::JoinHandle<()>>, u32) {
    let mut handles = Vec::with_capacity(threads as usize);
    let loops = if shared.clock.is_system() {
        event_loops(&shared.config, test.cooperative())
    } else {
        0
    };
    let mut spawned_workers = 0u32;
    for index in 0..loops {
        // Loop `index` runs workers index, index+loops, ...: neighbouring tids (often
        // pinned to neighbouring tables) are spread over the loops.
        let tids: Vec<u32> = (index..threads).step_by(loops as usize).collect();
        let loop_workers = tids.len() as u32;
        let worker_shared = shared.clone();
        let test = test.clone();
        let builder = thread::Builder::new()
            .name(format!("bmk-loop-{index}"))
            .stack_size(shared.config.thread_stack_size.max(1 << 20));
        let spawned = shared.clock.spawn(builder, move || {
            crate::coop::loop_main(tids, worker_shared, test);
        });
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
        let builder = thread::Builder::new()
            .name(format!("bmk-worker-{tid}"))
            .stack_size(stack);
        let spawned = shared
            .clock
            .spawn(builder, move || worker_main(tid, worker_shared, test));
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
    (handles, spawned_workers)
}

/// How the wait for the workers' initialisation ended.
enum InitWait {
    /// Every worker is ready, or a signal came (the controller reports it).
    Done,
    /// `--thread-init-timeout` passed with no failure.
    TimedOut,
    /// A worker (or a thread spawn) failed: these are the failures.
    Failed(Vec<String>),
}

/// Waits for every `thread_init` — also after one failed, so that the others'
/// messages come before the verdict rather than after it.
fn wait_for_init(shared: &Shared, threads: u32, interrupt: &AtomicUsize) -> InitWait {
    let init_deadline = shared.now_ns() + shared.config.thread_init_timeout.as_nanos() as u64;
    let mut ctl = shared.control();
    while ctl.initialized < threads {
        let now = shared.now_ns();
        if now >= init_deadline {
            if !ctl.fatal.is_empty() {
                break;
            }
            return InitWait::TimedOut;
        }
        if interrupt.load(Ordering::Relaxed) != 0 {
            break;
        }
        ctl = shared.wait(ctl, init_deadline.min(now + 50_000_000));
    }
    // A worker that failed to start says so before it counts as initialised (and a
    // thread that could not be spawned before its workers count), so any failure up to
    // here is one: like sysbench, release nobody and report nothing.
    if !ctl.fatal.is_empty() {
        return InitWait::Failed(std::mem::take(&mut ctl.fatal));
    }
    InitWait::Done
}

/// The run-clock time at which the workers are released: now, or when `gate` opens.
/// The gate may wait long (for other processes): the lock is not held meanwhile, and
/// the workers wait for the release as they would for a slow controller. A run
/// interrupted while starting skips the gate and goes on to the controller, which
/// reports it. `Err` is the gate's refusal.
fn release_time(
    shared: &Shared,
    gate: Option<&mut dyn StartGate>,
    interrupt: &AtomicUsize,
) -> Result<u64, String> {
    let gate = gate.filter(|_| interrupt.load(Ordering::Relaxed) == 0);
    match gate.map(|g| g.open(interrupt)) {
        None | Some(Ok(StartAt::Now)) => Ok(shared.now_ns()),
        Some(Ok(StartAt::At(instant))) => {
            // The instant becomes a time on the run's clock: the difference is taken
            // right away, so the mapping costs one pair of clock reads of error.
            let ahead = instant.saturating_duration_since(Instant::now()).as_nanos() as u64;
            let behind = Instant::now().saturating_duration_since(instant).as_nanos() as u64;
            let at = (shared.now_ns() + ahead).saturating_sub(behind);
            shared.clock.sleep_until(at);
            Ok(at)
        }
        Some(Err(message)) => Err(message),
    }
}

/// The run's result: `status` and the statistics since the baseline.
fn outcome(shared: &Shared, stats: &mut Collector, status: RunStatus) -> RunOutcome {
    let limit = shared.config.events;
    RunOutcome {
        status,
        stats: stats.cumulative(),
        event_limit_reached: limit > 0 && shared.events_claimed.load(Ordering::Relaxed) >= limit,
        abandoned: shared.abandoned.load(Ordering::Relaxed),
    }
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
    let deadline = shared.now_ns() + grace.as_nanos() as u64;
    let mut ctl = shared.control();
    while ctl.finished < workers {
        if shared.now_ns() >= deadline {
            break;
        }
        ctl = shared.wait(ctl, deadline);
    }
    let all_finished = ctl.finished >= workers;
    drop(ctl);
    // A worker that counts as finished has only its return left; one that does not is
    // stuck starting and is left to the process exit.
    for h in handles
        .into_iter()
        .filter(|h| all_finished || h.is_finished())
    {
        shared.clock.join(h);
    }
}

#[cfg(test)]
mod tests {
    use super::{auto_event_loops, RunConfig, WORKERS_PER_LOOP};

    fn loops(threads: u32, event_loops: Option<u32>, cpus: u32) -> u32 {
        let config = RunConfig {
            threads,
            event_loops,
            ..RunConfig::default()
        };
        auto_event_loops(&config, true, cpus)
    }

    #[test]
    fn auto_loops_are_one_per_cpu_or_one_per_64_workers() {
        assert_eq!(WORKERS_PER_LOOP, 64);
        // Up to 64 workers a CPU: one loop per CPU.
        assert_eq!(loops(8, None, 2), 2);
        assert_eq!(loops(128, None, 2), 2);
        // Beyond: one loop per 64 workers, the last one partly filled.
        assert_eq!(loops(129, None, 2), 3);
        assert_eq!(loops(256, None, 2), 4);
        assert_eq!(loops(1024, None, 2), 16);
        assert_eq!(loops(1024, None, 32), 32);
        // No more loops than workers: a thread per worker instead.
        assert_eq!(loops(2, None, 2), 0);
        assert_eq!(loops(1, None, 4), 0);
    }

    #[test]
    fn given_loops_are_kept_and_loops_need_cooperative_workers_without_rate() {
        assert_eq!(loops(1024, Some(2), 8), 2);
        assert_eq!(loops(1024, Some(0), 8), 0);
        let config = RunConfig {
            threads: 1024,
            ..RunConfig::default()
        };
        assert_eq!(auto_event_loops(&config, false, 2), 0);
        let paced = RunConfig {
            rate: 100.0,
            ..config
        };
        assert_eq!(auto_event_loops(&paced, true, 2), 0);
    }
}
