//! The CLI's side of `--results=FILE.json`: feeds the writer as the run goes and
//! finishes it with the final statistics, whatever way the run ended.

use std::path::Path;

use anyhow::{Context, Result};
use bmk_engine::{CumulativeStats, IntervalStats, RunOutcome, RunStatus};
use bmk_report::ReportConfig;
use bmk_results::results_file::{ResultsWriter, RunEnd, RunInfo, StartRecord};

use crate::banner;
use crate::run_settings::RunSettings;

/// An open results file.
pub struct ResultsSink {
    writer: ResultsWriter,
    /// The first write error; later writes are skipped and `finish` reports it.
    failed: Option<String>,
    /// Whether this sink says its first write error on stderr when it happens (a
    /// results directory's level says its own instead).
    warn: bool,
    /// The run identity the file records.
    run_id: Option<String>,
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
        let run_id = info.run_id.clone();
        let writer = ResultsWriter::create(path, &info)
            .with_context(|| format!("cannot write results file '{}'", path.display()))?;
        Ok(ResultsSink {
            writer,
            failed: None,
            warn: true,
            run_id,
        })
    }

    /// Leaves saying a write error to the caller ([`ResultsSink::failure`]).
    pub fn quiet(mut self) -> ResultsSink {
        self.warn = false;
        self
    }

    /// The run identity recorded in the file.
    pub fn run_id(&self) -> Option<String> {
        self.run_id.clone()
    }

    /// The first write error so far.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    fn note(&mut self, r: Result<(), bmk_results::Error>) {
        if let Err(e) = r {
            let e = e.to_string();
            if self.warn {
                // Said at once: the run goes on, but its results file will be missing.
                eprintln!("WARNING: results file not written: {e}");
            }
            self.failed = Some(e);
        }
    }

    /// Appends one interval.
    pub fn interval(&mut self, stats: &IntervalStats) {
        if self.failed.is_none() {
            let r = self.writer.interval(stats);
            self.note(r);
        }
    }

    /// Appends one checkpoint.
    pub fn checkpoint(&mut self, at: f64, stats: &CumulativeStats) {
        if self.failed.is_none() {
            let r = self.writer.checkpoint(at, stats);
            self.note(r);
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
