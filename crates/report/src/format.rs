//! What every output format implements, and which cumulative report it is asked for.
//!
//! The format modules (`text`, `csv`, `json`) depend on this and [`crate::reporter`]
//! depends on them, so the trait lives apart from both.

use crate::histogram::Bucket;
use crate::layout::{FinalOptions, LineOptions};
use crate::summary::{FinalStats, ReportStat};

/// Which cumulative report is being printed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cumulative {
    /// The report at the end of the run.
    Final,
    /// A `--report-checkpoints` report.
    Checkpoint {
        /// Seconds since the measured start.
        at: f64,
        /// Decimals of `at` in the `[ Ns ]` prefix.
        time_decimals: usize,
    },
}

/// One output format: turns report data into text.
pub trait Format {
    /// One intermediate sample.
    fn interval(&mut self, stat: &ReportStat, opts: &LineOptions) -> String;
    /// Anything that must follow the last sample before other output (JSON's `]`).
    fn end_intervals(&mut self) -> String {
        String::new()
    }
    /// A final or checkpoint report.
    fn cumulative(
        &mut self,
        report: &Cumulative,
        stats: &FinalStats,
        opts: &FinalOptions,
    ) -> String;
    /// The `--histogram` output.
    fn histogram(&mut self, rows: &[Bucket]) -> String;
}
