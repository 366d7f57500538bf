//! A level's time series at report-interval resolution (TPS, QPS, p95 latency) and its
//! stalls: intervals whose throughput falls far below the level's median, the
//! "furious flushing" notches that a level's average hides.

use crate::load::Level;

/// An interval is a stall when its TPS is below this fraction of the level's median.
pub const STALL_FRACTION: f64 = 0.5;

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
    /// The median TPS the stalls are measured against.
    pub median_tps: f64,
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
        // The last interval of a level may be a short remainder; it is not a stall.
        let nominal = level
            .intervals
            .iter()
            .map(|l| l.record.interval_s)
            .fold(0.0, f64::max);
        s.stalls = level
            .intervals
            .iter()
            .enumerate()
            .filter(|(_, l)| l.record.interval_s >= 0.9 * nominal)
            .filter(|(i, _)| s.median_tps > 0.0 && s.tps[*i] < STALL_FRACTION * s.median_tps)
            .map(|(i, _)| i)
            .collect();
        s
    }
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
}
