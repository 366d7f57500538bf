//! The --sync-file start barrier holds every worker until the file is removed.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{bmk_bin, stats, Db, Kind};

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn check_barrier(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    db.bmk("oltp_point_select", "prepare", &["--table-size=100"])
        .ok();
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("start");
    let gate_s = gate.to_str().unwrap().to_string();
    let mut args = vec!["oltp_point_select".to_string()];
    args.extend(db.args());
    args.extend(
        [
            "--table-size=100",
            "--threads=4",
            "--time=1",
            "--thread-init-timeout=600",
            "--sync-wait=5",
        ]
        .map(String::from),
    );
    args.push(format!("--sync-file={gate_s}"));
    args.push("run".into());
    let mut child = Command::new(bmk_bin())
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for l in BufReader::new(stdout).lines() {
            lines.push(l.unwrap());
        }
        lines
    });
    // Every worker checks in; then the gate and F.0 exist and nobody runs.
    let gate0 = dir.path().join("start.0");
    wait_for("the gate", Duration::from_secs(30), || {
        gate.exists() && gate0.exists()
    });
    for t in 1..4 {
        assert!(
            !dir.path().join(format!("start.{t}")).exists(),
            "F.{t} consumed"
        );
    }
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        child.try_wait().unwrap().is_none(),
        "bmk must wait at the gate"
    );
    let released = Instant::now();
    std::fs::remove_file(&gate).unwrap();
    let status = child.wait().unwrap();
    let run_time = released.elapsed();
    let lines = reader.join().unwrap();
    let out = lines.join("\n");
    assert!(status.success(), "{out}");
    assert!(
        out.contains(&format!("=> SYNC-file : synchronization via {gate_s}")),
        "{out}"
    );
    assert!(out.contains("=> SYNC-file : ready to start.."), "{out}");
    assert!(out.contains("=> SYNC-file : started "), "{out}");
    let ready = lines
        .iter()
        .position(|l| l.contains("ready to start"))
        .unwrap();
    let started = lines
        .iter()
        .position(|l| l.contains("SYNC-file : started"))
        .unwrap();
    assert!(ready < started);
    assert!(stats(&out).events > 0, "{out}");
    // The measured second starts after the release.
    assert!(run_time >= Duration::from_millis(900), "{run_time:?}");
    assert!(!gate0.exists(), "F.0 removed at the end");
    db.bmk("oltp_point_select", "cleanup", &[]).ok();
}

#[test]
fn sync_file_barrier_sqlite() {
    check_barrier(Kind::Sqlite);
}

#[test]
fn sync_file_barrier_mysql() {
    check_barrier(Kind::Mysql);
}
