//! The `--histogram` text: latencies grouped into logarithmic buckets.
//!
//! The engine keeps latencies in an HdrHistogram (3 significant digits, 1 ns–1 h); for
//! printing they are regrouped into [`BUCKETS`] buckets of equal width on a log scale
//! from 1 µs to 1 h (each about 2.2 % wider than the one before, the resolution
//! sysbench's histogram has). A row shows the bucket's lower bound in milliseconds
//! (`%12.3f`), a bar of `*` scaled so the fullest bucket gets 40 (rounded, at least one
//! for any non-empty bucket), and the count; empty buckets are skipped:
//!
//! ```text
//! Latency histogram (values are in milliseconds)
//!        value  ------------- distribution ------------- count
//!        0.219 |**                                       41
//! ```
//!
//! The text ends with a blank line, so the final report can follow directly.
//! Serialising histograms for results files is [`crate::codec`]'s job.

use hdrhistogram::Histogram;

use crate::printf::fixed;

/// Number of log-scale buckets over the whole range.
pub const BUCKETS: usize = 1024;
/// Lower bound of the first bucket, milliseconds (1 µs).
pub const LOWEST_MS: f64 = 1e-3;
/// Upper bound of the last bucket, milliseconds (1 h).
pub const HIGHEST_MS: f64 = 3_600_000.0;
/// Width of the widest bar.
pub const BAR_WIDTH: usize = 40;

/// One printed row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    /// Lower bound of the bucket, milliseconds.
    pub value_ms: f64,
    /// Latencies that fell into it.
    pub count: u64,
}

fn log_span() -> f64 {
    (HIGHEST_MS / LOWEST_MS).ln()
}

/// The bucket a latency of `ms` milliseconds falls into (clamped to the range).
fn bucket_index(ms: f64) -> usize {
    if ms <= LOWEST_MS {
        return 0;
    }
    let i = ((ms / LOWEST_MS).ln() / log_span() * BUCKETS as f64).floor();
    (i as usize).min(BUCKETS - 1)
}

/// Lower bound of bucket `index`, milliseconds.
fn bucket_value(index: usize) -> f64 {
    LOWEST_MS * (index as f64 * log_span() / BUCKETS as f64).exp()
}

/// The non-empty log-scale buckets of a nanosecond histogram, ascending.
pub fn buckets(hist: &Histogram<u64>) -> Vec<Bucket> {
    let mut counts = vec![0u64; BUCKETS];
    for v in hist.iter_recorded() {
        let ms = hist.median_equivalent(v.value_iterated_to()) as f64 / 1e6;
        counts[bucket_index(ms)] += v.count_at_value();
    }
    counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &count)| Bucket {
            value_ms: bucket_value(i),
            count,
        })
        .collect()
}

/// The histogram text for already-bucketed rows.
pub fn render_buckets(rows: &[Bucket]) -> String {
    let mut out = String::from("Latency histogram (values are in milliseconds)\n");
    out.push_str("       value  ------------- distribution ------------- count\n");
    let max = rows.iter().map(|b| b.count).max().unwrap_or(0);
    for b in rows {
        let stars =
            ((b.count as f64 * BAR_WIDTH as f64 / max as f64).round() as usize).clamp(1, BAR_WIDTH);
        out.push_str(&format!(
            "{} |{:<width$} {}\n",
            fixed(b.value_ms, 12, 3),
            "*".repeat(stars),
            b.count,
            width = BAR_WIDTH
        ));
    }
    out.push('\n');
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
    fn buckets_are_log_spaced_and_cover_the_range() {
        assert_eq!(bucket_index(0.0), 0);
        assert_eq!(bucket_index(LOWEST_MS), 0);
        assert_eq!(bucket_index(HIGHEST_MS * 2.0), BUCKETS - 1);
        let ratio = bucket_value(501) / bucket_value(500);
        assert!((ratio - 1.0216).abs() < 1e-3, "{ratio}");
        for ms in [0.0123, 0.219, 1.0, 57.3, 12345.0] {
            let i = bucket_index(ms);
            assert!(bucket_value(i) <= ms * (1.0 + 1e-12), "{ms}");
            assert!(bucket_value(i + 1) > ms, "{ms}");
        }
    }
}
