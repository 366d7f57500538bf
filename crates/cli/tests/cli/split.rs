//! `--max-users-per-process`: a level with more users than one process runs as several
//! bmk processes started together, whose parts are merged into the level's one result
//! (SQLite: no server needed).

use std::path::Path;

use bmk_results::results_dir::{read_intervals, read_json, LevelInfo, RunManifest};
use bmk_results::results_file::ResultsFile;

use crate::util::Dir;

const DB: &str = "--db-driver=sqlite --sqlite-db=scale_sb.db --tables=1 --table-size=500";

fn prepared() -> Dir {
    let dir = Dir::new();
    dir.bmk()
        .args(&format!("oltp_point_select {DB} prepare"))
        .run()
        .ok();
    dir
}

fn parts(level: &Path) -> Vec<std::path::PathBuf> {
    let mut p: Vec<_> = std::fs::read_dir(level.join("processes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("part-"))
        })
        .collect();
    p.sort();
    p
}

/// Checks the level at `level`: split into `n` parts whose totals add up to the merged
/// result, started at one instant.
fn check_split(level: &Path, users: u32, n: usize) {
    let parts = parts(level);
    assert_eq!(parts.len(), n, "parts: {parts:?}");
    let merged = ResultsFile::read(level.join("result.json")).unwrap();
    let each: Vec<ResultsFile> = parts
        .iter()
        .map(|p| ResultsFile::read(p.join("result.json")).unwrap())
        .collect();
    let f = &merged.final_stats;
    assert_eq!(f.threads, users);
    assert_eq!(
        each.iter()
            .map(|r| r.final_stats.threads)
            .collect::<Vec<_>>(),
        vec![users / n as u32; n]
    );
    let sum = |g: &dyn Fn(&ResultsFile) -> u64| each.iter().map(g).sum::<u64>();
    assert!(f.events > 0);
    assert_eq!(f.events, sum(&|r| r.final_stats.events));
    assert_eq!(f.counters.reads, sum(&|r| r.final_stats.counters.reads));
    assert_eq!(f.counters.other, sum(&|r| r.final_stats.counters.other));
    assert_eq!(f.counters.errors, sum(&|r| r.final_stats.counters.errors));
    // The merged interval series holds every part's events, on one grid.
    let merged_lines = read_intervals(&level.join("intervals.jsonl")).unwrap();
    let part_lines: u64 = parts
        .iter()
        .flat_map(|p| read_intervals(&p.join("intervals.jsonl")).unwrap())
        .map(|l| l.record.events)
        .sum();
    assert_eq!(
        merged_lines.iter().map(|l| l.record.events).sum::<u64>(),
        part_lines
    );
    let shape = |lines: &[bmk_results::results_dir::IntervalLine]| -> Vec<(f64, u32, u64)> {
        lines
            .iter()
            .map(|l| (l.record.time_s, l.record.threads, l.end_unix_ns / 1_000_000))
            .collect()
    };
    let each_shape: Vec<_> = parts
        .iter()
        .map(|p| shape(&read_intervals(&p.join("intervals.jsonl")).unwrap()))
        .collect();
    // Each slot of the grid once; a host loaded enough may make a part skip a report
    // (its next line then covers both), so not every slot need hold every part.
    let stamps: Vec<u64> = merged_lines
        .iter()
        .map(|l| (l.record.time_s * 1000.0).round() as u64)
        .collect();
    assert!(
        stamps.windows(2).all(|w| w[0] < w[1])
            && merged_lines.iter().all(|l| l.record.threads <= users)
            // Where every part reported, the merged count is theirs summed (the line at
            // the time limit counts the workers still running then, as sysbench does).
            && merged_lines.iter().all(|l| {
                let at = (l.record.time_s * 1000.0).round() as u64;
                let in_parts: Vec<u32> = each_shape
                    .iter()
                    .filter_map(|s| {
                        s.iter()
                            .find(|p| (p.0 * 1000.0).round() as u64 == at)
                            .map(|p| p.1)
                    })
                    .collect();
                in_parts.len() < n || l.record.threads == in_parts.iter().sum::<u32>()
            }),
        "merged {:?}\nparts {each_shape:?}",
        shape(&merged_lines)
    );
    // Every part passed the same local gate, at the same agreed instant.
    let starts: Vec<i64> = each
        .iter()
        .map(|r| {
            let b = r.start.as_ref().unwrap().barrier.as_ref().unwrap();
            assert_eq!(b.clients.len(), n);
            b.server_start_unix_us
        })
        .collect();
    assert!(starts.iter().all(|s| *s == starts[0]), "{starts:?}");
    let released: Vec<u64> = each
        .iter()
        .map(|r| r.start.as_ref().unwrap().measured_from_unix_ns)
        .collect();
    let spread = released.iter().max().unwrap() - released.iter().min().unwrap();
    // Releasing a thousand threads takes a while on a loaded host; the instant they
    // agreed on is the same (above), and their reports count from it.
    assert!(spread < 1_000_000_000, "released {spread} ns apart");
    let info: LevelInfo = read_json(&level.join("level.json")).unwrap();
    assert_eq!((info.users, info.processes), (users, n as u32));
    assert_eq!(info.status, "completed");
}

#[test]
fn three_thousand_users_split_into_three_processes() {
    let dir = prepared();
    let run = dir
        .bmk()
        .args(&format!(
            "oltp_point_select {DB} --threads=3000 --time=2 --report-interval=1 \
             --max-users-per-process=1000 --capture-interval=0 --results-dir=out run"
        ))
        .run()
        .ok();
    assert!(
        run.stdout
            .contains("3000 users run as 3 processes of at most 1000 users"),
        "{}",
        run.context()
    );
    assert!(run.stdout.contains("Merged 3 processes: 3000 threads"));
    assert!(
        run.stdout.contains("[ 1s ] thds: 3000 "),
        "{}",
        run.context()
    );
    check_split(&dir.join("out/level-0001"), 3000, 3);
    let summary = std::fs::read_to_string(dir.join("out/summary.csv")).unwrap();
    assert!(summary.contains(",level-0001,3000,1,"), "{summary}");
}

#[test]
fn a_kit_level_splits_and_the_plan_records_the_limit() {
    let dir = prepared();
    dir.bmk()
        .args(
            "kit run OLTP_RO_500_1tab 30 1 --db-driver=sqlite --sqlite-db=scale_sb.db \
             --max-users-per-process=10 --capture-interval=0 --results-dir=kit",
        )
        .run()
        .ok();
    check_split(&dir.join("kit/level-0001"), 30, 3);
    let run: RunManifest = read_json(&dir.join("kit/run.json")).unwrap();
    assert_eq!(run.sweep.unwrap().max_users_per_process, 10);
}

#[test]
fn a_split_needs_a_results_directory() {
    prepared()
        .bmk()
        .args(&format!(
            "oltp_point_select {DB} --threads=4 --time=1 --max-users-per-process=2 run"
        ))
        .run()
        .fails_with("--max-users-per-process splits a level into processes whose results are merged in a results directory: add --results-dir=DIR (or use bmk kit run)");
}

#[test]
fn a_level_within_the_limit_runs_in_one_process() {
    let dir = prepared();
    dir.bmk()
        .args(&format!(
            "oltp_point_select {DB} --threads=4 --events=200 --max-users-per-process=4 \
             --capture-interval=0 --results-dir=out run"
        ))
        .run()
        .ok();
    assert!(!dir.join("out/level-0001/processes").exists());
}

#[test]
fn an_events_limit_is_shared_between_the_processes() {
    let dir = prepared();
    dir.bmk()
        .args(&format!(
            "oltp_point_select {DB} --threads=6 --events=1000 --time=0 \
             --max-users-per-process=2 --capture-interval=0 --results-dir=out run"
        ))
        .run()
        .ok();
    let merged = ResultsFile::read(dir.join("out/level-0001/result.json")).unwrap();
    assert_eq!(merged.final_stats.events, 1000);
    assert_eq!(parts(&dir.join("out/level-0001")).len(), 3);
}

#[test]
fn a_part_that_cannot_start_fails_the_level_with_its_message() {
    let dir = Dir::new();
    dir.bmk()
        .args(
            "oltp_point_select --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=1 \
             --threads=4 --time=1 --max-users-per-process=2 --capture-interval=0 \
             --results-dir=out run",
        )
        .run()
        .fails_with("FATAL: part-01 of the level ended with exit code 1: unable to connect to MySQL server on host '127.0.0.1', port 1, aborting...");
    let info: LevelInfo = read_json(&dir.join("out/level-0001/level.json")).unwrap();
    assert_eq!((info.status.as_str(), info.processes), ("failed", 2));
    let run: RunManifest = read_json(&dir.join("out/run.json")).unwrap();
    assert_eq!(run.status, "failed");
}
