//! The latency a workload measures itself, per transaction type (TPC-C: new_order,
//! payment, ...), as `result.json`'s `workload_latency`.
//!
//! A workload script times its transactions into coarse logarithmic buckets and prints
//! each bucket's upper bound and count ([`Buckets`]); this module turns them into the
//! results model's per-type statistics ([`QueryTypeStats`], as `query_types` keeps
//! them): count, exact sum, minimum and maximum, and a histogram ([`crate::codec`]) with
//! each bucket's count at its bound. Histograms add, so the clients of one run merge
//! exactly ([`crate::merge`]): percentiles are read from the added buckets, never
//! averaged.

use std::collections::BTreeMap;

use bmk_engine::latency::{new_histogram, percentile_ns};
use bmk_report::summary::LatencySummary;
use bmk_report::PercentileValue;

use crate::codec;
use crate::results_file::{QueryTypeStats, ResultsFile};
use crate::Error;

/// The percentiles kept for each transaction type.
pub const PERCENTILES: [f64; 2] = [95.0, 99.0];

/// One transaction type's latency histogram as a workload prints it (ms).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Buckets {
    /// Sum of all latencies.
    pub sum_ms: f64,
    /// Smallest latency.
    pub min_ms: f64,
    /// Largest latency.
    pub max_ms: f64,
    /// (upper bound, count) of each non-empty bucket.
    pub counts: Vec<(f64, u64)>,
}

impl Buckets {
    /// The statistics of the type: each bucket's count recorded at its bound (in ns,
    /// so equal bounds from several clients land in one histogram bucket).
    pub fn stats(&self) -> Result<QueryTypeStats, Error> {
        let mut hist = new_histogram();
        hist.auto(true);
        for &(bound_ms, n) in &self.counts {
            let ns = (bound_ms * 1e6).round().max(1.0) as u64;
            hist.record_n(ns, n)
                .map_err(|e| Error::Histogram(format!("bucket {bound_ms} ms: {e:?}")))?;
        }
        let count = hist.len();
        let (min_ns, max_ns) = (
            (self.min_ms * 1e6).round() as u64,
            (self.max_ms * 1e6).round() as u64,
        );
        Ok(QueryTypeStats {
            count,
            errors: 0,
            latency: LatencySummary {
                min_ms: self.min_ms,
                avg_ms: if count > 0 {
                    self.sum_ms / count as f64
                } else {
                    0.0
                },
                max_ms: self.max_ms,
                sum_ms: self.sum_ms,
                percentiles: if count > 0 {
                    PERCENTILES
                        .iter()
                        .map(|&p| PercentileValue {
                            percentile: p,
                            ms: percentile_ns(&hist, p, min_ns, max_ns) as f64 / 1e6,
                        })
                        .collect()
                } else {
                    Vec::new()
                },
            },
            histogram: Some(codec::encode(&hist)?),
        })
    }
}

/// The workload's own values `summary.csv` shows: its results (`workload`) and
/// `<type>_p95_ms`, the 95th percentile latency of each transaction type that completed
/// a transaction.
pub fn summary_values(result: &ResultsFile) -> BTreeMap<String, f64> {
    let mut values = result.workload.clone();
    values.extend(p95_values(&result.workload_latency));
    values
}

fn p95_values(latency: &BTreeMap<String, QueryTypeStats>) -> BTreeMap<String, f64> {
    latency
        .iter()
        .filter_map(|(name, s)| Some((format!("{name}_p95_ms"), s.latency.percentile_ms(95.0)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_become_counts_and_percentiles_within_min_and_max() {
        let b = Buckets {
            sum_ms: 96.0,
            min_ms: 0.9,
            max_ms: 30.0,
            // 90 samples up to 1 ms, 8 up to 2 ms, 2 up to 33 ms.
            counts: vec![(1.0, 90), (2.0, 8), (33.0, 2)],
        };
        let s = b.stats().unwrap();
        assert_eq!(s.count, 100);
        assert_eq!(s.latency.avg_ms, 0.96);
        let p95 = s.latency.percentile_ms(95.0).unwrap();
        assert!((p95 - 2.0).abs() < 0.002, "{p95}");
        // The 99th sample is in the last bucket, whose bound is above the largest.
        assert_eq!(s.latency.percentile_ms(99.0), Some(30.0));
        let back = codec::decode(s.histogram.as_deref().unwrap()).unwrap();
        assert_eq!(back.len(), 100);
        assert_eq!(
            p95_values(&[("payment".to_string(), s)].into_iter().collect()),
            [("payment_p95_ms".to_string(), p95)].into_iter().collect()
        );
    }

    #[test]
    fn a_type_without_transactions_has_no_percentiles() {
        let s = Buckets::default().stats().unwrap();
        assert_eq!((s.count, s.latency.percentiles.len()), (0, 0));
        assert!(p95_values(&[("purge".to_string(), s)].into_iter().collect()).is_empty());
    }
}
