//! The front door for the CLI: pick a format once, then hand it the run's statistics.
//!
//! [`Reporter`] turns the engine's [`IntervalStats`] and [`CumulativeStats`] into the
//! chosen `--report-format` and writes the bytes to a caller-supplied [`Write`]; it
//! never touches stdout itself. Each format is one module implementing [`Format`]
//! (`text`, `csv`, `json`), which only maps numbers to strings.

use std::io::{self, Write};

use bmk_engine::{CumulativeStats, IntervalStats};
use hdrhistogram::Histogram;

use crate::csv::CsvFormat;
use crate::format::{Cumulative, Format};
use crate::histogram::buckets;
use crate::json::JsonFormat;
use crate::layout::{FinalOptions, Layout, LineOptions, ReportFormat};
use crate::printf::time_decimals;
use crate::summary::{FinalStats, ReportStat};
use crate::text::TextFormat;

impl ReportFormat {
    /// A fresh printer for this format.
    pub fn printer(self) -> Box<dyn Format + Send> {
        match self {
            ReportFormat::Text => Box::new(TextFormat),
            ReportFormat::Csv => Box::new(CsvFormat),
            ReportFormat::Json => Box::<JsonFormat>::default(),
        }
    }
}

/// Everything the reports need to know about the run.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportConfig {
    /// `--report-format`.
    pub format: ReportFormat,
    /// The test's layout.
    pub layout: Layout,
    /// `--percentile` (0 disables percentile output).
    pub percentile: f64,
    /// `--percentiles` (bmk extension), shown in final reports.
    pub percentiles: Vec<f64>,
    /// `--report-interval` in seconds (0 = none); decides the decimals of `[ Ns ]`.
    pub report_interval: f64,
    /// `--rate` > 0.
    pub rate_mode: bool,
}

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            format: ReportFormat::Text,
            layout: Layout::Events,
            percentile: 95.0,
            percentiles: Vec::new(),
            report_interval: 0.0,
            rate_mode: false,
        }
    }
}

/// Prints a run's reports in one format.
pub struct Reporter {
    line: LineOptions,
    fin: FinalOptions,
    format: Box<dyn Format + Send>,
    /// Whether cumulative reports keep the `--rate` schedule lag (bmk's own section).
    schedule_lag: bool,
}

impl Reporter {
    /// A reporter for `config`.
    pub fn new(config: &ReportConfig) -> Reporter {
        Reporter {
            line: LineOptions {
                layout: config.layout,
                percentile: config.percentile,
                time_decimals: time_decimals(config.report_interval),
                rate_mode: config.rate_mode,
            },
            fin: FinalOptions {
                layout: config.layout,
                percentile: config.percentile,
                percentiles: config.percentiles.clone(),
                sysbench_1_0: false,
            },
            format: config.format.printer(),
            schedule_lag: true,
        }
    }

    /// Leaves the `--rate` schedule lag out of final and checkpoint reports, as
    /// sysbench's reports have no such section.
    pub fn hide_schedule_lag(&mut self) {
        self.schedule_lag = false;
    }

    /// Changes the layout of the reports still to come: a script's is known only once
    /// its workers have started (whether they made a SQL driver).
    pub fn set_layout(&mut self, layout: Layout) {
        self.line.layout = layout;
        self.fin.layout = layout;
    }

    /// Prints final and checkpoint reports in sysbench 1.0.20's layout
    /// (`General statistics:` instead of `Throughput:`).
    pub fn set_sysbench_1_0(&mut self, on: bool) {
        self.fin.sysbench_1_0 = on;
    }

    /// The intermediate-line settings.
    pub fn line_options(&self) -> &LineOptions {
        &self.line
    }

    /// The final-report settings.
    pub fn final_options(&self) -> &FinalOptions {
        &self.fin
    }

    /// Summarises `stats` with the percentiles this reporter shows.
    pub fn final_stats(&self, stats: &CumulativeStats) -> FinalStats {
        FinalStats::from_cumulative(stats, &self.fin.shown_percentiles())
    }

    /// Prints an intermediate report.
    pub fn interval(&mut self, out: &mut dyn Write, stats: &IntervalStats) -> io::Result<()> {
        let stat = ReportStat::from_interval(stats, self.line.percentile);
        let mut line = self.line;
        line.rate_mode |= stats.rate_mode;
        out.write_all(self.format.interval(&stat, &line).as_bytes())
    }

    /// Prints an intermediate report from a ready [`ReportStat`].
    pub fn interval_stat(&mut self, out: &mut dyn Write, stat: &ReportStat) -> io::Result<()> {
        out.write_all(self.format.interval(stat, &self.line).as_bytes())
    }

    /// Ends the stream of intermediate reports (closes JSON's array). Called
    /// automatically before any other report.
    pub fn end_intervals(&mut self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(self.format.end_intervals().as_bytes())
    }

    /// Prints a checkpoint report taken `at` seconds after the measured start.
    pub fn checkpoint(
        &mut self,
        out: &mut dyn Write,
        at: f64,
        stats: &CumulativeStats,
    ) -> io::Result<()> {
        let summary = self.final_stats(stats);
        let kind = Cumulative::Checkpoint {
            at,
            time_decimals: self.line.time_decimals,
        };
        self.cumulative(out, &kind, &summary)
    }

    /// Prints the `--histogram` output for a nanosecond latency histogram.
    pub fn histogram(&mut self, out: &mut dyn Write, hist: &Histogram<u64>) -> io::Result<()> {
        self.end_intervals(out)?;
        out.write_all(self.format.histogram(&buckets(hist)).as_bytes())
    }

    /// Prints the final report.
    pub fn final_report(&mut self, out: &mut dyn Write, stats: &CumulativeStats) -> io::Result<()> {
        let summary = self.final_stats(stats);
        self.cumulative(out, &Cumulative::Final, &summary)
    }

    /// Prints a final or checkpoint report from a ready summary.
    pub fn cumulative(
        &mut self,
        out: &mut dyn Write,
        kind: &Cumulative,
        stats: &FinalStats,
    ) -> io::Result<()> {
        self.end_intervals(out)?;
        let without_lag;
        let stats = if self.schedule_lag || stats.lag.is_none() {
            stats
        } else {
            without_lag = FinalStats {
                lag: None,
                ..stats.clone()
            };
            &without_lag
        };
        out.write_all(self.format.cumulative(kind, stats, &self.fin).as_bytes())
    }
}
