//! The numbers a report prints, detached from the engine's live types.
//!
//! [`ReportStat`] is one intermediate (or Lua `report_cumulative`) sample with exactly
//! the fields of the `stat` table sysbench hands Lua report hooks, so the Lua runtime and the CLI feed
//! the same printers. [`FinalStats`] is the serialisable summary of a whole run (or of
//! the span up to a checkpoint): counters, latency, fairness and schedule lag, computed
//! once from a [`CumulativeStats`] and then rendered by every format and stored in the
//! results file. Nothing here formats text.

use bmk_engine::{Counter, CumulativeStats, IntervalStats};
use serde::{Deserialize, Serialize};

/// One reporting sample: the fields of the Lua `stat` table.
///
/// Counts are totals over `time_interval`; printers divide by it to get rates.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReportStat {
    /// Workers still running.
    pub threads_running: u32,
    /// Seconds since the measured start at the end of the sample.
    pub time_total: f64,
    /// Seconds the sample covers.
    pub time_interval: f64,
    /// Events completed.
    pub events: u64,
    /// Read queries (read operations in fileio).
    pub reads: u64,
    /// Write queries (write operations in fileio).
    pub writes: u64,
    /// Other queries (fsyncs in fileio).
    pub other: u64,
    /// Ignored errors.
    pub errors: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// Bytes read (fileio).
    pub bytes_read: u64,
    /// Bytes written (fileio).
    pub bytes_written: u64,
    /// Latency at the report percentile, in **seconds** (as the Lua API has it).
    pub latency_pct: f64,
    /// Arrivals waiting for a worker (rate mode).
    pub queue_length: u64,
    /// Workers busy with an event (rate mode).
    pub concurrency: u64,
    /// Cumulative samples only: smallest latency, seconds.
    pub latency_min: f64,
    /// Cumulative samples only: largest latency, seconds.
    pub latency_max: f64,
    /// Cumulative samples only: mean latency, seconds.
    pub latency_avg: f64,
    /// Cumulative samples only: sum of latencies, seconds.
    pub latency_sum: f64,
}

impl ReportStat {
    /// The sample for one engine interval, with the latency at `percentile` (0: the
    /// lowest, which sysbench prints as `lat (ms,0%)`).
    pub fn from_interval(stats: &IntervalStats, percentile: f64) -> ReportStat {
        let c = &stats.counters;
        ReportStat {
            threads_running: stats.threads_running,
            time_total: stats.time_total,
            time_interval: stats.time_interval,
            events: stats.events,
            reads: c.get(Counter::Read),
            writes: c.get(Counter::Write),
            other: c.get(Counter::Other),
            errors: c.get(Counter::Error),
            reconnects: c.get(Counter::Reconnect),
            bytes_read: c.get(Counter::BytesRead),
            bytes_written: c.get(Counter::BytesWritten),
            latency_pct: stats.percentile_ms(percentile) / 1e3,
            queue_length: stats.queue_length,
            concurrency: stats.concurrency,
            ..ReportStat::default()
        }
    }

    /// The sample for a cumulative span (what Lua's `report_cumulative(stat)` receives);
    /// `threads` is the worker count, `time_interval` equals `time_total`.
    pub fn from_cumulative(stats: &CumulativeStats, threads: u32, percentile: f64) -> ReportStat {
        let c = &stats.counters;
        ReportStat {
            threads_running: threads,
            time_total: stats.time_total,
            time_interval: stats.time_total,
            events: stats.events,
            reads: c.get(Counter::Read),
            writes: c.get(Counter::Write),
            other: c.get(Counter::Other),
            errors: c.get(Counter::Error),
            reconnects: c.get(Counter::Reconnect),
            bytes_read: c.get(Counter::BytesRead),
            bytes_written: c.get(Counter::BytesWritten),
            latency_pct: if stats.events > 0 {
                stats.percentile_ms(percentile) / 1e3
            } else {
                0.0
            },
            queue_length: 0,
            concurrency: 0,
            latency_min: stats.min_ns as f64 / 1e9,
            latency_max: stats.max_ns as f64 / 1e9,
            latency_avg: stats.avg_ms() / 1e3,
            latency_sum: stats.sum_ns as f64 / 1e9,
        }
    }

    /// `count` per second of this sample (0 for an empty interval).
    pub fn per_sec(&self, count: u64) -> f64 {
        per_sec(count, self.time_interval)
    }

    /// Reads + writes + other.
    pub fn queries(&self) -> u64 {
        self.reads + self.writes + self.other
    }
}

/// `value`, or 0 if it is NaN or infinite (JSON has no such numbers).
fn finite(value: f64) -> f64 {
    if value.is_finite() {
        value
    } else {
        0.0
    }
}

pub(crate) fn per_sec(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// Mebibytes (2^20 bytes).
pub(crate) const MIB: f64 = 1024.0 * 1024.0;

/// All engine counters at the end of a span.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterTotals {
    /// Read queries / read operations.
    pub reads: u64,
    /// Write queries / write operations.
    pub writes: u64,
    /// Other queries / fsyncs.
    pub other: u64,
    /// Transactions: the events, as the text report's `transactions:` line counts them
    /// (a results file that said 0 beside a text report of thousands would contradict
    /// it).
    pub transactions: u64,
    /// Ignored errors.
    pub errors: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Rows the read statements returned; absent when the workload counted none (no
    /// SQL reads, or a file written before bmk counted them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// Read statements that returned no row; present exactly when `rows` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_reads: Option<u64>,
}

impl CounterTotals {
    /// Reads + writes + other.
    pub fn queries(&self) -> u64 {
        self.reads + self.writes + self.other
    }
}

/// `(rows, empty_reads)` of `counters` as the records store them: both present when a
/// read statement returned anything or nothing (every SQL read does one or the other),
/// both absent for a workload whose reads are not statements (fileio) or that read
/// nothing.
pub fn read_rows(counters: &bmk_engine::Counters) -> (Option<u64>, Option<u64>) {
    let rows = counters.get(Counter::Rows);
    let empty = counters.get(Counter::EmptyReads);
    if rows + empty > 0 {
        (Some(rows), Some(empty))
    } else {
        (None, None)
    }
}

/// Adds an optional count to a total that may be absent (merging records: absent
/// everywhere stays absent).
pub fn add_count(total: &mut Option<u64>, n: Option<u64>) {
    if let Some(n) = n {
        *total.get_or_insert(0) += n;
    }
}

/// One latency percentile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentileValue {
    /// The percentile, 0–100 (e.g. `99.9`).
    pub percentile: f64,
    /// Latency at it, milliseconds.
    pub ms: f64,
}

/// Latency over a span, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Exact minimum.
    pub min_ms: f64,
    /// Mean (exact sum / events).
    pub avg_ms: f64,
    /// Exact maximum.
    pub max_ms: f64,
    /// Exact sum of all latencies.
    pub sum_ms: f64,
    /// Percentiles, ascending, each within `[min, max]`.
    pub percentiles: Vec<PercentileValue>,
}

impl LatencySummary {
    /// The value stored for `percentile`, if it was computed.
    pub fn percentile_ms(&self, percentile: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|p| (p.percentile - percentile).abs() < 1e-9)
            .map(|p| p.ms)
    }
}

/// How evenly the work spread over the workers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// Mean events per worker.
    pub events_avg: f64,
    /// Population standard deviation of events per worker.
    pub events_stddev: f64,
    /// Mean busy time per worker, seconds.
    pub time_avg_s: f64,
    /// Population standard deviation of busy time per worker, seconds.
    pub time_stddev_s: f64,
}

/// Rate-mode schedule lag (time an arrival waited for a worker), milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LagSummary {
    /// Mean lag.
    pub mean_ms: f64,
    /// Largest lag.
    pub max_ms: f64,
    /// Arrivals dropped because the arrival queue was full: events asked for by
    /// `--rate` that were never offered to the server.
    #[serde(default)]
    pub dropped_arrivals: u64,
}

/// The summary of a measured span: what every final-report format prints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FinalStats {
    /// Seconds covered.
    pub time_total_s: f64,
    /// Workers.
    pub threads: u32,
    /// Events completed.
    pub events: u64,
    /// Events per second.
    pub events_per_sec: f64,
    /// Counter totals.
    pub counters: CounterTotals,
    /// Latency.
    pub latency: LatencySummary,
    /// Threads fairness.
    pub fairness: Fairness,
    /// Schedule lag (rate mode only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<LagSummary>,
}

impl FinalStats {
    /// Summarises `stats`, computing the latency at each of `percentiles` (0–100;
    /// values ≤ 0 are skipped, duplicates dropped, the rest sorted).
    pub fn from_cumulative(stats: &CumulativeStats, percentiles: &[f64]) -> FinalStats {
        let c = &stats.counters;
        let (events_avg, events_stddev) = stats.events_fairness();
        let (time_avg_s, time_stddev_s) = stats.time_fairness();
        let empty = stats.events == 0 || stats.histogram.is_empty();
        FinalStats {
            time_total_s: finite(stats.time_total),
            threads: stats.threads.len() as u32,
            events: stats.events,
            events_per_sec: finite(stats.per_sec(stats.events)),
            counters: CounterTotals {
                reads: c.get(Counter::Read),
                writes: c.get(Counter::Write),
                other: c.get(Counter::Other),
                transactions: stats.events,
                errors: c.get(Counter::Error),
                reconnects: c.get(Counter::Reconnect),
                bytes_read: c.get(Counter::BytesRead),
                bytes_written: c.get(Counter::BytesWritten),
                rows: read_rows(c).0,
                empty_reads: read_rows(c).1,
            },
            latency: LatencySummary {
                min_ms: stats.min_ns as f64 / 1e6,
                avg_ms: stats.avg_ms(),
                max_ms: stats.max_ns as f64 / 1e6,
                sum_ms: stats.sum_ns as f64 / 1e6,
                percentiles: normalize_percentiles(percentiles)
                    .into_iter()
                    .map(|p| PercentileValue {
                        percentile: p,
                        ms: if empty { 0.0 } else { stats.percentile_ms(p) },
                    })
                    .collect(),
            },
            fairness: Fairness {
                events_avg: finite(events_avg),
                events_stddev: finite(events_stddev),
                time_avg_s: finite(time_avg_s),
                time_stddev_s: finite(time_stddev_s),
            },
            lag: stats.lag.map(|l| LagSummary {
                mean_ms: finite(l.mean_ns) / 1e6,
                max_ms: l.max_ns as f64 / 1e6,
                dropped_arrivals: l.dropped,
            }),
        }
    }

    /// `count` per second over the span.
    pub fn per_sec(&self, count: u64) -> f64 {
        per_sec(count, self.time_total_s)
    }
}

/// `percentiles` without values outside (0, 100], without duplicates, ascending.
pub fn normalize_percentiles(percentiles: &[f64]) -> Vec<f64> {
    let mut out: Vec<f64> = percentiles
        .iter()
        .copied()
        .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
        .collect();
    out.sort_by(f64::total_cmp);
    out.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_normalized() {
        assert_eq!(
            normalize_percentiles(&[99.0, 0.0, 95.0, 99.0, 50.0, 101.0]),
            vec![50.0, 95.0, 99.0]
        );
    }
}
