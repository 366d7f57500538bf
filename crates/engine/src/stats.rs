//! The measured results a run hands to reporters: plain data, no formatting.
//!
//! [`IntervalStats`] describes one `--report-interval` window, [`CumulativeStats`] the
//! whole measured run (or the span since the last checkpoint). Both carry the merged
//! [`Histogram`] so reporters can print any percentile and results files can store it
//! losslessly.

use hdrhistogram::Histogram;

use crate::latency::percentile_ns;

/// The counters a worker can bump: sysbench's `sb_counter_type` in its order, then
/// bmk's own (which no sysbench script can name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Counter {
    /// Statements that are neither reads nor writes (BEGIN, COMMIT, ...); fsyncs in fileio.
    Other = 0,
    /// Read statements; read operations in fileio.
    Read = 1,
    /// Write statements; write operations in fileio.
    Write = 2,
    /// Transactions (informational; the event count is what reports use).
    Transaction = 3,
    /// Ignored errors.
    Error = 4,
    /// Reconnects.
    Reconnect = 5,
    /// Bytes read.
    BytesRead = 6,
    /// Bytes written.
    BytesWritten = 7,
    /// Rows returned by read statements: what the reads found, to compare with what
    /// the workload expects (a point select one row, a range `--range-size`).
    Rows = 8,
    /// Read statements that returned no row: against data smaller than the options
    /// claim, most point selects find nothing, and nothing is fast.
    EmptyReads = 9,
}

/// Number of counters.
pub const COUNTER_COUNT: usize = 10;

impl Counter {
    /// The counter for a raw `sb_counter_type` value.
    pub fn from_raw(raw: u32) -> Option<Counter> {
        Some(match raw {
            0 => Counter::Other,
            1 => Counter::Read,
            2 => Counter::Write,
            3 => Counter::Transaction,
            4 => Counter::Error,
            5 => Counter::Reconnect,
            6 => Counter::BytesRead,
            7 => Counter::BytesWritten,
            _ => return None,
        })
    }
}

/// A snapshot or a difference of all counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters(pub [u64; COUNTER_COUNT]);

impl Counters {
    /// One counter's value.
    pub fn get(&self, c: Counter) -> u64 {
        self.0[c as usize]
    }
    /// Reads + writes + other.
    pub fn queries(&self) -> u64 {
        self.get(Counter::Read) + self.get(Counter::Write) + self.get(Counter::Other)
    }
    /// Element-wise `self - earlier` (saturating: counters only grow).
    pub fn since(&self, earlier: &Counters) -> Counters {
        let mut out = [0; COUNTER_COUNT];
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.0[i].saturating_sub(earlier.0[i]);
        }
        Counters(out)
    }
    /// Element-wise sum.
    pub fn add(&mut self, other: &Counters) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += b;
        }
    }
}

/// One reporting interval.
#[derive(Debug, Clone)]
pub struct IntervalStats {
    /// Seconds since the measured start, at the end of this interval.
    pub time_total: f64,
    /// Length of this interval in seconds.
    pub time_interval: f64,
    /// Workers still running.
    pub threads_running: u32,
    /// Events completed in the interval.
    pub events: u64,
    /// Counter growth in the interval.
    pub counters: Counters,
    /// Latencies of the interval's events (nanoseconds).
    pub histogram: Histogram<u64>,
    /// Arrivals waiting for a worker (rate mode).
    pub queue_length: u64,
    /// Workers busy with an event (rate mode).
    pub concurrency: u64,
    /// Whether the run is in rate mode.
    pub rate_mode: bool,
}

impl IntervalStats {
    /// Latency at `percentile` in milliseconds (0 when the interval had no events).
    pub fn percentile_ms(&self, percentile: f64) -> f64 {
        if self.histogram.is_empty() {
            return 0.0;
        }
        let ns = percentile_ns(
            &self.histogram,
            percentile,
            self.histogram.min(),
            self.histogram.max(),
        );
        ns as f64 / 1e6
    }

    /// Per-second rate of a count over this interval.
    pub fn per_sec(&self, count: u64) -> f64 {
        if self.time_interval > 0.0 {
            count as f64 / self.time_interval
        } else {
            0.0
        }
    }
}

/// What one worker did over the measured span.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadTotals {
    /// Events completed.
    pub events: u64,
    /// Sum of its event latencies, nanoseconds.
    pub busy_ns: u64,
}

/// Schedule lag in rate mode: how long arrivals waited for a worker.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LagStats {
    /// Mean lag, nanoseconds.
    pub mean_ns: f64,
    /// Largest lag, nanoseconds.
    pub max_ns: u64,
    /// Arrivals dropped because the arrival queue was full: load that was asked for
    /// and not offered.
    pub dropped: u64,
}

/// The whole measured run, or the span since the last checkpoint.
#[derive(Debug, Clone)]
pub struct CumulativeStats {
    /// Seconds covered.
    pub time_total: f64,
    /// Events completed.
    pub events: u64,
    /// Counter growth.
    pub counters: Counters,
    /// All event latencies (nanoseconds).
    pub histogram: Histogram<u64>,
    /// Exact smallest latency, nanoseconds (0 with no events).
    pub min_ns: u64,
    /// Exact largest latency, nanoseconds.
    pub max_ns: u64,
    /// Exact sum of latencies, nanoseconds.
    pub sum_ns: u64,
    /// Per-worker totals, by thread id.
    pub threads: Vec<ThreadTotals>,
    /// Schedule lag, in rate mode.
    pub lag: Option<LagStats>,
}

impl CumulativeStats {
    /// Latency at `percentile`, milliseconds, never outside `[min, max]`.
    pub fn percentile_ms(&self, percentile: f64) -> f64 {
        percentile_ns(&self.histogram, percentile, self.min_ns, self.max_ns) as f64 / 1e6
    }
    /// Mean latency, milliseconds.
    pub fn avg_ms(&self) -> f64 {
        if self.events == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.events as f64 / 1e6
        }
    }
    /// Per-second rate of a count over the whole span.
    pub fn per_sec(&self, count: u64) -> f64 {
        if self.time_total > 0.0 {
            count as f64 / self.time_total
        } else {
            0.0
        }
    }
    /// (mean, population standard deviation) of events per thread.
    pub fn events_fairness(&self) -> (f64, f64) {
        mean_stddev(self.threads.iter().map(|t| t.events as f64))
    }
    /// (mean, population standard deviation) of busy seconds per thread.
    pub fn time_fairness(&self) -> (f64, f64) {
        mean_stddev(self.threads.iter().map(|t| t.busy_ns as f64 / 1e9))
    }
}

fn mean_stddev(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = values.clone().count();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = values.clone().sum::<f64>() / n as f64;
    let var = values.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fairness_is_population_stddev() {
        let (m, s) = mean_stddev([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0].into_iter());
        assert_eq!(m, 5.0);
        assert_eq!(s, 2.0);
    }
}
