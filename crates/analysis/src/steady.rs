//! Where a level's warm-up ends: its steady window, found from the level's own
//! throughput per report interval rather than assumed from `--warmup-time`.
//!
//! The truncation point is chosen with MSER-5 (White 1997; Franklin and White 2008):
//! the series is cut into batches of 5 intervals, and the number of leading batches
//! `d` dropped is the one that minimises the marginal standard error of the mean of
//! what is left, `sum((Z_j - mean_d)^2) / (k - d)^2` over the `k - d` remaining batch
//! means `Z_j`. Only the first half of the series may be dropped, so the estimate
//! always rests on at least half of the level. MSER was chosen over a changepoint test
//! because it needs no model of the warm-up's shape (a cache filling, a buffer pool
//! being read in and a connection pool ramping look different), has no tuning
//! constant, is the method simulation practice recommends for truncating an initial
//! transient, and costs one pass. Batching by 5 makes it robust to single noisy
//! intervals. Two additions make its answer fit for a benchmark report (see
//! [`detect`]): dropped batches the steady part could have produced are given back
//! (MSER alone trims noise that merely happens to lie low), and the truncation point
//! is refined from the batch to the interval.
//!
//! MSER alone always returns a point. A level never reached steady state when that
//! point sits at the end of the allowed range (the statistic kept falling as more was
//! dropped: a ramp) or when what is left still trends: an ordinary least-squares line
//! through the remaining batch means (batches, so that the 1-second autocorrelation
//! does not inflate the t statistic) has a slope significant at [`TREND_ALPHA`] and
//! moves the throughput by at least [`TREND_MIN_CHANGE`] of its mean across the
//! window.

use bmk_engine::latency::percentile_ns;
use bmk_results::codec;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use bmk_results::load::Level;

/// Intervals per batch of MSER-5.
pub const BATCH: usize = 5;
/// Fewer full intervals than this and a level is not judged: MSER needs four batches
/// (two of which may be dropped) to compare anything.
pub const MIN_INTERVALS: usize = 4 * BATCH;
/// Significance level of the trend test on the steady window.
pub const TREND_ALPHA: f64 = 0.01;
/// Smallest change across the window (fraction of its mean throughput) that counts as
/// a trend: a significant but tiny drift (a table growing under inserts) is steady
/// enough to measure.
pub const TREND_MIN_CHANGE: f64 = 0.05;

/// What MSER-5 and the trend test found in one series.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// Index of the first kept observation (the warm-up is `0..start`).
    pub start: usize,
    /// Whether the warm-up took all MSER-5 may drop (the first half), every batch of
    /// it unlike the rest.
    pub at_limit: bool,
    /// The trend of the kept part, when it has enough batches to test.
    pub trend: Option<Trend>,
}

/// The least-squares trend of the kept part's batch means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Trend {
    /// The fitted change from the first to the last batch, as a fraction of the mean.
    pub change: f64,
    /// Two-sided p-value of the slope.
    pub p: f64,
}

impl Trend {
    /// Whether the window still rises or falls.
    pub fn significant(&self) -> bool {
        self.p < TREND_ALPHA && self.change.abs() >= TREND_MIN_CHANGE
    }
}

impl Detection {
    /// Whether the series reached a steady state.
    pub fn steady(&self) -> bool {
        !self.at_limit && !self.trend.is_some_and(|t| t.significant())
    }
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// The MSER statistic of `x` with its first `d` values dropped.
fn mser(x: &[f64], d: usize) -> f64 {
    let rest = &x[d..];
    let m = mean(rest);
    let n = rest.len() as f64;
    rest.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n * n)
}

/// The `d` in `range` with the smallest statistic (the first on ties, so a flat series
/// keeps everything).
fn argmin(x: &[f64], range: std::ops::RangeInclusive<usize>) -> usize {
    let first = *range.start();
    let mut best = (first, mser(x, first));
    for d in range {
        let s = mser(x, d);
        // A relative margin, so rounding does not move a flat series' choice.
        if s < best.1 - 1e-12 * best.1.abs() {
            best = (d, s);
        }
    }
    best.0
}

/// Ordinary least squares of `y` on 0, 1, 2...: the slope's two-sided p-value and the
/// fitted change across `y` relative to its mean. `None` below four points or for a
/// zero mean.
fn trend(y: &[f64]) -> Option<Trend> {
    let n = y.len();
    if n < 4 {
        return None;
    }
    let my = mean(y);
    if my.abs() < 1e-12 {
        return None;
    }
    let mx = (n as f64 - 1.0) / 2.0;
    let sxx: f64 = (0..n).map(|i| (i as f64 - mx).powi(2)).sum();
    let sxy: f64 = y
        .iter()
        .enumerate()
        .map(|(i, v)| (i as f64 - mx) * (v - my))
        .sum();
    let slope = sxy / sxx;
    let sse: f64 = y
        .iter()
        .enumerate()
        .map(|(i, v)| (v - my - slope * (i as f64 - mx)).powi(2))
        .sum();
    let df = n as f64 - 2.0;
    let se = (sse / df / sxx).sqrt();
    let p = if se > 0.0 {
        let t = StudentsT::new(0.0, 1.0, df).ok()?;
        2.0 * (1.0 - t.cdf((slope / se).abs()))
    } else if slope.abs() > 0.0 {
        0.0
    } else {
        1.0
    };
    Some(Trend {
        change: slope * (n as f64 - 1.0) / my,
        p,
    })
}

/// A batch mean further than this many standard deviations from the steady mean is
/// one the steady part could not have produced (by chance once in about 16,000
/// batches; even a warm-up a few percent below the steady rate is far beyond it).
pub const BATCH_BAND_SD: f64 = 4.0;
/// The same for one interval, when the truncation point is refined (by chance about
/// once in 370 intervals, and only the 5 intervals of one batch are looked at).
pub const INTERVAL_BAND_SD: f64 = 3.0;

/// Mean and standard deviation (n - 1; 0 for one value).
fn mean_sd(x: &[f64]) -> (f64, f64) {
    let m = mean(x);
    if x.len() < 2 {
        return (m, 0.0);
    }
    let var = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() as f64 - 1.0);
    (m, var.sqrt())
}

/// The standard deviation of the noise of `x` from its successive differences
/// (1.4826 × their median absolute value / √2): a level shift or a slow ramp moves
/// few differences, so the warm-up hardly biases it.
fn noise_sd(x: &[f64]) -> f64 {
    let mut d: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    if d.is_empty() {
        return 0.0;
    }
    d.sort_by(f64::total_cmp);
    let n = d.len();
    let median = if n % 2 == 1 {
        d[n / 2]
    } else {
        (d[n / 2 - 1] + d[n / 2]) / 2.0
    };
    1.4826 * median / std::f64::consts::SQRT_2
}

/// Whether `v` lies more than `band` × `sd` from `m`.
fn outside(v: f64, m: f64, sd: f64, band: f64) -> bool {
    (v - m).abs() > band * sd + 1e-9 * m.abs()
}

/// MSER-5 on `series` (one value per equal-length interval), refined to the interval,
/// with the trend test on what is left; `None` below [`MIN_INTERVALS`] values.
///
/// MSER truncates whenever that lowers the standard error of what is left, so it
/// also drops a dip or a noisy stretch that merely happens to lie in the first half
/// (and, as the batches left get few, now and then all it may). Its choice is taken
/// as the bound of the warm-up, and the warm-up as the leading run of batches, within
/// that bound, that the steady part could not have produced: each more than
/// [`BATCH_BAND_SD`] standard deviations from the kept batches' mean. The point is
/// then refined from the batch to the interval: the window starts after the last
/// interval of the last warm-up batch that lies more than [`INTERVAL_BAND_SD`]
/// standard deviations from the steady intervals' mean, on the side the batch lies
/// (after the whole batch when none does). The standard deviations are not
/// the kept part's own (MSER picked the part whose spread happens to be smallest):
/// they are the larger of the second half's (never dropped) and the noise measured
/// from successive differences of the whole series.
pub fn detect(series: &[f64]) -> Option<Detection> {
    if series.len() < MIN_INTERVALS {
        return None;
    }
    let batches: Vec<f64> = series.chunks_exact(BATCH).map(mean).collect();
    let d_max = batches.len() / 2;
    let noise = noise_sd(series);
    let sd_interval = mean_sd(&series[series.len() / 2..]).1.max(noise);
    let sd_batch = mean_sd(&batches[batches.len() - d_max..])
        .1
        .max(noise / (BATCH as f64).sqrt());
    let bound = argmin(&batches, 0..=d_max);
    let kept_mean = mean(&batches[bound..]);
    let d = (0..bound)
        .find(|&j| !outside(batches[j], kept_mean, sd_batch, BATCH_BAND_SD))
        .unwrap_or(bound);
    let start = if d == 0 {
        0
    } else {
        let m = mean(&series[d * BATCH..]);
        // Only on the warm-up's side: a cold cache makes the last warm-up batch low,
        // and a high interval in it is noise, not warm-up.
        let side = (batches[d - 1] - m).signum();
        ((d - 1) * BATCH..d * BATCH)
            .rev()
            .find(|&i| {
                (series[i] - m) * side > 0.0 && outside(series[i], m, sd_interval, INTERVAL_BAND_SD)
            })
            .map_or(d * BATCH, |i| i + 1)
    };
    let kept: Vec<f64> = series[start..].chunks_exact(BATCH).map(mean).collect();
    Some(Detection {
        start,
        at_limit: d == d_max,
        trend: trend(&kept),
    })
}

/// How a level's steady state was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadyVerdict {
    /// A steady window was found.
    Steady,
    /// The level never settled: the warm-up reached the end of the allowed range, or
    /// the window still trends.
    NeverSteady,
    /// Too few intervals to judge (or a level that did not complete).
    NotJudged,
}

/// Throughput and latency over a span of a level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    /// Events per second.
    pub tps: f64,
    /// Queries per second.
    pub qps: f64,
    /// 95th percentile latency, ms (0 when the intervals stored no histogram).
    pub p95_ms: f64,
    /// 99th percentile latency, ms (0 when the intervals stored no histogram).
    pub p99_ms: f64,
}

/// The steady window of a level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window {
    /// Seconds since the measured start where the window starts.
    pub start_s: f64,
    /// ... and where it ends (the level's end).
    pub end_s: f64,
    /// Wall clock of its start, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// Wall clock of its end.
    pub end_unix_ns: u64,
    /// Intervals dropped as warm-up.
    pub warmup_intervals: usize,
    /// Intervals in the window.
    pub intervals: usize,
    /// The window's throughput and latency.
    pub figures: Figures,
}

/// One level's steady state, as `steady.json` and the report show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelSteady {
    /// `level-0003`.
    pub level: String,
    /// Users.
    pub users: u32,
    /// Repeat.
    pub repeat: u32,
    /// The verdict.
    pub verdict: SteadyVerdict,
    /// Why, in words.
    pub reason: String,
    /// The window MSER-5 chose (also for a level that never settled: where it would
    /// start), absent when not judged.
    pub window: Option<Window>,
    /// The trend of the window's batch means.
    pub trend: Option<Trend>,
    /// The whole level's figures (from its final results).
    pub whole: Option<Figures>,
}

impl LevelSteady {
    /// The window, only when the level reached steady state.
    pub fn steady_window(&self) -> Option<&Window> {
        match self.verdict {
            SteadyVerdict::Steady => self.window.as_ref(),
            _ => None,
        }
    }
}

/// Throughput and latency of `level`'s intervals `from..`: events over seconds, and
/// the percentiles of their histograms merged (`None` when an interval's histogram
/// cannot be read).
pub fn window_figures(level: &Level, from: usize) -> Figures {
    let lines = &level.intervals[from.min(level.intervals.len())..];
    let secs: f64 = lines.iter().map(|l| l.record.interval_s).sum();
    let events: u64 = lines.iter().map(|l| l.record.events).sum();
    let queries: u64 = lines
        .iter()
        .map(|l| l.record.reads + l.record.writes + l.record.other)
        .sum();
    let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let (p95_ms, p99_ms) = if lines.iter().all(|l| !l.histogram.is_empty()) {
        match codec::merge(lines.iter().map(|l| l.histogram.as_str())) {
            Ok(h) if !h.is_empty() => {
                let pct = |p: f64| percentile_ns(&h, p, h.min(), h.max()) as f64 / 1e6;
                (pct(95.0), pct(99.0))
            }
            _ => (0.0, 0.0),
        }
    } else {
        (0.0, 0.0)
    };
    Figures {
        tps: per_s(events),
        qps: per_s(queries),
        p95_ms,
        p99_ms,
    }
}

/// The steady state of `level`.
pub fn of_level(level: &Level) -> LevelSteady {
    let whole = level.result.as_ref().map(|r| {
        let f = &r.final_stats;
        let pct = |p: f64| f.latency.percentile_ms(p).unwrap_or(0.0);
        Figures {
            tps: f.events_per_sec,
            qps: f.per_sec(f.counters.queries()),
            p95_ms: pct(95.0),
            p99_ms: pct(99.0),
        }
    });
    let mut out = LevelSteady {
        level: level.name(),
        users: level.info.users,
        repeat: level.info.repeat,
        verdict: SteadyVerdict::NotJudged,
        reason: String::new(),
        window: None,
        trend: None,
        whole,
    };
    if level.info.status != "completed" || level.result.is_none() {
        out.reason = format!("the level did not complete ({})", level.info.status);
        return out;
    }
    // The series is the full-length intervals; a short last one (a remainder) would
    // weigh as much as a full one in the statistic, so it only joins the window.
    let nominal = level
        .intervals
        .iter()
        .map(|l| l.record.interval_s)
        .fold(0.0, f64::max);
    let full = level
        .intervals
        .iter()
        .take_while(|l| l.record.interval_s >= 0.9 * nominal)
        .count();
    let series: Vec<f64> = level.intervals[..full]
        .iter()
        .map(|l| l.record.tps)
        .collect();
    let Some(d) = detect(&series) else {
        out.reason = format!(
            "{} full interval(s), fewer than the {MIN_INTERVALS} needed to find a steady state",
            series.len()
        );
        return out;
    };
    let last = level.intervals.last().expect("detect needs intervals");
    // The window starts where the interval before it ended (the measured start when
    // nothing was dropped).
    let (start_s, start_unix_ns) = match d.start.checked_sub(1) {
        Some(i) => (
            level.intervals[i].record.time_s,
            level.intervals[i].end_unix_ns,
        ),
        None => (0.0, level.info.start_unix_ns),
    };
    let window = Window {
        start_s,
        end_s: last.record.time_s,
        start_unix_ns,
        end_unix_ns: last.end_unix_ns,
        warmup_intervals: d.start,
        intervals: level.intervals.len() - d.start,
        figures: window_figures(level, d.start),
    };
    out.trend = d.trend;
    out.verdict = if d.steady() {
        SteadyVerdict::Steady
    } else {
        SteadyVerdict::NeverSteady
    };
    out.reason = if d.at_limit {
        format!(
            "the warm-up reached the end of the first half ({:.0} s of {:.0} s): throughput kept changing",
            start_s, window.end_s
        )
    } else if let Some(t) = d.trend.filter(|t| t.significant()) {
        format!(
            "throughput still {} by {:.1} % across the window from {:.0} s (trend p = {:.4})",
            if t.change > 0.0 { "rises" } else { "falls" },
            t.change.abs() * 100.0,
            start_s,
            t.p
        )
    } else if d.start == 0 {
        "steady from the start".to_string()
    } else {
        format!(
            "warm-up of {} interval(s), steady from {:.0} s",
            d.start, start_s
        )
    };
    out.window = Some(window);
    out
}

/// The file `bmk report` writes into a results directory with each level's steady
/// state (window, figures, verdict).
pub const STEADY_FILE: &str = "steady.json";

/// Writes `steady.json` into the results directory `dir`: one object per level.
pub fn write_steady(dir: &std::path::Path, levels: &[LevelSteady]) -> Result<(), crate::Error> {
    Ok(bmk_results::atomic_file::replace_json(
        &dir.join(STEADY_FILE),
        &levels,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic normal noise with standard deviation `sd` (splitmix64 and the
    /// Box-Muller transform).
    fn noise(seed: u64, n: usize, sd: f64) -> Vec<f64> {
        let mut x = seed;
        let mut uniform = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let (u, v) = (uniform(), uniform());
                (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos() * sd
            })
            .collect()
    }

    /// `n` intervals around 1000 TPS with `sd` noise, the first `warmup` of them given
    /// by `shape(i)` (a fraction of the steady throughput) instead.
    fn series_sd(
        seed: u64,
        n: usize,
        sd: f64,
        warmup: usize,
        shape: impl Fn(usize) -> f64,
    ) -> Vec<f64> {
        noise(seed, n, sd)
            .into_iter()
            .enumerate()
            .map(|(i, e)| if i < warmup { 1000.0 * shape(i) } else { 1000.0 } + e)
            .collect()
    }

    /// ... with 2 % noise.
    fn series(seed: u64, n: usize, warmup: usize, shape: impl Fn(usize) -> f64) -> Vec<f64> {
        series_sd(seed, n, 20.0, warmup, shape)
    }

    const SEEDS: std::ops::Range<u64> = 1..21;

    #[test]
    fn a_step_warm_up_is_found_to_the_interval() {
        for warmup in [1, 3, 7, 12, 23] {
            for seed in SEEDS {
                let s = series(seed, 60, warmup, |_| 0.6);
                let d = detect(&s).unwrap();
                assert!(
                    d.start.abs_diff(warmup) <= 1 && d.steady(),
                    "warm-up {warmup}, seed {seed}: {d:?}"
                );
            }
        }
    }

    #[test]
    fn a_warm_up_into_the_last_batch_of_the_first_half_is_not_steady() {
        // 29 of 60 intervals: found, but it reaches as far as MSER-5 may look, so the
        // level may never have settled.
        for seed in SEEDS {
            let d = detect(&series(seed, 60, 29, |_| 0.6)).unwrap();
            assert!(
                d.start.abs_diff(29) <= 1 && d.at_limit && !d.steady(),
                "seed {seed}: {d:?}"
            );
        }
    }

    #[test]
    fn a_ramp_to_the_plateau_is_found_to_the_interval() {
        // A cache filling: from 30 % of the steady throughput to all of it, linearly,
        // with 1 % noise, so that the ramp's last steps (3.5 % or more) stand out of
        // the noise; a gentler ramp's last intervals are indistinguishable from noise.
        for warmup in [8, 15, 20] {
            for seed in SEEDS {
                let s = series_sd(seed, 90, 10.0, warmup, |i| {
                    0.3 + 0.7 * i as f64 / warmup as f64
                });
                let d = detect(&s).unwrap();
                assert!(
                    d.start.abs_diff(warmup) <= 1 && d.steady(),
                    "warm-up {warmup}, seed {seed}: {d:?}"
                );
            }
        }
    }

    #[test]
    fn a_level_without_warm_up_keeps_everything() {
        for n in [20, 30, 60, 300] {
            for seed in SEEDS {
                let d = detect(&series(seed, n, 0, |_| 1.0)).unwrap();
                assert!(d.start <= 1 && d.steady(), "n {n}, seed {seed}: {d:?}");
            }
        }
        let flat = vec![500.0; 40];
        assert_eq!(
            detect(&flat),
            Some(Detection {
                start: 0,
                at_limit: false,
                trend: Some(Trend {
                    change: 0.0,
                    p: 1.0
                })
            })
        );
    }

    #[test]
    fn a_linear_ramp_never_reaches_steady_state() {
        for seed in SEEDS {
            let s: Vec<f64> = noise(seed, 60, 20.0)
                .iter()
                .enumerate()
                .map(|(i, e)| 200.0 + 15.0 * i as f64 + e)
                .collect();
            let d = detect(&s).unwrap();
            // What is left after the warm-up MSER-5 allows still climbs.
            assert!(
                !d.steady() && d.trend.is_some_and(|t| t.significant()),
                "seed {seed}: {d:?}"
            );
        }
    }

    #[test]
    fn a_series_still_climbing_never_reaches_steady_state() {
        // Saturating growth whose time constant is as long as the level: still rising
        // steeply at the end, though far less than at the start.
        for seed in SEEDS {
            let s: Vec<f64> = noise(seed, 60, 10.0)
                .iter()
                .enumerate()
                .map(|(i, e)| 1000.0 * (1.0 - (-(i as f64) / 60.0).exp()) + 200.0 + e)
                .collect();
            let d = detect(&s).unwrap();
            assert!(!d.steady(), "seed {seed}: {d:?}");
        }
    }

    #[test]
    fn a_slow_small_drift_is_steady_enough() {
        // 2 % over the level: significant with little noise, but below the 5 % that
        // counts as a trend.
        let s: Vec<f64> = noise(3, 120, 2.0)
            .iter()
            .enumerate()
            .map(|(i, e)| 1000.0 - 20.0 * i as f64 / 120.0 + e)
            .collect();
        let d = detect(&s).unwrap();
        let t = d.trend.unwrap();
        assert!(
            t.p < TREND_ALPHA && t.change.abs() < TREND_MIN_CHANGE,
            "{t:?}"
        );
        assert!(d.steady(), "{d:?}");
    }

    #[test]
    fn too_short_a_series_is_not_judged() {
        assert_eq!(detect(&[1.0; MIN_INTERVALS - 1]), None);
        assert!(detect(&[1.0; MIN_INTERVALS]).is_some());
    }
}
