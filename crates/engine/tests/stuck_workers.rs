//! Workers stuck in an event that never returns (I/O to a server that stopped
//! answering) cannot keep a run going: after the time limit, a signal or a failure the
//! run waits a bounded grace, then returns what was measured and counts the workers it
//! abandoned.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bmk_engine::{
    run, EventFlow, Observer, RunConfig, RunStatus, Worker, WorkerContext, WorkerError, Workload,
};

/// Worker 0 fails after a few events when `fail` is set; the others do `free` quick
/// events, then block for good.
struct Freezer {
    tid: u32,
    free: u32,
    fail: bool,
}

impl Worker for Freezer {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        if self.free > 0 {
            self.free -= 1;
            std::thread::sleep(Duration::from_millis(1));
            return Ok(EventFlow::Continue);
        }
        if self.fail && self.tid == 0 {
            return Err(WorkerError::new("lost connection to the server"));
        }
        // A read that never returns.
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

struct FreezeTest {
    fail: bool,
}

impl Workload for FreezeTest {
    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        // The failing worker fails once the others are stuck.
        let free = if self.fail && tid == 0 { 200 } else { 20 };
        Ok(Box::new(Freezer {
            tid,
            free,
            fail: self.fail,
        }))
    }
}

struct Quiet;
impl Observer for Quiet {}

fn config(time: Option<Duration>) -> RunConfig {
    RunConfig {
        threads: 3,
        time,
        stop_grace: Duration::from_millis(500),
        interrupt_grace: Duration::from_millis(300),
        ..RunConfig::default()
    }
}

#[test]
fn workers_stuck_past_the_time_limit_are_abandoned_after_the_grace() {
    let started = Instant::now();
    let outcome = run(
        config(Some(Duration::from_millis(400))),
        Arc::new(FreezeTest { fail: false }),
        &mut Quiet,
        &AtomicUsize::new(0),
    );
    let took = started.elapsed();
    assert_eq!(outcome.status, RunStatus::ForcedShutdown);
    assert_eq!(outcome.abandoned, 3);
    assert_eq!(outcome.stats.events, 60, "what was measured is reported");
    assert!(took >= Duration::from_millis(850), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_signal_ends_a_stuck_run_after_the_interrupt_grace() {
    let interrupt = Arc::new(AtomicUsize::new(0));
    let sent = Arc::new(AtomicBool::new(false));
    let (i, s) = (interrupt.clone(), sent.clone());
    let signaller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        i.store(2, Ordering::SeqCst);
        s.store(true, Ordering::SeqCst);
    });
    let started = Instant::now();
    let outcome = run(
        config(None),
        Arc::new(FreezeTest { fail: false }),
        &mut Quiet,
        &interrupt,
    );
    signaller.join().unwrap();
    assert!(sent.load(Ordering::SeqCst));
    assert_eq!(outcome.status, RunStatus::Interrupted(2));
    assert_eq!(outcome.abandoned, 3);
    assert_eq!(outcome.stats.events, 60);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_failure_with_other_workers_stuck_ends_after_the_grace() {
    let started = Instant::now();
    let outcome = run(
        config(None),
        Arc::new(FreezeTest { fail: true }),
        &mut Quiet,
        &AtomicUsize::new(0),
    );
    match &outcome.status {
        RunStatus::Fatal(messages) => assert!(messages[0].contains("lost connection")),
        other => panic!("{other:?}"),
    }
    assert_eq!(outcome.abandoned, 2);
    assert!(started.elapsed() < Duration::from_secs(5));
}
