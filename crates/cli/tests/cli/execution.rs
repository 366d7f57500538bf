//! Which workers ran a built-in OLTP workload, and why: native by default, Lua as soon
//! as an option the native workers do not implement is given (or the native path is
//! switched off), recorded as `execution` in `--results` and the results directory's
//! `result.json`, and printed at `--verbosity=4`.

use std::path::Path;

use serde_json::Value;

use crate::results::validated;
use crate::util::*;

const SQLITE: &str = "oltp_read_only --db-driver=sqlite --tables=1 --table-size=200";

fn prepared() -> Dir {
    let dir = Dir::new();
    dir.bmk().args(&format!("{SQLITE} prepare")).run().code(0);
    dir
}

/// Runs 20 events with `extra` options and returns the results file's `execution`.
fn execution(dir: &Dir, extra: &str, env: &[(&str, &str)]) -> Value {
    let file = dir.join("r.json");
    let _ = std::fs::remove_file(&file);
    let mut cmd = dir.bmk().args(&format!(
        "{SQLITE} --events=20 --results=r.json {extra} run"
    ));
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    cmd.run().ok();
    validated(&file)["execution"].clone()
}

#[test]
fn default_run_is_native_and_says_so() {
    let dir = prepared();
    let e = execution(&dir, "", &[]);
    assert_eq!(e["path"], "native", "{e}");
    assert!(e.get("lua_reason").is_none(), "{e}");
    // SQLite blocks its thread: no event loops, no MySQL fast path.
    assert_eq!(e["workers"], "threads", "{e}");
    assert_eq!(e["event_loops"], 0, "{e}");
    assert_eq!(e["mysql_fast_path"], false, "{e}");
    assert_eq!(e["pgsql_fast_path"], false, "{e}");
}

#[test]
fn a_lua_only_option_runs_in_lua_and_is_named() {
    let dir = prepared();
    for (option, reason) in [
        ("--sleep-after-query=1", "--sleep-after-query"),
        ("--pin-tables", "--pin-tables"),
        ("--extra-cols=0 --rand-data=50", "--rand-data"),
        ("--native-oltp=off", "--native-oltp=off"),
    ] {
        let e = execution(&dir, option, &[]);
        assert_eq!(e["path"], "lua", "{option}: {e}");
        assert_eq!(e["lua_reason"], reason, "{option}: {e}");
    }
    // Given at its default, an option the native workers do not know changes nothing.
    let e = execution(&dir, "--sleep-after-query=0", &[]);
    assert_eq!(e["path"], "native", "{e}");
    // The environment variable is an alias of --native-oltp, which wins over it.
    let e = execution(&dir, "", &[("BMK_NATIVE_OLTP", "0")]);
    assert_eq!(e["lua_reason"], "BMK_NATIVE_OLTP=0", "{e}");
    let e = execution(&dir, "--native-oltp=on", &[("BMK_NATIVE_OLTP", "0")]);
    assert_eq!(e["path"], "native", "{e}");
}

#[test]
fn verbosity_4_prints_the_path_and_3_does_not() {
    let dir = prepared();
    let run = dir
        .bmk()
        .args(&format!(
            "{SQLITE} --events=5 --verbosity=4 --pin-tables run"
        ))
        .run()
        .ok();
    let lines = run.line_matching(r"^Execution: (.*)$");
    assert_eq!(
        lines[1],
        "Lua workers on a thread each (Lua because of --pin-tables), MySQL fast path off"
    );
    let quiet = dir
        .bmk()
        .args(&format!("{SQLITE} --events=5 run"))
        .run()
        .ok();
    assert!(!quiet.stdout.contains("Execution:"), "{}", quiet.stdout);
}

#[test]
fn the_results_directory_records_it_too() {
    let dir = prepared();
    dir.bmk()
        .args(&format!("{SQLITE} --events=20 --results-dir=out run"))
        .run()
        .ok();
    let result = find(&dir.join("out"), "result.json").expect("a result.json");
    let doc = validated(&result);
    assert_eq!(doc["execution"]["path"], "native", "{doc}");
}

fn find(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
        if path.is_dir() {
            if let Some(found) = find(&path, name) {
                return Some(found);
            }
        }
    }
    None
}
