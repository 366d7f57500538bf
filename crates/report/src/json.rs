//! JSON reports: the `sysbench.report_json` intermediate objects and bmk's JSON final
//! report.
//!
//! Intermediate samples form one JSON array printed a line at a time, so each line can
//! be flushed as it happens and a reader can still parse the whole output once it is
//! closed: the first element's line starts with `[`, later ones with `,`, and
//! [`JsonIntervalArray::close`] prints the closing `]` line (only if anything was
//! opened):
//!
//! ```text
//! [{"time":1,"threads":2,"tps":815338.69,"qps":{"total":…,"reads":…,"writes":…,"other":…},"latency":0.00,"errors":0.00,"reconnects":0.00}
//! ,{"time":2,…}
//! ]
//! ```
//!
//! Rates are per second with 2 decimals, `latency` is milliseconds at `--percentile`.
//! The array is closed before a checkpoint or final report, and a new one opens with the
//! next sample, so the whole output is a sequence of JSON values. The final report is
//! one object on one line: `{"report":"final"|"checkpoint", "at_s": …,` and the
//! [`FinalStats`] fields`}`; the histogram is `{"histogram":[{"value_ms":…,"count":…}]}`.

use serde::Serialize;

use crate::format::{Cumulative, Format};
use crate::histogram::Bucket;
use crate::layout::{FinalOptions, LineOptions};
use crate::printf::{decimals, fixed};
use crate::summary::{FinalStats, ReportStat};

/// One sample as a JSON object (no newline).
pub fn interval_object(stat: &ReportStat, time_decimals: usize) -> String {
    let r = |v: f64| fixed(v, 0, 2);
    format!(
        concat!(
            "{{\"time\":{},\"threads\":{},\"tps\":{},",
            "\"qps\":{{\"total\":{},\"reads\":{},\"writes\":{},\"other\":{}}},",
            "\"latency\":{},\"errors\":{},\"reconnects\":{}}}"
        ),
        decimals(stat.time_total, time_decimals),
        stat.threads_running,
        r(stat.per_sec(stat.events)),
        r(stat.per_sec(stat.queries())),
        r(stat.per_sec(stat.reads)),
        r(stat.per_sec(stat.writes)),
        r(stat.per_sec(stat.other)),
        r(stat.latency_pct * 1e3),
        r(stat.per_sec(stat.errors)),
        r(stat.per_sec(stat.reconnects)),
    )
}

/// Prints samples as the elements of one JSON array, a line each.
#[derive(Debug, Default, Clone)]
pub struct JsonIntervalArray {
    open: bool,
}

impl JsonIntervalArray {
    /// A printer with no array open.
    pub fn new() -> JsonIntervalArray {
        JsonIntervalArray::default()
    }

    /// The line for the next element: `[` + object for the first, `,` + object after.
    pub fn element(&mut self, stat: &ReportStat, time_decimals: usize) -> String {
        let lead = if self.open { ',' } else { '[' };
        self.open = true;
        format!("{lead}{}\n", interval_object(stat, time_decimals))
    }

    /// `]\n` if an array is open (and closes it), else nothing.
    pub fn close(&mut self) -> String {
        if std::mem::take(&mut self.open) {
            "]\n".to_string()
        } else {
            String::new()
        }
    }

    /// Whether an array is open.
    pub fn is_open(&self) -> bool {
        self.open
    }
}

#[derive(Serialize)]
struct CumulativeJson<'a> {
    report: &'static str,
    at_s: Option<f64>,
    #[serde(flatten)]
    stats: &'a FinalStats,
}

/// The final (or checkpoint) report as one JSON object line. `stats` should carry the
/// percentiles the report shows (see [`FinalOptions::shown_percentiles`]).
pub fn cumulative(report: &Cumulative, stats: &FinalStats) -> String {
    let (kind, at_s) = match report {
        Cumulative::Final => ("final", None),
        Cumulative::Checkpoint { at, .. } => ("checkpoint", Some(*at)),
    };
    let value = CumulativeJson {
        report: kind,
        at_s,
        stats,
    };
    let mut s = serde_json::to_string(&value).unwrap_or_else(|_| "{}".to_string());
    s.push('\n');
    s
}

/// JSON output for `--report-format=json`.
#[derive(Debug, Default)]
pub struct JsonFormat {
    array: JsonIntervalArray,
}

impl Format for JsonFormat {
    fn interval(&mut self, stat: &ReportStat, opts: &LineOptions) -> String {
        self.array.element(stat, opts.time_decimals)
    }

    fn end_intervals(&mut self) -> String {
        self.array.close()
    }

    fn cumulative(&mut self, report: &Cumulative, stats: &FinalStats, _: &FinalOptions) -> String {
        cumulative(report, stats)
    }

    fn histogram(&mut self, rows: &[Bucket]) -> String {
        let rows: Vec<String> = rows
            .iter()
            .map(|b| {
                format!(
                    "{{\"value_ms\":{},\"count\":{}}}",
                    decimals(b.value_ms, 6),
                    b.count
                )
            })
            .collect();
        format!("{{\"histogram\":[{}]}}\n", rows.join(","))
    }
}
