//! Open-loop (`--rate`) runs must not hide coordinated omission: an event's latency is
//! measured from its scheduled arrival, so a stall shows up in every event queued
//! behind it, not only in the stalled one.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bmk_engine::{
    run, EventFlow, IntervalStats, Observer, RunConfig, RunStatus, Worker, WorkerContext,
    WorkerError, Workload,
};

/// Events take 1 ms, except one that stalls for `stall`.
struct StallOnce {
    stall: Duration,
    done: AtomicU64,
}

struct StallWorker(Arc<StallOnce>);

impl Worker for StallWorker {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        let n = self.0.done.fetch_add(1, Ordering::Relaxed);
        if n == 50 {
            std::thread::sleep(self.0.stall);
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(EventFlow::Continue)
    }
}

struct Shared(Arc<StallOnce>);

impl Workload for Shared {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        Ok(Box::new(StallWorker(self.0.clone())))
    }
}

#[derive(Default)]
struct Collect(Arc<Mutex<Vec<IntervalStats>>>);

impl Observer for Collect {
    fn interval(&mut self, stats: &IntervalStats) {
        self.0.lock().unwrap().push(stats.clone());
    }
}

#[test]
fn a_stall_delays_every_queued_arrival_and_shows_in_the_percentiles() {
    let test = Arc::new(Shared(Arc::new(StallOnce {
        stall: Duration::from_millis(500),
        done: AtomicU64::new(0),
    })));
    let config = RunConfig {
        threads: 1,
        time: Some(Duration::from_secs(2)),
        rate: 200.0,
        report_interval: Some(Duration::from_millis(250)),
        ..RunConfig::default()
    };
    let intervals = Arc::new(Mutex::new(Vec::new()));
    let mut observer = Collect(intervals.clone());
    let outcome = run(config, test, &mut observer, &AtomicUsize::new(0));
    assert_eq!(outcome.status, RunStatus::Completed);
    let stats = outcome.stats;

    // At 200/s, a 500 ms stall queues ~100 arrivals; each of them waits for the stall
    // to end, so far more than 1 % of events see hundreds of milliseconds.
    let p99 = stats.percentile_ms(99.0);
    assert!(
        p99 > 200.0,
        "p99 {p99} ms hides the queueing behind the stall"
    );
    assert!(stats.max_ns >= 500_000_000, "max {} ns", stats.max_ns);
    // A closed-loop measurement would have recorded a single slow event; here the
    // median of events stays low but the 95th percentile is dominated by the backlog.
    let slow = stats.histogram.count_between(100_000_000, u64::MAX);
    assert!(slow > 20, "only {slow} events over 100 ms");

    let lag = stats.lag.expect("rate mode reports lag");
    assert!(lag.max_ns >= 400_000_000, "max lag {} ns", lag.max_ns);
    assert!(lag.mean_ns > 0.0);

    let intervals = intervals.lock().unwrap();
    let max_queue = intervals.iter().map(|i| i.queue_length).max().unwrap_or(0);
    assert!(max_queue >= 20, "queue never grew: {max_queue}");
    let worst = intervals
        .iter()
        .map(|i| i.percentile_ms(99.0))
        .fold(0.0, f64::max);
    assert!(worst > 200.0, "no interval shows the stall: {worst} ms");
}

#[test]
fn closed_loop_counts_only_service_time() {
    let test = Arc::new(Shared(Arc::new(StallOnce {
        stall: Duration::from_millis(200),
        done: AtomicU64::new(0),
    })));
    let config = RunConfig {
        threads: 1,
        events: 100,
        time: None,
        ..RunConfig::default()
    };
    let outcome = run(config, test, &mut Collect::default(), &AtomicUsize::new(0));
    assert_eq!(outcome.stats.events, 100);
    assert!(outcome.stats.lag.is_none());
    // Exactly one event saw the stall.
    let slow = outcome.stats.histogram.count_between(100_000_000, u64::MAX);
    assert_eq!(slow, 1);
}

/// A rate far above what the workers can do fills the arrival queue to its cap and no
/// further: the arrivals that found it full are dropped and counted, so the report can
/// say how much of the asked-for load was never offered.
#[test]
fn an_unreachable_rate_is_capped_and_its_dropped_arrivals_counted() {
    let test = Arc::new(Shared(Arc::new(StallOnce {
        stall: Duration::from_millis(1),
        done: AtomicU64::new(0),
    })));
    let config = RunConfig {
        threads: 1,
        time: Some(Duration::from_secs(1)),
        rate: 1e8,
        arrival_queue_cap: 1000,
        report_interval: Some(Duration::from_millis(250)),
        ..RunConfig::default()
    };
    let intervals = Arc::new(Mutex::new(Vec::new()));
    let mut observer = Collect(intervals.clone());
    let start = std::time::Instant::now();
    let outcome = run(config, test, &mut observer, &AtomicUsize::new(0));
    assert_eq!(outcome.status, RunStatus::Completed);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let max_queue = (intervals.lock().unwrap().iter())
        .map(|i| i.queue_length)
        .max()
        .unwrap_or(0);
    assert!(max_queue <= 1000, "queue grew past its cap: {max_queue}");
    let lag = outcome.stats.lag.expect("rate mode reports lag");
    // 1e8/s for a second, of which at most a thousand or so were served or queued.
    assert!(lag.dropped > 10_000_000, "dropped {}", lag.dropped);
    assert!(outcome.stats.events + lag.dropped <= 200_000_000);
}
