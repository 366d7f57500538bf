//! `bmk merge`, `bmk report` and `bmk compare` on results directories built by the
//! analysis crate's test support (the report crate's own writers, real captures).
//! Text outputs are compared with `tests/golden/*.txt`; `BMK_BLESS=1` rewrites them.

#[path = "../../../analysis/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use support::*;

use crate::util::Dir;

#[track_caller]
fn matches_golden(name: &str, text: &str) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "golden", name]
        .iter()
        .collect();
    if std::env::var_os("BMK_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (BMK_BLESS=1 writes it)", path.display()));
    if text != want {
        let mut msg = format!("{} differs:\n", path.display());
        for (i, (got, want)) in text.lines().zip(want.lines()).enumerate() {
            if got != want {
                msg.push_str(&format!("line {}:\n  got:  {got}\n  want: {want}\n", i + 1));
            }
        }
        msg.push_str(&format!(
            "({} lines, want {})",
            text.lines().count(),
            want.lines().count()
        ));
        panic!("{msg}");
    }
}

fn process<'a>(threads: usize, start_ns: u64, events: &'a [Event]) -> Process<'a> {
    Process {
        threads,
        seconds: 10,
        start_ns,
        events,
        options: default_options("10000"),
        test: "oltp_read_write".into(),
        query_counts: false,
    }
}

/// Two processes of 4 threads that ran one level together.
fn two_processes(root: &Path, b_start_ns: u64) {
    let all = events(8, 10, 42, 2_000_000, |s| 900 + 40 * s);
    let a: Vec<Event> = all
        .iter()
        .filter(|e| e.thread % 2 == 0)
        .map(|e| Event {
            thread: e.thread / 2,
            ..*e
        })
        .collect();
    let b: Vec<Event> = all
        .iter()
        .filter(|e| e.thread % 2 == 1)
        .map(|e| Event {
            thread: e.thread / 2,
            ..*e
        })
        .collect();
    write_level(
        &root.join("a/level-0001"),
        1,
        1,
        0.0,
        &process(4, T0_NS, &a),
    );
    write_level(
        &root.join("b/level-0001"),
        1,
        1,
        0.0,
        &process(4, b_start_ns, &b),
    );
}

#[test]
fn merge_prints_the_final_report_of_the_sum_and_writes_it() {
    let dir = Dir::new();
    two_processes(dir.path(), T0_NS + 2_000_000);
    let run = dir.bmk().args("merge a b --results merged.json").run().ok();
    matches_golden("merge.txt", &run.stdout);
    let merged = bmk_report::ResultsFile::read(dir.join("merged.json")).unwrap();
    let a = bmk_report::ResultsFile::read(dir.join("a/level-0001/result.json")).unwrap();
    let b = bmk_report::ResultsFile::read(dir.join("b/level-0001/result.json")).unwrap();
    assert_eq!(
        merged.final_stats.events,
        a.final_stats.events + b.final_stats.events
    );
    assert_eq!(merged.intervals.len(), 10);
    assert!(run.stdout.contains(&format!(
        "total number of events:              {}",
        merged.final_stats.events
    )));

    dir.bmk().args("merge a b --results-dir merged").run().ok();
    let level = dir.join("merged/level-0001");
    assert!(level.join("result.json").is_file() && level.join("intervals.jsonl").is_file());
    assert!(std::fs::read_to_string(dir.join("merged/summary.csv"))
        .unwrap()
        .contains("level-0001,8,1,"));
    dir.bmk()
        .args("merge a b --results-dir merged")
        .run()
        .fails_mentioning(&["merged exists and is not empty"]);
}

#[test]
fn merge_refuses_bad_inputs_in_one_line() {
    let dir = Dir::new();
    two_processes(dir.path(), T0_NS + 30_000_000_000);
    dir.bmk()
        .args("merge a b")
        .run()
        .fails_mentioning(&["cannot merge: the runs did not overlap in time", "--mixed"]);
    dir.bmk().args("merge --mixed a b").run().code(0);
    dir.bmk()
        .args("merge a nowhere")
        .run()
        .fails_mentioning(&["nowhere"]);
    dir.bmk()
        .args("merge a")
        .run()
        .fails_mentioning(&["give two or more inputs"]);
    dir.bmk()
        .args("merge --frobnicate a b")
        .run()
        .fails_mentioning(&["unknown option --frobnicate"]);
}
