//! `bmk report` and `bmk merge` on results directories from elsewhere: files that are
//! not regular files are skipped with a line naming them, never waited for; one run
//! given twice is refused by `merge`.

// The analysis crate's fixtures, as `analysis.rs` includes them; a second copy keeps
// this file apart from that one, which other tests change.
#[allow(clippy::duplicate_mod)]
#[path = "../../../analysis/tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::time::Duration;

use support::*;

use crate::util::Dir;

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

#[test]
fn report_skips_a_fifo_and_links_to_a_device_saying_which() {
    let dir = Dir::new();
    sweep(dir.path(), "sweep", &[1, 2], &[], false, |u, _| {
        400 * u as u64
    });
    let level = dir.join("sweep/level-0002");
    let fifo = level.join("server/global_status.txt");
    std::fs::remove_file(&fifo).unwrap();
    mkfifo(&fifo);
    let zero = level.join("intervals.jsonl");
    std::fs::remove_file(&zero).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let run = dir
        .bmk()
        .args("report sweep")
        .run_within(Duration::from_secs(120))
        .code(0);
    let warnings: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        warnings,
        [
            format!(
                "WARNING: skipping {}: a character device, not a regular file",
                Path::new("sweep/level-0002/intervals.jsonl").display()
            ),
            format!(
                "WARNING: skipping {}: a FIFO, not a regular file",
                Path::new("sweep/level-0002/server/global_status.txt").display()
            ),
        ],
        "{}",
        run.context()
    );
    assert!(dir.join("sweep/report.html").exists());
}

#[test]
fn merge_refuses_one_run_given_twice_unless_allowed() {
    let dir = Dir::new();
    let all = events(4, 10, 7, 2_000_000, |_| 500);
    let p = Process {
        threads: 4,
        seconds: 10,
        start_ns: T0_NS,
        events: &all,
        options: default_options("10000"),
        test: "oltp_read_write".into(),
        query_counts: false,
    };
    write_level(&dir.join("a/level-0001"), 1, 1, 0.0, &p);
    std::fs::create_dir_all(dir.join("copy/level-0001")).unwrap();
    for f in ["level.json", "intervals.jsonl", "result.json"] {
        std::fs::copy(
            dir.join("a/level-0001").join(f),
            dir.join("copy/level-0001").join(f),
        )
        .unwrap();
    }
    let run = dir.bmk().args("merge a copy").run().code(1);
    let line = run.stderr.trim_end();
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.context());
    assert!(
        line.contains("cannot merge: a and copy are the same run (run_id ")
            && line.ends_with(
                "); merging them would count every event twice (use --allow-duplicates to merge anyway)"
            ),
        "{}",
        run.context()
    );
    dir.bmk()
        .args("merge a/level-0001/result.json a/level-0001/result.json")
        .run()
        .fails_mentioning(&["are the same run"]);
    let run = dir.bmk().args("merge --allow-duplicates a copy").run().ok();
    let events = all.len() as u64;
    assert_eq!(run.total_events(), 2 * events, "{}", run.context());
}
