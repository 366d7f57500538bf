//! What the `run` command needs from a benchmark, whatever its kind.
//!
//! A [`Benchmark`] is the whole thing a user runs: the engine's [`Workload`] (which
//! makes the workers) plus the header lines, the report layout, the hooks around the
//! run and the reports it may replace. [`crate::system_test_benchmark`] adapts a
//! built-in system test to it and [`crate::script_benchmark`] a Lua script (or a
//! built-in OLTP workload run natively under its script).

use std::sync::Arc;

use anyhow::Result;
use bmk_engine::{CumulativeStats, IntervalStats, Workload};
use bmk_report::Layout;

/// A benchmark as the `run` command sees it.
pub trait Benchmark {
    /// What the engine runs: it makes the workers.
    fn workload(&self) -> Arc<dyn Workload>;
    /// Lines printed between the RNG line and `Initializing worker threads...`.
    fn header_lines(&self) -> Vec<String>;
    /// Lines printed before those with `--verbosity` 4 and up (`Doing CPU performance
    /// benchmark`).
    fn info_lines(&self) -> Vec<String> {
        Vec::new()
    }
    /// The report layout.
    fn layout(&self) -> Layout;
    /// An event limit the test implies when the user set none (memory, seq fileio).
    fn implied_event_limit(&self) -> Option<u64> {
        None
    }
    /// Whether sysbench's version of the test ignores `--events` and runs to its own
    /// limit alone (memory: `--memory-total-size`, or the time limit when that is 0).
    fn ignores_event_option(&self) -> bool {
        false
    }
    /// Before workers start (Lua `init()`).
    fn before_run(&mut self) -> Result<()> {
        Ok(())
    }
    /// After workers end (Lua `done()`).
    fn after_run(&mut self) -> Result<()> {
        Ok(())
    }
    /// Replaces the intermediate report; returns false to use the default one.
    fn report_interval(&mut self, _stats: &IntervalStats) -> Result<bool> {
        Ok(false)
    }
    /// Replaces the cumulative report; returns false to use the default one.
    fn report_cumulative(&mut self, _stats: &CumulativeStats) -> Result<bool> {
        Ok(false)
    }
}
