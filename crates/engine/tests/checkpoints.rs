//! Checkpoint reports split the run into spans that add up to the whole: what workers
//! do while a checkpoint report is being printed belongs to the next span, not to
//! none.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use bmk_engine::{
    run, Counter, CumulativeStats, EventFlow, Observer, RunConfig, RunStatus, Worker,
    WorkerContext, WorkerError, Workload,
};

/// Each event takes about 100 µs and counts one read.
struct Busy;

impl Worker for Busy {
    fn event(&mut self, ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        std::thread::sleep(Duration::from_micros(100));
        ctx.count(Counter::Read);
        Ok(EventFlow::Continue)
    }
}

struct BusyTest;

impl Workload for BusyTest {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        Ok(Box::new(Busy))
    }
}

/// Keeps each checkpoint's statistics and takes its time printing them, as a report
/// to a slow terminal does.
#[derive(Default)]
struct SlowPrinter {
    spans: Vec<CumulativeStats>,
}

impl Observer for SlowPrinter {
    fn checkpoint(&mut self, _at: f64, stats: &CumulativeStats) {
        self.spans.push(stats.clone());
        std::thread::sleep(Duration::from_millis(40));
    }
}

#[test]
fn checkpoint_spans_add_up_to_the_whole_run() {
    const EVENTS: u64 = 6000;
    let config = RunConfig {
        threads: 2,
        events: EVENTS,
        time: None,
        checkpoints: vec![
            Duration::from_millis(20),
            Duration::from_millis(80),
            Duration::from_millis(140),
        ],
        ..RunConfig::default()
    };
    let mut printer = SlowPrinter::default();
    let outcome = run(
        config,
        Arc::new(BusyTest),
        &mut printer,
        &AtomicUsize::new(0),
    );
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(
        printer.spans.len(),
        3,
        "the run ended before its checkpoints"
    );
    let mut spans = printer.spans;
    spans.push(outcome.stats);
    let events: u64 = spans.iter().map(|s| s.events).sum();
    let reads: u64 = spans.iter().map(|s| s.counters.get(Counter::Read)).sum();
    let samples: u64 = spans.iter().map(|s| s.histogram.len()).sum();
    assert_eq!(
        events,
        EVENTS,
        "{:?}",
        spans.iter().map(|s| s.events).collect::<Vec<_>>()
    );
    assert_eq!(reads, EVENTS);
    assert_eq!(samples, EVENTS);
}
