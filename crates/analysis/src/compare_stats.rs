//! The statistics of `bmk compare`, apart from its rendering: given the samples of A
//! and of another side at one users count, how much faster or slower the side is, how
//! sure that is, and the plain sentence that says so. Pure functions of numbers.
//!
//! Samples are the throughputs of a level's repeats. With fewer than two repeats a
//! side, each repeat's 1-second throughputs are cut into [`BATCHES`] batches and the
//! batch means are the samples (as latte does for correlated samples); this
//! understates run-to-run variation, which `bmk compare` warns about. The tests
//! themselves are in [`crate::stats`].

use serde::Serialize;

use crate::stats::{self, ALPHA, MIN_MANN_WHITNEY};

/// Batches of 1-second throughput used when a side has a single run.
pub const BATCHES: usize = 10;

/// One side's samples at one users count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    /// Throughput of each repeat.
    pub tps: Vec<f64>,
    /// 95th percentile latency of each repeat, ms.
    pub p95_ms: Vec<f64>,
    /// 99th percentile latency of each repeat, ms.
    pub p99_ms: Vec<f64>,
    /// Each repeat's throughput per report interval.
    pub series: Vec<Vec<f64>>,
}

/// What one side's comparison with A found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Estimated change of throughput against A (0.1 = 10 % faster).
    pub change: f64,
    /// Its 95 % confidence interval.
    pub ci: (f64, f64),
    /// The p-value that decides.
    pub p: f64,
    /// Which test on which samples (`Welch t on log repeats`).
    pub test: String,
    /// Whether `p` is below [`ALPHA`].
    pub significant: bool,
}

/// Compares `b` with `a`; `None` when either side has too few positive samples.
pub fn judge(a: &Samples, b: &Samples) -> Option<Outcome> {
    let (samples_a, samples_b, kind) = if a.tps.len() >= 2 && b.tps.len() >= 2 {
        (a.tps.clone(), b.tps.clone(), "repeats")
    } else {
        let batch = |v: &[Vec<f64>]| {
            v.iter()
                .flat_map(|s| stats::batch_means(s, BATCHES))
                .collect::<Vec<f64>>()
        };
        (batch(&a.series), batch(&b.series), "batch means")
    };
    let logs = |v: &[f64]| {
        v.iter()
            .filter(|x| **x > 0.0)
            .map(|x| x.ln())
            .collect::<Vec<f64>>()
    };
    let w = stats::welch(&logs(&samples_a), &logs(&samples_b))?;
    let (p, test) = if samples_a.len().min(samples_b.len()) >= MIN_MANN_WHITNEY {
        match stats::mann_whitney(&samples_a, &samples_b) {
            Some(mw) => (mw.p, format!("Mann-Whitney U on {kind}")),
            None => (w.p, format!("Welch t on log {kind}")),
        }
    } else {
        (w.p, format!("Welch t on log {kind}"))
    };
    Some(Outcome {
        change: w.diff.exp() - 1.0,
        ci: (w.ci.0.exp() - 1.0, w.ci.1.exp() - 1.0),
        p,
        test,
        significant: p < ALPHA,
    })
}

/// The verdict sentence and its class (`faster`, `slower`, `same`) for `side` against
/// `base` at `users`.
pub fn sentence(
    side: &str,
    base: &str,
    users: u32,
    outcome: Option<&Outcome>,
) -> (String, &'static str) {
    let Some(o) = outcome else {
        return (
            format!(
                "{side} vs {base} at {}: not enough samples to compare",
                bmk_results::load::users(users)
            ),
            "same",
        );
    };
    let ci = format!("95 % CI [{:.1} %, {:.1} %]", o.ci.0 * 100.0, o.ci.1 * 100.0);
    if o.significant && o.change > 0.0 {
        (
            format!(
                "{side} is {:.1} % faster than {base} at {}, {ci}",
                o.change * 100.0,
                bmk_results::load::users(users)
            ),
            "faster",
        )
    } else if o.significant && o.change < 0.0 {
        (
            format!(
                "{side} is {:.1} % slower than {base} at {}, {ci}",
                -o.change * 100.0,
                bmk_results::load::users(users)
            ),
            "slower",
        )
    } else {
        (
            format!(
                "{side} vs {base} at {}: no significant difference ({:+.1} %, {ci}, p = {:.2})",
                bmk_results::load::users(users),
                o.change * 100.0,
                o.p
            ),
            "same",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeats(tps: &[f64]) -> Samples {
        Samples {
            tps: tps.to_vec(),
            p95_ms: vec![1.0; tps.len()],
            p99_ms: vec![1.0; tps.len()],
            series: tps.iter().map(|t| vec![*t; 10]).collect(),
        }
    }

    #[test]
    fn a_clear_gain_is_significant_and_said_so() {
        let a = repeats(&[100.0, 101.0, 99.0, 100.5]);
        let b = repeats(&[110.0, 111.0, 109.0, 110.5]);
        let o = judge(&a, &b).unwrap();
        assert!((o.change - 0.10).abs() < 0.005, "{o:?}");
        assert!(o.significant && o.ci.0 > 0.08 && o.ci.1 < 0.12, "{o:?}");
        assert_eq!(o.test, "Welch t on log repeats");
        let (text, class) = sentence("B", "A", 8, Some(&o));
        assert_eq!(class, "faster");
        assert!(
            text.starts_with("B is 10.0 % faster than A at 8 users, 95 % CI ["),
            "{text}"
        );
    }

    #[test]
    fn overlapping_repeats_are_no_significant_difference() {
        let a = repeats(&[100.0, 104.0, 96.0, 101.0, 99.0]);
        let b = repeats(&[101.0, 97.0, 103.0, 99.5, 100.0]);
        let o = judge(&a, &b).unwrap();
        assert!(!o.significant, "{o:?}");
        assert_eq!(o.test, "Mann-Whitney U on repeats");
        assert_eq!(sentence("C", "A", 4, Some(&o)).1, "same");
    }

    #[test]
    fn single_runs_use_batch_means_of_their_intervals() {
        let noisy = |base: f64| Samples {
            tps: vec![base],
            p95_ms: vec![1.0],
            p99_ms: vec![1.0],
            series: vec![(0..60)
                .map(|i| base + [3.0, -2.0, 1.0, -4.0, 2.0][i % 5])
                .collect()],
        };
        let o = judge(&noisy(100.0), &noisy(80.0)).unwrap();
        assert!(o.test.ends_with("batch means"), "{o:?}");
        assert!(o.significant && (o.change + 0.2).abs() < 0.01, "{o:?}");
        assert_eq!(sentence("B", "A", 1, Some(&o)).1, "slower");
    }

    #[test]
    fn too_few_samples_give_no_verdict() {
        let one = Samples {
            tps: vec![100.0],
            p95_ms: vec![1.0],
            p99_ms: vec![1.0],
            series: vec![vec![100.0]],
        };
        assert_eq!(judge(&one, &one), None);
        let (text, class) = sentence("B", "A", 2, None);
        assert_eq!(class, "same");
        assert!(text.contains("not enough samples"));
    }
}
