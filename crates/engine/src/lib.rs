//! bmk's benchmark engine: runs a benchmark on worker threads and measures it.
//!
//! The engine owns the run's mechanics — one OS thread per worker, the time and event
//! limits, warm-up, the open-loop arrival scheduler (`--rate`), checkpoints, and the
//! statistics (lock-free per-thread latency recorders merged into HdrHistograms,
//! counters, fairness, schedule lag) — plus the typed option values and the per-thread
//! random generators that benchmarks draw from. It knows nothing about SQL, Lua, or
//! output formats: a benchmark implements [`Workload`] and [`Worker`], a front end
//! implements [`Observer`] and prints the [`IntervalStats`] and [`CumulativeStats`] it
//! receives. A run reads the system's monotonic clock unless it is given a [`Clock`]
//! ([`run_with_clock`]): [`virtual_clock`] runs a whole test in virtual time, exactly
//! and in milliseconds, for tests of everything that depends on timing.
//!
//! ```
//! use std::sync::{atomic::AtomicUsize, Arc};
//! use bmk_engine::{run, EventFlow, RunConfig, Workload, Worker, WorkerContext, WorkerError};
//!
//! struct Spin;
//! impl Worker for Spin {
//!     fn event(&mut self, _: &WorkerContext) -> Result<EventFlow, WorkerError> {
//!         Ok(EventFlow::Continue)
//!     }
//! }
//! struct SpinTest;
//! impl Workload for SpinTest {
//!     fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
//!         Ok(Box::new(Spin))
//!     }
//! }
//! let config = RunConfig { threads: 2, events: 1000, time: None, ..RunConfig::default() };
//! struct Quiet;
//! impl bmk_engine::Observer for Quiet {}
//! let outcome = run(config, Arc::new(SpinTest), &mut Quiet, &AtomicUsize::new(0));
//! assert_eq!(outcome.stats.events, 1000);
//! ```
#![deny(missing_docs)]

mod arrivals;
pub mod bounded_file;
mod clock;
mod collector;
mod config;
mod controller;
pub mod coop;
pub mod latency;
mod observer;
pub mod options;
mod outcome;
pub mod rand;
mod run;
mod shared;
mod stack;
mod start_gate;
pub mod stats;
pub mod virtual_clock;
mod worker;
mod worker_thread;

pub use arrivals::{ARRIVAL_QUEUE_CAP, STRICT_QUEUE_LIMIT};
pub use clock::Clock;
pub use config::{RunConfig, INTERRUPT_GRACE, STOP_GRACE};
pub use observer::Observer;
pub use outcome::{RunOutcome, RunStatus};
pub use run::{event_loops, run, run_gated, run_with_clock, WORKERS_PER_LOOP};
pub use start_gate::{StartAt, StartGate};
pub use stats::{Counter, Counters, CumulativeStats, IntervalStats, LagStats, ThreadTotals};
pub use worker::{
    with_current, EventFlow, Worker, WorkerContext, WorkerError, WorkerPhase, Workload,
};
