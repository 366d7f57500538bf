//! A run whose start fails (one worker cannot be created): like sysbench, the workers
//! that were created run nothing — no event, no `thread_done` — and by the time `run`
//! returns they are gone, so their connections are closed rather than cut off when the
//! process exits.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use bmk_engine::{
    run, EventFlow, Observer, RunConfig, RunStatus, Worker, WorkerContext, WorkerError, Workload,
};

#[derive(Default)]
struct Tally {
    created: AtomicU32,
    events: AtomicU32,
    finished: AtomicU32,
    dropped: AtomicU32,
}

struct Counted(Arc<Tally>);

impl Worker for Counted {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        self.0.events.fetch_add(1, Ordering::SeqCst);
        Ok(EventFlow::Continue)
    }

    fn finish(&mut self, _ctx: &WorkerContext) -> Result<(), WorkerError> {
        self.0.finished.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        // Slow enough that a worker still on its way out when `run` returns is seen.
        std::thread::sleep(std::time::Duration::from_millis(100));
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

/// Worker `failing` cannot be created; the others can.
struct FailingStart {
    tally: Arc<Tally>,
    failing: u32,
    cooperative: bool,
}

impl Workload for FailingStart {
    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        if tid == self.failing {
            return Err(WorkerError::new(format!("worker {tid} cannot start")));
        }
        self.tally.created.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(Counted(self.tally.clone())))
    }

    fn cooperative(&self) -> bool {
        self.cooperative
    }
}

struct Quiet;
impl Observer for Quiet {}

fn failed_start(cooperative: bool, event_loops: Option<u32>) {
    let tally = Arc::new(Tally::default());
    let test = FailingStart {
        tally: tally.clone(),
        // The last worker, so that in each mode some workers were created before it.
        failing: 3,
        cooperative,
    };
    let config = RunConfig {
        threads: 4,
        time: None,
        events: 1000,
        event_loops,
        ..RunConfig::default()
    };
    let outcome = run(config, Arc::new(test), &mut Quiet, &AtomicUsize::new(0));
    match &outcome.status {
        RunStatus::InitFailed(messages) => {
            assert_eq!(messages, &["worker 3 cannot start".to_string()]);
        }
        other => panic!("expected a failed start, got {other:?}"),
    }
    let created = tally.created.load(Ordering::SeqCst);
    assert!(created >= 1, "no worker was created before the failing one");
    assert_eq!(tally.events.load(Ordering::SeqCst), 0, "an event ran");
    assert_eq!(tally.finished.load(Ordering::SeqCst), 0, "thread_done ran");
    assert_eq!(
        tally.dropped.load(Ordering::SeqCst),
        created,
        "workers were still alive when run returned"
    );
    assert_eq!(outcome.stats.events, 0);
}

#[test]
fn a_failed_start_runs_nothing_and_ends_the_worker_threads() {
    failed_start(false, None);
}

#[test]
fn a_failed_start_runs_nothing_and_ends_the_event_loops() {
    failed_start(true, Some(2));
}
