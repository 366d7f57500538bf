//! bmk's reports: every output format of a run.
//!
//! This crate owns how measured numbers become bytes: the intermediate lines, the final
//! and checkpoint reports and the `--histogram` text in sysbench's layouts (byte for
//! byte), their CSV and JSON variants (`--report-format`), the statistics records
//! those formats share ([`FinalStats`], [`ReportStat`]), the host facts and the
//! redaction of secrets a run records.
//! It must not measure, schedule or print, and it does not own files on disk: the
//! `--results` file and the results directory are `bmk-results`'s. It takes the
//! engine's plain-data statistics and returns `String`s or writes to a
//! [`std::io::Write`] it is given.
//!
//! Main types: [`Reporter`] (what the CLI drives, built from a [`ReportConfig`]), the
//! [`Format`] trait with one implementation per format, [`ReportStat`] (the Lua `stat`
//! table, so Lua's `sysbench.report_*` printers share the code), [`FinalStats`] (the
//! serialisable summary of a run).
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

mod reporter;
pub mod summary;
pub mod text;

pub use error::Error;
pub use format::{Cumulative, Format};
pub use json::JsonIntervalArray;
pub use layout::{FinalOptions, Layout, LineOptions, ReportFormat};
pub use reporter::{ReportConfig, Reporter};
pub use summary::{
    CounterTotals, Fairness, FinalStats, LagSummary, LatencySummary, PercentileValue, ReportStat,
};
