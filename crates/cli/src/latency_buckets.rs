//! The run's event latencies as a Prometheus histogram with fixed bucket bounds, fed
//! once per interval from the interval's HdrHistogram.
//!
//! `prometheus_client`'s own `Histogram` takes one observation per call: feeding it
//! every event would cost the controlling thread a call per event. This metric takes
//! the interval's whole HdrHistogram at once (one pass over its recorded values) and
//! encodes itself through the crate's histogram encoder, so the exposition is the
//! standard one.

use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

/// Upper bounds of the buckets, seconds: from 25 µs (a point select on a warm buffer
/// pool over a local socket takes 30-100 µs) to 10 s (a lock wait or a stall), at 1,
/// 2.5 and 5 of each decade, as database latencies spread over six orders of magnitude.
/// `+Inf` follows.
pub const BOUNDS_S: [f64; 18] = [
    0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
    0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Debug, Default)]
struct Totals {
    /// Events per bucket (not cumulative), the last one `+Inf`.
    counts: [u64; BOUNDS_S.len() + 1],
    count: u64,
    sum_s: f64,
}

/// A cumulative latency histogram; see the module docs. Clones share the counts (one
/// is registered, the other fed).
#[derive(Debug, Default, Clone)]
pub struct LatencyBuckets {
    totals: Arc<Mutex<Totals>>,
}

impl LatencyBuckets {
    /// Adds an interval's latencies (nanoseconds). Each recorded value counts at the
    /// highest value its HdrHistogram bucket stands for, so a latency is never put
    /// below a bound it may exceed; the sum is exact to the HdrHistogram's precision.
    pub fn add(&self, interval: &Histogram<u64>) {
        if interval.is_empty() {
            return;
        }
        let mut totals = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        for v in interval.iter_recorded() {
            let n = v.count_at_value();
            let seconds = interval.highest_equivalent(v.value_iterated_to()) as f64 / 1e9;
            let bucket = BOUNDS_S
                .iter()
                .position(|&bound| seconds <= bound)
                .unwrap_or(BOUNDS_S.len());
            totals.counts[bucket] += n;
            totals.count += n;
            let median = interval.median_equivalent(v.value_iterated_to()) as f64 / 1e9;
            totals.sum_s += median * n as f64;
        }
    }

    /// The events counted so far.
    #[cfg(test)]
    pub fn count(&self) -> u64 {
        self.totals.lock().unwrap_or_else(|p| p.into_inner()).count
    }
}

impl EncodeMetric for LatencyBuckets {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let totals = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        let buckets: Vec<(f64, u64)> = BOUNDS_S
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .zip(totals.counts.iter().copied())
            .collect();
        encoder.encode_histogram::<NoLabelSet>(totals.sum_s, totals.count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(buckets: LatencyBuckets) -> String {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register("lat_seconds", "latency", buckets);
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).unwrap();
        out
    }

    #[test]
    fn latencies_land_in_the_bucket_whose_bound_they_do_not_exceed() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        h.record_n(80_000, 3).unwrap(); // 80 µs
        h.record_n(2_000_000, 5).unwrap(); // 2 ms
        h.record(30_000_000_000).unwrap(); // 30 s
        let buckets = LatencyBuckets::default();
        buckets.add(&h);
        buckets.add(&h);
        assert_eq!(buckets.count(), 18);
        let text = encoded(buckets);
        assert!(
            text.contains("lat_seconds_bucket{le=\"0.0001\"} 6\n"),
            "{text}"
        );
        assert!(
            text.contains("lat_seconds_bucket{le=\"0.001\"} 6\n"),
            "{text}"
        );
        assert!(
            text.contains("lat_seconds_bucket{le=\"0.0025\"} 16\n"),
            "{text}"
        );
        assert!(
            text.contains("lat_seconds_bucket{le=\"10.0\"} 16\n"),
            "{text}"
        );
        assert!(
            text.contains("lat_seconds_bucket{le=\"+Inf\"} 18\n"),
            "{text}"
        );
        assert!(text.contains("lat_seconds_count 18\n"), "{text}");
        let sum: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("lat_seconds_sum "))
            .unwrap()
            .parse()
            .unwrap();
        let exact = 2.0 * (3.0 * 80e-6 + 5.0 * 2e-3 + 30.0);
        assert!((sum - exact).abs() / exact < 1e-3, "{sum} vs {exact}");
    }
}
