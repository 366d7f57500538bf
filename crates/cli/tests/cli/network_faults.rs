//! Network faults between bmk and a real server, made by a proxy (`fault_proxy.rs`):
//! a link that freezes mid-run, and every connection cut at once as in a server
//! restart. MariaDB and PostgreSQL of the machine; skipped with a note when a server is
//! missing (a failure under `CI=true`).

use std::time::{Duration, Instant};

use bmk_sql::DriverKind;

use crate::fault_proxy::FaultProxy;
use crate::server_db::ServerDb;
use crate::util::{Dir, Run};

/// A database with one small sbtest table, and the options that reach it through
/// `proxy` instead of directly.
fn prepared(kind: DriverKind, dir: &Dir) -> Option<(ServerDb, FaultProxy, Vec<String>)> {
    let db = ServerDb::new(kind)?;
    let mut prepare = dir
        .bmk()
        .args("oltp_point_select --tables=1 --table-size=1000");
    for a in &db.args {
        prepare = prepare.arg(a);
    }
    prepare.arg("prepare").run().code(0);
    let (port_option, upstream) = match kind {
        DriverKind::Mysql => ("--mysql-port=", "127.0.0.1:3306"),
        _ => ("--pgsql-port=", "127.0.0.1:5432"),
    };
    let proxy = FaultProxy::start(upstream);
    let mut args: Vec<String> = db
        .args
        .iter()
        .filter(|a| !a.starts_with(port_option))
        .cloned()
        .collect();
    args.push(format!("{port_option}{}", proxy.port));
    Some((db, proxy, args))
}

/// Runs `bmk oltp_point_select ... run` with `fault` applied by another thread
/// `after` the start; returns the run and its wall time.
fn run_with_fault(
    dir: &Dir,
    args: &[String],
    extra: &str,
    after: Duration,
    fault: impl FnOnce() + Send + 'static,
) -> (Run, f64) {
    let mut cmd = dir
        .bmk()
        .args("oltp_point_select --tables=1 --table-size=1000")
        .args(extra);
    for a in args {
        cmd = cmd.arg(a);
    }
    let start = Instant::now();
    let trigger = std::thread::spawn(move || {
        std::thread::sleep(after);
        fault();
    });
    let run = cmd.arg("run").run_within(Duration::from_secs(90));
    trigger.join().unwrap();
    (run, start.elapsed().as_secs_f64())
}

fn events(run: &Run) -> u64 {
    let line = run
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("total number of events:"))
        .unwrap_or_else(|| panic!("no event total\n{}", run.context()));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// The link freezes 1 s into a 2 s run with no read timeout: the run ends 10 s (the
/// stop grace) after `--time`, prints the report of what it measured and says how many
/// workers it left behind (exit 2).
fn a_frozen_link_ends_by_time_plus_grace(kind: DriverKind) {
    let dir = Dir::new();
    let Some((_db, proxy, args)) = prepared(kind, &dir) else {
        return;
    };
    let proxy = std::sync::Arc::new(proxy);
    let p = std::sync::Arc::clone(&proxy);
    let (run, secs) = run_with_fault(
        &dir,
        &args,
        "--time=2 --threads=2 --db-timeout=0",
        Duration::from_secs(1),
        move || p.freeze(),
    );
    let run = run.code(2);
    assert!(
        run.stdout
            .contains("worker(s) still busy 10 s after the time limit")
            && run.stdout.contains("abandoned"),
        "{}",
        run.context()
    );
    assert!(events(&run) > 0, "{}", run.context());
    assert!((11.5..30.0).contains(&secs), "ended after {secs:.1} s");
}

/// Every connection is cut 1 s into the run, as when the server restarts; with the
/// ignore list at `all` bmk reconnects and the run ends normally (exit 0).
fn a_cut_with_errors_ignored_reconnects(kind: DriverKind) {
    let dir = Dir::new();
    let Some((_db, proxy, args)) = prepared(kind, &dir) else {
        return;
    };
    let ignore = match kind {
        DriverKind::Mysql => "--mysql-ignore-errors=all",
        _ => "--pgsql-ignore-errors=all",
    };
    let proxy = std::sync::Arc::new(proxy);
    let p = std::sync::Arc::clone(&proxy);
    let (run, secs) = run_with_fault(
        &dir,
        &args,
        &format!("--time=3 --threads=2 {ignore}"),
        Duration::from_secs(1),
        move || p.cut_all(),
    );
    let run = run.code(0);
    let reconnects: u64 = run
        .stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("reconnects:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no reconnects line\n{}", run.context()));
    assert!(reconnects >= 1, "{}", run.context());
    assert!(events(&run) > 100, "{}", run.context());
    assert!(secs < 10.0, "ended after {secs:.1} s");
}

#[test]
fn a_frozen_link_ends_by_time_plus_grace_on_mariadb() {
    a_frozen_link_ends_by_time_plus_grace(DriverKind::Mysql);
}

#[test]
fn a_frozen_link_ends_by_time_plus_grace_on_postgresql() {
    a_frozen_link_ends_by_time_plus_grace(DriverKind::Pgsql);
}

#[test]
fn a_cut_with_errors_ignored_reconnects_on_mariadb() {
    a_cut_with_errors_ignored_reconnects(DriverKind::Mysql);
}

#[test]
fn a_cut_with_errors_ignored_reconnects_on_postgresql() {
    a_cut_with_errors_ignored_reconnects(DriverKind::Pgsql);
}
