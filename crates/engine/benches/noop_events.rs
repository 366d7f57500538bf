//! Micro benchmark of the engine's per-event path: events per second of a worker whose
//! event does nothing, so that what is measured is the engine's own cost per event
//! (`more_events`, two clock reads, the latency recorder, the counters).
//!
//! `cargo bench -p bmk-engine --bench noop_events`; `BMK_BENCH_SECS` sets the length
//! of one run (default 3), `BMK_BENCH_REPS` how many runs per thread count (default 3,
//! the median is printed beside every run's figure). `BMK_BENCH_EVENTS=N` makes each
//! run N events instead of a time (one thread only): under
//! `valgrind --tool=cachegrind --cache-sim=no`, the difference of two such runs'
//! instruction counts divided by the difference of their N is the instructions per
//! event, a figure that a busy machine does not blur.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use bmk_engine::{
    run, EventFlow, Observer, RunConfig, Worker, WorkerContext, WorkerError, Workload,
};

struct Noop;

impl Worker for Noop {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        Ok(EventFlow::Continue)
    }
}

struct NoopTest;

impl Workload for NoopTest {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        Ok(Box::new(Noop))
    }
}

struct Quiet;
impl Observer for Quiet {}

/// Events per second per thread of one run of `secs` seconds, or of `events` events.
fn eps_per_thread(threads: u32, secs: u64, events: Option<u64>) -> f64 {
    let config = RunConfig {
        threads,
        time: Some(Duration::from_secs(secs)).filter(|_| events.is_none()),
        events: events.unwrap_or(0),
        ..RunConfig::default()
    };
    let outcome = run(config, Arc::new(NoopTest), &mut Quiet, &AtomicUsize::new(0));
    outcome.stats.events as f64 / outcome.stats.time_total / threads as f64
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let secs = env("BMK_BENCH_SECS", 3);
    let reps = env("BMK_BENCH_REPS", 3).max(1);
    let events = std::env::var("BMK_BENCH_EVENTS")
        .ok()
        .and_then(|s| s.parse().ok());
    let thread_counts: &[u32] = if events.is_some() { &[1] } else { &[1, 2] };
    for &threads in thread_counts {
        let mut runs: Vec<f64> = (0..reps)
            .map(|_| eps_per_thread(threads, secs, events))
            .collect();
        let shown: Vec<String> = runs.iter().map(|e| format!("{e:.0}")).collect();
        runs.sort_by(f64::total_cmp);
        println!(
            "no-op events, {threads} thread(s): median {:.0}/s per thread (runs: {})",
            runs[runs.len() / 2],
            shown.join(", ")
        );
    }
}
