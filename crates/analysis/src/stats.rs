//! The statistics behind `bmk compare`: is B faster than A?
//!
//! Throughput ratios are judged on the log scale (a 10 % gain and a 10 % loss are
//! symmetric there, and run-to-run noise is closer to normal): Welch's t test on the
//! logs of the samples gives the p-value and the 95 % confidence interval of the mean
//! log ratio, reported back as a percentage change. With five or more samples a side
//! the Mann-Whitney U test (no normality assumed) decides significance instead, as Go's
//! benchstat does; with fewer its smallest possible p-value is too large to be useful.
//! Distribution functions are `statrs`'s; the exact U distribution is counted here
//! because statrs has none.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Fewest samples a side for the Mann-Whitney U test to decide.
pub const MIN_MANN_WHITNEY: usize = 5;
/// Significance level.
pub const ALPHA: f64 = 0.05;

/// Welch's t test of two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// Mean of B minus mean of A.
    pub diff: f64,
    /// t statistic.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// 95 % confidence interval of `diff`.
    pub ci: (f64, f64),
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample variance (n - 1).
fn variance(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() as f64 - 1.0)
}

/// Mean and sample standard deviation (0 for one value).
pub fn mean_sd(x: &[f64]) -> (f64, f64) {
    if x.is_empty() {
        return (0.0, 0.0);
    }
    let sd = if x.len() > 1 { variance(x).sqrt() } else { 0.0 };
    (mean(x), sd)
}

/// Welch's t test of `b` against `a`; `None` unless both have two or more values.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let diff = mean(b) - mean(a);
    let se = (va + vb).sqrt();
    if se == 0.0 {
        // Identical, noiseless samples: the difference is exact.
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        return Some(Welch {
            diff,
            t: if diff == 0.0 {
                0.0
            } else {
                f64::INFINITY * diff.signum()
            },
            df: na + nb - 2.0,
            p,
            ci: (diff, diff),
        });
    }
    let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let t = diff / se;
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * dist.cdf(-t.abs())).min(1.0);
    let q = dist.inverse_cdf(0.975);
    Some(Welch {
        diff,
        t,
        df,
        p,
        ci: (diff - q * se, diff + q * se),
    })
}

/// The Mann-Whitney U test of two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample (`a`).
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether `p` is exact (no ties, both sides of eight or fewer) or the normal
    /// approximation with tie and continuity corrections.
    pub exact: bool,
}

/// Mid-ranks (1-based) of all values of `a` and `b` together, and the tie groups' sizes.
fn ranks(a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut all: Vec<(f64, usize)> = a.iter().chain(b).copied().zip(0..).collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut r = vec![0.0; all.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let mid = (i + j) as f64 / 2.0 + 1.0;
        for k in i..=j {
            r[all[k].1] = mid;
        }
        if j > i {
            ties.push(j - i + 1);
        }
        i = j + 1;
    }
    (r, ties)
}

/// Number of orderings of `m` + `n` distinct values giving each U from 0 to m·n.
fn u_counts(m: usize, n: usize) -> Vec<f64> {
    // f[i][j] is the count vector for sizes i and j; U grows by j when the largest
    // value belongs to the first sample.
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(vec![1.0]);
        for j in 1..=n {
            let mut v = vec![0.0; i * j + 1];
            for (u, c) in prev[j].iter().enumerate() {
                v[u + j] += c;
            }
            for (u, c) in cur[j - 1].iter().enumerate() {
                v[u] += c;
            }
            cur.push(v);
        }
        prev = cur;
    }
    prev.swap_remove(n)
}

/// The two-sided Mann-Whitney U test; `None` when a side is empty.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (m, n) = (a.len(), b.len());
    let (r, ties) = ranks(a, b);
    let r1: f64 = r[..m].iter().sum();
    let u1 = r1 - (m * (m + 1)) as f64 / 2.0;
    let (mf, nf) = (m as f64, n as f64);
    let big_u = u1.max(mf * nf - u1);
    if ties.is_empty() && m <= 8 && n <= 8 {
        let counts = u_counts(m, n);
        let total: f64 = counts.iter().sum();
        // P(U >= big_u), doubled.
        let tail: f64 = counts[big_u as usize..].iter().sum::<f64>() / total;
        return Some(MannWhitney {
            u: u1,
            p: (2.0 * tail).min(1.0),
            exact: true,
        });
    }
    let nn = mf + nf;
    let tie_term: f64 =
        ties.iter().map(|&t| (t * t * t - t) as f64).sum::<f64>() / (nn * (nn - 1.0));
    let sigma = (mf * nf / 12.0 * ((nn + 1.0) - tie_term)).sqrt();
    let mu = mf * nf / 2.0;
    let p = if sigma == 0.0 {
        1.0
    } else {
        let z = (big_u - mu - 0.5) / sigma;
        let normal = Normal::new(0.0, 1.0).ok()?;
        (2.0 * normal.sf(z)).min(1.0)
    };
    Some(MannWhitney {
        u: u1,
        p,
        exact: false,
    })
}

/// Means of `batches` equal consecutive batches of `values` (a remainder is dropped),
/// for samples that are correlated in time, such as 1-second throughput.
pub fn batch_means(values: &[f64], batches: usize) -> Vec<f64> {
    let size = values.len() / batches.max(1);
    if size == 0 {
        return values.to_vec();
    }
    values.chunks_exact(size).take(batches).map(mean).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u_distribution_counts_every_ordering() {
        let c = u_counts(3, 2);
        assert_eq!(c.iter().sum::<f64>(), 10.0); // C(5,2)
        assert_eq!(c, vec![1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 1.0]);
    }

    #[test]
    fn ranks_share_ties() {
        let (r, ties) = ranks(&[1.0, 2.0], &[2.0, 3.0]);
        assert_eq!(r, vec![1.0, 2.5, 2.5, 4.0]);
        assert_eq!(ties, vec![2]);
    }

    #[test]
    fn batches() {
        assert_eq!(batch_means(&[1.0, 3.0, 5.0, 7.0, 9.0], 2), vec![2.0, 6.0]);
        assert_eq!(batch_means(&[1.0], 10), vec![1.0]);
    }
}
