//! `sysbench.histogram.new(size, min, max)`: a script's own histogram of values with
//! `size` log-scale buckets between `min` and `max` (linear when `min` is not
//! positive), with `:update(value)` and `:print()`.
//!
//! A histogram belongs to the Lua state that created it.

use mlua::{UserData, UserDataMethods};

/// A user histogram.
pub(crate) struct UserHistogram {
    min: f64,
    max: f64,
    log: bool,
    counts: Vec<u64>,
}

impl UserHistogram {
    pub(crate) fn new(size: usize, min: f64, max: f64) -> Result<UserHistogram, String> {
        if size == 0 {
            return Err("histogram size must be at least 1".into());
        }
        if !(min.is_finite() && max.is_finite()) || max <= min {
            return Err(format!("invalid histogram range [{min}, {max}]"));
        }
        Ok(UserHistogram {
            min,
            max,
            log: min > 0.0,
            counts: vec![0; size],
        })
    }

    fn steps(&self) -> f64 {
        (self.counts.len().max(2) - 1) as f64
    }

    fn index(&self, v: f64) -> usize {
        let n = self.counts.len();
        if v.is_nan() || v <= self.min {
            return 0;
        }
        if v >= self.max {
            return n - 1;
        }
        let pos = if self.log {
            (v / self.min).ln() / (self.max / self.min).ln()
        } else {
            (v - self.min) / (self.max - self.min)
        };
        ((pos * self.steps()).floor() as usize).min(n - 1)
    }

    /// Lower bound of bucket `i`.
    fn value(&self, i: usize) -> f64 {
        let pos = i as f64 / self.steps();
        if self.log {
            self.min * (self.max / self.min).powf(pos)
        } else {
            self.min + (self.max - self.min) * pos
        }
    }

    pub(crate) fn update(&mut self, v: f64) {
        let i = self.index(v);
        self.counts[i] += 1;
    }

    /// The histogram drawn as text: non-empty buckets only, bars scaled to 40 columns.
    pub(crate) fn render(&self) -> String {
        let mut out =
            String::from("       value  ------------- distribution ------------- count\n");
        let peak = self.counts.iter().copied().max().unwrap_or(0);
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let stars = ((c as f64 * 40.0 / peak as f64).round() as usize).clamp(1, 40);
            out.push_str(&format!(
                "{:>12.3} |{:<40} {}\n",
                self.value(i),
                "*".repeat(stars),
                c
            ));
        }
        out
    }
}

impl UserData for UserHistogram {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method_mut("update", |_, h, v: f64| {
            h.update(v);
            Ok(())
        });
        methods.add_method("print", |_, h, ()| {
            crate::report::emit(&h.render());
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_buckets_cover_the_range() {
        let mut h = UserHistogram::new(10, 1.0, 1000.0).unwrap();
        h.update(0.5);
        h.update(1.0);
        h.update(31.0);
        h.update(5000.0);
        assert_eq!(h.counts[0], 2);
        assert_eq!(h.counts[9], 1);
        assert_eq!(h.counts.iter().sum::<u64>(), 4);
        let text = h.render();
        assert!(text.lines().count() == 4, "{text}");
        assert!(text.contains("       1.000 |****************************************"));
    }
}
