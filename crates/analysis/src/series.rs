//! A level's time series at report-interval resolution (TPS, QPS, p95 latency) and its
//! stalls: intervals whose throughput falls far below the level's usual throughput, the
//! "furious flushing" notches that a level's average hides.
//!
//! The usual throughput is the [`BASELINE_QUANTILE`] of the level's full-length
//! intervals, not their median: when a stall lasts half the level the median falls
//! with it (half the intervals are stalled, so the median is a stalled value or the
//! mean of a stalled and a good one) and the stall hides under its own threshold. The
//! 75th percentile is the median of the better half of the intervals: it stays on the
//! good intervals until more than three quarters of the level stall, and, unlike the
//! maximum or a 95th percentile, one burst (a cache that warmed in one second) does not
//! raise it.

use bmk_results::load::Level;

use crate::charts::{nines_percentile, MAX_NINES_PCT};

/// An interval is a stall when its TPS is below this fraction of the level's baseline.
pub const STALL_FRACTION: f64 = 0.5;

/// The quantile of a level's interval TPS that stalls are measured against.
pub const BASELINE_QUANTILE: f64 = 0.75;

/// One level's series.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LevelSeries {
    /// Seconds since the measured start at each interval's end.
    pub time_s: Vec<f64>,
    /// Events per second.
    pub tps: Vec<f64>,
    /// Queries per second.
    pub qps: Vec<f64>,
    /// 95th percentile latency, ms (0 when the interval did not store it).
    pub p95_ms: Vec<f64>,
    /// Indexes of the stalled intervals.
    pub stalls: Vec<usize>,
    /// The median TPS of the intervals.
    pub median_tps: f64,
    /// The TPS stalls are measured against: the [`BASELINE_QUANTILE`] of the
    /// full-length intervals.
    pub baseline_tps: f64,
}

impl LevelSeries {
    /// The series of `level`.
    pub fn of(level: &Level) -> LevelSeries {
        let mut s = LevelSeries::default();
        for line in &level.intervals {
            let r = &line.record;
            s.time_s.push(r.time_s);
            s.tps.push(r.tps);
            s.qps.push(r.qps.total);
            s.p95_ms.push(
                r.latency
                    .percentiles
                    .iter()
                    .find(|p| (p.percentile - 95.0).abs() < 1e-9)
                    .map(|p| p.ms)
                    .unwrap_or(0.0),
            );
        }
        s.median_tps = median(&s.tps);
        // The last interval of a level may be a short remainder; it is not a stall,
        // and its rate (few events over a short time) is no part of the baseline.
        let nominal = level
            .intervals
            .iter()
            .map(|l| l.record.interval_s)
            .fold(0.0, f64::max);
        let full: Vec<usize> = (0..level.intervals.len())
            .filter(|&i| level.intervals[i].record.interval_s >= 0.9 * nominal)
            .collect();
        let full_tps: Vec<f64> = full.iter().map(|&i| s.tps[i]).collect();
        s.baseline_tps = quantile(&full_tps, BASELINE_QUANTILE);
        s.stalls = full
            .into_iter()
            .filter(|&i| s.baseline_tps > 0.0 && s.tps[i] < STALL_FRACTION * s.baseline_tps)
            .collect();
        s
    }
}

/// The `q` quantile (0–1) of `values`, interpolating linearly between the two nearest
/// ranks (0 for no values).
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// The median (0 for no values).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn quantiles_interpolate_between_ranks() {
        assert_eq!(quantile(&[], 0.75), 0.0);
        assert_eq!(quantile(&[5.0], 0.75), 5.0);
        assert_eq!(quantile(&[4.0, 1.0, 3.0, 2.0, 5.0], 0.75), 4.0);
        assert_eq!(quantile(&[1.0, 2.0], 0.75), 1.75);
        assert_eq!(quantile(&[3.0, 1.0, 2.0], 0.5), median(&[3.0, 1.0, 2.0]));
    }

    fn level_of(tps: &[f64]) -> Level {
        Level {
            dir: None,
            info: Default::default(),
            result: None,
            intervals: tps
                .iter()
                .enumerate()
                .map(|(i, &t)| bmk_results::results_dir::IntervalLine {
                    record: bmk_results::results_file::IntervalRecord {
                        time_s: i as f64 + 1.0,
                        interval_s: 1.0,
                        tps: t,
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .collect(),
        }
    }

    #[test]
    fn a_level_half_stalled_is_flagged() {
        // Five good seconds at 3200 TPS, five stalled at 300: the median (1750) would
        // put the threshold at 875 TPS; the baseline stays at 3200.
        let mut tps = vec![3200.0; 5];
        tps.extend([300.0; 5]);
        let s = LevelSeries::of(&level_of(&tps));
        assert_eq!(s.baseline_tps, 3200.0);
        assert_eq!(s.stalls, [5, 6, 7, 8, 9]);
        // Even when most of it stalls.
        let mut tps = vec![3000.0; 3];
        tps.extend([33.0; 7]);
        let s = LevelSeries::of(&level_of(&tps));
        assert_eq!(s.median_tps, 33.0);
        assert_eq!(s.stalls.len(), 7, "baseline {}", s.baseline_tps);
    }

    #[test]
    fn a_steady_level_with_noise_and_one_burst_has_no_stall() {
        let tps = [
            1000.0, 1100.0, 950.0, 1050.0, 990.0, 1010.0, 2600.0, 980.0, 1020.0, 1000.0,
        ];
        let s = LevelSeries::of(&level_of(&tps));
        assert!(s.stalls.is_empty(), "{s:?}");
    }
}

/// A level's latency over time: one value per interval of each line, NaN where the
/// interval completed no event (its latency is unknown: drawing it as 0 ms would show
/// a lock that held every session for seconds as the fastest moment of the run).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LatencyLines {
    /// Seconds since the measured start at each interval's end.
    pub time_s: Vec<f64>,
    /// (`p50`, values), (`p95`, …), (`p99`, …), (`max`, …): the stored percentiles
    /// each interval has, and its largest latency.
    pub lines: Vec<(String, Vec<f64>)>,
    /// (start, end) in seconds of the intervals that completed nothing.
    pub gaps: Vec<(f64, f64)>,
}

/// The percentiles [`LatencyLines`] draws when an interval stored them.
const LATENCY_PERCENTILES: [(f64, &str); 3] = [(50.0, "p50"), (95.0, "p95"), (99.0, "p99")];

impl LatencyLines {
    /// The latency lines of `level` (no line for a percentile no interval stored).
    pub fn of(level: &Level) -> LatencyLines {
        let records: Vec<_> = level.intervals.iter().map(|l| &l.record).collect();
        let mut out = LatencyLines {
            time_s: records.iter().map(|r| r.time_s).collect(),
            ..LatencyLines::default()
        };
        let value = |r: &bmk_results::results_file::IntervalRecord, v: Option<f64>| {
            if r.events == 0 {
                f64::NAN
            } else {
                v.unwrap_or(f64::NAN)
            }
        };
        for (pct, name) in LATENCY_PERCENTILES {
            let line: Vec<f64> = records
                .iter()
                .map(|r| {
                    let stored = r
                        .latency
                        .percentiles
                        .iter()
                        .find(|p| (p.percentile - pct).abs() < 1e-9)
                        .map(|p| p.ms);
                    value(r, stored)
                })
                .collect();
            if line.iter().any(|v| v.is_finite()) {
                out.lines.push((name.to_string(), line));
            }
        }
        let max: Vec<f64> = records
            .iter()
            .map(|r| value(r, Some(r.latency.max_ms)))
            .collect();
        if max.iter().any(|v| v.is_finite() && *v > 0.0) {
            out.lines.push(("max".to_string(), max));
        }
        out.gaps = records
            .iter()
            .filter(|r| r.events == 0)
            .map(|r| (r.time_s - r.interval_s, r.time_s))
            .collect();
        out
    }
}

/// A level's latency distribution as (percentile, ms) points from its final histogram
/// (ns values), spread over the nines (0 %, 10 %, … 90 %, … 99 %, … 99.9 % …) as far as
/// its event count resolves: with n events the highest percentile that tells something
/// is 100·(1 − 1/n), drawn as the largest latency. Empty for an empty histogram.
pub fn latency_spectrum(hist: &hdrhistogram::Histogram<u64>) -> Vec<(f64, f64)> {
    let n = hist.len();
    if n == 0 {
        return Vec::new();
    }
    let ms = |ns: u64| hist.median_equivalent(ns) as f64 / 1e6;
    let last_nines = (n as f64)
        .log10()
        .min(-(1.0 - MAX_NINES_PCT / 100.0).log10());
    let mut points = Vec::new();
    // Ten points per nine.
    let mut tenths = 0;
    while (tenths as f64) / 10.0 < last_nines {
        let pct = nines_percentile(tenths as f64 / 10.0);
        points.push((pct, ms(hist.value_at_quantile(pct / 100.0))));
        tenths += 1;
    }
    points.push((nines_percentile(last_nines), ms(hist.max())));
    points
}
