//! SQLite driver on a database file in a temporary directory.

mod support;

use std::time::Duration;

use bmk_sql::{Connection, Driver, DriverKind, SqlErrorKind, Value};
use support::{config, exec, scalar, temp_dir, types};

fn open(dir: &tempfile::TempDir, extra: &[(&str, &str)]) -> Box<dyn Connection> {
    let path = dir.path().join("t.db");
    let path = path.to_str().unwrap();
    let mut opts = vec![("sqlite-db", path)];
    opts.extend_from_slice(extra);
    support::connect(DriverKind::Sqlite, &opts).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn wal_mode_and_defaults() {
    let dir = temp_dir("bmk-sqlite");
    let mut con = open(&dir, &[]);
    assert_eq!(scalar(&mut *con, "PRAGMA journal_mode").unwrap(), "wal");
    assert_eq!(scalar(&mut *con, "PRAGMA busy_timeout").unwrap(), "10000");
    let d = bmk_sql::DriverConfig::defaults(DriverKind::Sqlite);
    assert_eq!(d.sqlite.db, std::path::PathBuf::from("./sbtest.db"));
    assert_eq!(Driver::new(d).name(), "sqlite");
}

/// Workers that open a new database file at the same moment all get a connection: the
/// switch to WAL mode that one of them loses is retried (SQLite refuses it at once,
/// without its busy handler). Before, one run in a few of two threads failed with
/// "database is locked" in its first connect.
#[test]
fn connections_opening_a_new_file_at_once_all_succeed() {
    for round in 0..20 {
        let dir = temp_dir("bmk-sqlite");
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    barrier.wait();
                    let mut con = open(&dir, &[]);
                    assert_eq!(
                        scalar(&mut *con, "PRAGMA journal_mode").unwrap(),
                        "wal",
                        "round {round}"
                    );
                });
            }
        });
    }
}

#[test]
fn unopenable_file_is_a_connect_error() {
    let e = support::connect(
        DriverKind::Sqlite,
        &[("sqlite-db", "/nonexistent/dir/x.db")],
    )
    .err()
    .expect("cannot open");
    assert_eq!(e.kind, SqlErrorKind::Connect);
    assert_eq!(
        e.fatal_lines()[0],
        "FATAL: unable to connect to SQLite database on file '/nonexistent/dir/x.db', aborting..."
    );
}

#[test]
fn bind_types_round_trip_with_nulls() {
    let dir = temp_dir("bmk-sqlite");
    for mode in ["auto", "disable"] {
        let mut con = open(&dir, &[("db-ps-mode", mode)]);
        types::round_trip(&mut *con, DriverKind::Sqlite, mode);
    }
}

#[test]
fn ps_disable_gives_same_rows_as_auto() {
    let dir = temp_dir("bmk-sqlite");
    let mut a = open(&dir, &[("db-ps-mode", "auto")]);
    let mut d = open(&dir, &[("db-ps-mode", "disable")]);
    types::same_rows(&mut *a, &mut *d);
}

#[test]
fn bulk_insert_one_million_rows() {
    let dir = temp_dir("bmk-sqlite");
    let mut con = open(&dir, &[]);
    assert!(con.bulk_insert_next("(1)").is_err(), "next before init");
    types::bulk_million(&mut *con, "");
    assert!(con.bulk_insert_next("(1)").is_err(), "next after done");
}

#[test]
fn transactions_are_honoured() {
    let dir = temp_dir("bmk-sqlite");
    let mut a = open(&dir, &[]);
    let mut b = open(&dir, &[]);
    exec(&mut *a, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)");
    exec(&mut *a, "BEGIN");
    exec(&mut *a, "INSERT INTO t VALUES (1, 1)");
    assert_eq!(scalar(&mut *b, "SELECT COUNT(*) FROM t").unwrap(), "0");
    exec(&mut *a, "COMMIT");
    assert_eq!(scalar(&mut *b, "SELECT COUNT(*) FROM t").unwrap(), "1");
    exec(&mut *a, "BEGIN");
    exec(&mut *a, "INSERT INTO t VALUES (2, 1)");
    exec(&mut *a, "ROLLBACK");
    assert_eq!(scalar(&mut *b, "SELECT COUNT(*) FROM t").unwrap(), "1");
}

#[test]
fn busy_is_ignorable_and_rolls_back() {
    let dir = temp_dir("bmk-sqlite");
    let mut a = open(&dir, &[("sqlite-busy-timeout", "50")]);
    let mut b = open(&dir, &[("sqlite-busy-timeout", "50")]);
    exec(&mut *a, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)");
    exec(&mut *a, "INSERT INTO t VALUES (1, 0)");
    // After a read-only transaction b's next BEGIN is deferred, so that it can start
    // while a holds the write lock, and fails only at its write.
    exec(&mut *b, "BEGIN");
    exec(&mut *b, "SELECT v FROM t");
    exec(&mut *b, "COMMIT");
    exec(&mut *a, "BEGIN IMMEDIATE");
    exec(&mut *a, "UPDATE t SET v = 1");
    exec(&mut *b, "BEGIN");
    let e = b.query("UPDATE t SET v = 2").unwrap_err();
    assert_eq!(e.errno & 0xff, 5, "{e}");
    assert_eq!(e.kind, SqlErrorKind::Ignorable { reconnected: false });
    assert!(e.fatal_lines()[0].starts_with("FATAL: sqlite_drv_query() returned error 5"));
    // b's transaction was rolled back, so the restarted event can BEGIN again — as
    // BEGIN IMMEDIATE now that it tried to write, which waits for a's write lock.
    exec(&mut *a, "COMMIT");
    exec(&mut *b, "BEGIN");
    exec(&mut *b, "ROLLBACK");

    // Not listed: fatal.
    let mut c = open(
        &dir,
        &[
            ("sqlite-busy-timeout", "50"),
            ("sqlite-ignore-errors", "constraint"),
        ],
    );
    let e = c.query("INSERT INTO t VALUES (1, 0)").unwrap_err();
    assert_eq!(e.errno & 0xff, 19);
    assert!(e.is_ignorable());
    exec(&mut *a, "BEGIN IMMEDIATE");
    let e = c.query("UPDATE t SET v = 3").unwrap_err();
    assert_eq!(e.kind, SqlErrorKind::Fatal);
    exec(&mut *a, "COMMIT");
    let mut all = open(&dir, &[("sqlite-ignore-errors", "all")]);
    assert!(all.query("SELECT * FROM nope").unwrap_err().is_ignorable());
}

/// Runs `txns` transactions of `shape` (each `?` in the statements bound to `id`) on
/// `threads` connections at once; returns the ignored (busy) errors met on the way.
fn concurrent_transactions(
    dir: &tempfile::TempDir,
    threads: usize,
    txns: usize,
    shape: &'static [&'static str],
    ps: &'static str,
) -> usize {
    let path = dir.path().join("t.db").to_str().unwrap().to_string();
    let drv = Driver::new(config(
        DriverKind::Sqlite,
        &[("sqlite-db", &path), ("db-ps-mode", ps)],
    ));
    let workers: Vec<_> = (0..threads)
        .map(|n| {
            let drv = drv.clone();
            std::thread::spawn(move || {
                let mut con = drv.connect(n).unwrap();
                let stmts: Vec<_> = shape.iter().map(|q| con.prepare(q).unwrap()).collect();
                let mut busy = 0;
                let mut done = 0;
                while done < txns {
                    let id = Value::Int((done % 10) as i64 + 1);
                    let r = stmts.iter().zip(shape).try_for_each(|(&st, q)| {
                        let params = if q.contains('?') {
                            vec![id.clone()]
                        } else {
                            vec![]
                        };
                        con.execute(st, &params).map(|_| ())
                    });
                    match r {
                        Ok(()) => done += 1,
                        Err(e) if e.is_ignorable() => busy += 1,
                        Err(e) => panic!("{e}"),
                    }
                }
                busy
            })
        })
        .collect();
    workers.into_iter().map(|w| w.join().unwrap()).sum()
}

#[test]
fn transactions_that_read_then_write_wait_for_each_other() {
    // Deferred, every transaction of one connection that read before another
    // committed would fail at its write (SQLITE_BUSY_SNAPSHOT) and restart; as BEGIN
    // IMMEDIATE after a transaction that wrote, they queue for the write lock.
    let dir = temp_dir("bmk-sqlite");
    let mut setup = open(&dir, &[]);
    exec(
        &mut *setup,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)",
    );
    for id in 1..=10 {
        exec(&mut *setup, &format!("INSERT INTO t VALUES ({id}, 0)"));
    }
    let shape: &[&str] = &[
        "BEGIN",
        "SELECT v FROM t WHERE id = ?",
        "UPDATE t SET v = v + 1 WHERE id = ?",
        "COMMIT",
    ];
    for ps in ["auto", "disable"] {
        let busy = concurrent_transactions(&dir, 4, 300, shape, ps);
        assert_eq!(busy, 0, "busy errors with --db-ps-mode={ps}");
    }
    assert_eq!(scalar(&mut *setup, "SELECT SUM(v) FROM t").unwrap(), "2400");
}

#[test]
fn read_only_transactions_stay_deferred() {
    // After a transaction that only read, BEGIN takes no write lock: a writer commits
    // while the reader's transaction is open (with BEGIN IMMEDIATE it would time out).
    let dir = temp_dir("bmk-sqlite");
    let mut reader = open(&dir, &[("sqlite-busy-timeout", "50")]);
    let mut writer = open(&dir, &[("sqlite-busy-timeout", "50")]);
    exec(
        &mut *reader,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)",
    );
    exec(&mut *reader, "INSERT INTO t VALUES (1, 0)");
    for begin in ["BEGIN", "begin transaction;", "BEGIN DEFERRED"] {
        exec(&mut *reader, begin);
        exec(&mut *reader, "SELECT v FROM t");
        exec(&mut *reader, "COMMIT");
        exec(&mut *reader, begin);
        exec(&mut *reader, "SELECT v FROM t");
        exec(&mut *writer, "BEGIN");
        exec(&mut *writer, "UPDATE t SET v = v + 1");
        exec(&mut *writer, "COMMIT");
        exec(&mut *reader, "END");
    }
    assert_eq!(scalar(&mut *reader, "SELECT v FROM t").unwrap(), "3");
}

#[test]
fn several_threads_write_concurrently() {
    let dir = temp_dir("bmk-sqlite");
    let path = dir.path().join("t.db").to_str().unwrap().to_string();
    let drv = Driver::new(config(DriverKind::Sqlite, &[("sqlite-db", &path)]));
    let mut setup = drv.connect(0).unwrap();
    exec(
        &mut *setup,
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v INT)",
    );
    let threads: Vec<_> = (0..4)
        .map(|n| {
            let drv = drv.clone();
            std::thread::spawn(move || {
                let mut con = drv.connect(n).unwrap();
                let st = con.prepare("INSERT INTO t (v) VALUES (?)").unwrap();
                let mut done = 0;
                while done < 200 {
                    let r = con
                        .query("BEGIN")
                        .and_then(|_| con.execute(st, &[Value::Int(n as i64)]))
                        .and_then(|_| con.query("COMMIT"));
                    match r {
                        Ok(_) => done += 1,
                        Err(e) if e.is_ignorable() => std::thread::sleep(Duration::from_millis(1)),
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        scalar(&mut *setup, "SELECT COUNT(*) FROM t").unwrap(),
        "800"
    );
}

#[test]
fn errors_and_reconnect() {
    let dir = temp_dir("bmk-sqlite");
    let mut con = open(&dir, &[]);
    let e = con.query("SELECT * FROM nope").unwrap_err();
    assert_eq!(e.kind, SqlErrorKind::Fatal);
    assert_eq!(
        e.fatal_lines()[0],
        "FATAL: sqlite_drv_query() returned error 1 (no such table: nope) for query 'SELECT * FROM nope'"
    );
    let st = con.prepare("SELECT ? * 2").unwrap();
    con.reconnect().unwrap();
    let rs = con.execute(st, &[Value::Int(21)]).unwrap().unwrap();
    assert_eq!(rs.get_str(0, 0).as_deref(), Some("42"));
    // Several statements in one query.
    assert!(con
        .query("CREATE TABLE a (x INT); INSERT INTO a VALUES (1);")
        .unwrap()
        .is_none());
    assert_eq!(scalar(&mut *con, "SELECT COUNT(*) FROM a").unwrap(), "1");
    let rs = con.query("SELECT 1; SELECT 'two', NULL").unwrap().unwrap();
    assert_eq!(rs.get_str(0, 0).as_deref(), Some("1"));
    assert!(con.more_results());
    let rs = con.next_result().unwrap().unwrap();
    assert_eq!(rs.get_str(0, 0).as_deref(), Some("two"));
    assert_eq!(rs.get(0, 1), None);
    assert!(!con.more_results());
}

#[test]
fn load_text_is_declined() {
    let dir = temp_dir("bmk-sqlite");
    let mut con = open(&dir, &[]);
    exec(&mut *con, "CREATE TABLE loaded (id INT PRIMARY KEY)");
    assert_eq!(con.load_text("loaded", "id", b"1\n").unwrap(), None);
    assert_eq!(
        scalar(&mut *con, "SELECT COUNT(*) FROM loaded").as_deref(),
        Some("0")
    );
}

#[test]
fn insert_rows_by_multi_row_inserts() {
    let dir = temp_dir("bmk-sqlite");
    let mut con = open(&dir, &[]);
    types::insert_rows_intact(&mut *con);
}
