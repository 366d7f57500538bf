//! The `--histogram` text: latencies grouped into logarithmic buckets.
//!
//! The engine keeps latencies in an HdrHistogram (3 significant digits, 1 ns–1 h); for
//! printing they are regrouped the way sysbench groups its latency histogram, so the
//! same latencies print the same rows: [`BUCKETS`] buckets on a log scale whose first
//! is centred on 1 µs and whose last on 100 s (later latencies count in the last). A
//! latency goes to the bucket whose centre is nearest on the log scale, and a row
//! shows that centre in milliseconds (`%12.3f`), a bar of `*` scaled so the fullest
//! bucket gets 40 (rounded half up, so a bucket far below the fullest may get none),
//! and the count; empty buckets are skipped:
//!
//! ```text
//! Latency histogram (values are in milliseconds)
//!        value  ------------- distribution ------------- count
//!        0.219 |**                                       41
//! ```
//!
//! The text ends with a line holding one space (sysbench logs a single space there),
//! then the final report follows.
//! Serialising histograms for results files is `bmk_results::codec`'s job.

use hdrhistogram::Histogram;

use crate::printf::fixed;

/// Number of log-scale buckets over the whole range.
pub const BUCKETS: usize = 1024;
/// Centre of the first bucket, milliseconds (1 µs).
pub const LOWEST_MS: f64 = 1e-3;
/// Centre of the last bucket, milliseconds (100 s).
pub const HIGHEST_MS: f64 = 1e5;
/// Width of the widest bar.
pub const BAR_WIDTH: usize = 40;

/// One printed row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    /// Centre of the bucket, milliseconds.
    pub value_ms: f64,
    /// Latencies that fell into it.
    pub count: u64,
}

/// The log scale shared by the latency histogram and the Lua API's
/// `sysbench.histogram`: `size` buckets whose centres run from `min` to `max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogScale {
    size: usize,
    ln_min: f64,
    /// Buckets per unit of natural logarithm.
    per_ln: f64,
}

impl LogScale {
    /// `size` buckets (at least 1) centred from `min` to `max` (both positive).
    pub fn new(size: usize, min: f64, max: f64) -> LogScale {
        let size = size.max(1);
        let ln_min = min.ln();
        let span = max.ln() - ln_min;
        LogScale {
            size,
            ln_min,
            per_ln: if span > 0.0 {
                (size - 1) as f64 / span
            } else {
                0.0
            },
        }
    }

    /// The bucket of `v`: the nearest centre, clamped to the scale (0, negative
    /// values and NaN go to the first).
    pub fn index(&self, v: f64) -> usize {
        let pos = ((v.ln() - self.ln_min) * self.per_ln + 0.5).floor();
        if pos.is_nan() || pos < 0.0 {
            0
        } else {
            (pos as usize).min(self.size - 1)
        }
    }

    /// The centre of bucket `i`.
    pub fn value(&self, i: usize) -> f64 {
        if self.per_ln == 0.0 {
            return self.ln_min.exp();
        }
        (i as f64 / self.per_ln + self.ln_min).exp()
    }
}

/// The bar of a bucket holding `count` when the fullest holds `max`.
pub fn bar(count: u64, max: u64) -> String {
    let stars = (count as f64 * BAR_WIDTH as f64 / max as f64 + 0.5).floor() as usize;
    format!(
        "{:<width$}",
        "*".repeat(stars.min(BAR_WIDTH)),
        width = BAR_WIDTH
    )
}

fn latency_scale() -> LogScale {
    LogScale::new(BUCKETS, LOWEST_MS, HIGHEST_MS)
}

/// The non-empty log-scale buckets of a nanosecond histogram, ascending.
pub fn buckets(hist: &Histogram<u64>) -> Vec<Bucket> {
    let scale = latency_scale();
    let mut counts = vec![0u64; BUCKETS];
    for v in hist.iter_recorded() {
        let ms = hist.median_equivalent(v.value_iterated_to()) as f64 / 1e6;
        counts[scale.index(ms)] += v.count_at_value();
    }
    counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &count)| Bucket {
            value_ms: scale.value(i),
            count,
        })
        .collect()
}

/// The histogram text for already-bucketed rows.
pub fn render_buckets(rows: &[Bucket]) -> String {
    let mut out = String::from("Latency histogram (values are in milliseconds)\n");
    // sysbench prints no column header for a histogram without a latency.
    if !rows.is_empty() {
        out.push_str("       value  ------------- distribution ------------- count\n");
    }
    let max = rows.iter().map(|b| b.count).max().unwrap_or(0);
    for b in rows {
        out.push_str(&format!(
            "{} |{} {}\n",
            fixed(b.value_ms, 12, 3),
            bar(b.count, max),
            b.count,
        ));
    }
    out.push_str(" \n");
    out
}

/// The histogram text for a nanosecond latency histogram.
pub fn render(hist: &Histogram<u64>) -> String {
    render_buckets(&buckets(hist))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_go_to_the_nearest_centre() {
        let scale = latency_scale();
        assert_eq!(scale.index(0.0), 0);
        assert_eq!(scale.index(LOWEST_MS), 0);
        assert_eq!(scale.index(HIGHEST_MS * 2.0), BUCKETS - 1);
        assert!((scale.value(BUCKETS - 1) - HIGHEST_MS).abs() < 1e-6);
        let ratio = scale.value(501) / scale.value(500);
        assert!((ratio - 1.01817).abs() < 1e-4, "{ratio}");
        for ms in [0.0123, 0.219, 1.0, 57.3, 12345.0] {
            let i = scale.index(ms);
            // Within half a bucket of the centre on the log scale.
            let half = ratio.sqrt() * (1.0 + 1e-9);
            assert!(
                scale.value(i) / half <= ms && ms <= scale.value(i) * half,
                "{ms}"
            );
        }
    }

    /// Ten buckets from 1 to 10: 2 lies nearer the centre 2.154 than 1.668, 5.001
    /// nearer 5.995 than 4.642, each printed as its centre.
    #[test]
    fn a_small_scale_prints_centres() {
        let scale = LogScale::new(10, 1.0, 10.0);
        assert_eq!(scale.index(2.0), 3);
        assert_eq!(format!("{:.3}", scale.value(3)), "2.154");
        assert_eq!(scale.index(10.0), 9);
        assert_eq!(scale.index(100.0), 9);
        assert_eq!(format!("{:.3}", scale.value(9)), "10.000");
    }

    #[test]
    fn bars_round_half_up_and_may_be_empty() {
        assert_eq!(bar(2, 2).trim_end().len(), 40);
        assert_eq!(bar(1, 2).trim_end().len(), 20);
        assert_eq!(bar(1, 100).trim_end().len(), 0);
        assert_eq!(bar(1, 80).trim_end().len(), 1);
        assert_eq!(bar(1, 81).len(), 40);
    }
}
