//! A worker whose connection is killed reconnects (lost-connection errors listed in
//! --mysql-ignore-errors), its statements are prepared again and the event restarts.

mod support;

use std::time::Duration;

use support::{kill_other_connections, spawn_run, stats, Db, Kind};

/// Runs oltp_read_only for 4 s with `extra` options and `env`, kills every worker's
/// connection after 1.5 s, and checks that the run ends normally with reconnects.
fn killed_connections_reconnect_and_reprepare(extra: &[&str], env: &[(&str, &str)]) {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    db.bmk("oltp_read_only", "prepare", &["--table-size=500"])
        .ok();
    let mut args = vec![
        "--table-size=500",
        "--time=4",
        "--mysql-ignore-errors=2013,2006",
    ];
    args.extend_from_slice(extra);
    let child = spawn_run(&db, "oltp_read_only", &args, env);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        kill_other_connections(&db) > 0,
        "the workers' connections are visible"
    );
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Writing to a socket the server closed must come back to the driver as EPIPE (a
    // lost connection it reconnects from), never kill bmk.
    assert_ne!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(libc_sigpipe()),
        "bmk was killed by SIGPIPE on a killed connection\n{stdout}\n{stderr}"
    );
    assert!(out.status.success(), "{:?}\n{stdout}\n{stderr}", out.status);
    let s = stats(&stdout);
    assert!(s.reconnects >= 1, "{stdout}");
    assert!(s.transactions > 0);
    assert_eq!(s.transactions, s.events);
    db.bmk("oltp_read_only", "cleanup", &[]).ok();
}

/// The Lua workload: `before_restart_event` prepares the statements again.
#[test]
fn lua_workers_reconnect_and_reprepare() {
    killed_connections_reconnect_and_reprepare(&["--threads=2"], &[("BMK_NATIVE_OLTP", "0")]);
}

/// Native workers, one thread each.
#[test]
fn native_workers_reconnect_and_reprepare() {
    killed_connections_reconnect_and_reprepare(&["--threads=2", "--event-loops=off"], &[]);
}

/// Native workers as coroutines on two event loops.
#[test]
fn event_loop_workers_reconnect_and_reprepare() {
    killed_connections_reconnect_and_reprepare(&["--threads=6", "--event-loops=2"], &[]);
}

fn libc_sigpipe() -> i32 {
    13
}
