//! Which report a test gets, and how the user asked for it.
//!
//! A [`Layout`] is the shape of a test's text report: the DB layout of SQL
//! workloads, the plain event layout of `threads`/`mutex` and non-DB scripts, and the
//! variants `cpu`, `memory` and `fileio` add. [`ReportFormat`] is `--report-format`.
//! [`LineOptions`] and [`FinalOptions`] carry the settings the printers need. No
//! formatting happens here.

use std::fmt;
use std::str::FromStr;

use crate::printf::time_decimals;
use crate::summary::normalize_percentiles;

/// The shape of a test's text reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// SQL workloads: `tps`/`qps` lines, `SQL statistics:` block.
    Db,
    /// `threads`, `mutex` and non-DB scripts: `eps` lines, no extra block.
    #[default]
    Events,
    /// `cpu`: the event layout plus a `CPU speed:` block.
    Cpu,
    /// `memory`: the event layout plus `Total operations` and `MiB transferred`.
    Memory {
        /// Bytes one event reads or writes (`--memory-block-size`).
        block_size: u64,
        /// Whether to print the `MiB transferred` line (not for `--memory-oper=none`).
        transfers: bool,
    },
    /// `fileio`: MiB/s intermediate lines, IOPS throughput block, no fairness block.
    FileIo,
}

/// `--report-format` (bmk extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReportFormat {
    /// sysbench's text reports.
    #[default]
    Text,
    /// CSV lines (intermediate as `sysbench.report_csv`; final as header + row).
    Csv,
    /// JSON (intermediate as elements of an array; final as one object).
    Json,
}

impl ReportFormat {
    /// The values `--report-format` accepts.
    pub const NAMES: [&'static str; 3] = ["text", "csv", "json"];
}

impl FromStr for ReportFormat {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "text" => Ok(ReportFormat::Text),
            "csv" => Ok(ReportFormat::Csv),
            "json" => Ok(ReportFormat::Json),
            _ => Err(crate::error::Error::UnknownFormat(s.to_string())),
        }
    }
}

impl fmt::Display for ReportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReportFormat::Text => "text",
            ReportFormat::Csv => "csv",
            ReportFormat::Json => "json",
        })
    }
}

/// Settings for intermediate lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineOptions {
    /// The test's layout.
    pub layout: Layout,
    /// `--percentile` (0 leaves latency out of text lines).
    pub percentile: f64,
    /// Decimals of the time in `[ Ns ]` (see [`crate::printf::time_decimals`]).
    pub time_decimals: usize,
    /// Rate mode: text adds the `queue length` line.
    pub rate_mode: bool,
}

impl Default for LineOptions {
    fn default() -> Self {
        LineOptions {
            layout: Layout::Events,
            percentile: 95.0,
            time_decimals: 0,
            rate_mode: false,
        }
    }
}

impl LineOptions {
    /// Options for a run with `--report-interval=interval` seconds.
    pub fn new(layout: Layout, percentile: f64, interval: f64, rate_mode: bool) -> LineOptions {
        LineOptions {
            layout,
            percentile,
            time_decimals: time_decimals(interval),
            rate_mode,
        }
    }
}

/// Settings for final (and checkpoint) reports.
#[derive(Debug, Clone, PartialEq)]
pub struct FinalOptions {
    /// The test's layout.
    pub layout: Layout,
    /// `--percentile` (0 = no percentile line unless listed in `percentiles`).
    pub percentile: f64,
    /// `--percentiles` (bmk extension): more percentile lines.
    pub percentiles: Vec<f64>,
    /// sysbench 1.0.20's layout: a `General statistics:` block (total time, events)
    /// where 1.1 has `Throughput:`.
    pub sysbench_1_0: bool,
}

impl Default for FinalOptions {
    fn default() -> Self {
        FinalOptions {
            layout: Layout::Events,
            percentile: 95.0,
            percentiles: Vec::new(),
            sysbench_1_0: false,
        }
    }
}

impl FinalOptions {
    /// Every percentile the report shows: `percentile` (if > 0) and `percentiles`,
    /// ascending, without duplicates.
    pub fn shown_percentiles(&self) -> Vec<f64> {
        let mut all = self.percentiles.clone();
        all.push(self.percentile);
        normalize_percentiles(&all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse() {
        assert_eq!("json".parse::<ReportFormat>().unwrap(), ReportFormat::Json);
        assert_eq!("CSV".parse::<ReportFormat>().unwrap(), ReportFormat::Csv);
        assert!("xml".parse::<ReportFormat>().is_err());
        assert_eq!(ReportFormat::Text.to_string(), "text");
    }

    #[test]
    fn shown_percentiles_merge() {
        let o = FinalOptions {
            layout: Layout::Db,
            percentile: 95.0,
            percentiles: vec![99.9, 50.0, 95.0],
            sysbench_1_0: false,
        };
        assert_eq!(o.shown_percentiles(), vec![50.0, 95.0, 99.9]);
        let o = FinalOptions {
            percentile: 0.0,
            ..FinalOptions::default()
        };
        assert!(o.shown_percentiles().is_empty());
    }
}
