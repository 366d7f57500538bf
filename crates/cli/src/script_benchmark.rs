//! Adapts a Lua script (a user's file, stdin, or a built-in workload) to the `run`
//! command: `init()` before the workers, `done()` after, and the script's report hooks
//! in place of the default reports when it sets them.

use std::sync::Arc;

use anyhow::Result;
use bmk_engine::{CumulativeStats, IntervalStats, Workload};
use bmk_lua::ScriptHost;
use bmk_report::Layout;

use crate::benchmark::Benchmark;

/// A loaded script ready to run.
pub struct ScriptBenchmark<'a> {
    host: &'a mut ScriptHost,
    workload: Arc<dyn Workload>,
}

impl<'a> ScriptBenchmark<'a> {
    /// Wraps a script whose options are already set.
    pub fn new(host: &'a mut ScriptHost) -> ScriptBenchmark<'a> {
        let workload = host.workload();
        ScriptBenchmark { host, workload }
    }

    /// Wraps a script whose workers come from `workload` instead of its own Lua states
    /// (a built-in OLTP workload run natively): the main state still runs `init()`,
    /// `done()` and the report hooks.
    pub fn with_native_workload(
        host: &'a mut ScriptHost,
        workload: Arc<dyn Workload>,
    ) -> ScriptBenchmark<'a> {
        ScriptBenchmark { host, workload }
    }
}

impl Benchmark for ScriptBenchmark<'_> {
    fn workload(&self) -> Arc<dyn Workload> {
        self.workload.clone()
    }

    fn header_lines(&self) -> Vec<String> {
        Vec::new()
    }

    fn layout(&self) -> Layout {
        Layout::Db
    }

    fn before_run(&mut self) -> Result<()> {
        Ok(self.host.init()?)
    }

    fn after_run(&mut self) -> Result<()> {
        Ok(self.host.done()?)
    }

    fn report_interval(&mut self, stats: &IntervalStats) -> Result<bool> {
        if !self.host.has_report_hook(true) {
            return Ok(false);
        }
        self.host.report_intermediate(stats)?;
        Ok(true)
    }

    fn report_cumulative(&mut self, stats: &CumulativeStats) -> Result<bool> {
        self.host.close_reports();
        if !self.host.has_report_hook(false) {
            return Ok(false);
        }
        self.host.report_cumulative(stats)?;
        Ok(true)
    }
}
