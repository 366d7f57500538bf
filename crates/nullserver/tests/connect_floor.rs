//! The floor client's `connect` workload against the null server: for each protocol
//! and authentication the server can ask for, connections are opened, logged in and
//! closed for about two seconds, and counted. The null server keeps no count of clean
//! closes, so a close the server did not expect shows up only as an error on the
//! client's side (a reset connection fails the run): the exit status and the counts
//! are what is checked.

mod support;

use std::process::Command;

use support::{NullServer, Run};

fn connect_floor(port_flag: &str, port: u16) -> Run {
    Command::new("timeout")
        .args(["-s", "KILL", "20"])
        .arg(env!("CARGO_BIN_EXE_bmk-null-client"))
        .args([port_flag, &port.to_string()])
        .args(["--workload", "connect", "--connections", "4", "--time", "2"])
        .args(["--report-interval", "1"])
        .output()
        .expect("run bmk-null-client")
        .into()
}

/// The value after `key` on its line of the client's summary.
fn figure(out: &str, key: &str) -> f64 {
    out.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no '{key}' in:\n{out}"))
}

fn check(what: &str, run: Run) {
    let run = run.ok();
    let events = figure(&run.stdout, "events:");
    assert!(events > 0.0, "{what}: no connects counted:\n{}", run.stdout);
    assert_eq!(figure(&run.stdout, "queries:"), 0.0, "{what}");
    // The interval lines the capacity harness parses, one per second.
    let intervals = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("[ ") && l.contains("s ] tps: "))
        .count();
    assert!(intervals >= 1, "{what}: no interval lines:\n{}", run.stdout);
}

#[test]
fn connect_workload_logs_in_and_closes_on_mysql() {
    for plugin in ["mysql_native_password", "caching_sha2_password"] {
        let server = NullServer::start(&["--mysql-auth", plugin]);
        check(plugin, connect_floor("--mysql-port", server.mysql));
    }
}

#[test]
fn connect_workload_logs_in_and_closes_on_pgsql() {
    for method in ["trust", "password", "md5"] {
        let server = NullServer::start(&["--pgsql-auth", method]);
        check(method, connect_floor("--pgsql-port", server.pgsql));
    }
}
