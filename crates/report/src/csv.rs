//! CSV reports: the `sysbench.report_csv` intermediate line and bmk's CSV final report.
//!
//! Intermediate: one line per sample, no header, columns
//! `time,threads,tps,qps,reads/s,writes/s,other/s,latency_ms,errors/s,reconnects/s`
//! formatted `%.0f,%u,%4.2f,…` (the time gets decimals with sub-second intervals; the
//! latency column is the lowest latency with `--percentile=0`, as in the text line).
//!
//! Final and checkpoint reports (bmk extension): a header line and one data row, columns
//! in this order (see `docs/results-schema.md`):
//! `report` (`final` or `checkpoint`), `at_s` (checkpoint time, empty for `final`),
//! `time_s`, `threads`, `events`, `events_per_s`, `reads`, `writes`, `other`,
//! `queries`, `queries_per_s`, `errors`, `errors_per_s`, `reconnects`,
//! `reconnects_per_s`, `bytes_read`, `bytes_written`, `lat_min_ms`, `lat_avg_ms`,
//! `lat_max_ms`, one `lat_pNN_ms` per shown percentile (`lat_p95_ms`, `lat_p99.9_ms`),
//! `lat_sum_ms`, `fairness_events_avg`, `fairness_events_stddev`,
//! `fairness_time_avg_s`, `fairness_time_stddev_s`, `lag_mean_ms`, `lag_max_ms` (empty
//! outside rate mode). Rates and seconds have 4 decimals, milliseconds 6 (nanoseconds).
//! The histogram is `value_ms,count` rows under that header.

use crate::format::{Cumulative, Format};
use crate::histogram::Bucket;
use crate::layout::{FinalOptions, LineOptions};
use crate::printf::{decimals, fixed, percentile_label};
use crate::summary::{FinalStats, ReportStat};

/// The `sysbench.report_csv` line for one sample (ends in `\n`).
pub fn intermediate(stat: &ReportStat, time_decimals: usize) -> String {
    let r = |v: f64| fixed(v, 4, 2);
    format!(
        "{},{},{},{},{},{},{},{},{},{}\n",
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

/// The CSV final report: header line and data row.
pub fn cumulative(report: &Cumulative, stats: &FinalStats, opts: &FinalOptions) -> String {
    let shown = opts.shown_percentiles();
    let mut header: Vec<String> = [
        "report",
        "at_s",
        "time_s",
        "threads",
        "events",
        "events_per_s",
        "reads",
        "writes",
        "other",
        "queries",
        "queries_per_s",
        "errors",
        "errors_per_s",
        "reconnects",
        "reconnects_per_s",
        "bytes_read",
        "bytes_written",
        "lat_min_ms",
        "lat_avg_ms",
        "lat_max_ms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(
        shown
            .iter()
            .map(|p| format!("lat_p{}_ms", percentile_label(*p))),
    );
    header.extend(
        [
            "lat_sum_ms",
            "fairness_events_avg",
            "fairness_events_stddev",
            "fairness_time_avg_s",
            "fairness_time_stddev_s",
            "lag_mean_ms",
            "lag_max_ms",
        ]
        .iter()
        .map(|s| s.to_string()),
    );

    let c = &stats.counters;
    let l = &stats.latency;
    let f = &stats.fairness;
    let rate = |n: u64| decimals(stats.per_sec(n), 4);
    let ms = |v: f64| decimals(v, 6);
    let (kind, at) = match report {
        Cumulative::Final => ("final", String::new()),
        Cumulative::Checkpoint { at, .. } => ("checkpoint", decimals(*at, 4)),
    };
    let mut row: Vec<String> = vec![
        kind.to_string(),
        at,
        decimals(stats.time_total_s, 4),
        stats.threads.to_string(),
        stats.events.to_string(),
        decimals(stats.events_per_sec, 4),
        c.reads.to_string(),
        c.writes.to_string(),
        c.other.to_string(),
        c.queries().to_string(),
        rate(c.queries()),
        c.errors.to_string(),
        rate(c.errors),
        c.reconnects.to_string(),
        rate(c.reconnects),
        c.bytes_read.to_string(),
        c.bytes_written.to_string(),
        ms(l.min_ms),
        ms(l.avg_ms),
        ms(l.max_ms),
    ];
    row.extend(shown.iter().map(|p| ms(l.percentile_ms(*p).unwrap_or(0.0))));
    row.extend([
        ms(l.sum_ms),
        decimals(f.events_avg, 4),
        decimals(f.events_stddev, 4),
        decimals(f.time_avg_s, 4),
        decimals(f.time_stddev_s, 4),
        stats.lag.map(|g| ms(g.mean_ms)).unwrap_or_default(),
        stats.lag.map(|g| ms(g.max_ms)).unwrap_or_default(),
    ]);
    format!("{}\n{}\n", header.join(","), row.join(","))
}

/// CSV output for `--report-format=csv`.
#[derive(Debug, Default)]
pub struct CsvFormat;

impl Format for CsvFormat {
    fn interval(&mut self, stat: &ReportStat, opts: &LineOptions) -> String {
        intermediate(stat, opts.time_decimals)
    }

    fn cumulative(
        &mut self,
        report: &Cumulative,
        stats: &FinalStats,
        opts: &FinalOptions,
    ) -> String {
        cumulative(report, stats, opts)
    }

    fn histogram(&mut self, rows: &[Bucket]) -> String {
        let mut out = String::from("value_ms,count\n");
        for b in rows {
            out.push_str(&format!("{},{}\n", decimals(b.value_ms, 6), b.count));
        }
        out
    }
}
