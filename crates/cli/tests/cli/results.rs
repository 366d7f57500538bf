//! `--results=FILE.json`: valid against `docs/results.schema.json`, complete, and free
//! of secrets.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

use crate::util::*;

fn schema() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results.schema.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
        jsonschema::validator_for(&schema).expect("the schema compiles")
    })
}

/// Reads `path`, validates it against the schema, returns it.
pub fn validated(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}\n{text}", path.display()));
    let errors: Vec<String> = schema()
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "schema violations:\n{}",
        errors.join("\n")
    );
    doc
}

#[test]
fn results_file_has_every_interval_final_stats_and_histogram() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args(
            "cpu --time=2 --report-interval=0.5 --report-checkpoints=1 --percentiles=50,99 \
             --cpu-max-prime=2000 --results=r.json --mysql-password=secret123 run",
        )
        .run()
        .ok();
    assert_eq!(dir.entries(), ["r.json"]);
    let doc = validated(&dir.join("r.json"));
    assert_eq!(doc["status"], "completed");
    assert_eq!(doc["test"], "cpu");
    assert_eq!(doc["command"], "run");
    // Every printed interval is in the file.
    let printed = run
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("[ ") && !l.contains("Checkpoint"))
        .count();
    let intervals = doc["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), printed, "{doc}");
    assert!(printed >= 3);
    assert_eq!(doc["checkpoints"].as_array().unwrap().len(), 1);
    // Final statistics match the text report.
    assert_eq!(doc["final"]["events"].as_u64().unwrap(), run.total_events());
    // The serialized histogram decodes to exactly the final span's events, even though
    // a checkpoint reset the statistics while events were ending.
    let file = bmk_results::results_file::ResultsFile::read(dir.join("r.json")).unwrap();
    let hist = file.histogram().expect("the histogram decodes");
    assert_eq!(hist.len(), run.total_events());
    let max_ms = run.latency_ms("max:");
    let hist_max_ms = hist.max() as f64 / 1e6;
    assert!(
        (hist_max_ms - max_ms).abs() <= max_ms * 0.01 + 0.01,
        "histogram max {hist_max_ms} ms, report max {max_ms} ms"
    );
    // The password is redacted everywhere.
    let text = std::fs::read_to_string(dir.join("r.json")).unwrap();
    for (what, haystack) in [
        ("results file", text.as_str()),
        ("stdout", run.stdout.as_str()),
        ("stderr", run.stderr.as_str()),
    ] {
        assert!(!haystack.contains("secret123"), "password in the {what}");
    }
    assert_eq!(doc["options"]["mysql_password"], "***");
}

#[test]
fn results_file_of_an_events_run_in_strict_mode() {
    let dir = Dir::new();
    dir.sysbench()
        .args("threads --threads=2 --events=100 --results=t.json run")
        .run()
        .ok();
    let doc = validated(&dir.join("t.json"));
    assert_eq!(doc["final"]["events"], 100);
    assert_eq!(doc["final"]["threads"], 2);
}

#[test]
fn results_file_in_a_missing_directory_is_a_clear_error() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --events=1 --results=no/such/dir/r.json run")
        .run()
        .code(1);
    assert!(run.stderr.contains("no/such/dir/r.json"), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

/// A run that dies of a fatal SQL error: the results file counts the transactions the
/// text report shows, and neither calls the error that ended the run "ignored".
#[test]
fn a_fatal_run_counts_alike_in_text_and_json_and_ignores_no_error() {
    let dir = Dir::new();
    dir.write(
        "dies.lua",
        "local con\n\
         local n = 0\n\
         function thread_init() con = sysbench.sql.driver():connect() end\n\
         function event()\n\
           n = n + 1\n\
           if n > 50 then con:query('SELECT * FROM no_such_table') end\n\
           con:query('SELECT 1')\n\
         end\n",
    );
    let run = dir
        .bmk()
        .args(
            "dies.lua --db-driver=sqlite --sqlite-db=t.db --threads=2 --time=5 \
             --results=r.json run",
        )
        .run()
        .code(1);
    assert!(run.stdout.contains("FATAL"), "{}", run.stdout);
    let transactions: u64 = run
        .value("transactions:")
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(transactions, run.total_events());
    assert!(transactions >= 50, "{}", run.stdout);
    let ignored = run.value("ignored errors:");
    assert!(ignored.starts_with("0 "), "{}", run.stdout);
    let doc = validated(&dir.join("r.json"));
    assert_eq!(doc["status"], "fatal");
    assert_eq!(doc["final"]["counters"]["transactions"], transactions);
    assert_eq!(doc["final"]["events"], transactions);
    assert_eq!(doc["final"]["counters"]["errors"], 0);
}
