//! The workload's own results, read from a level's console output: the one channel
//! from a workload script to the kit. TPC-C prints its transaction counts per type and
//! tpmC after the level (in the script's `done()`); they go into the level's
//! `result.json` (`workload`) and `summary.csv` as counts and rates, so that several
//! clients' values add up. dbSTRESS prints its committed transactions (read-only,
//! read-write) and query groups the same way, each with its rate (`NAME_per_sec`).

use std::collections::BTreeMap;

/// The block a line of the output belongs to.
#[derive(Clone, Copy, PartialEq)]
enum Block {
    None,
    Tpcc,
    Dbstress,
}

/// `name → value` from the output of a level; empty when the workload prints none.
pub fn parse(output: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
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
        if let Some(rest) = line.strip_prefix("tpmC:") {
            if let Some(v) = first_number(rest) {
                out.insert("tpmC".to_string(), v);
            }
            block = Block::None;
            continue;
        }
        if block == Block::None {
            continue;
        }
        // `    new_order:                  1234 (45.00%)`
        // `    read_write:                 1234 (123.40 per sec.)`
        let Some((name, rest)) = line.trim().split_once(':') else {
            block = Block::None;
            continue;
        };
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
            out.insert(key.clone(), v);
        }
        if block == Block::Dbstress {
            if let Some(rate) = per_second(rest) {
                out.insert(format!("{key}_per_sec"), rate);
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
        let m = parse(text);
        assert_eq!(m["read_write"], 812.0);
        assert_eq!(m["read_write_per_sec"], 81.12);
        assert_eq!(m["read_only"], 0.0);
        assert_eq!(m["delete_insert_per_sec"], 81.12);
        assert!(!m.contains_key("seconds") && !m.contains_key("read"));
        assert_eq!(m.len(), 12);
    }
}
