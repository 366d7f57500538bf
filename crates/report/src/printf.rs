//! C `printf` number conversions, as sysbench formats its reports.
//!
//! sysbench writes its formats the C way (`%4.2f`, `%-6llu`, `%.0f`). Rust's `{:W.P}`
//! formats a finite `f64` exactly like glibc's `%W.Pf` (shortest-exact decimal, ties to
//! even, right-aligned in at least `W` columns), so these helpers only pin down the
//! cases where the two differ: NaN and infinities (a rate over an empty interval) print
//! as `0`, and a negative zero prints without its sign. Nothing here knows about
//! reports; the format modules build their lines from these pieces.

use std::fmt::Display;

/// A value safe to print: non-finite values and negative zero become `0.0`.
fn sane(value: f64) -> f64 {
    if value.is_finite() && value != 0.0 {
        value
    } else {
        0.0
    }
}

/// `%W.Pf`: at least `width` columns, right-aligned, `precision` decimals.
pub fn fixed(value: f64, width: usize, precision: usize) -> String {
    format!("{:>width$.precision$}", sane(value))
}

/// `%.Pf`: `precision` decimals, no padding.
pub fn decimals(value: f64, precision: usize) -> String {
    fixed(value, 0, precision)
}

/// `%-Wu` (or `%-Ws`): left-aligned in at least `width` columns.
pub fn left(value: impl Display, width: usize) -> String {
    format!("{value:<width$}")
}

/// `label` padded with spaces to `column` characters, so the value that follows starts
/// at that column (at least one space is kept after a label that is too long).
pub fn label(label: &str, column: usize) -> String {
    if label.len() < column {
        format!("{label:<column$}")
    } else {
        format!("{label} ")
    }
}

/// `label` followed by `value` right-aligned so the line ends at `end` columns — the
/// `"label: %Nf"` pattern where `N` is chosen so all values share their last column.
/// A value too wide for the space overflows to the right, as printf does.
pub fn right_aligned(label: &str, value: &str, end: usize) -> String {
    let width = end.saturating_sub(label.len()).max(value.len() + 1);
    format!("{label}{value:>width$}")
}

/// A percentile as written in labels: `95`, `99.9`, `100`.
pub fn percentile_label(percentile: f64) -> String {
    if percentile.fract() == 0.0 {
        format!("{}", percentile as u64)
    } else {
        format!("{percentile}")
    }
}

/// How many decimals the time in `[ Ns ]` needs for a report interval of `interval`
/// seconds: 0 for whole seconds, else the fewest (at most 3) that show it exactly —
/// `0.25` → 2 (`[ 0.25s ]`, `[ 0.50s ]`), `1.5` → 1 (`[ 1.5s ]`, `[ 3.0s ]`).
pub fn time_decimals(interval: f64) -> usize {
    if !interval.is_finite() || interval <= 0.0 {
        return 0;
    }
    (0..=3)
        .find(|&d| {
            let scaled = interval * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(3)
}

/// The `[ Ns ] ` prefix of intermediate lines and checkpoint reports (with its trailing
/// space); `time_decimals` comes from [`time_decimals`].
pub fn time_prefix(time: f64, time_decimals: usize) -> String {
    format!("[ {}s ] ", decimals(time, time_decimals))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_matches_c_printf() {
        assert_eq!(fixed(0.0, 4, 2), "0.00");
        assert_eq!(fixed(3.5, 8, 2), "    3.50");
        assert_eq!(fixed(4261.82, 8, 2), " 4261.82");
        assert_eq!(fixed(2.5, 0, 0), "2"); // ties to even, like glibc
        assert_eq!(fixed(0.125, 0, 2), "0.12");
        assert_eq!(fixed(f64::NAN, 4, 2), "0.00");
        assert_eq!(fixed(-0.0, 4, 2), "0.00");
        assert_eq!(fixed(123456.0, 4, 2), "123456.00");
    }

    #[test]
    fn left_and_label() {
        assert_eq!(left(0, 6), "0     ");
        assert_eq!(left(1595787, 6), "1595787");
        assert_eq!(label("ab:", 6), "ab:   ");
        assert_eq!(label("abcdef:", 6), "abcdef: ");
        assert_eq!(right_aligned("  x:", "1.00", 10), "  x:  1.00");
        assert_eq!(right_aligned("  x:", "12345.00", 10), "  x: 12345.00");
    }

    #[test]
    fn percentile_labels() {
        assert_eq!(percentile_label(95.0), "95");
        assert_eq!(percentile_label(99.9), "99.9");
        assert_eq!(percentile_label(100.0), "100");
    }

    #[test]
    fn decimals_for_intervals() {
        assert_eq!(time_decimals(1.0), 0);
        assert_eq!(time_decimals(10.0), 0);
        assert_eq!(time_decimals(0.5), 1);
        assert_eq!(time_decimals(1.5), 1);
        assert_eq!(time_decimals(0.25), 2);
        assert_eq!(time_decimals(0.1), 1);
        assert_eq!(time_decimals(0.125), 3);
        assert_eq!(time_decimals(1.0 / 3.0), 3);
        assert_eq!(time_decimals(0.0), 0);
    }
}
