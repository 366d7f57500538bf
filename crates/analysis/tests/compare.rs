//! `bmk compare`'s rules before its statistics: unlike runs refused unless mixed,
//! levels that did not complete left out, steady windows used when every side has
//! them, and a run measured on a host busy with other work warned about.
mod support;

use std::path::{Path, PathBuf};

use bmk_analysis::compare::{compare, CompareOptions};
use bmk_results::results_dir;
use bmk_results::RunData;
use support::*;

const MIXED: CompareOptions = CompareOptions { mixed: true };
const STRICT: CompareOptions = CompareOptions { mixed: false };

/// A run of one level per users count in `users`, `seconds` long, `rate(users,
/// second)` events per second.
fn run(
    root: &Path,
    name: &str,
    test: &str,
    table_size: &str,
    users: &[u32],
    seconds: u64,
    rate: impl Fn(u32, u64) -> u64,
) -> PathBuf {
    let dir = root.join(name);
    let options = default_options(table_size);
    let mut rows = Vec::new();
    for (i, &u) in users.iter().enumerate() {
        let evs = events(u as usize, seconds, 50 + i as u64, 2_000_000, |s| {
            rate(u, s)
        });
        rows.push(write_level(
            &dir.join(results_dir::level_dir_name(i as u32 + 1)),
            i as u32 + 1,
            1,
            0.0,
            &Process {
                threads: u as usize,
                seconds,
                start_ns: T0_NS + i as u64 * 100_000_000_000,
                events: &evs,
                options: options.clone(),
                test: test.into(),
                query_counts: false,
            },
        ));
    }
    write_run(&dir, test, &options, users, &rows, Default::default());
    dir
}

fn read(dirs: &[&PathBuf]) -> Vec<RunData> {
    dirs.iter().map(|d| RunData::read(d).unwrap()).collect()
}

fn jitter(s: u64) -> u64 {
    [0, 11, 4, 19, 7, 15, 2, 9][(s % 8) as usize]
}

#[test]
fn unlike_workloads_are_refused_in_one_line_unless_mixed() {
    let tmp = tempfile::tempdir().unwrap();
    let rw = run(
        tmp.path(),
        "rw",
        "oltp_read_write",
        "10000",
        &[4],
        10,
        |_, s| 1000 + jitter(s),
    );
    let tpcc = run(tmp.path(), "tpcc", "tpcc", "10000", &[4], 10, |_, s| {
        390 + jitter(s)
    });
    let err = compare(&read(&[&rw, &tpcc]), STRICT)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "cannot compare unlike runs: A (rw) ran 'oltp_read_write' but B (tpcc) ran 'tpcc' (use --mixed to compare them anyway)"
    );
    let cmp = compare(&read(&[&rw, &tpcc]), MIXED).unwrap();
    assert!(
        cmp.warnings[0].starts_with("unlike runs compared anyway (--mixed): A (rw) ran"),
        "{:?}",
        cmp.warnings
    );
    assert!(cmp.text_summary().contains("% slower than A at 4 users"));
}

#[test]
fn different_data_sizes_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let small = run(
        tmp.path(),
        "small",
        "oltp_read_write",
        "10000",
        &[4],
        10,
        |_, s| 1000 + jitter(s),
    );
    let big = run(
        tmp.path(),
        "big",
        "oltp_read_write",
        "5000000",
        &[4],
        10,
        |_, s| 300 + jitter(s),
    );
    let err = compare(&read(&[&small, &big]), STRICT)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--table-size is 10000 in A (small) but 5000000 in B (big)"),
        "{err}"
    );
    // A different scenario name is a different workload too.
    let renamed = tmp.path().join("renamed");
    copy_tree(&small, &renamed);
    let path = renamed.join(results_dir::RUN_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("oltp_read_write-test", "OLTP_RW_10K_4tab-uniform-ps-trx"),
    )
    .unwrap();
    let err = compare(&read(&[&small, &renamed]), STRICT)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("A (small) is scenario 'oltp_read_write-test' but B (renamed) is 'OLTP_RW_10K_4tab-uniform-ps-trx'"),
        "{err}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Sets the status of a level in its `level.json` and `result.json`, as a run whose
/// level hit a fatal error or was interrupted leaves them.
fn set_status(level: &Path, status: &str) {
    for file in [results_dir::LEVEL_FILE, results_dir::RESULT_FILE] {
        let path = level.join(file);
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        v["status"] = status.into();
        std::fs::write(&path, v.to_string()).unwrap();
    }
}

#[test]
fn levels_that_did_not_complete_are_left_out_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let rate = |u: u32, s: u64| 250 * u as u64 + jitter(s);
    let a = run(
        tmp.path(),
        "a",
        "oltp_read_write",
        "10000",
        &[1, 2, 4],
        10,
        rate,
    );
    let b = run(
        tmp.path(),
        "b",
        "oltp_read_write",
        "10000",
        &[1, 2, 4],
        10,
        rate,
    );
    set_status(&b.join("level-0002"), "fatal");
    set_status(&b.join("level-0003"), "interrupted");
    let cmp = compare(&read(&[&a, &b]), STRICT).unwrap();
    assert!(
        cmp.warnings.contains(&"B left out of the comparison (did not complete): level-0002 (2 users, fatal), level-0003 (4 users, interrupted)".to_string()),
        "{:?}",
        cmp.warnings
    );
    let b_rows: Vec<u32> = cmp
        .rows
        .iter()
        .filter(|r| r.side == "B")
        .map(|r| r.users)
        .collect();
    assert_eq!(b_rows, vec![1]);
    assert_eq!(cmp.verdicts.len(), 1);
}

#[test]
fn steady_windows_are_compared_when_every_side_has_one() {
    let tmp = tempfile::tempdir().unwrap();
    // The same steady throughput; A spent its first 20 s of 60 warming up.
    let a = run(
        tmp.path(),
        "cold",
        "oltp_read_write",
        "10000",
        &[4],
        60,
        |_, s| {
            if s < 20 {
                300 + jitter(s)
            } else {
                1000 + jitter(s)
            }
        },
    );
    let b = run(
        tmp.path(),
        "warm",
        "oltp_read_write",
        "10000",
        &[4],
        60,
        |_, s| 1000 + jitter(s + 3),
    );
    let cmp = compare(&read(&[&a, &b]), STRICT).unwrap();
    assert!(
        cmp.rows.iter().all(|r| r.window == "steady"),
        "{:?}",
        cmp.rows
    );
    let v = &cmp.verdicts[0];
    assert!(!v.significant && v.change_pct.abs() < 1.0, "{v:?}");
    let text = cmp.text_summary();
    assert!(text.contains("window: steady = each level from the end of its warm-up"));
    // Over whole levels the cold run would look 30 % slower: a side without a steady
    // window (a level too short to judge) puts every side on whole levels.
    let short = run(
        tmp.path(),
        "short",
        "oltp_read_write",
        "10000",
        &[4],
        10,
        |_, s| 1000 + jitter(s),
    );
    let cmp = compare(&read(&[&a, &short]), STRICT).unwrap();
    assert!(
        cmp.rows.iter().all(|r| r.window == "whole"),
        "{:?}",
        cmp.rows
    );
    assert!(cmp.verdicts[0].change_pct > 20.0, "{:?}", cmp.verdicts);
}

#[test]
fn a_level_that_never_settled_is_named_and_compared_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run(
        tmp.path(),
        "ramp",
        "oltp_read_write",
        "10000",
        &[4],
        40,
        |_, s| 200 + 30 * s,
    );
    let b = run(
        tmp.path(),
        "flat",
        "oltp_read_write",
        "10000",
        &[4],
        40,
        |_, s| 800 + jitter(s),
    );
    let cmp = compare(&read(&[&a, &b]), STRICT).unwrap();
    assert!(
        cmp.warnings.iter().any(|w| w.starts_with(
            "A never reached a steady state at level-0001 (4 users: throughput still rises by"
        )),
        "{:?}",
        cmp.warnings
    );
    assert!(cmp.rows.iter().all(|r| r.window == "whole"));
}

/// `/proc/stat` samples 1 s apart of a 2-CPU host at 100 ticks a second, `busy` of the
/// 200 ticks a second busy (user time).
fn host_stat(start_s: u64, samples: u64, busy: u64) -> String {
    let mut out = String::new();
    for i in 0..samples {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(start_s + i);
        out.push_str(&bmk_results::capture::sample_header(t));
        let (user, idle) = (1000 + i * busy, 5000 + i * (200 - busy));
        out.push_str(&format!("cpu  {user} 0 0 {idle} 0 0 0 0 0 0\n"));
        for c in 0..2 {
            out.push_str(&format!(
                "cpu{c} {} 0 0 {} 0 0 0 0 0 0\n",
                user / 2,
                idle / 2
            ));
        }
        out.push_str("intr 0\nctxt 0\nbtime 1795600000\nprocesses 10\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n");
    }
    out
}

/// Gives every level of `dir` a host capture where the host was `busy` ticks a second
/// (of 200) busy while bmk used `bmk` ticks a second, and the server's address.
fn capture_host(dir: &Path, busy: u64, bmk: u64, address: &str) {
    for e in std::fs::read_dir(dir).unwrap() {
        let level = e.unwrap().path();
        if !level.join(results_dir::LEVEL_FILE).is_file() {
            continue;
        }
        copy_captures("mariadb", &level);
        let start = T0_NS / 1_000_000_000;
        std::fs::write(level.join("os/stat.txt"), host_stat(start, 6, busy)).unwrap();
        // The real client_stat.txt has samples of one process; rewrite them 1 s apart
        // with `bmk` ticks a second.
        let path = level.join("os/client_stat.txt");
        let text = std::fs::read_to_string(&path).unwrap();
        let line = text.lines().find(|l| !l.starts_with("TS ")).unwrap();
        let mut out = String::new();
        for i in 0..6u64 {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(start + i);
            out.push_str(&bmk_results::capture::sample_header(t));
            out.push_str(line);
            out.push('\n');
        }
        std::fs::write(&path, out).unwrap();
        edit_client_ticks(&path, |sample, _| 100 + sample as u64 * bmk / 2);
    }
    let path = dir.join(results_dir::RUN_FILE);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["server"]["address"] = address.into();
    std::fs::write(&path, v.to_string()).unwrap();
}

#[test]
fn a_host_busy_with_other_work_is_warned_about_in_every_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run(
        tmp.path(),
        "a",
        "oltp_read_write",
        "10000",
        &[4],
        10,
        |_, s| 1000 + jitter(s),
    );
    let b = run(
        tmp.path(),
        "b",
        "oltp_read_write",
        "10000",
        &[4],
        10,
        |_, s| 1290 + jitter(s),
    );
    // A: a quiet host (bmk 30 % of a core, 20 % of the host busy in all). B: 100 % busy
    // while bmk used 30 % of one core, against a remote server.
    capture_host(&a, 40, 30, "db1.example:3306");
    capture_host(&b, 200, 30, "db1.example:3306");
    let cmp = compare(&read(&[&a, &b]), STRICT).unwrap();
    let w: Vec<&String> = cmp
        .warnings
        .iter()
        .filter(|w| w.contains("busy with other work"))
        .collect();
    assert_eq!(w.len(), 1, "{:?}", cmp.warnings);
    assert!(
        w[0].starts_with("B (b)'s host was busy with other work during 1 of its 1 level(s): up to 85 % of its 2 CPU(s) went to processes other than bmk, at 4 users (host 100 % busy, bmk 15 %)"),
        "{}",
        w[0]
    );
    let v = &cmp.verdicts[0].text;
    assert!(
        v.starts_with("B is 2")
            && v.ends_with("(but B's host was busy with other work: see the warning)"),
        "{v}"
    );
    // With the server on the same host its work is in the figure: 60 % of the host
    // outside bmk is then not called busy, a saturated host still is.
    capture_host(&b, 150, 30, "127.0.0.1:3306");
    let cmp = compare(&read(&[&a, &b]), STRICT).unwrap();
    assert!(
        !cmp.warnings
            .iter()
            .any(|w| w.contains("busy with other work")),
        "{:?}",
        cmp.warnings
    );
    capture_host(&b, 196, 30, "/run/mysqld/mysqld.sock");
    let cmp = compare(&read(&[&a, &b]), STRICT).unwrap();
    assert!(
        cmp.warnings.iter().any(|w| w.contains(
            "went to processes other than bmk (the database server runs on this host and is counted in it)"
        )),
        "{:?}",
        cmp.warnings
    );
    // Two runs on the same busy host: the "B is 28.6 % faster" case.
    capture_host(&a, 200, 30, "db1.example:3306");
    let cmp = compare(&read(&[&a, &b]), STRICT).unwrap();
    assert!(
        cmp.verdicts[0]
            .text
            .ends_with("(but both hosts were busy with other work: see the warnings)"),
        "{:?}",
        cmp.verdicts
    );
}

#[test]
fn the_host_load_recorded_in_level_json_is_preferred_to_the_captures() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run(
        tmp.path(),
        "a",
        "oltp_read_write",
        "10000",
        &[4],
        10,
        |_, s| 1000 + jitter(s),
    );
    let b = run(
        tmp.path(),
        "b",
        "oltp_read_write",
        "10000",
        &[4],
        10,
        |_, s| 1000 + jitter(s + 1),
    );
    // The captures say the host was quiet; the level's own record says 65 % of it went
    // to other work, the local server's share already taken out.
    capture_host(&b, 40, 30, "127.0.0.1:3306");
    let path = b.join("level-0001").join(results_dir::LEVEL_FILE);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["cpu"] = serde_json::json!({
        "wall_s": 10.0, "bmk_user_s": 2.0, "bmk_system_s": 1.0, "server_s": 4.0,
        "host_cpus": 2, "host_busy_pct": 100.0, "host_other_pct": 65.0, "steal_pct": 0.0
    });
    std::fs::write(&path, v.to_string()).unwrap();
    let cmp = compare(&read(&[&a, &b]), STRICT).unwrap();
    assert!(
        cmp.warnings.iter().any(|w| w.starts_with(
            "B (b)'s host was busy with other work during 1 of its 1 level(s): up to 65 % of its 2 CPU(s) went to processes other than bmk, at 4 users (host 100 % busy, bmk 15 %)"
        )),
        "{:?}",
        cmp.warnings
    );
}
