//! The `--results` file: written incrementally, renamed into place, valid against
//! `docs/results.schema.json`, secrets redacted, histograms mergeable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bmk_engine::latency::new_histogram;
use bmk_engine::{Counter, Counters, CumulativeStats, IntervalStats, LagStats, ThreadTotals};
use bmk_report::LatencySummary;
use bmk_results::results_file::{merge_runs, QueryTypeStats, SCHEMA_VERSION};
use bmk_results::{codec, ResultsFile, ResultsWriter, RunEnd, RunInfo};

/// A fresh directory for one test (a `tempfile` directory, removed when dropped).
struct TestDir(tempfile::TempDir);

impl TestDir {
    fn new(name: &str) -> TestDir {
        let dir = tempfile::Builder::new()
            .prefix(&format!("bmk-report-{name}-"))
            .tempdir()
            .unwrap();
        TestDir(dir)
    }
    fn path(&self, file: &str) -> PathBuf {
        self.0.path().join(file)
    }
    fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.0.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

fn schema() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[track_caller]
fn assert_valid(doc: &serde_json::Value) {
    let validator = jsonschema::validator_for(&schema()).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

fn run_info() -> RunInfo {
    let argv: Vec<String> = [
        "bmk",
        "--threads=2",
        "--mysql-password=hunter2",
        "--report-interval=1",
        "oltp_read_only",
        "run",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    RunInfo::new(
        "0.1.0",
        "oltp_read_only",
        "run",
        &argv,
        [
            ("threads", "2"),
            ("mysql-password", "hunter2"),
            ("report-interval", "1"),
            ("pgsql_secret_token", "x"),
        ],
    )
    .with_percentiles(95.0, &[99.9, 99.999])
}

fn counters(reads: u64) -> Counters {
    let mut c = Counters::default();
    c.0[Counter::Read as usize] = reads;
    c.0[Counter::Other as usize] = reads / 7;
    c
}

fn interval(t: f64, rate_mode: bool) -> IntervalStats {
    let mut h = new_histogram();
    for i in 1..=100u64 {
        h.record(i * 10_000).unwrap();
    }
    IntervalStats {
        time_total: t,
        time_interval: 1.0,
        threads_running: 2,
        events: 100,
        counters: counters(1400),
        histogram: h,
        queue_length: 4,
        concurrency: 2,
        rate_mode,
    }
}

fn cumulative(seed: u64) -> CumulativeStats {
    let mut h = new_histogram();
    let mut sum = 0;
    for i in 1..=300u64 {
        let v = i * 10_000 + seed;
        h.record(v).unwrap();
        sum += v;
    }
    CumulativeStats {
        time_total: 3.0,
        events: 300,
        counters: counters(4200),
        min_ns: h.min(),
        max_ns: h.max(),
        sum_ns: sum,
        histogram: h,
        threads: vec![
            ThreadTotals {
                events: 150,
                busy_ns: 2_000_000_000,
            },
            ThreadTotals {
                events: 150,
                busy_ns: 2_100_000_000,
            },
        ],
        lag: Some(LagStats {
            mean_ns: 25_000.0,
            max_ns: 900_000,
            dropped: 7,
        }),
    }
}

#[test]
fn a_run_is_written_incrementally_and_renamed_into_place() {
    let dir = TestDir::new("full");
    let path = dir.path("run.json");
    let mut w = ResultsWriter::create(&path, &run_info()).unwrap();
    let files = dir.files();
    assert_eq!(files.len(), 1);
    assert!(
        files[0].starts_with(".run.json.") && files[0].ends_with(".tmp"),
        "{files:?}"
    );

    w.interval(&interval(1.0, true)).unwrap();
    w.interval(&interval(2.0, false)).unwrap();
    // Each interval is on disk as soon as it is recorded.
    let partial = std::fs::read_to_string(w.temp_path()).unwrap();
    assert!(partial.starts_with("{\"schema\":\"bmk-results\",\"schema_version\":1,"));
    assert_eq!(partial.matches("\"time_s\":").count(), 2);
    assert!(!path.exists());

    w.checkpoint(2.0, &cumulative(0)).unwrap();
    w.interval(&interval(3.0, false)).unwrap();
    let mut end = RunEnd::new("completed");
    let mut q = BTreeMap::new();
    q.insert(
        "point_select".to_string(),
        QueryTypeStats {
            count: 3000,
            errors: 0,
            latency: LatencySummary {
                min_ms: 0.01,
                avg_ms: 0.02,
                max_ms: 0.9,
                sum_ms: 60.0,
                percentiles: Vec::new(),
            },
            histogram: None,
        },
    );
    end.query_types = Some(q);
    let written = w.finish(&cumulative(0), &end).unwrap();
    assert_eq!(written, path);
    assert_eq!(dir.files(), ["run.json"]);

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("hunter2"), "secret leaked");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_valid(&doc);

    let file = ResultsFile::read(&path).unwrap();
    assert_eq!(file.schema, "bmk-results");
    assert_eq!(file.schema_version, SCHEMA_VERSION);
    assert_eq!(file.run.tool.name, "bmk");
    assert_eq!(file.run.command_line[2], "--mysql-password=***");
    assert_eq!(file.run.options["mysql-password"], "***");
    assert_eq!(file.run.options["pgsql_secret_token"], "***");
    assert_eq!(file.run.options["threads"], "2");
    assert_eq!(file.intervals.len(), 3);
    assert_eq!(file.intervals[0].queue_length, Some(4));
    assert_eq!(file.intervals[1].queue_length, None);
    assert_eq!(file.intervals[2].time_s, 3.0);
    assert_eq!(file.intervals[0].tps, 100.0);
    assert_eq!(file.intervals[0].qps.reads, 1400.0);
    assert_eq!(file.checkpoints.len(), 1);
    assert_eq!(file.checkpoints[0].at_s, 2.0);
    assert_eq!(file.status, "completed");
    assert!(file.end_time >= file.run.start_time);
    assert_eq!(file.final_stats.events, 300);
    assert_eq!(file.final_stats.lag.unwrap().max_ms, 0.9);
    let stored: Vec<f64> = file
        .final_stats
        .latency
        .percentiles
        .iter()
        .map(|p| p.percentile)
        .collect();
    assert_eq!(stored, [50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999, 100.0]);
    assert_eq!(file.histogram().unwrap(), cumulative(0).histogram);
    assert_eq!(file.query_types.unwrap()["point_select"].count, 3000);
}

#[test]
fn a_run_without_intervals_is_valid() {
    let dir = TestDir::new("empty");
    let path = dir.path("r.json");
    let w = ResultsWriter::create(&path, &run_info()).unwrap();
    let mut stats = cumulative(0);
    stats.lag = None;
    w.finish(&stats, &RunEnd::new("interrupted")).unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_valid(&doc);
    assert_eq!(doc["intervals"], serde_json::json!([]));
    assert_eq!(doc["status"], "interrupted");
    assert!(doc["final"].get("lag").is_none());
}

#[test]
fn abandoned_runs_leave_no_file() {
    let dir = TestDir::new("abandon");
    {
        let mut w = ResultsWriter::create(dir.path("a.json"), &run_info()).unwrap();
        w.interval(&interval(1.0, false)).unwrap();
        // dropped: a fatal error or a panic
    }
    let w = ResultsWriter::create(dir.path("b.json"), &run_info()).unwrap();
    w.abort();
    assert!(dir.files().is_empty(), "{:?}", dir.files());
}

#[test]
fn an_unwritable_path_is_an_error_naming_it() {
    let err = ResultsWriter::create("/nonexistent-dir/x.json", &run_info()).unwrap_err();
    assert!(err.to_string().contains("/nonexistent-dir/x.json"), "{err}");
}

#[test]
fn what_is_not_a_regular_file_is_never_replaced_or_followed() {
    let dir = TestDir::new("nofollow");
    std::fs::write(dir.path("victim"), "data\n").unwrap();
    // A symlink where a temporary file used to be named is neither followed nor reused.
    std::os::unix::fs::symlink(dir.path("victim"), dir.path("r.json.tmp")).unwrap();
    let w = ResultsWriter::create(dir.path("r.json"), &run_info()).unwrap();
    w.finish(&cumulative(1), &RunEnd::new("completed")).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path("victim")).unwrap(),
        "data\n"
    );
    ResultsFile::read(dir.path("r.json")).unwrap();

    // A symlink, a directory or a device at the results path is refused at the start.
    std::os::unix::fs::symlink(dir.path("victim"), dir.path("link.json")).unwrap();
    std::fs::create_dir(dir.path("dir.json")).unwrap();
    for path in [
        dir.path("link.json"),
        dir.path("dir.json"),
        PathBuf::from("/dev/null"),
    ] {
        let err = ResultsWriter::create(&path, &run_info()).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path("victim")).unwrap(),
        "data\n"
    );

    // ... and at the end, if one appeared there while the run went on.
    let w = ResultsWriter::create(dir.path("late.json"), &run_info()).unwrap();
    std::os::unix::fs::symlink(dir.path("victim"), dir.path("late.json")).unwrap();
    let err = w
        .finish(&cumulative(1), &RunEnd::new("completed"))
        .unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path("victim")).unwrap(),
        "data\n"
    );
    assert!(!dir
        .files()
        .iter()
        .any(|f| f.ends_with(".tmp") && f.starts_with(".late")));
}

#[test]
fn the_schema_rejects_what_it_should() {
    let dir = TestDir::new("reject");
    let path = dir.path("r.json");
    ResultsWriter::create(&path, &run_info())
        .unwrap()
        .finish(&cumulative(0), &RunEnd::new("completed"))
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema()).unwrap();
    assert!(validator.is_valid(&doc));
    let mut leaked = doc.clone();
    leaked["options"]["mysql-password"] = "hunter2".into();
    assert!(!validator.is_valid(&leaked));
    let mut missing = doc.clone();
    missing.as_object_mut().unwrap().remove("histogram");
    assert!(!validator.is_valid(&missing));
    let mut wrong = doc;
    wrong["final"]["events"] = "many".into();
    assert!(!validator.is_valid(&wrong));
}

#[test]
fn runs_merge_exactly() {
    let dir = TestDir::new("merge");
    let mut files = Vec::new();
    for (i, seed) in [0u64, 5_000].iter().enumerate() {
        let path = dir.path(&format!("r{i}.json"));
        ResultsWriter::create(&path, &run_info())
            .unwrap()
            .finish(&cumulative(*seed), &RunEnd::new("completed"))
            .unwrap();
        files.push(ResultsFile::read(&path).unwrap());
    }
    let merged = merge_runs(&files).unwrap();
    let mut expected = new_histogram();
    expected.add(&cumulative(0).histogram).unwrap();
    expected.add(&cumulative(5_000).histogram).unwrap();
    assert_eq!(merged.len(), 600);
    for q in [0.0, 0.5, 0.95, 0.999, 1.0] {
        assert_eq!(merged.value_at_quantile(q), expected.value_at_quantile(q));
    }
    // The stored text round-trips through the codec too.
    assert_eq!(
        codec::decode(&files[1].histogram).unwrap(),
        cumulative(5_000).histogram
    );
}
