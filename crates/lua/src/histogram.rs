//! `sysbench.histogram.new(size, min, max)`: a script's own histogram of values with
//! `size` log-scale buckets centred from `min` to `max` (the latency histogram's
//! scale, [`bmk_report::histogram::LogScale`]), with `:update(value)` and `:print()`.
//! A value counts in the bucket with the nearest centre, values outside the range in
//! the first or last bucket.
//!
//! A histogram belongs to the Lua state that created it.

use bmk_report::histogram::{bar, LogScale};
use mlua::{UserData, UserDataMethods};

/// A user histogram.
pub(crate) struct UserHistogram {
    scale: LogScale,
    counts: Vec<u64>,
}

impl UserHistogram {
    pub(crate) fn new(size: usize, min: f64, max: f64) -> Result<UserHistogram, String> {
        if size == 0 {
            return Err("histogram size must be at least 1".into());
        }
        // A log scale needs a positive range.
        if !(min.is_finite() && max.is_finite()) || min <= 0.0 || max <= min {
            return Err(format!("invalid histogram range [{min}, {max}]"));
        }
        Ok(UserHistogram {
            scale: LogScale::new(size, min, max),
            counts: vec![0; size],
        })
    }

    pub(crate) fn update(&mut self, v: f64) {
        let i = self.scale.index(v);
        self.counts[i] += 1;
    }

    /// The histogram drawn as text: non-empty buckets only, each as its centre, bars
    /// scaled to 40 columns.
    pub(crate) fn render(&self) -> String {
        let peak = self.counts.iter().copied().max().unwrap_or(0);
        if peak == 0 {
            return String::new();
        }
        let mut out =
            String::from("       value  ------------- distribution ------------- count\n");
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            out.push_str(&format!(
                "{:>12.3} |{} {}\n",
                self.scale.value(i),
                bar(c, peak),
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
    fn values_count_at_the_nearest_centre() {
        let mut h = UserHistogram::new(1000, 1.0, 10.0).unwrap();
        for v in [1.0, 2.0, 0.0, 10.0, 100.0, 5.001] {
            h.update(v);
        }
        assert_eq!(h.counts.iter().sum::<u64>(), 6);
        let text = h.render();
        let rows: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(rows.len(), 4, "{text}");
        assert!(rows[0].starts_with("       1.000 |****"), "{text}");
        assert!(rows[1].starts_with("       2.001 |"), "{text}");
        assert!(rows[2].starts_with("       4.997 |"), "{text}");
        assert!(rows[3].starts_with("      10.000 |"), "{text}");
        assert!(rows[3].ends_with(" 2"), "{text}");
    }

    #[test]
    fn an_empty_histogram_prints_nothing() {
        let h = UserHistogram::new(10, 1.0, 1000.0).unwrap();
        assert_eq!(h.render(), "");
        assert!(UserHistogram::new(10, 0.0, 1.0).is_err());
    }
}
