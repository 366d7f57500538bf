//! SIGINT / SIGTERM during `run`: stop, print the cumulative report of what ran, exit
//! 130 / 143; a `--results` file is complete.

use std::io::Read;
use std::time::{Duration, Instant};

use crate::util::*;

/// Runs `cmd`, sends `signal` once the first intermediate report is out, waits.
fn interrupted(cmd: Cmd, signal: i32) -> (Run, f64) {
    let (mut child, line) = cmd.spawn();
    let start = Instant::now();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on the pid of a child we own and have not reaped.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    assert_eq!(rc, 0, "kill failed");
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("`{line}` did not stop within 10 s of signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let waited = start.elapsed().as_secs_f64();
    let status = child.wait().unwrap();
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_end(&mut stderr)
        .unwrap();
    let out = std::process::Output {
        status,
        stdout,
        stderr,
    };
    (Run::new(line, out), waited)
}

#[test]
fn sigint_prints_the_report_of_what_ran_and_exits_130() {
    let dir = Dir::new();
    let (run, waited) = interrupted(
        dir.bmk()
            .args("cpu --time=30 --report-interval=1 --cpu-max-prime=2000 run"),
        libc::SIGINT,
    );
    let run = run.code(130);
    assert!(waited < 5.0, "stopping took {waited} s");
    assert!(
        run.stdout.contains("[ 1s ] thds: 1 eps: "),
        "{}",
        run.stdout
    );
    let elapsed = run.time_elapsed();
    assert!((1.2..3.0).contains(&elapsed), "time elapsed {elapsed}");
    assert!(run.total_events() > 0);
    assert!(check_columns(&run.stdout) >= 10);
}

#[test]
fn sigterm_exits_143() {
    let dir = Dir::new();
    let (run, _) = interrupted(
        dir.sysbench()
            .args("threads --threads=2 --time=30 --report-interval=1 run"),
        libc::SIGTERM,
    );
    let run = run.code(143);
    assert!(run.stdout.contains("Threads fairness:"), "{}", run.stdout);
    assert!(run.total_events() > 0);
}

#[test]
fn sigint_leaves_a_complete_results_file() {
    let dir = Dir::new();
    let (run, _) = interrupted(
        dir.bmk()
            .args("cpu --time=30 --report-interval=0.5 --results=out.json run"),
        libc::SIGINT,
    );
    run.code(130);
    assert_eq!(dir.entries(), ["out.json"], "no temporary file remains");
    let doc = crate::results::validated(&dir.join("out.json"));
    assert_eq!(doc["status"], "interrupted");
    assert!(doc["intervals"].as_array().unwrap().len() >= 2, "{doc}");
    assert!(doc["final"]["events"].as_u64().unwrap() > 0);
}

/// `kill -9` mid-run: the `--results` file is still the complete one of the run before
/// (the new one was being written to a temporary file beside it), and the next run
/// writes a temporary of its own instead of reusing the one left behind.
#[test]
fn kill_9_leaves_the_previous_results_file_and_no_reused_temporary() {
    let dir = Dir::new();
    let cpu = "cpu --cpu-max-prime=2000 --report-interval=0.2 --results=r.json";
    dir.bmk().args(cpu).args("--time=1 run").run().code(0);
    let before = std::fs::read_to_string(dir.join("r.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&before).expect("a complete first file");

    let (mut child, line) = dir.bmk().args(cpu).args("--time=30 run").spawn();
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("r.json")).unwrap(),
        before,
        "`{line}` killed with SIGKILL changed r.json"
    );
    let temporaries = |d: &Dir| -> Vec<String> {
        d.entries()
            .into_iter()
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    };
    let stale = temporaries(&dir);
    assert_eq!(stale.len(), 1, "{:?}", dir.entries());
    let stale_text = std::fs::read_to_string(dir.join(&stale[0])).unwrap();
    assert!(stale_text.len() > 10, "the killed run had started its file");

    dir.bmk().args(cpu).args("--time=1 run").run().code(0);
    let after = std::fs::read_to_string(dir.join("r.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&after).expect("a complete third file");
    assert_ne!(after, before);
    // The stale temporary is neither reused nor touched.
    assert_eq!(temporaries(&dir), stale);
    assert_eq!(
        std::fs::read_to_string(dir.join(&stale[0])).unwrap(),
        stale_text
    );
}
