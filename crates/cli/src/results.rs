//! The CLI's side of `--results=FILE.json`: feeds the writer as the run goes and
//! finishes it with the final statistics, whatever way the run ended.

use std::path::Path;

use anyhow::{Context, Result};
use bmk_engine::{CumulativeStats, IntervalStats, RunOutcome, RunStatus};
use bmk_report::results::{ResultsWriter, RunEnd, RunInfo, StartRecord};
use bmk_report::ReportConfig;

use crate::banner;
use crate::run_settings::RunSettings;

/// An open results file.
pub struct ResultsSink {
    writer: ResultsWriter,
    /// The first write error; later writes are skipped and `finish` reports it.
    failed: Option<String>,
}

impl ResultsSink {
    /// Starts `path` (written to a temporary file until `finish`).
    pub fn create(
        path: &Path,
        settings: &RunSettings,
        report: &ReportConfig,
    ) -> Result<ResultsSink> {
        let options: Vec<(String, String)> = settings
            .options
            .specs()
            .filter_map(|s| settings.options.raw(&s.name).map(|v| (s.key(), v)))
            .collect();
        let info = RunInfo::new(
            banner::bmk_version(),
            &settings.test_name,
            &settings.command,
            &settings.argv,
            options,
        )
        .with_percentiles(report.percentile, &report.percentiles);
        let info = RunInfo {
            execution: settings.execution.clone(),
            ..info
        };
        let writer = ResultsWriter::create(path, &info)
            .with_context(|| format!("cannot write results file '{}'", path.display()))?;
        Ok(ResultsSink {
            writer,
            failed: None,
        })
    }

    /// Appends one interval.
    pub fn interval(&mut self, stats: &IntervalStats) {
        if self.failed.is_none() {
            if let Err(e) = self.writer.interval(stats) {
                self.failed = Some(e.to_string());
            }
        }
    }

    /// Appends one checkpoint.
    pub fn checkpoint(&mut self, at: f64, stats: &CumulativeStats) {
        if self.failed.is_none() {
            if let Err(e) = self.writer.checkpoint(at, stats) {
                self.failed = Some(e.to_string());
            }
        }
    }

    /// Writes the final statistics and moves the file into place.
    /// `start`: how the run started, when it passed a start barrier.
    pub fn finish(self, outcome: &RunOutcome, start: Option<StartRecord>) -> Result<()> {
        if let Some(e) = self.failed {
            self.writer.abort();
            anyhow::bail!("results file not written: {e}");
        }
        let status = status_name(&outcome.status);
        let mut end = RunEnd::new(status);
        end.start = start;
        self.writer
            .finish(&outcome.stats, &end)
            .context("cannot finish the results file")?;
        Ok(())
    }
}

/// The results files' name of how a run ended.
pub fn status_name(status: &RunStatus) -> &'static str {
    match status {
        RunStatus::Completed => "completed",
        RunStatus::Interrupted(_) => "interrupted",
        RunStatus::Fatal(_) | RunStatus::InitFailed(_) => "fatal",
        RunStatus::QueueFull => "queue_full",
        RunStatus::ForcedShutdown => "forced_shutdown",
        RunStatus::InitTimeout => "init_timeout",
        RunStatus::StartRefused(_) => "start_refused",
    }
}
