//! bmk's reports: every output format of a run, and the results file.
//!
//! This crate owns how measured numbers become bytes: the intermediate lines, the final
//! and checkpoint reports and the `--histogram` text in sysbench's layouts (byte for
//! byte), their CSV and JSON variants (`--report-format`), and the
//! `--results=FILE.json` writer with its versioned schema (`docs/results-schema.md`), and
//! the records and file names of a results directory and its raw capture files
//! (`docs/results-dir.md`), shared by the kit that writes them and the analysis that
//! reads them.
//! It must not measure, schedule or print: it takes the engine's plain-data statistics
//! and returns `String`s or writes to a [`std::io::Write`] it is given.
//!
//! Main types: [`Reporter`] (what the CLI drives, built from a [`ReportConfig`]), the
//! [`Format`] trait with one implementation per format, [`ReportStat`] (the Lua `stat`
//! table, so Lua's `sysbench.report_*` printers share the code), [`FinalStats`] (the
//! serialisable summary of a run) and [`ResultsWriter`].
//!
//! ```
//! use bmk_report::{text, Layout, LineOptions, ReportStat};
//!
//! let stat = ReportStat {
//!     threads_running: 1,
//!     time_total: 1.0,
//!     time_interval: 1.0,
//!     events: 4262,
//!     latency_pct: 0.000_23,
//!     ..ReportStat::default()
//! };
//! let opts = LineOptions { layout: Layout::Events, ..LineOptions::default() };
//! assert_eq!(
//!     text::intermediate(&stat, &opts),
//!     "[ 1s ] thds: 1 eps: 4262.00 lat (ms,95%): 0.23\n"
//! );
//! ```
#![deny(missing_docs)]

pub mod append_file;
pub mod atomic_file;
pub mod capture;
pub mod codec;
pub mod csv;
mod error;
pub mod final_text;
mod format;
pub mod histogram;
pub mod host;
pub mod json;
pub mod layout;
pub mod printf;
pub mod redact;

/// Entry points for the fuzz targets (`fuzz/`) and the tests that replay their corpus:
/// the readers of files that `merge`, `report` and `compare` take from other machines,
/// which must turn any bytes into a value or an error, never a panic. Not an API.
#[doc(hidden)]
pub mod fuzz_entry {
    use std::path::PathBuf;

    fn scratch(kind: &str, data: &[u8]) -> Option<PathBuf> {
        let path = std::env::temp_dir().join(format!(
            "bmk-fuzz-{kind}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&path, data).ok()?;
        Some(path)
    }

    /// A `--results` file (`ResultsFile::read`, then its histogram).
    pub fn results_file(data: &[u8]) {
        if let Some(path) = scratch("results", data) {
            if let Ok(file) = crate::results::ResultsFile::read(&path) {
                let _ = file.histogram();
            }
            let _ = std::fs::remove_file(path);
        }
    }

    /// A results directory's `intervals.jsonl`, `run.json` and `level.json`.
    pub fn results_dir_files(data: &[u8]) {
        if let Some(path) = scratch("dir", data) {
            let _ = crate::results_dir::read_intervals(&path);
            let _ = crate::results_dir::read_json::<crate::results_dir::RunManifest>(&path);
            let _ = crate::results_dir::read_json::<crate::results_dir::LevelInfo>(&path);
            let _ = std::fs::remove_file(path);
        }
    }
}
mod reporter;
pub mod results;
pub mod results_dir;
pub mod summary;
pub mod text;

pub use error::Error;
pub use format::{Cumulative, Format};
pub use json::JsonIntervalArray;
pub use layout::{FinalOptions, Layout, LineOptions, ReportFormat};
pub use reporter::{ReportConfig, Reporter};
pub use results::{ResultsFile, ResultsWriter, RunEnd, RunInfo};
pub use summary::{
    CounterTotals, Fairness, FinalStats, LagSummary, LatencySummary, PercentileValue, ReportStat,
};
