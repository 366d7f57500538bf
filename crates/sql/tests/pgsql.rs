//! PostgreSQL driver against the machine's PostgreSQL, with a dedicated database and
//! role per test.

mod support;

use bmk_testkit::require;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use bmk_sql::{Driver, DriverKind, SqlErrorKind, Value};
use support::{config, connect, exec, scalar, types, PgTestDb};

#[test]
fn connects_and_reports_server() {
    let db = require!(PgTestDb::create());
    let mut con = db.connect(&[]);
    assert_eq!(scalar(&mut *con, "SELECT current_user").unwrap(), db.name);
    assert_eq!(
        scalar(&mut *con, "SELECT current_database()").unwrap(),
        db.name
    );
    // UNIX socket directory as host.
    if std::path::Path::new("/var/run/postgresql/.s.PGSQL.5432").exists() {
        let mut c = connect(
            DriverKind::Pgsql,
            &db.opts(&[("pgsql-host", "/var/run/postgresql")]),
        )
        .unwrap();
        assert_eq!(
            scalar(
                &mut *c,
                "SELECT COALESCE(inet_client_addr()::text, 'socket')"
            )
            .unwrap(),
            "socket"
        );
    }
    // TLS modes the machine's server offers.
    for mode in ["disable", "prefer", "require"] {
        let mut c = db.connect(&[("pgsql-sslmode", mode)]);
        let ssl = scalar(
            &mut *c,
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        )
        .unwrap();
        if mode == "disable" {
            assert_eq!(ssl, "f");
        }
        if mode == "require" {
            assert_eq!(ssl, "t");
        }
    }
}

#[test]
fn unknown_database_and_unreachable_port() {
    let db = require!(PgTestDb::create());
    let e = connect(
        DriverKind::Pgsql,
        &db.opts(&[("pgsql-db", "bmk_no_such_db_x")]),
    )
    .err()
    .expect("unknown db");
    assert_eq!(e.kind, SqlErrorKind::Connect);
    assert_eq!(e.sqlstate, "3D000");
    // One line as sysbench's driver prints libpq's message (which ends its line).
    let lines = e.fatal_lines();
    assert_eq!(
        lines,
        ["FATAL: Connection to database failed: database \"bmk_no_such_db_x\" does not exist\n"]
    );
    assert!(!format!("{lines:?}{e:?}").contains(&db.password));

    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let t = Instant::now();
    let e = connect(
        DriverKind::Pgsql,
        &[("pgsql-host", "127.0.0.1"), ("pgsql-port", &port)],
    )
    .err()
    .expect("nothing listens");
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(e.kind, SqlErrorKind::Connect);

    // A server that accepts the TCP connection but never answers, asked for TLS first
    // (`prefer`) or not (`disable`): each handshake read is bounded by the connect
    // timeout.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port().to_string();
    for sslmode in ["prefer", "disable"] {
        let t = Instant::now();
        let e = connect(
            DriverKind::Pgsql,
            &[
                ("pgsql-host", "127.0.0.1"),
                ("pgsql-port", &port),
                ("pgsql-sslmode", sslmode),
                ("db-connect-timeout", "2"),
            ],
        )
        .err()
        .expect("silent server");
        let waited = t.elapsed();
        assert!(
            waited >= Duration::from_millis(1900),
            "{sslmode}: {waited:?}"
        );
        assert!(waited < Duration::from_secs(5), "{sslmode}: {waited:?}");
        assert_eq!(e.kind, SqlErrorKind::Connect);
        assert!(
            e.to_string().contains("timeout expired after 2 s"),
            "{sslmode}: {e}"
        );
    }
}

/// `--pgsql-sslmode=require` against a server that declines TLS (answers `N` to the
/// TLS request, as a server without certificates does): one connect error, at once.
#[test]
fn require_fails_when_the_server_declines_tls() {
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port().to_string();
    let answering = std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        let mut request = [0u8; 8];
        std::io::Read::read_exact(&mut s, &mut request).unwrap();
        std::io::Write::write_all(&mut s, b"N").unwrap();
        // Hold the connection until the client closes it.
        let _ = std::io::Read::read(&mut s, &mut [0u8; 64]);
    });
    let t = Instant::now();
    let e = connect(
        DriverKind::Pgsql,
        &[
            ("pgsql-host", "127.0.0.1"),
            ("pgsql-port", &port),
            ("pgsql-sslmode", "require"),
            ("db-connect-timeout", "5"),
        ],
    )
    .err()
    .expect("TLS required");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(e.kind, SqlErrorKind::Connect);
    assert!(e.to_string().contains("server does not support TLS"), "{e}");
    answering.join().unwrap();
}

#[test]
fn bind_types_round_trip_with_nulls() {
    let db = require!(PgTestDb::create());
    for mode in ["auto", "disable"] {
        let mut con = db.connect(&[("db-ps-mode", mode)]);
        types::round_trip(&mut *con, DriverKind::Pgsql, mode);
    }
}

#[test]
fn ps_disable_gives_same_rows_as_auto() {
    let db = require!(PgTestDb::create());
    let mut a = db.connect(&[("db-ps-mode", "auto")]);
    let mut d = db.connect(&[("db-ps-mode", "disable")]);
    types::same_rows(&mut *a, &mut *d);
}

#[test]
fn bulk_insert_one_million_rows() {
    let db = require!(PgTestDb::create());
    let mut con = db.connect(&[]);
    types::bulk_million(&mut *con, "");
}

#[test]
fn prepared_values_render_like_text_queries() {
    let db = require!(PgTestDb::create());
    let mut con = db.connect(&[]);
    let q = "SELECT 1.50::numeric(10,2), -0.001::numeric, true, 'x'::bytea, \
             '2020-03-01 01:02:03.25'::timestamp, 7::oid, 2.5::real, \
             'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, '{\"a\": 1}'::jsonb, 123456789012::int8";
    let text = types::rows(&con.query(q).unwrap().unwrap());
    let st = con.prepare(q).unwrap();
    let prep = types::rows(&con.execute(st, &[]).unwrap().unwrap());
    assert_eq!(text, prep);
}

#[test]
fn ignorable_and_fatal_errors() {
    let db = require!(PgTestDb::create());
    // A list without 23505 (which the default list has).
    let mut con = db.connect(&[("pgsql-ignore-errors", "40P01")]);
    exec(&mut *con, "CREATE TABLE t (id INT PRIMARY KEY)");
    exec(&mut *con, "INSERT INTO t VALUES (1)");
    let e = con.query("INSERT INTO t VALUES (1)").unwrap_err();
    assert_eq!(e.kind, SqlErrorKind::Fatal);
    assert_eq!(e.sqlstate, "23505");
    assert!(e.fatal_lines()[0].starts_with("FATAL: PQexec() failed: 7 duplicate key"));
    assert!(e
        .to_string()
        .starts_with("SQL error, errno = 0, state = '23505': duplicate key"));

    // Listed by SQLSTATE, and by class; inside a transaction the driver rolls back so
    // the restarted event can BEGIN again.
    for list in ["23505", "23"] {
        let mut con = db.connect(&[("pgsql-ignore-errors", list)]);
        exec(&mut *con, "BEGIN");
        let st = con.prepare("INSERT INTO t VALUES (?)").unwrap();
        let e = con.execute(st, &[Value::Int(1)]).unwrap_err();
        assert_eq!(e.kind, SqlErrorKind::Ignorable { reconnected: false });
        assert!(e.fatal_lines()[0].starts_with("FATAL: PQexecPrepared() failed: 7 "));
        exec(&mut *con, "BEGIN");
        con.execute(st, &[Value::Int(2)]).unwrap();
        exec(&mut *con, "ROLLBACK");
    }
    let mut con = db.connect(&[("pgsql-ignore-errors", "all")]);
    assert!(con
        .query("SELECT * FROM no_such_table")
        .unwrap_err()
        .is_ignorable());
    // Default list, sysbench's: deadlocks, unique violations, serialization failures.
    let mut con = db.connect(&[]);
    let e = con.query("SELECT * FROM no_such_table").unwrap_err();
    assert_eq!(e.sqlstate, "42P01");
    assert_eq!(e.kind, SqlErrorKind::Fatal);
    let e = con.query("INSERT INTO t VALUES (1)").unwrap_err();
    assert_eq!(e.sqlstate, "23505");
    assert!(e.is_ignorable(), "{e}");
}

#[test]
fn deadlock_is_ignorable_by_default() {
    let db = require!(PgTestDb::create());
    let mut setup = db.connect(&[]);
    exec(&mut *setup, "CREATE TABLE d (id INT PRIMARY KEY, v INT)");
    exec(&mut *setup, "INSERT INTO d VALUES (1,0),(2,0)");
    let mut a = db.connect(&[]);
    let mut b = db.connect(&[]);
    exec(&mut *a, "BEGIN");
    exec(&mut *b, "BEGIN");
    exec(&mut *a, "UPDATE d SET v=1 WHERE id=1");
    exec(&mut *b, "UPDATE d SET v=1 WHERE id=2");
    let t = std::thread::spawn(move || {
        let r = a.query("UPDATE d SET v=2 WHERE id=2").map(|_| ());
        let _ = a.query("ROLLBACK");
        r
    });
    std::thread::sleep(Duration::from_millis(300));
    let rb = b.query("UPDATE d SET v=2 WHERE id=1").map(|_| ());
    let _ = b.query("ROLLBACK");
    let ra = t.join().unwrap();
    let err = ra.err().or(rb.err()).expect("one side deadlocks");
    assert_eq!(err.sqlstate, "40P01");
    assert_eq!(err.kind, SqlErrorKind::Ignorable { reconnected: false });
}

#[test]
fn terminated_backend_reconnects_only_when_listed() {
    let mut db = require!(PgTestDb::create());
    for (list, expect_reconnect) in [("40P01,08", true), ("40P01,57P01", true), ("40P01", false)] {
        let mut con = db.connect(&[("pgsql-ignore-errors", list)]);
        let st = con.prepare("SELECT ?::int + 1").unwrap();
        let pid = scalar(&mut *con, "SELECT pg_backend_pid()").unwrap();
        exec(db.admin(), &format!("SELECT pg_terminate_backend({pid})"));
        std::thread::sleep(Duration::from_millis(200));
        let e = con.query("SELECT 1").unwrap_err();
        if expect_reconnect {
            assert_eq!(
                e.kind,
                SqlErrorKind::Ignorable { reconnected: true },
                "{list}: {e}"
            );
            assert_ne!(scalar(&mut *con, "SELECT pg_backend_pid()").unwrap(), pid);
            let rs = con.execute(st, &[Value::Int(41)]).unwrap().unwrap();
            assert_eq!(rs.get_str(0, 0).as_deref(), Some("42"));
        } else {
            assert_eq!(e.kind, SqlErrorKind::Fatal, "{e}");
        }
    }
}

#[test]
fn multiple_result_sets_and_reconnect() {
    let db = require!(PgTestDb::create());
    let mut con = db.connect(&[]);
    let rs = con.query("SELECT 1; SELECT 'two', NULL").unwrap().unwrap();
    assert_eq!(rs.get_str(0, 0).as_deref(), Some("1"));
    assert!(con.more_results());
    let rs = con.next_result().unwrap().unwrap();
    assert_eq!(rs.get_str(0, 0).as_deref(), Some("two"));
    assert_eq!(rs.get(0, 1), None);
    assert!(!con.more_results());
    let st = con.prepare("SELECT ? || 'x'").unwrap();
    con.reconnect().unwrap();
    let rs = con.execute(st, &[Value::from("a")]).unwrap().unwrap();
    assert_eq!(rs.get_str(0, 0).as_deref(), Some("ax"));
    assert!(con.query("CREATE TEMP TABLE z (a int)").unwrap().is_none());
}

#[test]
fn load_text_streams_rows_through_copy() {
    let db = require!(PgTestDb::create());
    let mut con = db.connect(&[]);
    types::load_text_rows(&mut *con);
}

#[test]
fn insert_rows_by_copy() {
    let db = require!(PgTestDb::create());
    let mut con = db.connect(&[]);
    types::insert_rows_intact(&mut *con);
}

/// bmk's own protocol client (`--pgsql-fast-path`, here without TLS) and the
/// `postgres` crate give the same column names and text for every column type the
/// OLTP and TPC-C tables use (NULLs and the aggregates TPC-C reads included), in
/// prepared executes and text queries, and the same affected-row counts.
#[test]
fn fast_path_output_matches_the_crate_path() {
    let db = require!(PgTestDb::create());
    let on = [("pgsql-sslmode", "disable"), ("pgsql-fast-path", "on")];
    let off = [("pgsql-sslmode", "disable"), ("pgsql-fast-path", "off")];
    assert!(Driver::new(config(DriverKind::Pgsql, &db.opts(&on))).pgsql_fast_path());
    assert!(!Driver::new(config(DriverKind::Pgsql, &db.opts(&off))).pgsql_fast_path());
    // TLS connections take the own client too (`connects_and_reports_server` checks
    // that they are encrypted), except the modes that verify the certificate.
    for (mode, own) in [
        ("prefer", true),
        ("require", true),
        ("verify-ca", false),
        ("verify-full", false),
    ] {
        let opts = db.opts(&[("pgsql-sslmode", mode)]);
        let driver = Driver::new(config(DriverKind::Pgsql, &opts));
        assert_eq!(driver.pgsql_fast_path(), own, "{mode}");
    }
    let mut fast = db.connect(&on);
    let mut slow = db.connect(&off);
    exec(
        &mut *fast,
        "CREATE TABLE ty (id SERIAL PRIMARY KEY, k INTEGER, s SMALLINT, b BIGINT, \
         c120 CHAR(120), c2 CHAR(2), vc VARCHAR(24), t TEXT, d12 DECIMAL(12,2), \
         d44 DECIMAL(4,4), d62 NUMERIC(6,2), ts TIMESTAMP)",
    );
    let ins = "INSERT INTO ty (k, s, b, c120, c2, vc, t, d12, d44, d62, ts) \
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    let rows = [
        vec![
            Value::Int(-2147483648),
            Value::Int(-32768),
            Value::Int(i64::MAX),
            Value::from("83868641912-28773051792-34118353208-61823961962"),
            Value::from("ab"),
            Value::from("it's ünï \\ \"q\""),
            Value::from("free text"),
            Value::Double(-1234567890.05),
            Value::Double(0.9999),
            Value::Double(-10.5),
            Value::from("2024-02-29 23:59:58.123456"),
        ],
        vec![
            Value::Int(0),
            Value::Int(0),
            Value::Int(0),
            Value::from(""),
            Value::from(""),
            Value::from(""),
            Value::from(""),
            Value::Int(0),
            Value::Int(0),
            Value::Int(0),
            Value::from("1999-12-31 00:00:00"),
        ],
        vec![Value::Null; 11],
    ];
    for (con, offset) in [(&mut fast, 0), (&mut slow, 100)] {
        let st = con.prepare(ins).unwrap();
        for row in &rows {
            let mut row = row.clone();
            if let Value::Int(k) = &mut row[0] {
                *k += offset;
            }
            assert!(con.execute(st, &row).unwrap().is_none());
            assert_eq!(con.affected_rows(), 1);
        }
    }
    let queries = [
        ("SELECT * FROM ty ORDER BY id", vec![]),
        (
            "SELECT k, c120, d12 FROM ty WHERE id BETWEEN ? AND ? ORDER BY id",
            vec![Value::Int(1), Value::Int(5)],
        ),
        (
            "SELECT count(*), sum(d12), avg(k), max(ts), min(c2), sum(s), max(b) FROM ty",
            vec![],
        ),
        ("SELECT id FROM ty WHERE k = ?", vec![Value::Int(-1)]),
    ];
    for (q, params) in &queries {
        let mut got = Vec::new();
        for con in [&mut fast, &mut slow] {
            let st = con.prepare(q).unwrap();
            let prepared = con.execute(st, params).unwrap().unwrap();
            let text = params.iter().fold(q.to_string(), |sql, v| {
                let Value::Int(n) = v else { unreachable!() };
                sql.replacen('?', &n.to_string(), 1)
            });
            let text = con.query(&text).unwrap().unwrap();
            got.push((
                prepared.columns.to_vec(),
                types::rows(&prepared),
                text.columns.to_vec(),
                types::rows(&text),
            ));
        }
        assert_eq!(got[0], got[1], "{q}");
    }
    // Affected rows of a write, and of a text query without rows.
    for con in [&mut fast, &mut slow] {
        let st = con.prepare("UPDATE ty SET s = s WHERE id <= ?").unwrap();
        assert!(con.execute(st, &[Value::Int(4)]).unwrap().is_none());
        assert_eq!(con.affected_rows(), 4);
        let last = "DELETE FROM ty WHERE id = (SELECT max(id) FROM ty)";
        assert!(con.query(last).unwrap().is_none());
        assert_eq!(con.affected_rows(), 1);
    }
}
