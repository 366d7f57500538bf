//! The native OLTP workers: they run the stock workloads with exactly the Lua
//! workloads' statements, parameters, random draws and counters, on every driver, on
//! event loops (MySQL, more workers than CPUs), through lock conflicts and fatal
//! errors (lost connections: lost_connection.rs).

mod support;

use std::process::{Command, Output};
use std::time::Duration;

use support::{bmk_bin, spawn_run, stats, Db, Kind};

/// Runs bmk with `args` and extra environment; a `--events` run gets `--time=0`.
fn bmk_env(db: &Db, workload: &str, extra: &[&str], command: &str, env: &[(&str, &str)]) -> Output {
    let mut args = vec![workload.to_string()];
    args.extend(db.args());
    args.extend(extra.iter().map(|s| s.to_string()));
    if extra.iter().any(|a| a.starts_with("--events=")) {
        args.push("--time=0".into());
    }
    args.push(command.into());
    let mut cmd = Command::new(bmk_bin());
    cmd.args(&args).env_remove("MYSQL_SESSION_OPTIONS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run bmk")
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

const NATIVE: &[(&str, (u64, u64, u64))] = &[
    ("oltp_point_select", (1, 0, 0)),
    ("oltp_read_only", (14, 0, 2)),
    ("oltp_read_write", (14, 4, 2)),
    ("oltp_write_only", (0, 4, 2)),
    ("oltp_update_index", (0, 1, 0)),
    ("oltp_update_non_index", (0, 1, 0)),
    ("oltp_delete", (0, 1, 0)),
];

/// Every native workload: the debug line says it ran natively, the counters are the
/// statement mix. MySQL runs 6 workers on 2 event loops, on one table per worker
/// group so that no lock conflict restarts an event.
fn check_native_mix(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    let threads = if kind == Kind::Sqlite {
        "--threads=1"
    } else {
        "--threads=6"
    };
    let common = ["--table-size=500", "--tables=6"];
    db.bmk("oltp_read_write", "prepare", &common).ok();
    for (workload, mix) in NATIVE {
        let events = 60;
        // Workers on the same table may deadlock, and on PostgreSQL a DELETE that
        // waited for another worker's DELETE + INSERT of the same id deletes nothing,
        // so its INSERT hits the primary key: those errors restart the event (by
        // default on PostgreSQL, as in sysbench; listed here on MySQL); the mix is
        // checked when none came.
        let out = bmk_env(
            &db,
            workload,
            &[
                common[0],
                common[1],
                threads,
                "--events=60",
                "--verbosity=5",
                "--event-loops=2",
                "--mysql-ignore-errors=1213,1205,1062",
            ],
            "run",
            &[],
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{workload} {kind:?}: {}", text(&out));
        assert!(
            stdout.contains(&format!("DEBUG: '{workload}' runs on native workers")),
            "{workload} {kind:?}: {}",
            text(&out)
        );
        let s = stats(&stdout);
        assert_eq!(s.transactions, events, "{workload} {kind:?}: {stdout}");
        // A restarted event re-runs its statements: only error-free runs are exact.
        if s.ignored_errors == 0 && *workload == "oltp_delete" {
            // Two events may draw the same id: the second DELETE then finds no row
            // and counts as `other`, as sysbench counts a write that changed nothing.
            assert_eq!(
                (s.read, s.write + s.other),
                (0, events),
                "{workload} {kind:?}: {stdout}"
            );
        } else if s.ignored_errors == 0 && mix.1 > 0 {
            // Concurrent events can make a write change nothing (an UPDATE of the row
            // another worker's delete/insert pair has just deleted, a DELETE of an id
            // another event deleted): sysbench counts it as `other`, so only the sum
            // of writes and others is exact.
            assert_eq!(
                (s.read, s.write + s.other),
                (events * mix.0, events * (mix.1 + mix.2)),
                "{workload} {kind:?}: {stdout}"
            );
            assert!(s.write <= events * mix.1, "{workload} {kind:?}: {stdout}");
        } else if s.ignored_errors == 0 {
            assert_eq!(
                (s.read, s.write, s.other),
                (events * mix.0, events * mix.1, events * mix.2),
                "{workload} {kind:?}: {stdout}"
            );
        }
    }
    db.bmk("oltp_read_write", "cleanup", &common).ok();
    assert!(db.tables().is_empty());
}

#[test]
fn native_mix_mysql() {
    check_native_mix(Kind::Mysql);
}

#[test]
fn native_mix_pgsql() {
    check_native_mix(Kind::Pgsql);
}

#[test]
fn native_mix_sqlite() {
    check_native_mix(Kind::Sqlite);
}

/// With a fixed seed and one worker, the native and the Lua workload leave the same
/// data behind: same statements, same parameters, same order.
#[test]
fn native_and_lua_write_the_same_rows() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    let opts = [
        "--table-size=200",
        "--tables=2",
        "--rand-seed=7",
        "--threads=1",
    ];
    let mut sums = Vec::new();
    for native in ["1", "0"] {
        db.bmk("oltp_read_write", "prepare", &opts).ok();
        let out = bmk_env(
            &db,
            "oltp_read_write",
            &[opts[0], opts[1], opts[2], opts[3], "--events=100"],
            "run",
            &[("BMK_NATIVE_OLTP", native)],
        );
        assert!(out.status.success(), "{}", text(&out));
        sums.push(db.column("CHECKSUM TABLE sbtest1, sbtest2").join(","));
        let rows: Vec<String> = db.column("SELECT COUNT(*) FROM sbtest1");
        sums.push(rows.join(","));
        db.bmk("oltp_read_write", "cleanup", &opts[..2]).ok();
    }
    assert_eq!(sums[0], sums[2], "native vs Lua checksums");
    assert_eq!(sums[1], sums[3]);
}

/// 16 workers on 2 event loops: the process has far fewer than 16 threads.
#[test]
fn event_loops_multiplex_workers() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    db.bmk("oltp_point_select", "prepare", &["--table-size=500"])
        .ok();
    let child = spawn_run(
        &db,
        "oltp_point_select",
        &[
            "--table-size=500",
            "--threads=16",
            "--time=3",
            "--event-loops=2",
            // Loops need bmk's own MySQL path: named, as BMK_MYSQL_FASTPATH=0 turns it off.
            "--mysql-fast-path=on",
        ],
        &[],
    );
    std::thread::sleep(Duration::from_millis(1500));
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let threads: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(threads < 10, "{threads} threads for 16 workers on 2 loops");
    let s = stats(&String::from_utf8_lossy(&out.stdout));
    assert!(s.transactions > 0);
    // Fairness lines still list every worker's share.
    assert_eq!(s.ignored_errors, 0);
    db.bmk("oltp_point_select", "cleanup", &[]).ok();
}

/// A missing table on an event loop: the FATAL line, exit 1, a final report.
#[test]
fn event_loop_worker_fatal_error_stops_the_run() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    db.bmk("oltp_point_select", "prepare", &["--table-size=100"])
        .ok();
    db.exec("DROP TABLE sbtest1");
    let out = bmk_env(
        &db,
        "oltp_point_select",
        &[
            "--table-size=100",
            "--threads=4",
            "--time=2",
            "--event-loops=2",
        ],
        "run",
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout.contains("FATAL: MySQL error: 1146 "),
        "{}",
        text(&out)
    );
}

/// Lock conflicts on one table with many workers on loops: deadlocks and lock waits
/// listed as ignorable restart the event; every event still completes.
#[test]
fn event_loop_workers_restart_events_after_deadlocks() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    db.bmk("oltp_write_only", "prepare", &["--table-size=20"])
        .ok();
    let out = bmk_env(
        &db,
        "oltp_write_only",
        &[
            "--table-size=20",
            "--threads=8",
            "--events=400",
            "--event-loops=2",
            "--mysql-ignore-errors=1213,1205,1020,1062",
        ],
        "run",
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let s = stats(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(s.transactions, 400, "{}", text(&out));
    assert_eq!(s.read, 0);
    if s.ignored_errors == 0 {
        assert_eq!((s.write, s.other), (4 * 400, 2 * 400), "{}", text(&out));
    } else {
        // Every attempt ran BEGIN; the completed ones all their statements.
        assert!(s.write >= 4 * 400 && s.other >= 2 * 400, "{}", text(&out));
    }
    db.bmk("oltp_write_only", "cleanup", &[]).ok();
}

#[test]
fn event_loops_option_is_checked() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let out = bmk_env(
        &db,
        "oltp_point_select",
        &["--event-loops=many"],
        "run",
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "invalid value 'many' for option --event-loops: expected auto, off or a number"
        ),
        "{}",
        text(&out)
    );
}

#[test]
fn missing_tables_say_to_run_prepare() {
    // Native and Lua workers alike: the FATAL line of the failed statement, what to do
    // about it, exit code 1, no traceback, no report of a run that never started.
    for kind in [Kind::Mysql, Kind::Pgsql, Kind::Sqlite] {
        let Some(db) = Db::new(kind) else { continue };
        // Four workers: on MySQL they run on event loops (two CPUs here).
        for extra in [
            &["--tables=2", "--threads=4"][..],
            &["--tables=2", "--rnd-data=50"][..],
        ] {
            let mut args = extra.to_vec();
            args.push("--time=1");
            let out = db.bmk("oltp_point_select", "run", &args);
            assert_eq!(out.code, 1, "{kind:?} {extra:?}: {}", out.stderr);
            assert!(
                out.stdout.contains(
                    "FATAL: the workload's tables do not exist: create and load them with \
                     the prepare command first"
                ),
                "{kind:?} {extra:?}: {}",
                out.stdout
            );
            assert!(
                !out.stderr.contains("traceback"),
                "{kind:?} {extra:?}: {}",
                out.stderr
            );
            assert!(
                out.stdout
                    .ends_with("FATAL: Threads initialization failed!\n")
                    && !out.stdout.contains("SQL statistics"),
                "{kind:?} {extra:?}: {}",
                out.stdout
            );
        }
    }
}

#[test]
fn pgsql_restarts_events_on_duplicate_keys_by_default() {
    // Eight workers deleting and re-inserting ids of one 50-row table: under READ
    // COMMITTED a DELETE that waited for another worker's DELETE + INSERT of the same
    // id deletes nothing and its INSERT hits the primary key. sysbench's PostgreSQL
    // driver restarts the event on that error, so the stock mix runs through; so must
    // bmk's, natively and in Lua (--rand-data=50 keeps the run in Lua).
    let Some(db) = Db::new(Kind::Pgsql) else {
        return;
    };
    db.bmk("oltp_read_write", "prepare", &["--table-size=50"])
        .ok();
    for lua_only in [&[][..], &["--rand-data=50"][..]] {
        let mut args = vec!["--table-size=50", "--threads=8", "--time=3"];
        args.extend_from_slice(lua_only);
        let out = bmk_env(&db, "oltp_read_write", &args, "run", &[]);
        assert!(out.status.success(), "{lua_only:?}: {}", text(&out));
        let s = stats(&String::from_utf8_lossy(&out.stdout));
        assert!(s.transactions > 0, "{lua_only:?}: {}", text(&out));
    }
    db.bmk("oltp_read_write", "cleanup", &[]).ok();
}
