//! Test support: the null server started as its real binary (killed when dropped; it is
//! built with `bmk`, in bmk's package), the `bmk` binary (built first when missing or
//! stale), the system clients (skipped with a note when missing, a failure under
//! `CI=true`), and the figures of bmk's report.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

/// The path of system program `name`, or `None` (with a note; a panic under CI).
pub fn system_program(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    found.or_else(|| bmk_testkit::unavailable(name, "not installed"))
}

/// A running null server.
pub struct NullServer {
    child: Child,
    /// MySQL port.
    pub mysql: u16,
    /// PostgreSQL port.
    pub pgsql: u16,
}

impl NullServer {
    /// Starts the server on free ports with `extra` options, waiting for `ready`.
    pub fn start(extra: &[&str]) -> NullServer {
        let mut child = Command::new(bmk_testkit::null_server_bin())
            .args(["--mysql-port", "0", "--pgsql-port", "0", "--threads", "2"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start bmk-null-server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read the ready line");
        assert!(
            line.starts_with("ready "),
            "unexpected first line: {line:?}"
        );
        let port = |key: &str| -> u16 {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| p.parse().ok())
                .unwrap_or_else(|| panic!("no {key} in {line:?}"))
        };
        NullServer {
            mysql: port("mysql="),
            pgsql: port("pgsql="),
            child,
        }
    }

    /// bmk's connection options for `driver` (`mysql` or `pgsql`) to this server.
    pub fn conn_args(&self, driver: &str) -> Vec<String> {
        let port = if driver == "mysql" {
            self.mysql
        } else {
            self.pgsql
        };
        vec![
            format!("--db-driver={driver}"),
            format!("--{driver}-host=127.0.0.1"),
            format!("--{driver}-port={port}"),
            format!("--{driver}-user=sbtest"),
            format!("--{driver}-password=secret"),
            format!("--{driver}-db=sbtest"),
        ]
    }
}

impl Drop for NullServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub use bmk_testkit::bmk_bin;

/// Output of one command.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Run {
    /// Asserts exit code 0.
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "failed (exit {})\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code().unwrap_or(-1),
        }
    }
}

/// Runs bmk with `args`, killed after `limit` seconds if it has not ended.
pub fn bmk(args: &[String], limit: u64) -> Run {
    let out = Command::new("timeout")
        .args(["-s", "KILL", &limit.to_string()])
        .arg(bmk_bin())
        .args(args)
        .env_remove("MYSQL_SESSION_OPTIONS")
        .env_remove("BMK_NATIVE_OLTP")
        .output()
        .expect("run bmk");
    out.into()
}

/// The query and event counts of a bmk report.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    pub read: u64,
    pub write: u64,
    pub other: u64,
    pub transactions: u64,
    pub errors: u64,
    pub reconnects: u64,
    pub events: u64,
    pub latency_avg_ms: f64,
}

/// Parses the counts of bmk's final report.
pub fn stats(report: &str) -> Stats {
    let num = |key: &str| -> u64 {
        report
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no '{key}' in report:\n{report}"))
    };
    let avg = report
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("avg:"))
        .and_then(|rest| rest.trim().parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no 'avg:' in report:\n{report}"));
    Stats {
        read: num("read:"),
        write: num("write:"),
        other: num("other:"),
        transactions: num("transactions:"),
        errors: num("ignored errors:"),
        reconnects: num("reconnects:"),
        events: num("total number of events:"),
        latency_avg_ms: avg,
    }
}
