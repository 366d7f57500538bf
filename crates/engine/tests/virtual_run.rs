//! Whole runs on a virtual clock: the controller's timing (reports, warm-up,
//! checkpoints, limits, forced shutdown, signals, rate mode) checked against exact
//! figures, each run taking milliseconds of real time whatever its virtual length.
//!
//! Tie rule to keep in mind when reading the figures: at one instant the controller
//! (the thread that made the clock) runs before the workers, so an event that ends
//! exactly when a report is due is counted in the next report.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bmk_engine::virtual_clock::VirtualClock;
use bmk_engine::{
    Counter, CumulativeStats, EventFlow, IntervalStats, Observer, RunConfig, RunOutcome, RunStatus,
    Worker, WorkerContext, WorkerError, Workload,
};

/// The latency of event `n` (0-based) of worker `tid`.
type Latency = dyn Fn(u32, u64) -> Duration + Send + Sync;

/// A test whose events take the virtual time `latency` gives them and count one read.
struct Timed {
    clock: Arc<VirtualClock>,
    latency: Arc<Latency>,
    /// Time `create_worker` takes.
    init: Duration,
}

struct TimedWorker {
    tid: u32,
    done: u64,
    clock: Arc<VirtualClock>,
    latency: Arc<Latency>,
}

impl Worker for TimedWorker {
    fn event(&mut self, ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        self.clock.sleep((self.latency)(self.tid, self.done));
        self.done += 1;
        ctx.count(Counter::Read);
        Ok(EventFlow::Continue)
    }
}

impl Workload for Timed {
    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        self.clock.sleep(self.init);
        Ok(Box::new(TimedWorker {
            tid,
            done: 0,
            clock: self.clock.clone(),
            latency: self.latency.clone(),
        }))
    }
}

/// Everything the controller handed out, with the virtual time it did so.
#[derive(Default)]
struct Record {
    clock: Option<Arc<VirtualClock>>,
    intervals: Vec<IntervalStats>,
    checkpoints: Vec<(f64, CumulativeStats)>,
    warmup_finished_at: Option<Duration>,
    time_limit_at: Option<Duration>,
}

impl Observer for Record {
    fn warmup_finished(&mut self) {
        self.warmup_finished_at = self.clock.as_ref().map(|c| c.now());
    }
    fn interval(&mut self, stats: &IntervalStats) {
        self.intervals.push(stats.clone());
    }
    fn checkpoint(&mut self, at: f64, stats: &CumulativeStats) {
        self.checkpoints.push((at, stats.clone()));
    }
    fn time_limit_reached(&mut self) {
        self.time_limit_at = self.clock.as_ref().map(|c| c.now());
    }
}

/// Runs `config` with events of `latency` on a fresh virtual clock.
fn run_timed(
    config: RunConfig,
    latency: impl Fn(u32, u64) -> Duration + Send + Sync + 'static,
) -> (RunOutcome, Record) {
    run_with(config, Duration::ZERO, latency, &AtomicUsize::new(0))
}

fn run_with(
    config: RunConfig,
    init: Duration,
    latency: impl Fn(u32, u64) -> Duration + Send + Sync + 'static,
    interrupt: &AtomicUsize,
) -> (RunOutcome, Record) {
    let clock = VirtualClock::new();
    let test = Arc::new(Timed {
        clock: clock.clone(),
        latency: Arc::new(latency),
        init,
    });
    let mut record = Record {
        clock: Some(clock.clone()),
        ..Record::default()
    };
    let outcome = clock.run(config, test, &mut record, interrupt);
    (outcome, record)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn interval_events(record: &Record) -> Vec<u64> {
    record.intervals.iter().map(|s| s.events).collect()
}

#[test]
fn reports_fall_due_at_their_exact_times_and_count_every_event() {
    let config = RunConfig {
        threads: 4,
        time: Some(secs(10)),
        report_interval: Some(secs(1)),
        ..RunConfig::default()
    };
    let (outcome, record) = run_timed(config, |_, _| ms(10));
    assert_eq!(outcome.status, RunStatus::Completed);
    // 4 workers, 100 events a second each; the events ending at 1.000 s are the next
    // second's.
    assert_eq!(
        interval_events(&record),
        [396, 400, 400, 400, 400, 400, 400, 400, 400, 400]
    );
    for (i, s) in record.intervals.iter().enumerate() {
        assert_eq!(s.time_total, (i + 1) as f64);
        assert_eq!(s.time_interval, 1.0);
        assert_eq!(s.threads_running, 4);
        assert_eq!(s.counters.get(Counter::Read), s.events);
    }
    let stats = &outcome.stats;
    assert_eq!(stats.time_total, 10.0);
    assert_eq!(stats.events, 4000);
    assert_eq!((stats.min_ns, stats.max_ns), (10_000_000, 10_000_000));
    assert_eq!(stats.sum_ns, 4000 * 10_000_000);
    assert!(stats.threads.iter().all(|t| t.events == 1000));
    assert_eq!(record.time_limit_at, Some(secs(10)));
}

#[test]
fn warm_up_is_not_measured_and_reports_count_from_its_end() {
    let config = RunConfig {
        threads: 2,
        time: Some(secs(3)),
        warmup: secs(2),
        report_interval: Some(secs(1)),
        ..RunConfig::default()
    };
    let (outcome, record) = run_timed(config, |_, _| ms(10));
    assert_eq!(record.warmup_finished_at, Some(secs(2)));
    assert_eq!(record.time_limit_at, Some(secs(5)));
    assert_eq!(interval_events(&record), [198, 200, 200]);
    assert_eq!(
        record
            .intervals
            .iter()
            .map(|s| s.time_total)
            .collect::<Vec<_>>(),
        [1.0, 2.0, 3.0]
    );
    assert_eq!(outcome.stats.events, 600);
    assert_eq!(outcome.stats.time_total, 3.0);
}

#[test]
fn checkpoints_split_the_run_into_spans_that_add_up() {
    let config = RunConfig {
        threads: 2,
        time: Some(secs(4)),
        checkpoints: vec![ms(1500), secs(3)],
        ..RunConfig::default()
    };
    // Worker 0 takes 10 ms per event, worker 1 20 ms.
    let (outcome, record) = run_timed(config, |tid, _| ms(10 * (tid as u64 + 1)));
    let spans: Vec<(f64, f64, u64)> = (record.checkpoints.iter())
        .map(|(at, s)| (*at, s.time_total, s.events))
        .collect();
    // Up to 1.5 s: 149 + 74 events ending before it; the ones ending at 1.5 s are
    // the next span's.
    assert_eq!(spans, [(1.5, 1.5, 223), (3.0, 1.5, 225)]);
    let last = &outcome.stats;
    assert_eq!((last.time_total, last.events), (1.0, 152));
    // 4 s of 100 + 50 events a second: none lost between the spans.
    let total: u64 = spans.iter().map(|s| s.2).sum::<u64>() + last.events;
    assert_eq!(total, 400 + 200);
    assert_eq!(last.threads[0].events, 101);
    assert_eq!(last.threads[1].events, 51);
    assert_eq!((last.min_ns, last.max_ns), (10_000_000, 20_000_000));
}

#[test]
fn the_event_limit_ends_the_run_when_the_budget_is_spent() {
    let config = RunConfig {
        threads: 4,
        events: 1000,
        time: None,
        ..RunConfig::default()
    };
    let (outcome, _) = run_timed(config, |_, _| ms(10));
    assert!(outcome.event_limit_reached);
    assert_eq!(outcome.stats.events, 1000);
    assert_eq!(outcome.stats.time_total, 2.5);
}

#[test]
fn a_worker_that_does_not_stop_is_given_up_after_the_forced_shutdown_grace() {
    let config = RunConfig {
        threads: 2,
        time: Some(secs(1)),
        forced_shutdown: Some(secs(2)),
        ..RunConfig::default()
    };
    // Worker 1's third event never ends in time.
    let (outcome, record) = run_timed(config, |tid, n| {
        if tid == 1 && n == 2 {
            secs(3600)
        } else {
            ms(100)
        }
    });
    assert_eq!(outcome.status, RunStatus::ForcedShutdown);
    assert_eq!(record.time_limit_at, Some(secs(1)));
    let stats = &outcome.stats;
    assert_eq!(stats.time_total, 3.0);
    assert_eq!(stats.threads[0].events, 10);
    assert_eq!(stats.threads[1].events, 2);
}

#[test]
fn a_signal_stops_the_run_at_the_controllers_next_look() {
    let interrupt = Arc::new(AtomicUsize::new(0));
    let flag = interrupt.clone();
    let config = RunConfig {
        threads: 1,
        time: Some(secs(10)),
        ..RunConfig::default()
    };
    // The 15th event (ending at 1.5 s) raises SIGINT; the controller looks every 50 ms.
    let (outcome, record) = run_with(
        config,
        Duration::ZERO,
        move |_, n| {
            if n == 15 {
                flag.store(2, Ordering::Relaxed);
            }
            ms(100)
        },
        &interrupt,
    );
    assert_eq!(outcome.status, RunStatus::Interrupted(2));
    assert_eq!(record.time_limit_at, None);
    // Seen at 1.55 s; the event under way ends at 1.6 s.
    assert_eq!(outcome.stats.time_total, 1.6);
    assert_eq!(outcome.stats.events, 16);
}

#[test]
fn workers_slower_to_start_than_the_init_timeout_end_the_run_unreleased() {
    let config = RunConfig {
        threads: 2,
        thread_init_timeout: secs(30),
        ..RunConfig::default()
    };
    let (outcome, record) = run_with(config, secs(31), |_, _| ms(10), &AtomicUsize::new(0));
    assert_eq!(outcome.status, RunStatus::InitTimeout);
    assert_eq!(outcome.stats.events, 0);
    assert!(record.intervals.is_empty());
}

#[test]
fn rate_mode_counts_latency_from_the_scheduled_arrival() {
    let config = RunConfig {
        threads: 1,
        time: Some(secs(2)),
        rate: 200.0,
        report_interval: Some(secs(1)),
        ..RunConfig::default()
    };
    // One worker at 10 ms per event serves 100 of the 200 arrivals a second: the
    // queue grows, and so does the time each arrival waits.
    let (outcome, record) = run_timed(config, |_, _| ms(10));
    let stats = &outcome.stats;
    // Busy from the first arrival (at 0) but for the odd gap before the queue builds.
    assert!(
        (190..=200).contains(&stats.events),
        "{} events",
        stats.events
    );
    assert!(stats.min_ns >= 10_000_000);
    assert!(stats.max_ns > 900_000_000, "max {} ns", stats.max_ns);
    let lag = stats.lag.expect("rate mode reports lag");
    assert!(lag.mean_ns > 400e6 && lag.max_ns > 900_000_000);
    let queues: Vec<u64> = record.intervals.iter().map(|s| s.queue_length).collect();
    assert!(queues[0] > 50 && queues[1] > queues[0] + 50, "{queues:?}");
    assert!(record
        .intervals
        .iter()
        .all(|s| s.rate_mode && s.concurrency == 1));
}

#[test]
fn the_same_run_gives_the_same_statistics_every_time() {
    let config = || RunConfig {
        threads: 3,
        time: Some(secs(3)),
        rate: 250.0,
        report_interval: Some(ms(500)),
        ..RunConfig::default()
    };
    let latency = |tid: u32, n: u64| Duration::from_micros(1000 + 700 * ((tid as u64 + n) % 17));
    let (a, ra) = run_timed(config(), latency);
    let (b, rb) = run_timed(config(), latency);
    assert_eq!(a.stats.events, b.stats.events);
    assert_eq!(a.stats.histogram, b.stats.histogram);
    assert_eq!(a.stats.sum_ns, b.stats.sum_ns);
    assert_eq!(a.stats.lag.map(|l| l.max_ns), b.stats.lag.map(|l| l.max_ns));
    let summary = |r: &Record| -> Vec<(u64, u64, u64)> {
        (r.intervals.iter())
            .map(|s| (s.events, s.queue_length, s.histogram.max()))
            .collect()
    };
    assert_eq!(summary(&ra), summary(&rb));
}

/// Workers whose creation (a script's `thread_init`) takes a time of its own each.
struct StaggeredStart {
    clock: Arc<VirtualClock>,
    init: fn(u32) -> Duration,
}

impl Workload for StaggeredStart {
    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        self.clock.sleep((self.init)(tid));
        Ok(Box::new(TimedWorker {
            tid,
            done: 0,
            clock: self.clock.clone(),
            latency: Arc::new(|_, _| ms(100)),
        }))
    }
}

#[test]
fn the_time_limit_starts_once_the_slowest_worker_has_started() {
    // As in sysbench, --time counts from the release, which waits for every
    // thread_init: worker 2 takes 2 s to start, the others none, and each of the three
    // then runs 5 s of 100 ms events.
    let clock = VirtualClock::new();
    let test = Arc::new(StaggeredStart {
        clock: clock.clone(),
        init: |tid| if tid == 2 { secs(2) } else { Duration::ZERO },
    });
    let mut record = Record {
        clock: Some(clock.clone()),
        ..Record::default()
    };
    let config = RunConfig {
        threads: 3,
        time: Some(secs(5)),
        ..RunConfig::default()
    };
    let outcome = clock.run(config, test, &mut record, &AtomicUsize::new(0));
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(record.time_limit_at, Some(secs(7)));
    assert_eq!(outcome.stats.time_total, 5.0);
    for t in &outcome.stats.threads {
        assert_eq!(t.events, 50);
    }
}
