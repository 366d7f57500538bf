//! A run whose start waits for a gate (several processes starting together): nobody
//! runs before the instant the gate names, the reports count from that instant, a
//! refusal releases nobody, and a signal while waiting ends the run as interrupted.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bmk_engine::{
    run_gated, EventFlow, IntervalStats, Observer, RunConfig, RunStatus, StartAt, StartGate,
    Worker, WorkerContext, WorkerError, Workload,
};

/// Records when each event started; every worker's events take 1 ms.
#[derive(Default)]
struct Log {
    created: AtomicU32,
    first_event: Mutex<Option<Instant>>,
    events: AtomicU32,
}

struct Sleeper(Arc<Log>);

impl Worker for Sleeper {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        self.0
            .first_event
            .lock()
            .unwrap()
            .get_or_insert_with(Instant::now);
        self.0.events.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(1));
        Ok(EventFlow::Continue)
    }
}

struct Logged(Arc<Log>);

impl Workload for Logged {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        self.0.created.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(Sleeper(self.0.clone())))
    }
}

/// Opens at a fixed instant, after checking that every worker was created first.
struct Fixed {
    log: Arc<Log>,
    threads: u32,
    answer: Result<StartAt, String>,
    opened_at: Option<Instant>,
}

impl StartGate for Fixed {
    fn open(&mut self, _interrupt: &AtomicUsize) -> Result<StartAt, String> {
        assert_eq!(self.log.created.load(Ordering::SeqCst), self.threads);
        assert_eq!(self.log.events.load(Ordering::SeqCst), 0);
        self.opened_at = Some(Instant::now());
        self.answer.clone()
    }
}

#[derive(Default)]
struct Intervals(Vec<(f64, Instant)>);

impl Observer for Intervals {
    fn interval(&mut self, stats: &IntervalStats) {
        self.0.push((stats.time_total, Instant::now()));
    }
}

fn config() -> RunConfig {
    RunConfig {
        threads: 3,
        time: Some(Duration::from_millis(600)),
        report_interval: Some(Duration::from_millis(200)),
        ..RunConfig::default()
    }
}

#[test]
fn workers_start_at_the_instant_the_gate_names_and_reports_count_from_it() {
    let log = Arc::new(Log::default());
    let start = Instant::now() + Duration::from_millis(400);
    let mut gate = Fixed {
        log: log.clone(),
        threads: 3,
        answer: Ok(StartAt::At(start)),
        opened_at: None,
    };
    let mut observer = Intervals::default();
    let outcome = run_gated(
        config(),
        Arc::new(Logged(log.clone())),
        &mut observer,
        &AtomicUsize::new(0),
        &mut gate,
    );
    assert_eq!(outcome.status, RunStatus::Completed);
    let first = log.first_event.lock().unwrap().expect("events ran");
    assert!(first >= start, "an event ran {:?} early", start - first);
    // A loaded machine may wake the controller late, never early.
    assert!(
        first - start < Duration::from_millis(300),
        "{:?} late",
        first - start
    );
    let stamps: Vec<f64> = observer.0.iter().map(|(t, _)| *t).collect();
    assert_eq!(stamps, [0.2, 0.4, 0.6]);
    // The report due 0.2 s after the agreed instant is made no earlier than that.
    for (t, made) in &observer.0 {
        assert!(*made >= start + Duration::from_secs_f64(*t));
    }
}

#[test]
fn an_instant_already_past_starts_at_once() {
    let log = Arc::new(Log::default());
    let mut gate = Fixed {
        log: log.clone(),
        threads: 3,
        answer: Ok(StartAt::At(Instant::now())),
        opened_at: None,
    };
    let t0 = Instant::now();
    let outcome = run_gated(
        config(),
        Arc::new(Logged(log.clone())),
        &mut Intervals::default(),
        &AtomicUsize::new(0),
        &mut gate,
    );
    assert_eq!(outcome.status, RunStatus::Completed);
    assert!(outcome.stats.events > 0);
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_refused_start_releases_nobody() {
    let log = Arc::new(Log::default());
    let mut gate = Fixed {
        log: log.clone(),
        threads: 3,
        answer: Err("barrier 'b' timed out; missing: index 2".into()),
        opened_at: None,
    };
    let outcome = run_gated(
        config(),
        Arc::new(Logged(log.clone())),
        &mut Intervals::default(),
        &AtomicUsize::new(0),
        &mut gate,
    );
    assert_eq!(
        outcome.status,
        RunStatus::StartRefused("barrier 'b' timed out; missing: index 2".into())
    );
    assert!(gate.opened_at.is_some());
    assert_eq!(log.events.load(Ordering::SeqCst), 0);
    assert_eq!(outcome.stats.events, 0);
}

/// Waits until a signal arrives (here: sets one itself, as a handler would).
struct Interrupted;

impl StartGate for Interrupted {
    fn open(&mut self, interrupt: &AtomicUsize) -> Result<StartAt, String> {
        interrupt.store(2, Ordering::SeqCst);
        Err("interrupted while waiting at the barrier".into())
    }
}

#[test]
fn a_signal_while_the_gate_waits_ends_the_run_as_interrupted() {
    let log = Arc::new(Log::default());
    let outcome = run_gated(
        config(),
        Arc::new(Logged(log.clone())),
        &mut Intervals::default(),
        &AtomicUsize::new(0),
        &mut Interrupted,
    );
    assert_eq!(outcome.status, RunStatus::Interrupted(2));
    assert_eq!(log.events.load(Ordering::SeqCst), 0);
}
