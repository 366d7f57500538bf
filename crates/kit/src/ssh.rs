//! `bmk kit ssh HOST... -- NAME USERS SECONDS [options]`: one run of a kit scenario
//! from several client hosts reached over the system's `ssh`, for people without
//! Kubernetes. Each host runs the scenario's plain command line with the start
//! barrier (`--barrier`, `--clients`, its index as `JOB_COMPLETION_INDEX`, so a
//! time-out names the missing host's index) and writes its results file on its own
//! disk; once all have ended, each file is copied back with `ssh HOST cat FILE`
//! (and removed there), and the files are merged exactly, as `bmk merge` does.
//!
//! The ssh program is `--ssh-command` (default `ssh`; split on spaces, so
//! `--ssh-command="ssh -p 2222 -o BatchMode=yes"` works): the host and the remote
//! command line are its last two arguments, as ssh takes them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bmk_results::{MergeOptions, RunData};

use crate::args::{KitCommand, SshArgs};
use crate::catalog::{self, Action};
use crate::command::shell_line;
use crate::error::KitError;

const USAGE: &str =
    "usage: bmk kit ssh HOST... -- NAME USERS SECONDS [options] (see 'bmk kit ssh --help')";

/// What `bmk kit ssh` was asked for.
#[derive(Debug)]
struct SshRun {
    hosts: Vec<String>,
    scenario: String,
    users: u32,
    seconds: u64,
    ssh: Vec<String>,
    remote_bmk: String,
    remote_dir: String,
    barrier: String,
    barrier_timeout: u64,
    results_dir: PathBuf,
    passed: Vec<String>,
}

/// `Err(Ok(0))` when a help text was printed.
fn parse(args: &[String]) -> Result<SshRun, Result<i32, KitError>> {
    let mut argv = vec!["ssh".to_string()];
    argv.extend(args.iter().cloned());
    let (a, passed) = match crate::command::parse(&argv) {
        Ok((KitCommand::Ssh(a), passed)) => (a, passed),
        Ok(_) => return Err(Err(usage_error(USAGE))),
        Err(done) => return Err(done),
    };
    parse_ssh(a, passed).map_err(Err)
}

fn parse_ssh(a: SshArgs, passed: Vec<String>) -> Result<SshRun, KitError> {
    let usage = || usage_error(USAGE);
    for p in &passed {
        let name = p.trim_start_matches("--").split('=').next().unwrap_or("");
        if matches!(name, "clients" | "results" | "config") {
            return Err(usage_error(format!(
                "--{name} is set by 'bmk kit ssh' for each client (one per HOST); leave it out"
            )));
        }
    }
    let [scenario, users, seconds] = a.run.as_slice() else {
        return Err(usage());
    };
    let hosts = &a.hosts;
    if hosts.is_empty() {
        return Err(usage_error(format!("name at least one HOST ({USAGE})")));
    }
    let users: u32 = users
        .parse()
        .ok()
        .filter(|u| *u > 0)
        .ok_or_else(|| usage_error(format!("USERS: '{users}' is not a positive number")))?;
    let seconds: u64 = seconds
        .parse()
        .map_err(|_| usage_error(format!("SECONDS: '{seconds}' is not a number of seconds")))?;
    let stamp: String = bmk_report::host::now_rfc3339()
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .take(15)
        .collect();
    let barrier = a
        .barrier
        .clone()
        .unwrap_or_else(|| format!("ssh-{stamp}-{}", std::process::id()));
    let ssh: Vec<String> = a
        .ssh_command
        .as_deref()
        .unwrap_or("ssh")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if ssh.is_empty() {
        return Err(usage_error("--ssh-command is empty"));
    }
    let barrier_timeout = match &a.barrier_timeout {
        Some(v) => v
            .parse()
            .map_err(|_| usage_error(format!("--barrier-timeout: '{v}' is not a number")))?,
        None => 300,
    };
    Ok(SshRun {
        hosts: hosts.to_vec(),
        scenario: scenario.clone(),
        users,
        seconds,
        ssh,
        remote_bmk: a.remote_bmk.clone().unwrap_or_else(|| "bmk".into()),
        remote_dir: a.remote_dir.clone().unwrap_or_else(|| "/tmp".into()),
        results_dir: a
            .results_dir
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(format!("bmk-{barrier}"))),
        barrier,
        barrier_timeout,
        passed,
    })
}

/// The remote results file of client `index`.
fn remote_file(run: &SshRun, index: usize) -> String {
    format!(
        "{}/bmk-{}-index-{index}.json",
        run.remote_dir.trim_end_matches('/'),
        run.barrier
    )
}

/// The command line client `index` runs on its host (one shell line, as ssh takes it).
fn remote_line(run: &SshRun, args: &[String], index: usize) -> String {
    let mut words = vec![
        "env".to_string(),
        format!("JOB_COMPLETION_INDEX={index}"),
        run.remote_bmk.clone(),
    ];
    let (command, options) = args.split_last().expect("a run has its command word");
    words.extend(options.iter().cloned());
    words.push(format!("--barrier={}", run.barrier));
    words.push(format!("--clients={}", run.hosts.len()));
    words.push(format!("--barrier-timeout={}", run.barrier_timeout));
    words.push(format!("--results={}", remote_file(run, index)));
    words.push(command.clone());
    shell_line(&words)
}

fn ssh(run: &SshRun, host: &str, line: &str) -> Command {
    let mut cmd = Command::new(&run.ssh[0]);
    cmd.args(&run.ssh[1..]).arg(host).arg(line);
    cmd
}

fn usage_error(message: impl Into<String>) -> KitError {
    KitError::Usage(message.into())
}

/// Runs `bmk kit ssh ARGS`; returns the exit code.
pub fn main(args: &[String], interrupt: &Arc<AtomicUsize>) -> Result<i32, KitError> {
    let run = match parse(args) {
        Ok(run) => run,
        Err(done) => return done,
    };
    let s = catalog::parse(&run.scenario)?;
    if s.action != Action::Run {
        return Err(usage_error(format!(
            "'{}' is a prepare scenario: 'bmk kit ssh' runs benchmarks",
            s.name
        )));
    }
    if s.socket {
        return Err(usage_error(format!(
            "'{}' connects through a local socket; clients on other hosts need a network address: drop 'socket' from the name",
            s.name
        )));
    }
    let args = s.args(run.users, run.seconds, "", &run.passed);
    let clients_dir = run.results_dir.join("clients");
    if run.results_dir.exists()
        && std::fs::read_dir(&run.results_dir).is_ok_and(|mut d| d.next().is_some())
    {
        return Err(usage_error(format!(
            "{} exists and is not empty: choose a new --results-dir",
            run.results_dir.display()
        )));
    }
    std::fs::create_dir_all(&clients_dir).map_err(|e| KitError::io(&clients_dir, e))?;
    println!(
        "[kit] {} on {} hosts ({} each), barrier '{}'; results: {}",
        s.name,
        run.hosts.len(),
        bmk_results::load::users(run.users),
        run.barrier,
        run.results_dir.display()
    );
    let mut children: Vec<(usize, Child)> = Vec::new();
    for (i, host) in run.hosts.iter().enumerate() {
        let line = remote_line(&run, &args, i);
        let child = ssh(&run, host, &line)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| KitError::Failed(format!("cannot run '{}': {e}", run.ssh[0])))?;
        children.push((i, child));
    }
    let codes = wait_for_clients(&run, &mut children, interrupt)?;
    let mut files = Vec::new();
    for (i, host) in run.hosts.iter().enumerate() {
        if codes[i] != 0 {
            eprintln!(
                "FATAL: host {host} (client index-{i}) exited with code {}",
                codes[i]
            );
        }
        let remote = remote_file(&run, i);
        let out = ssh(&run, host, &shell_line(&["cat".into(), remote.clone()]))
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(|e| KitError::io(&run.ssh[0], e))?;
        if !out.status.success() || out.stdout.is_empty() {
            continue;
        }
        let local = clients_dir.join(format!("index-{i}.json"));
        std::fs::write(&local, &out.stdout).map_err(|e| KitError::io(&local, e))?;
        let _ = ssh(&run, host, &shell_line(&["rm".into(), "-f".into(), remote]))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        files.push(local);
    }
    if files.is_empty() {
        return Err(usage_error(
            "no client wrote results: nothing to merge (see the hosts' messages above)",
        ));
    }
    let merged = merge(&files, &run.results_dir)?;
    print!("{merged}");
    Ok(codes.into_iter().find(|&c| c != 0).unwrap_or(0))
}

/// Relays the clients' output line by line under their host names, forwards an
/// interrupt to them, and waits for all; returns their exit codes in order.
fn wait_for_clients(
    run: &SshRun,
    children: &mut [(usize, Child)],
    interrupt: &AtomicUsize,
) -> Result<Vec<i32>, KitError> {
    std::thread::scope(|scope| -> Result<Vec<i32>, KitError> {
        for (i, child) in children.iter_mut() {
            let host = run.hosts[*i].clone();
            if let Some(out) = child.stdout.take() {
                let host = host.clone();
                scope.spawn(move || {
                    for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
                        println!("[{host}] {line}");
                    }
                });
            }
            if let Some(err) = child.stderr.take() {
                scope.spawn(move || {
                    for line in BufReader::new(err).lines().map_while(|l| l.ok()) {
                        eprintln!("[{host}] {line}");
                    }
                });
            }
        }
        let mut codes = vec![None; children.len()];
        let mut forwarded = false;
        while codes.iter().any(Option::is_none) {
            for (k, (_, child)) in children.iter_mut().enumerate() {
                if codes[k].is_none() {
                    let waited = child.try_wait();
                    let waited = waited.map_err(|e| KitError::io(&run.ssh[0], e))?;
                    if let Some(status) = waited {
                        codes[k] = Some(status.code().unwrap_or(128 + libc::SIGTERM));
                    }
                }
            }
            let sig = interrupt.load(Ordering::Relaxed);
            if sig != 0 && !forwarded {
                // Ending ssh closes the session; the remote bmk sees its connection
                // (and terminal, with -t) go away.
                for (k, (_, child)) in children.iter().enumerate() {
                    if codes[k].is_none() {
                        // SAFETY: kill only signals an ssh process this run started.
                        unsafe {
                            libc::kill(child.id() as libc::pid_t, sig as i32);
                        }
                    }
                }
                forwarded = true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(codes.into_iter().map(|c| c.unwrap_or(1)).collect())
    })
}

/// Merges the clients' files into `dir/result.json`; returns the merged report.
fn merge(files: &[PathBuf], dir: &Path) -> Result<String, KitError> {
    let inputs: Vec<RunData> = files
        .iter()
        .map(|p| RunData::read(p))
        .collect::<Result<_, _>>()?;
    let merged = bmk_results::merge_runs(&inputs, MergeOptions::default())?;
    let level = merged
        .levels
        .first()
        .ok_or_else(|| KitError::Failed("the merge gave no level".into()))?;
    let file = bmk_results::dir_writer::level_results_file(level)
        .ok_or_else(|| KitError::Failed("the merge gave no result".into()))?;
    let path = dir.join("result.json");
    bmk_results::dir_writer::write_results_file(&path, &file)?;
    let f = &file.final_stats;
    Ok(format!(
        "\nMerged {} results: {} threads over a common window of {:.3}s (written to {})\n\n{}",
        files.len(),
        f.threads,
        f.time_total_s,
        path.display(),
        bmk_results::dir_writer::final_report_text(&file)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn hosts_come_before_the_dashes_and_options_anywhere() {
        let Ok(r) = parse(&v(
            "a --ssh-command=./fake b -- OLTP_RO_1K_1tab 4 10 --mysql-host=db --barrier=x",
        )) else {
            panic!("not parsed")
        };
        assert_eq!(r.hosts, ["a", "b"]);
        assert_eq!((r.users, r.seconds), (4, 10));
        assert_eq!(r.ssh, ["./fake"]);
        assert_eq!(r.barrier, "x");
        assert_eq!(r.passed, ["--mysql-host=db"]);
        let line = remote_line(&r, &v("oltp_read_only --threads=4 run"), 1);
        assert_eq!(
            line,
            "env JOB_COMPLETION_INDEX=1 bmk oltp_read_only --threads=4 --barrier=x --clients=2 --barrier-timeout=300 --results=/tmp/bmk-x-index-1.json run"
        );
    }

    #[test]
    fn what_the_clients_get_from_the_kit_is_refused() {
        let error = |line: &str| match parse(&v(line)) {
            Err(Err(e)) => e.to_string(),
            _ => panic!("{line} was taken"),
        };
        let e = error("a -- X 1 1 --clients=3");
        assert!(e.contains("--clients is set by 'bmk kit ssh'"), "{e}");
        assert!(error("a b X 1 1").contains("usage: bmk kit ssh"));
    }
}
