//! An event that can never complete (sysbench restarts it after every restartable
//! error, for ever when every attempt conflicts with another worker's) is given up once
//! the run stops, and is not counted: the run still ends at its time limit.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bmk_engine::{
    run, EventFlow, Observer, RunConfig, RunStatus, Worker, WorkerContext, WorkerError, Workload,
};

/// Completes `complete` events, then restarts the next one until the run stops.
struct Stuck {
    complete: u32,
}

impl Worker for Stuck {
    fn event(&mut self, ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        if self.complete > 0 {
            self.complete -= 1;
            return Ok(EventFlow::Continue);
        }
        loop {
            // One failed attempt, then the restart decision.
            std::thread::sleep(Duration::from_millis(1));
            if ctx.abandon_event_if_stopping() {
                return Ok(EventFlow::StopWorker);
            }
        }
    }
}

struct StuckTest;

impl Workload for StuckTest {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        Ok(Box::new(Stuck { complete: 5 }))
    }
}

struct Quiet;
impl Observer for Quiet {}

#[test]
fn a_stopping_run_gives_up_an_event_that_never_completes() {
    let config = RunConfig {
        threads: 3,
        time: Some(Duration::from_millis(300)),
        ..RunConfig::default()
    };
    let started = Instant::now();
    let outcome = run(
        config,
        Arc::new(StuckTest),
        &mut Quiet,
        &AtomicUsize::new(0),
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(
        matches!(outcome.status, RunStatus::Completed),
        "{:?}",
        outcome.status
    );
    // The completed events only; the abandoned ones left no latency sample either.
    assert_eq!(outcome.stats.events, 15);
    assert_eq!(outcome.stats.histogram.len(), 15);
}
