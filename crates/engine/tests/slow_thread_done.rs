//! The measured time of a run ends when the last worker leaves its event loop: what the
//! workers do after that (sysbench's `thread_done`, closing thousands of connections)
//! is not part of the load, and counting it would understate events per second.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bmk_engine::{
    run, EventFlow, Observer, RunConfig, Worker, WorkerContext, WorkerError, Workload,
};

/// Quick events, then a `thread_done` that takes 600 ms.
struct SlowDone;

impl Worker for SlowDone {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        std::thread::sleep(Duration::from_millis(1));
        Ok(EventFlow::Continue)
    }

    fn finish(&mut self, _ctx: &WorkerContext) -> Result<(), WorkerError> {
        std::thread::sleep(Duration::from_millis(600));
        Ok(())
    }
}

struct SlowDoneTest;

impl Workload for SlowDoneTest {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        Ok(Box::new(SlowDone))
    }
}

struct Quiet;
impl Observer for Quiet {}

#[test]
fn a_slow_thread_done_is_not_measured_time() {
    let started = Instant::now();
    let outcome = run(
        RunConfig {
            threads: 4,
            time: Some(Duration::from_millis(500)),
            ..RunConfig::default()
        },
        Arc::new(SlowDoneTest),
        &mut Quiet,
        &AtomicUsize::new(0),
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1100),
        "thread_done ran: {took:?}"
    );
    let total = outcome.stats.time_total;
    assert!(
        (0.5..0.9).contains(&total),
        "measured {total} s of a 0.5 s run whose workers then took 0.6 s to finish"
    );
    assert!(outcome.stats.events > 0);
}
