//! Bad runs made on purpose, end to end, and flagged by `bmk report`: errors from
//! tables that do not exist, a fatal level, reads of ids beyond the data, data smaller
//! than the options claim; and clean runs of each workload that flag none of that.
//! Each test reads the verdicts from `checks.json` and the counters from the level's
//! files, as a script would. SQLite always; MariaDB and PostgreSQL when reachable.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bmk_results::results_dir::{read_intervals, read_json, LevelInfo, RunManifest};
use bmk_results::results_file::ResultsFile;
use bmk_sql::DriverKind;

use crate::server_db::ServerDb;
use crate::util::Dir;

/// A verdict of `checks.json`.
#[derive(Debug, serde::Deserialize)]
struct Verdict {
    check: String,
    level: Option<u32>,
    severity: String,
    value: Option<f64>,
    threshold: Option<f64>,
    message: String,
}

/// Runs `bmk report` on `results`; returns the verdicts and the page.
fn report(dir: &Dir, results: &Path) -> (Vec<Verdict>, String) {
    dir.bmk()
        .arg("report")
        .arg(results)
        .run_within(Duration::from_secs(60))
        .code(0);
    let verdicts: Vec<Verdict> =
        serde_json::from_str(&std::fs::read_to_string(results.join("checks.json")).unwrap())
            .unwrap();
    let page = std::fs::read_to_string(results.join("report.html")).unwrap();
    (verdicts, page)
}

fn find<'a>(v: &'a [Verdict], check: &str) -> &'a Verdict {
    v.iter()
        .find(|x| x.check == check)
        .unwrap_or_else(|| panic!("no {check} verdict in {v:#?}"))
}

/// The checks this file is about: none of them may fire on a clean run.
const DATA_AND_ERROR_CHECKS: [&str; 7] = [
    "errors",
    "unusable_level",
    "unfinished_level",
    "run_not_completed",
    "empty_reads",
    "data_smaller_than_claimed",
    "short_reads",
];

/// A clean run: none of this file's checks, and no failure of any other.
fn assert_clean(v: &[Verdict]) {
    for x in v {
        assert!(
            !DATA_AND_ERROR_CHECKS.contains(&x.check.as_str()) && x.severity != "fail",
            "a clean run flagged: {v:#?}"
        );
    }
}

fn level1(results: &Path) -> PathBuf {
    results.join("level-0001")
}

fn sqlite_prepare_1k(dir: &Dir) {
    dir.bmk()
        .args("kit prepare Prepare_1K_1tab 1 --db-driver=sqlite")
        .run_within(Duration::from_secs(120))
        .code(0);
}

#[test]
fn more_tables_than_exist_with_errors_ignored_is_flagged_on_sqlite() {
    let dir = Dir::new();
    sqlite_prepare_1k(&dir);
    dir.bmk()
        .args("kit run OLTP_RO_1K_1tab-uniform-p_sel1-notrx 1 3 --db-driver=sqlite --tables=20 --sqlite-ignore-errors=all --results-dir=out --capture-interval=0")
        .run_within(Duration::from_secs(120))
        .code(0);
    let results = dir.join("out");
    let info: LevelInfo = read_json(&level1(&results).join("level.json")).unwrap();
    let data = info.data.expect("the kit read the tables");
    assert_eq!(
        (
            data.tables_claimed,
            data.table_size_claimed,
            data.tables_missing
        ),
        (20, 1000, 19)
    );
    assert_eq!(data.tables[0].name, "sbtest1");
    assert_eq!(data.tables[0].max_id, Some(1000));

    let (v, page) = report(&dir, &results);
    let e = find(&v, "errors");
    assert_eq!((e.level, e.severity.as_str()), (Some(1), "fail"));
    // 19 of 20 tables are missing: about 95 % of the attempts fail.
    assert!(e.value.unwrap() > 50.0, "{e:?}");
    assert_eq!(e.threshold, Some(1.0));
    let d = find(&v, "data_smaller_than_claimed");
    assert_eq!((d.value, d.threshold), (Some(19.0), Some(0.0)));
    assert!(d.message.contains("19 of the 20 tables"), "{}", d.message);
    assert!(!page.contains("No check triggered"));
    assert!(page.contains("FAIL"));
    let m: RunManifest = read_json(&results.join("run.json")).unwrap();
    let counts = m.checks.expect("run.json has the counts");
    assert!(counts.fail >= 2, "{counts:?}");
}

#[test]
fn the_repro_of_the_home_directory_sweep_is_not_called_clean() {
    // The exact commands a user would type, with the default results directory under
    // BMK_HOME and the default capture.
    let dir = Dir::new();
    let home = dir.join("h");
    let home = home.to_str().unwrap();
    dir.bmk()
        .env("BMK_HOME", home)
        .args("kit prepare Prepare_1K_1tab 1 --db-driver=sqlite")
        .run_within(Duration::from_secs(120))
        .code(0);
    dir.bmk()
        .env("BMK_HOME", home)
        .args("kit run OLTP_RO_1K_1tab-uniform-p_sel1-notrx 1 3 --db-driver=sqlite --tables=20 --sqlite-ignore-errors=all")
        .run_within(Duration::from_secs(120))
        .code(0);
    let parent = dir.join("h/results");
    let results: Vec<PathBuf> = std::fs::read_dir(&parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let [results] = results.as_slice() else {
        panic!("{results:?}");
    };
    let (v, page) = report(&dir, results);
    assert!(!page.contains("No check triggered"), "{v:#?}");
    assert!(v.iter().any(|x| x.severity == "fail"), "{v:#?}");
}

#[test]
fn reads_beyond_the_data_are_counted_and_flagged_on_sqlite() {
    let dir = Dir::new();
    sqlite_prepare_1k(&dir);
    // 1000 rows, --table-size=100000: 99 % of the point selects find nothing; counted
    // alike by the native workers and by the Lua workload through the SQL bridge.
    for (path, out) in [("", "native"), ("--native-oltp=off", "lua")] {
        dir.bmk()
            .args(&format!("kit run OLTP_RO_1K_1tab-uniform-p_sel1-notrx 1 3 --db-driver=sqlite --table-size=100000 --results-dir={out} --capture-interval=0 {path}"))
            .run_within(Duration::from_secs(120))
            .code(0);
        let results = dir.join(out);
        let r = ResultsFile::read(level1(&results).join("result.json")).unwrap();
        let c = &r.final_stats.counters;
        let (rows, empty) = (c.rows.unwrap(), c.empty_reads.unwrap());
        assert_eq!(
            rows + empty,
            c.reads,
            "{out}: a point select returns 0 or 1 row"
        );
        assert!(empty as f64 > 0.95 * c.reads as f64, "{out}: {c:?}");
        let lines = read_intervals(&level1(&results).join("intervals.jsonl")).unwrap();
        let line_empty: u64 = lines.iter().filter_map(|l| l.record.empty_reads).sum();
        assert!(line_empty > 0 && line_empty <= empty, "{out}");
    }
    let results = dir.join("native");
    let (v, _) = report(&dir, &results);
    let e = find(&v, "empty_reads");
    assert_eq!((e.severity.as_str(), e.threshold), ("fail", Some(1.0)));
    assert!(e.value.unwrap() > 95.0, "{e:?}");
    let d = find(&v, "data_smaller_than_claimed");
    assert_eq!((d.value, d.threshold), (Some(1000.0), Some(100_000.0)));
}

#[test]
fn ranges_over_sparse_data_are_flagged_as_short_reads_on_sqlite() {
    let dir = Dir::new();
    sqlite_prepare_1k(&dir);
    // Three ids of every four deleted: no range of 100 ids comes back empty (so the
    // empty-reads check has nothing to say), but each returns a quarter of its rows.
    dir.write(
        "thin.lua",
        "function prepare()\n  local con = sysbench.sql.driver():connect()\n  con:query('DELETE FROM sbtest1 WHERE id % 4 <> 0')\nend\n",
    );
    dir.bmk()
        .args("thin.lua --db-driver=sqlite prepare")
        .run_within(Duration::from_secs(60))
        .code(0);
    dir.bmk()
        .args("kit run OLTP_RO_1K_1tab-uniform-trx 1 3 --db-driver=sqlite --point-selects=0 --results-dir=out --capture-interval=0")
        .run_within(Duration::from_secs(120))
        .code(0);
    let results = dir.join("out");
    let r = ResultsFile::read(level1(&results).join("result.json")).unwrap();
    let c = &r.final_stats.counters;
    assert_eq!(c.empty_reads, Some(0), "{c:?}");
    let (v, _) = report(&dir, &results);
    let s = find(&v, "short_reads");
    assert_eq!((s.severity.as_str(), s.threshold), ("fail", Some(50.0)));
    // 3 ranges of a quarter of ~95 rows and a sum: about 25 % of 286 rows an event.
    let pct = s.value.unwrap();
    assert!((20.0..32.0).contains(&pct), "{s:?}");
    assert!(v.iter().all(|x| x.check != "empty_reads"), "{v:#?}");
}

#[test]
fn a_fatal_level_is_flagged_and_left_off_the_curves_on_sqlite() {
    let dir = Dir::new();
    sqlite_prepare_1k(&dir);
    // Prepared statements for 3 tables, 1 exists: the workers cannot start.
    let run = dir
        .bmk()
        .args("kit run OLTP_RO_1K_1tab-uniform-ps-p_sel1-notrx 1 3 --db-driver=sqlite --tables=3 --results-dir=out --capture-interval=0")
        .run_within(Duration::from_secs(120));
    assert_ne!(run.code, Some(0), "{}", run.context());
    let results = dir.join("out");
    let (v, page) = report(&dir, &results);
    let u = find(&v, "unusable_level");
    assert_eq!((u.level, u.severity.as_str()), (Some(1), "fail"));
    assert!(u.message.contains("status 'fatal'"), "{}", u.message);
    assert_eq!(find(&v, "run_not_completed").severity, "fail");
    assert!(page.contains("Not on the curves"), "the page says why");
}

#[test]
fn a_clean_oltp_run_on_sqlite_flags_nothing_of_the_kind() {
    let dir = Dir::new();
    sqlite_prepare_1k(&dir);
    for (scenario, out) in [
        ("OLTP_RO_1K_1tab-uniform-p_sel1-notrx", "ro"),
        ("OLTP_RW_1K_1tab-uniform-trx", "rw"),
    ] {
        dir.bmk()
            .args(&format!(
                "kit run {scenario} 2 3 --db-driver=sqlite --results-dir={out} --capture-interval=0"
            ))
            .run_within(Duration::from_secs(120))
            .code(0);
        let results = dir.join(out);
        let r = ResultsFile::read(level1(&results).join("result.json")).unwrap();
        let c = &r.final_stats.counters;
        assert_eq!(c.empty_reads, Some(0), "{scenario}: {c:?}");
        assert!(c.rows.unwrap() >= c.reads, "{scenario}: {c:?}");
        let (v, _) = report(&dir, &results);
        assert_clean(&v);
    }
}

#[test]
fn clean_tpcc_and_dbstress_runs_on_sqlite_flag_nothing_of_the_kind() {
    for (prepare, run, out) in [
        ("Prepare_TPCC_1W", "TPCC_1W", "tpcc"),
        ("Prepare_dbSTRESS_1K", "dbSTRESS_1K-RW1-trx", "dbstress"),
    ] {
        // A database each: SQLite's table names ignore case, and TPC-C's history1 is
        // dbSTRESS's HISTORY1.
        let dir = Dir::new();
        dir.bmk()
            .args(&format!("kit prepare {prepare} 1 --db-driver=sqlite"))
            .run_within(Duration::from_secs(300))
            .code(0);
        dir.bmk()
            .args(&format!(
                "kit run {run} 1 3 --db-driver=sqlite --results-dir={out} --capture-interval=0"
            ))
            .run_within(Duration::from_secs(120))
            .code(0);
        let (v, page) = report(&dir, &dir.join(out));
        assert_clean(&v);
        // ... and shown with the level on the page.
        let title = if out == "tpcc" {
            "<h3>TPC-C results</h3>"
        } else {
            "<h3>dbSTRESS results</h3>"
        };
        assert!(page.contains(title), "{out}: no {title}");
        // The workload's own results are kept with the level.
        let r = ResultsFile::read(level1(&dir.join(out)).join("result.json")).unwrap();
        let key = if out == "tpcc" {
            "tpmC"
        } else {
            "read_write_per_sec"
        };
        assert!(
            r.workload.get(key).is_some_and(|v| *v > 0.0),
            "{out}: {:?}",
            r.workload
        );
        assert!(
            page.contains(&format!("<tr><th>{key}</th>")),
            "{out}: {key}"
        );
    }
}

#[test]
fn more_tables_than_exist_on_mariadb() {
    let Some(db) = ServerDb::new(DriverKind::Mysql) else {
        return;
    };
    let dir = Dir::new();
    dir.write("bmk.toml", &db.target(false));
    dir.bmk()
        .args("kit prepare Prepare_1K_4tab-InnoDB 4 --target=db")
        .run_within(Duration::from_secs(120))
        .code(0);
    dir.bmk()
        .args("kit run OLTP_RO_1K_4tab-uniform-p_sel1-notrx 4 3 --tables=400 --mysql-ignore-errors=all --target=db --results-dir=bad --capture-interval=1")
        .run_within(Duration::from_secs(120))
        .code(0);
    let (v, page) = report(&dir, &dir.join("bad"));
    assert_eq!(find(&v, "errors").severity, "fail");
    let d = find(&v, "data_smaller_than_claimed");
    assert_eq!(d.value, Some(396.0));
    assert!(!page.contains("No check triggered"));

    dir.bmk()
        .args("kit run OLTP_RO_1K_4tab-uniform-p_sel1-notrx 4 3 --table-size=100000 --target=db --results-dir=empty --capture-interval=1")
        .run_within(Duration::from_secs(120))
        .code(0);
    let (v, _) = report(&dir, &dir.join("empty"));
    assert!(find(&v, "empty_reads").value.unwrap() > 95.0);

    dir.bmk()
        .args("kit run OLTP_RW_1K_4tab-uniform-ps-trx 4 3 --target=db --results-dir=clean --capture-interval=1")
        .run_within(Duration::from_secs(120))
        .code(0);
    let (v, _) = report(&dir, &dir.join("clean"));
    assert_clean(&v);
}

#[test]
fn a_clean_oltp_run_and_missing_tables_on_postgresql() {
    let Some(db) = ServerDb::new(DriverKind::Pgsql) else {
        return;
    };
    let dir = Dir::new();
    dir.write("bmk.toml", &db.target(false));
    dir.bmk()
        .args("kit prepare Prepare_1K_2tab 2 --target=db")
        .run_within(Duration::from_secs(120))
        .code(0);
    dir.bmk()
        .args("kit run OLTP_RW_1K_2tab-uniform-trx 2 3 --target=db --results-dir=clean --capture-interval=1")
        .run_within(Duration::from_secs(120))
        .code(0);
    let results = dir.join("clean");
    let info: LevelInfo = read_json(&level1(&results).join("level.json")).unwrap();
    let data = info.data.expect("the kit read the tables");
    assert_eq!((data.tables.len(), data.tables_missing), (2, 0));
    assert_eq!(data.tables[1].max_id, Some(1000));
    let (v, _) = report(&dir, &results);
    assert_clean(&v);

    dir.bmk()
        .args("kit run OLTP_RO_1K_2tab-uniform-p_sel1-notrx 2 3 --tables=6 --pgsql-ignore-errors=all --target=db --results-dir=bad --capture-interval=1")
        .run_within(Duration::from_secs(120))
        .code(0);
    let (v, _) = report(&dir, &dir.join("bad"));
    assert_eq!(find(&v, "data_smaller_than_claimed").value, Some(4.0));
}
