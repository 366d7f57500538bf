//! A run of `--time=T` measures at least T: the time limit and the measured span both
//! count from the workers' release, so the span cannot come out shorter than the limit
//! by the moments the controller spent between releasing the workers and starting the
//! count (a `--time=1` run once reported `total time: 0.9998s`).

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use bmk_engine::{
    run, EventFlow, Observer, RunConfig, Worker, WorkerContext, WorkerError, Workload,
};

/// Events that end at once, so the workers leave right at the time limit and the span's
/// end is not padded by a long last event.
struct Instant;

impl Worker for Instant {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        std::hint::black_box(0u64);
        Ok(EventFlow::Continue)
    }
}

struct InstantTest;

impl Workload for InstantTest {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        Ok(Box::new(Instant))
    }
}

struct Quiet;
impl Observer for Quiet {}

#[test]
fn the_measured_time_is_never_shorter_than_the_time_limit() {
    let limit = Duration::from_millis(60);
    for round in 0..25 {
        let outcome = run(
            RunConfig {
                threads: 2,
                time: Some(limit),
                ..RunConfig::default()
            },
            Arc::new(InstantTest),
            &mut Quiet,
            &AtomicUsize::new(0),
        );
        let total = outcome.stats.time_total;
        assert!(
            total >= limit.as_secs_f64(),
            "round {round}: measured {total} s of a run limited to {limit:?}"
        );
        assert!(outcome.stats.events > 0);
    }
}
