//! The workload's own results, read from a level's console output: the one channel
//! from a workload script to the kit. TPC-C prints its transaction counts per type and
//! tpmC after the level (in the script's `done()`); they go into the level's
//! `result.json` (`workload`) and `summary.csv` as counts and rates, so that several
//! clients' values add up.

use std::collections::BTreeMap;

/// `name → value` from the output of a level; empty when the workload prints none.
pub fn parse(output: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let mut in_tpcc = false;
    for line in output.lines() {
        if line.starts_with("TPC-C transactions:") {
            in_tpcc = true;
            continue;
        }
        if let Some(rest) = line.strip_prefix("tpmC:") {
            if let Some(v) = first_number(rest) {
                out.insert("tpmC".to_string(), v);
            }
            in_tpcc = false;
            continue;
        }
        if !in_tpcc {
            continue;
        }
        // `    new_order:                  1234 (45.00%)`
        let Some((name, rest)) = line.trim().split_once(':') else {
            in_tpcc = false;
            continue;
        };
        let key = match name.trim() {
            "new_order rollbacks" => "new_order_rollbacks".to_string(),
            "retried (trx-retry)" => "retried".to_string(),
            n if n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') => n.to_string(),
            _ => continue,
        };
        if let Some(v) = first_number(rest) {
            out.insert(key, v);
        }
    }
    out
}

fn first_number(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
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
        let m = parse(text);
        assert_eq!(m["tpmC"], 2673.27);
        assert_eq!(m["new_order"], 450.0);
        assert_eq!(m["stock_level"], 50.0);
        assert_eq!(m["new_order_rollbacks"], 4.0);
        assert_eq!(m["retried"], 0.0);
        assert_eq!(m.len(), 8);
        assert!(parse("queries performed:\n    read: 10\n").is_empty());
    }
}
