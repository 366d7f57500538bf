//! How many rows an event of a sysbench OLTP workload reads when the tables hold every
//! id its options claim: the yardstick the short-reads check holds the drivers' row
//! counts against.
//!
//! The drivers count the rows each read statement returned, per level, not per
//! statement kind; per event, though, the OLTP workloads run a fixed mix set by their
//! options, so the rows a complete data set returns per event follow from the options
//! alone: a point select one row, a `SUM` range one (the sum), a simple, ordered or
//! distinct range `--range-size` rows (the `c` values `prepare` writes are random, so a
//! range's distinct values are all of them), less what a range starting within
//! `--range-size` of the last id loses past the end.

use std::collections::BTreeMap;

/// Rows one event of `test` reads from tables that hold ids 1..=`table_size`, from the
/// workload's effective options (`result.json`'s, underscored names). `None` for a test
/// whose reads are not fixed by its options (anything but the built-in OLTP reads) or
/// when an option it needs is missing or not a number.
pub fn rows_per_event(test: &str, options: &BTreeMap<String, String>) -> Option<f64> {
    let base = test
        .rsplit('/')
        .next()
        .unwrap_or(test)
        .trim_end_matches(".lua");
    let int = |name: &str| options.get(name)?.trim().parse::<u64>().ok();
    match base {
        // One select whatever --point-selects says.
        "oltp_point_select" => Some(1.0),
        "oltp_read_only" | "oltp_read_write" => {
            let mut rows = int("point_selects")? as f64;
            if options.get("range_selects").map(String::as_str) != Some("off") {
                let per_range = range_rows(int("range_size")?, int("table_size")?);
                let full_ranges =
                    int("simple_ranges")? + int("order_ranges")? + int("distinct_ranges")?;
                rows += full_ranges as f64 * per_range + int("sum_ranges")? as f64;
            }
            Some(rows)
        }
        _ => None,
    }
}

/// The mean rows of `id BETWEEN s AND s + range - 1` over start ids `s` drawn evenly
/// from 1..=`table_size`: `range` rows, less the `range·(range-1)/2` ids that the
/// ranges starting in the last `range - 1` ids lose past the end (at most
/// `table_size` rows when the range is the longer).
fn range_rows(range: u64, table_size: u64) -> f64 {
    if table_size == 0 {
        return 0.0;
    }
    let (r, n) = (range as f64, table_size as f64);
    if range <= table_size {
        r - r * (r - 1.0) / (2.0 * n)
    } else {
        // Every range reaches past the end: a start s reads the n - s + 1 ids left.
        (n + 1.0) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(given: &[(&str, &str)]) -> BTreeMap<String, String> {
        let mut o: BTreeMap<String, String> = [
            ("point_selects", "10"),
            ("simple_ranges", "1"),
            ("sum_ranges", "1"),
            ("order_ranges", "1"),
            ("distinct_ranges", "1"),
            ("range_size", "100"),
            ("range_selects", "on"),
            ("table_size", "10000"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        for (k, v) in given {
            o.insert(k.to_string(), v.to_string());
        }
        o
    }

    #[test]
    fn read_only_reads_its_point_selects_sum_and_three_full_ranges() {
        // 10 + 1 + 3 × (100 - 100·99/2/10000) = 10 + 1 + 3 × 99.505.
        let rows = rows_per_event("oltp_read_only", &opts(&[])).unwrap();
        assert!((rows - 309.515).abs() < 1e-9, "{rows}");
        let rw = rows_per_event("/usr/share/sysbench/oltp_read_write.lua", &opts(&[]));
        assert_eq!(rw, Some(rows));
    }

    #[test]
    fn without_range_selects_only_point_selects_count() {
        let o = opts(&[("range_selects", "off"), ("point_selects", "7")]);
        assert_eq!(rows_per_event("oltp_read_only", &o), Some(7.0));
        assert_eq!(rows_per_event("oltp_point_select", &o), Some(1.0));
    }

    #[test]
    fn a_range_longer_than_the_table_reads_half_of_it_on_average() {
        assert_eq!(range_rows(100, 9), 5.0);
        assert_eq!(range_rows(1, 50), 1.0);
        // Averaged by brute force over every start id.
        let (r, n) = (30u64, 70u64);
        let brute: f64 = (1..=n).map(|s| r.min(n - s + 1) as f64).sum::<f64>() / n as f64;
        assert!((range_rows(r, n) - brute).abs() < 1e-9);
    }

    #[test]
    fn other_tests_and_missing_options_have_no_expectation() {
        assert_eq!(rows_per_event("tpcc", &opts(&[])), None);
        assert_eq!(rows_per_event("oltp_write_only", &opts(&[])), None);
        let mut o = opts(&[]);
        o.remove("range_size");
        assert_eq!(rows_per_event("oltp_read_only", &o), None);
        assert_eq!(
            rows_per_event("oltp_read_only", &opts(&[("point_selects", "x")])),
            None
        );
    }
}
