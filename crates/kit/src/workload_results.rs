//! The workload's own results, read from a level's console output: the one channel
//! from a workload script to the kit. TPC-C prints its transaction counts per type and
//! tpmC after the level (in the script's `done()`); they go into the level's
//! `result.json` (`workload`) and `summary.csv` as counts and rates, so that several
//! clients' values add up. dbSTRESS prints its committed transactions (read-only,
//! read-write) and query groups the same way, each with its rate (`NAME_per_sec`).
//! TPC-C also prints each transaction type's latency histogram, which goes into
//! `result.json`'s `workload_latency` ([`bmk_results::workload_latency`]); its table of
//! percentiles is for the reader only, since percentiles of clients do not add.

use std::collections::BTreeMap;

use bmk_results::results_file::QueryTypeStats;
use bmk_results::workload_latency::Buckets;

/// What a level's output says of the workload's own results.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadResults {
    /// `name → value`: counts and rates.
    pub values: BTreeMap<String, f64>,
    /// Latency per transaction type.
    pub latency: BTreeMap<String, QueryTypeStats>,
}

impl WorkloadResults {
    /// Whether the output had none.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.latency.is_empty()
    }
}

/// The block a line of the output belongs to.
#[derive(Clone, Copy, PartialEq)]
enum Block {
    None,
    Tpcc,
    Dbstress,
    /// TPC-C's latency histograms, one line per transaction type.
    TpccHistograms,
}

/// The workload's own results in the output of a level; empty when it prints none.
pub fn parse(output: &str) -> WorkloadResults {
    let mut out = WorkloadResults::default();
    let mut block = Block::None;
    for line in output.lines() {
        if line.starts_with("TPC-C transactions:") {
            block = Block::Tpcc;
            continue;
        }
        if line.starts_with("dbSTRESS transactions:") {
            block = Block::Dbstress;
            continue;
        }
        if line.starts_with("TPC-C latency histograms") {
            block = Block::TpccHistograms;
            continue;
        }
        if let Some(rest) = line.strip_prefix("tpmC:") {
            if let Some(v) = first_number(rest) {
                out.values.insert("tpmC".to_string(), v);
            }
            block = Block::None;
            continue;
        }
        if block == Block::None {
            continue;
        }
        // `    new_order:                  1234 (45.00%)`
        // `    read_write:                 1234 (123.40 per sec.)`
        // `    new_order: sum=1234.500 min=0.410 max=80.100 0.4595:2 0.5054:10`
        let Some((name, rest)) = line.trim().split_once(':') else {
            block = Block::None;
            continue;
        };
        if block == Block::TpccHistograms {
            if let Some(stats) = histogram(rest).and_then(|b| b.stats().ok()) {
                out.latency.insert(name.trim().to_string(), stats);
            }
            continue;
        }
        let key = match name.trim() {
            "new_order rollbacks" if block == Block::Tpcc => "new_order_rollbacks".to_string(),
            "retried (trx-retry)" if block == Block::Tpcc => "retried".to_string(),
            // The span the rates are over: one client's, which does not add up.
            "seconds" => continue,
            n if n
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') =>
            {
                n.to_string()
            }
            _ => continue,
        };
        if let Some(v) = first_number(rest) {
            out.values.insert(key.clone(), v);
        }
        if block == Block::Dbstress {
            if let Some(rate) = per_second(rest) {
                out.values.insert(format!("{key}_per_sec"), rate);
            }
        }
    }
    out
}

fn first_number(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// The rate of `    1234 (123.40 per sec.)`.
fn per_second(text: &str) -> Option<f64> {
    let inside = text.split_once('(')?.1.strip_suffix(" per sec.)")?;
    inside.trim().parse().ok()
}

/// A histogram line after its name: `sum=S min=A max=B` (ms), then `bound:count` for
/// each non-empty bucket. `None` if any part does not read.
fn histogram(text: &str) -> Option<Buckets> {
    let mut words = text.split_whitespace();
    let mut field = |name: &str| -> Option<f64> {
        let v: f64 = words
            .next()?
            .strip_prefix(name)?
            .strip_prefix('=')?
            .parse()
            .ok()?;
        v.is_finite().then_some(v)
    };
    let (sum_ms, min_ms, max_ms) = (field("sum")?, field("min")?, field("max")?);
    let counts = words
        .map(|w| {
            let (bound, n) = w.split_once(':')?;
            let bound: f64 = bound.parse().ok()?;
            (bound.is_finite() && bound > 0.0).then_some((bound, n.parse().ok()?))
        })
        .collect::<Option<Vec<(f64, u64)>>>()?;
    Some(Buckets {
        sum_ms,
        min_ms,
        max_ms,
        counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tpcc_counts_and_tpmc_are_read() {
        let text = "SQL statistics:\n    queries performed:\n\
                    TPC-C transactions:\n\
                    \x20   new_order:                   450 (44.12%)\n\
                    \x20   payment:                     430 (42.16%)\n\
                    \x20   order_status:                 40 (3.92%)\n\
                    \x20   delivery:                     50 (4.90%)\n\
                    \x20   stock_level:                  50 (4.90%)\n\
                    \x20   new_order rollbacks:           4 (0.89% of new_order)\n\
                    \x20   retried (trx-retry):           0\n\
                    tpmC: 2673.27 (committed new_order per minute over 10.01 s)\n\n";
        let m = parse(text).values;
        assert_eq!(m["tpmC"], 2673.27);
        assert_eq!(m["new_order"], 450.0);
        assert_eq!(m["stock_level"], 50.0);
        assert_eq!(m["new_order_rollbacks"], 4.0);
        assert_eq!(m["retried"], 0.0);
        assert_eq!(m.len(), 8);
        assert!(parse("queries performed:\n    read: 10\n").is_empty());
    }

    /// A TPC-C summary as `tpcc_run.lua` prints it, with its latency blocks.
    const TPCC_WITH_LATENCY: &str = "TPC-C transactions:\n\
        \x20   new_order:                     7 (53.85%)\n\
        \x20   payment:                       5 (38.46%)\n\
        \x20   order_status:                  1 (7.69%)\n\
        \x20   delivery:                      0 (0.00%)\n\
        \x20   stock_level:                   0 (0.00%)\n\
        \x20   new_order rollbacks:           1 (14.29% of new_order)\n\
        \x20   retried (trx-retry):           0\n\
        tpmC: 36.00 (committed new_order per minute over 10.00 s)\n\
        TPC-C latency (ms):             count        avg       95th       99th        max\n\
        \x20   new_order:                     7      2.000      2.358      2.358      2.358\n\
        \x20   payment:                       5      1.100      1.400      1.400      1.400\n\
        \x20   order_status:                  1      0.500      0.500      0.500      0.500\n\
        \x20   delivery:                      0      0.000      0.000      0.000      0.000\n\
        \x20   stock_level:                   0      0.000      0.000      0.000      0.000\n\
        TPC-C latency histograms (ms; bucket upper bound:count):\n\
        \x20   new_order: sum=14.000 min=1.700 max=2.358 1.77156:1 1.94872:4 2.14359:1 2.35795:1\n\
        \x20   payment: sum=5.500 min=0.900 max=1.400 1:2 1.1:2 1.4641:1\n\
        \x20   order_status: sum=0.500 min=0.500 max=0.500 0.513158:1\n\
        \x20   delivery: sum=0.000 min=0.000 max=0.000\n\
        \x20   stock_level: sum=0.000 min=0.000 max=0.000\n\
        \n\
        SQL statistics:\n    queries performed:\n        read: 120\n";

    #[test]
    fn tpcc_latency_histograms_are_read_and_the_table_is_not() {
        let r = parse(TPCC_WITH_LATENCY);
        // The counts and tpmC as without the latency blocks.
        let keys: Vec<&str> = r.values.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "delivery",
                "new_order",
                "new_order_rollbacks",
                "order_status",
                "payment",
                "retried",
                "stock_level",
                "tpmC"
            ]
        );
        assert_eq!(r.values["new_order"], 7.0);
        let types: Vec<&str> = r.latency.keys().map(String::as_str).collect();
        assert_eq!(
            types,
            [
                "delivery",
                "new_order",
                "order_status",
                "payment",
                "stock_level"
            ]
        );
        let no = &r.latency["new_order"];
        assert_eq!((no.count, no.errors), (7, 0));
        assert_eq!(
            (
                no.latency.sum_ms,
                no.latency.avg_ms,
                no.latency.min_ms,
                no.latency.max_ms
            ),
            (14.0, 2.0, 1.7, 2.358)
        );
        // The 95th and 99th samples are in the last bucket, above the largest.
        assert_eq!(no.latency.percentile_ms(95.0), Some(2.358));
        assert_eq!(no.latency.percentile_ms(99.0), Some(2.358));
        let pay = &r.latency["payment"];
        assert_eq!(pay.count, 5);
        // 4 of 5 samples up to 1.1 ms: the 95th is the fifth, up to 1.4641 ms, kept
        // within the largest.
        assert_eq!(pay.latency.percentile_ms(95.0), Some(1.4));
        let os = &r.latency["order_status"];
        assert_eq!(os.latency.percentile_ms(95.0), Some(0.5));
        let d = &r.latency["delivery"];
        assert_eq!((d.count, d.latency.percentiles.len()), (0, 0));
    }

    #[test]
    fn a_histogram_line_that_does_not_read_is_left_out() {
        let text = TPCC_WITH_LATENCY
            .replace("sum=5.500", "sum=x")
            .replace("0.513158:1", "0.513158:-1");
        let r = parse(&text);
        assert!(!r.latency.contains_key("payment"));
        assert!(!r.latency.contains_key("order_status"));
        assert_eq!(r.latency["new_order"].count, 7);
        assert_eq!(r.values.len(), 8);
    }

    #[test]
    fn dbstress_counts_and_rates_are_read() {
        let text = "Threads started!\n\
                    dbSTRESS transactions:\n\
                    \x20   read_only:                      0 (0.00 per sec.)\n\
                    \x20   read_write:                   812 (81.12 per sec.)\n\
                    \x20   sel1:                         812 (81.12 per sec.)\n\
                    \x20   sel2:                         812 (81.12 per sec.)\n\
                    \x20   update:                       812 (81.12 per sec.)\n\
                    \x20   delete_insert:                812 (81.12 per sec.)\n\
                    \x20   seconds:                    10.01 (first event to last commit)\n\
                    \n\
                    SQL statistics:\n    queries performed:\n        read: 1624\n";
        let m = parse(text).values;
        assert_eq!(m["read_write"], 812.0);
        assert_eq!(m["read_write_per_sec"], 81.12);
        assert_eq!(m["read_only"], 0.0);
        assert_eq!(m["delete_insert_per_sec"], 81.12);
        assert!(!m.contains_key("seconds") && !m.contains_key("read"));
        assert_eq!(m.len(), 12);
    }
}
