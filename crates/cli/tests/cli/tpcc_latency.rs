//! TPC-C's latency per transaction type, end to end on SQLite through the kit: the
//! level's output shows it, `result.json` keeps each type's histogram (counts equal to
//! the transaction mix, percentiles ordered within the range), `summary.csv` shows each
//! type's p95 and the report draws the table. A level split over two processes
//! (`--max-users-per-process=1`) merges the processes' histograms exactly. Every
//! `result.json` is valid against the documented schema.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bmk_engine::latency::{new_histogram, percentile_ns};
use bmk_results::codec;
use bmk_results::results_dir::{SummaryRow, SUMMARY_FILE};
use bmk_results::results_file::{QueryTypeStats, ResultsFile};

use hdrhistogram::Histogram;

use crate::results::validated;
use crate::util::Dir;

const TYPES: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// The rows of the `TPC-C latency (ms):` table in a level's output: type → count, avg,
/// 95th, 99th, max.
fn latency_table(output: &str) -> BTreeMap<String, Vec<f64>> {
    let mut rows = BTreeMap::new();
    let mut inside = false;
    for line in output.lines() {
        if line.starts_with("TPC-C latency (ms):") {
            inside = true;
            continue;
        }
        let Some((name, rest)) = line.trim().split_once(':').filter(|_| inside) else {
            inside = false;
            continue;
        };
        if !line.starts_with("    ") {
            inside = false;
            continue;
        }
        let values: Vec<f64> = rest
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(values.len(), 5, "{line}");
        rows.insert(name.to_string(), values);
    }
    rows
}

/// A level's `result.json`, valid against the documented schema.
fn read_result(level: &Path) -> ResultsFile {
    let path = level.join("result.json");
    validated(&path);
    ResultsFile::read(path).unwrap()
}

fn p(s: &QueryTypeStats, percentile: f64) -> f64 {
    s.latency.percentile_ms(percentile).unwrap()
}

/// Each type's latency in a level's `result.json` agrees with its transaction mix and
/// with the table the level printed.
fn check_level(level: &Path) {
    let output = std::fs::read_to_string(level.join("output.txt")).unwrap();
    let table = latency_table(&output);
    let keys: Vec<&str> = table.keys().map(String::as_str).collect();
    let mut names = TYPES.to_vec();
    names.sort();
    assert_eq!(keys, names, "{output}");
    let r = read_result(level);
    for t in TYPES {
        let s = &r.workload_latency[t];
        let row = &table[t];
        assert_eq!(s.count as f64, r.workload[t], "{t}: count against the mix");
        assert_eq!(row[0], s.count as f64, "{t}: count against the table");
        assert_eq!(row[4], s.latency.max_ms, "{t}: max against the table");
        assert_eq!(s.errors, 0);
        if s.count == 0 {
            continue;
        }
        let (min, avg, max) = (s.latency.min_ms, s.latency.avg_ms, s.latency.max_ms);
        assert!(
            min > 0.0 && min <= avg && avg <= max,
            "{t}: {:?}",
            s.latency
        );
        assert!(
            min <= p(s, 95.0) && p(s, 95.0) <= p(s, 99.0) && p(s, 99.0) <= max,
            "{t}: {:?}",
            s.latency
        );
        // The table's percentiles are the bucket bounds; the file's the same bounds in
        // a histogram of 3 significant digits, printed with 3 decimals.
        for (col, pct) in [(2, 95.0), (3, 99.0)] {
            let (shown, kept) = (row[col], p(s, pct));
            assert!(
                (shown - kept).abs() <= 0.0006 + kept * 0.002,
                "{t} p{pct}: table {shown}, result.json {kept}"
            );
        }
        assert_eq!(
            codec::decode(s.histogram.as_deref().unwrap())
                .unwrap()
                .len(),
            s.count
        );
    }
    assert!(r.workload_latency["new_order"].count > 0, "{output}");
    assert!(r.workload_latency["payment"].count > 0, "{output}");
}

/// (value, count) of each non-empty bucket.
fn recorded(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

fn level1(results: &Path) -> PathBuf {
    results.join("level-0001")
}

#[test]
fn tpcc_latency_per_transaction_type_on_sqlite_through_the_kit() {
    let dir = Dir::new();
    dir.bmk()
        .args("kit prepare Prepare_TPCC_1W 1 --db-driver=sqlite")
        .run_within(Duration::from_secs(300))
        .code(0);
    dir.bmk()
        .args("kit run TPCC_1W 1 4 --db-driver=sqlite --results-dir=one --capture-interval=0")
        .run_within(Duration::from_secs(120))
        .code(0);
    let results = dir.join("one");
    check_level(&level1(&results));

    // summary.csv shows each type's p95 beside the counts.
    let r = read_result(&level1(&results));
    let csv = std::fs::read_to_string(results.join(SUMMARY_FILE)).unwrap();
    let row = SummaryRow::parse(csv.lines().nth(1).unwrap()).unwrap();
    for t in TYPES {
        let s = &r.workload_latency[t];
        let shown = row.workload.get(&format!("{t}_p95_ms"));
        match s.latency.percentile_ms(95.0) {
            Some(p95) => assert!((shown.unwrap() - p95).abs() < 1e-4, "{t}: {shown:?}"),
            None => assert_eq!(shown, None, "{t}: no transaction, no p95"),
        }
    }
    assert_eq!(row.workload["new_order"], r.workload["new_order"]);

    // The report draws the table.
    dir.bmk()
        .arg("report")
        .arg(&results)
        .run_within(Duration::from_secs(60))
        .code(0);
    let page = std::fs::read_to_string(results.join("report.html")).unwrap();
    assert!(page.contains("<h3>Latency by transaction type</h3>"));
    let s = &r.workload_latency["new_order"];
    assert!(
        page.contains(&format!(
            "<tr><td>new_order</td><td class=\"n\">{}</td>",
            s.count
        )),
        "no new_order row"
    );

    // Two processes of one user each: the level's latency is theirs added up.
    dir.bmk()
        .args(
            "kit run TPCC_1W 2 4 --db-driver=sqlite --max-users-per-process=1 \
             --results-dir=two --capture-interval=0",
        )
        .run_within(Duration::from_secs(120))
        .code(0);
    let level = level1(&dir.join("two"));
    let merged = read_result(&level);
    let mut parts = Vec::new();
    for entry in std::fs::read_dir(level.join("processes")).unwrap() {
        let part = entry.unwrap().path();
        // Beside the parts, the start gate's folder.
        if !part.join("result.json").exists() {
            continue;
        }
        check_level(&part);
        parts.push(read_result(&part));
    }
    assert_eq!(parts.len(), 2);
    for t in TYPES {
        let m = &merged.workload_latency[t];
        let each: Vec<&QueryTypeStats> = parts.iter().map(|r| &r.workload_latency[t]).collect();
        assert_eq!(m.count, each.iter().map(|s| s.count).sum::<u64>(), "{t}");
        assert_eq!(
            merged.workload[t],
            parts.iter().map(|r| r.workload[t]).sum::<f64>(),
            "{t}"
        );
        let max = each.iter().map(|s| s.latency.max_ms).fold(0.0, f64::max);
        assert_eq!(m.latency.max_ms, max, "{t}");
        let sum: f64 = each.iter().map(|s| s.latency.sum_ms).sum();
        assert!((m.latency.sum_ms - sum).abs() < 1e-9, "{t}");
        // The percentiles are those of the added histograms.
        let mut added = new_histogram();
        added.auto(true);
        for s in &each {
            added
                .add(codec::decode(s.histogram.as_deref().unwrap()).unwrap())
                .unwrap();
        }
        assert_eq!(
            recorded(&codec::decode(m.histogram.as_deref().unwrap()).unwrap()),
            recorded(&added),
            "{t}"
        );
        if m.count > 0 {
            let min = each
                .iter()
                .filter(|s| s.count > 0)
                .map(|s| s.latency.min_ms)
                .fold(f64::INFINITY, f64::min);
            assert_eq!(m.latency.min_ms, min, "{t}");
            for pct in [95.0, 99.0] {
                let want = percentile_ns(
                    &added,
                    pct,
                    (min * 1e6).round() as u64,
                    (max * 1e6).round() as u64,
                ) as f64
                    / 1e6;
                assert_eq!(p(m, pct), want, "{t} p{pct}");
            }
        }
    }
}
