//! bmk's analysis of finished runs: `bmk report`, `bmk compare` and `bmk merge`.
//!
//! This crate owns everything that happens after a run has been read and merged (the
//! results model, `bmk-results`, reads, writes and merges the files): per-level
//! time series and stalls, per-second rates derived from the raw server and OS captures,
//! the result sanity checks, the statistics that decide whether one run is faster than
//! another, and rendering (text summaries, SVG charts, the self-contained HTML page).
//! It must not run benchmarks, connect to servers or capture anything: it reads files
//! and returns values or strings; the CLI decides what to print and where to write.
#![deny(missing_docs)]

pub mod capacity_chart;
pub mod charts;
pub mod checks;
pub mod compare;
pub mod compare_rules;
pub mod compare_stats;
pub mod drilldown;
mod error;
pub mod expected_rows;
pub mod export;
pub mod host_load;
pub mod innodb;
pub mod page;
pub mod rates;
pub mod report;
pub mod series;
pub mod sessions;
pub mod stats;
pub mod steady;
pub mod timeline;
pub mod verdicts;

pub use error::Error;
