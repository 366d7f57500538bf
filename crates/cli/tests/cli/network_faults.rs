//! Network faults between bmk and a real server, made by a proxy (`fault_proxy.rs`):
//! a link that freezes mid-run, and every connection cut at once as in a server
//! restart; and a link that goes down between two hosts (network namespaces,
//! `test_network.rs`). MariaDB and PostgreSQL of the machine; skipped with a note when a server is
//! missing (a failure under `CI=true`).

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bmk_sql::DriverKind;

use crate::fault_proxy::FaultProxy;
use crate::server_db::ServerDb;
use crate::test_network::{forward_mariadb, ip, TestNetwork};
use crate::util::{Dir, Run, BMK};

/// Makes the one small sbtest table the runs of these tests read.
fn prepare_table(db: &ServerDb, dir: &Dir) {
    let mut prepare = dir
        .bmk()
        .args("oltp_point_select --tables=1 --table-size=1000");
    for a in &db.args {
        prepare = prepare.arg(a);
    }
    prepare.arg("prepare").run().code(0);
}

/// A database with one small sbtest table, and the options that reach it through
/// `proxy` instead of directly.
fn prepared(kind: DriverKind, dir: &Dir) -> Option<(ServerDb, FaultProxy, Vec<String>)> {
    let db = ServerDb::new(kind)?;
    prepare_table(&db, dir);
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

/// The client runs on a host of its own (a network namespace) and its link goes down
/// 1.5 s into a 20 s run: nothing answers and nothing is refused. With `--db-timeout=1`
/// the next read gives up after a second: a lost connection, `FATAL`, the report of
/// what was measured, exit 1, long before `--time`.
#[test]
fn a_link_that_goes_down_is_a_lost_connection_after_the_db_timeout() {
    let Some(db) = ServerDb::new(DriverKind::Mysql) else {
        return;
    };
    let dir = Dir::new();
    prepare_table(&db, &dir);
    let Some(net) = TestNetwork::new("bmkdown", 8, 1) else {
        return;
    };
    let stop = Arc::new(AtomicBool::new(false));
    let forwarder =
        forward_mariadb(&net.bridge_ip, stop.clone()).expect("listen on the bridge's address");
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", &net.namespaces[0], BMK])
        .args([
            "oltp_point_select",
            "--tables=1",
            "--table-size=1000",
            "--time=20",
            "--threads=2",
            "--db-timeout=1",
        ])
        .args(db.args.iter().filter(|a| !a.starts_with("--mysql-host")))
        .arg(format!("--mysql-host={}", net.bridge_ip))
        .arg("run")
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("start bmk in the namespace");
    std::thread::sleep(Duration::from_millis(1500));
    ip(&format!("link set {} down", net.veth(0))).expect("cut the link");
    let deadline = start + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("bmk still runs 60 s after its link went down");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let secs = start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let _ = forwarder.join();
    let run = Run::new(
        "bmk oltp_point_select --db-timeout=1 (link down)".into(),
        child.wait_with_output().unwrap(),
    )
    .code(1);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("FATAL"), "{}", run.context());
    assert!(events(&run) > 0, "{}", run.context());
    assert!(
        secs < 10.0,
        "ended {secs:.1} s after the start\n{}",
        run.context()
    );
}
