//! Every workload on every driver: prepare → run a fixed number of events → the
//! read/write/other counters are exactly events × the workload's statement mix →
//! cleanup leaves no table behind.

mod support;

use support::{stats, Db, Kind};

/// (reads, writes, other) per event.
type Mix = (u64, u64, u64);

const EVENTS: u64 = 60;

fn check_mix(kind: Kind, workload: &str, mix: Mix, extra: &[&str]) {
    let Some(db) = Db::new(kind) else { return };
    let single_table = workload.starts_with("select_random");
    // SQLite has one writer at a time: one worker. Elsewhere two workers pinned to two
    // tables, so no event is restarted by a lock conflict.
    let mut common: Vec<&str> = vec!["--table-size=300"];
    if single_table {
        common.push("--tables=1");
    } else {
        common.push("--tables=2");
    }
    if kind == Kind::Sqlite || single_table {
        common.push("--threads=1");
    } else {
        common.extend(["--threads=2", "--pin-tables=on"]);
    }
    let prep = db.bmk(workload, "prepare", &common).ok();
    assert!(
        prep.stdout.contains("Creating table 'sbtest1'..."),
        "{}",
        prep.stdout
    );
    let events = format!("--events={EVENTS}");
    let mut run_args = common.clone();
    run_args.push(&events);
    run_args.extend_from_slice(extra);
    let run = db.bmk(workload, "run", &run_args).ok();
    let s = stats(&run.stdout);
    assert_eq!(
        s.transactions, EVENTS,
        "{workload} {kind:?}: {}",
        run.stdout
    );
    assert_eq!(s.ignored_errors, 0, "{workload} {kind:?}: {}", run.stdout);
    // oltp_delete deletes for good: an id drawn twice finds no row the second time,
    // and a DELETE that changed nothing counts as `other`, so only their sum is exact.
    let (write, other) = if workload == "oltp_delete" {
        assert!(s.write > 0, "{workload} {kind:?}: {}", run.stdout);
        (s.write + s.other, 0)
    } else {
        (s.write, s.other)
    };
    assert_eq!(
        (s.read, write, other),
        (EVENTS * mix.0, EVENTS * mix.1, EVENTS * mix.2),
        "{workload} {kind:?} {extra:?}: {}",
        run.stdout
    );
    assert_eq!(s.total, s.read + s.write + s.other);
    let clean = db.bmk(workload, "cleanup", &common).ok();
    assert!(
        clean.stdout.contains("Dropping table 'sbtest1'..."),
        "{}",
        clean.stdout
    );
    assert_eq!(
        db.tables(),
        Vec::<String>::new(),
        "{workload} {kind:?}: tables left"
    );
}

macro_rules! mix_tests {
    ($($name:ident: $workload:expr, $mix:expr, [$($extra:expr),*];)*) => {
        mod sqlite {
            use super::*;
            $(#[test] fn $name() { check_mix(Kind::Sqlite, $workload, $mix, &[$($extra),*]); })*
        }
        mod mysql {
            use super::*;
            $(#[test] fn $name() { check_mix(Kind::Mysql, $workload, $mix, &[$($extra),*]); })*
        }
        mod pgsql {
            use super::*;
            $(#[test] fn $name() { check_mix(Kind::Pgsql, $workload, $mix, &[$($extra),*]); })*
        }
    };
}

mix_tests! {
    read_write: "oltp_read_write", (14, 4, 2), [];
    read_write_no_ranges: "oltp_read_write", (10, 4, 2), ["--range-selects=off"];
    read_write_skip_trx: "oltp_read_write", (14, 4, 0), ["--skip-trx=on"];
    read_only: "oltp_read_only", (14, 0, 2), [];
    read_only_skip_trx: "oltp_read_only", (14, 0, 0), ["--skip-trx=on"];
    write_only: "oltp_write_only", (0, 4, 2), [];
    point_select: "oltp_point_select", (1, 0, 0), [];
    update_index: "oltp_update_index", (0, 1, 0), [];
    update_non_index: "oltp_update_non_index", (0, 1, 0), [];
    delete: "oltp_delete", (0, 1, 0), [];
    insert: "oltp_insert", (0, 1, 0), [];
    random_points: "select_random_points", (1, 0, 0), [];
    random_ranges: "select_random_ranges", (1, 0, 0), [];
    reconnect: "OLTP_RO-point_selects_reconnect", (1, 0, 2), [];
    bmk_delete_inserts: "OLTP_RW-delete_inserts", (0, 4, 2), ["--delete-inserts=2"];
    bmk_inserts_only: "OLTP_RW-inserts_only", (0, 3, 0), ["--inserts-only=3"];
    read_write_custom_mix: "oltp_read_write", (6, 6, 2),
        ["--point-selects=2", "--simple-ranges=0", "--sum-ranges=2", "--index-updates=2",
         "--non-index-updates=2", "--delete-inserts=1"];
}

fn check_bulk_insert(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    let threads = if kind == Kind::Sqlite {
        "--threads=1"
    } else {
        "--threads=2"
    };
    db.bmk("bulk_insert", "prepare", &[threads]).ok();
    let run = db
        .bmk("bulk_insert", "run", &[threads, "--events=5000"])
        .ok();
    let s = stats(&run.stdout);
    assert_eq!(s.transactions, 5000, "{}", run.stdout);
    assert!(s.write >= 1, "{}", run.stdout);
    let n: u64 = if kind == Kind::Sqlite {
        db.scalar("SELECT COUNT(*) FROM sbtest1").parse().unwrap()
    } else {
        let a: u64 = db.scalar("SELECT COUNT(*) FROM sbtest1").parse().unwrap();
        let b: u64 = db.scalar("SELECT COUNT(*) FROM sbtest2").parse().unwrap();
        a + b
    };
    assert_eq!(n, 5000);
    db.bmk("bulk_insert", "cleanup", &[threads]).ok();
    assert!(db.tables().is_empty());
}

#[test]
fn bulk_insert_sqlite() {
    check_bulk_insert(Kind::Sqlite);
}

#[test]
fn bulk_insert_mysql() {
    check_bulk_insert(Kind::Mysql);
}

#[test]
fn bulk_insert_pgsql() {
    check_bulk_insert(Kind::Pgsql);
}

/// sysbench's `select_random_*` scripts run with any `--tables` (on the first table
/// only): sweeps give every workload the same options.
fn select_random_runs_on_the_first_of_several_tables(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    let common = ["--tables=2", "--table-size=300"];
    db.bmk("oltp_read_only", "prepare", &common).ok();
    for workload in ["select_random_points", "select_random_ranges"] {
        let mut args = common.to_vec();
        args.extend(["--events=20", "--db-debug=on"]);
        let run = db.bmk(workload, "run", &args).ok();
        assert_eq!(stats(&run.stdout).read, 20, "{workload}: {}", run.stdout);
        let prepared: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("prepare: SELECT"))
            .collect();
        assert!(
            prepared.len() == 1 && prepared[0].contains("FROM sbtest1 WHERE k"),
            "{workload}: {}",
            run.stderr
        );
    }
    db.bmk("oltp_read_only", "cleanup", &common).ok();
}

#[test]
fn select_random_runs_on_the_first_of_several_tables_mysql() {
    select_random_runs_on_the_first_of_several_tables(Kind::Mysql);
}

#[test]
fn select_random_runs_on_the_first_of_several_tables_pgsql() {
    select_random_runs_on_the_first_of_several_tables(Kind::Pgsql);
}

/// `--point-selects` is an option of the whole family that `oltp_point_select` overrides:
/// one select per event, as in sysbench, on the native and on the Lua path.
#[test]
fn point_select_ignores_point_selects() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    let common = ["--tables=1", "--table-size=300"];
    db.bmk("oltp_point_select", "prepare", &common).ok();
    for lua_only in [&[][..], &["--rand-data=50"][..]] {
        let mut args = common.to_vec();
        args.extend(["--events=40", "--point-selects=5"]);
        args.extend_from_slice(lua_only);
        let run = db.bmk("oltp_point_select", "run", &args).ok();
        let s = stats(&run.stdout);
        assert_eq!(
            (s.transactions, s.read),
            (40, 40),
            "{lua_only:?}: {}",
            run.stdout
        );
    }
    db.bmk("oltp_point_select", "cleanup", &common).ok();
}
