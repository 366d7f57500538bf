//! SIGINT / SIGTERM during `run`: stop, print the cumulative report of what ran, exit
//! 130 / 143; a `--results` file is complete.

use std::io::{BufRead, BufReader, Read};
use std::process::Child;
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::util::*;

/// How long a test waits for a child to reach the point it waits for.
const PATIENCE: Duration = Duration::from_secs(30);

/// A running child whose standard output is read line by line as it comes.
struct Watched {
    child: Child,
    line: String,
    lines: Receiver<String>,
    stdout: JoinHandle<Vec<u8>>,
    stderr: JoinHandle<Vec<u8>>,
}

impl Watched {
    fn spawn(cmd: Cmd) -> Watched {
        let (mut child, line) = cmd.spawn();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut err = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout = std::thread::spawn(move || {
            let mut all = Vec::new();
            loop {
                let start = all.len();
                match out.read_until(b'\n', &mut all) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let _ = tx.send(String::from_utf8_lossy(&all[start..]).into_owned());
                    }
                }
            }
            all
        });
        let stderr = std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = err.read_to_end(&mut all);
            all
        });
        Watched {
            child,
            line,
            lines,
            stdout,
            stderr,
        }
    }

    /// Kills the child and fails the test with `why`.
    fn give_up(&mut self, why: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        panic!("`{}`: {why}", self.line);
    }

    /// Waits until the child has printed `n` intermediate reports (`[ 1s ] ...`).
    fn wait_for_reports(&mut self, n: usize) {
        let deadline = Instant::now() + PATIENCE;
        let mut seen = 0;
        while seen < n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with("[ ") => seen += 1,
                Ok(_) => {}
                Err(_) => self.give_up(&format!(
                    "printed {seen} of {n} intermediate reports within {PATIENCE:?}"
                )),
            }
        }
    }

    /// Waits until `ready` holds, checking every 10 ms.
    fn wait_until(&mut self, what: &str, ready: impl Fn() -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !ready() {
            if Instant::now() > deadline {
                self.give_up(&format!("not {what} within {PATIENCE:?}"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends `signal` to the child.
    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on the pid of a child we own and have not reaped.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
        assert_eq!(rc, 0, "kill failed");
    }

    /// Waits for the child to exit (at most `limit`) and returns what it printed.
    fn finish(mut self, limit: Duration) -> Run {
        let deadline = Instant::now() + limit;
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                self.give_up(&format!("did not stop within {limit:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = std::process::Output {
            status: self.child.wait().unwrap(),
            stdout: self.stdout.join().unwrap(),
            stderr: self.stderr.join().unwrap(),
        };
        Run::new(self.line, out)
    }
}

/// Runs `cmd`, sends `signal` once `reports` intermediate reports are out, waits;
/// returns the run and the seconds from its start to its exit.
fn interrupted(cmd: Cmd, signal: i32, reports: usize) -> (Run, f64) {
    let start = Instant::now();
    let mut child = Watched::spawn(cmd);
    child.wait_for_reports(reports);
    child.signal(signal);
    let run = child.finish(Duration::from_secs(10));
    (run, start.elapsed().as_secs_f64())
}

#[test]
fn sigint_prints_the_report_of_what_ran_and_exits_130() {
    let dir = Dir::new();
    let (run, waited) = interrupted(
        dir.bmk()
            .args("cpu --time=30 --report-interval=1 --cpu-max-prime=2000 run"),
        libc::SIGINT,
        1,
    );
    let run = run.code(130);
    assert!(waited < 5.0, "stopping took {waited} s");
    assert!(
        run.stdout.contains("[ 1s ] thds: 1 eps: "),
        "{}",
        run.stdout
    );
    let elapsed = run.time_elapsed();
    // Stopped right after the first report (at 1 s), long before --time.
    assert!((1.0..3.0).contains(&elapsed), "time elapsed {elapsed}");
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
        1,
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
        2,
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

    let temporaries = |d: &Dir| -> Vec<String> {
        d.entries()
            .into_iter()
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    };
    let mut child = Watched::spawn(dir.bmk().args(cpu).args("--time=30 run"));
    child.wait_for_reports(1);
    child.wait_until("writing its results file", || {
        temporaries(&dir)
            .iter()
            .any(|n| std::fs::metadata(dir.join(n)).is_ok_and(|m| m.len() > 10))
    });
    child.signal(libc::SIGKILL);
    let killed = child.finish(Duration::from_secs(10));
    assert_eq!(killed.code, None, "{}", killed.context());
    assert_eq!(
        std::fs::read_to_string(dir.join("r.json")).unwrap(),
        before,
        "`{}` killed with SIGKILL changed r.json",
        killed.line
    );
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
