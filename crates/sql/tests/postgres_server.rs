//! Tests that need a private PostgreSQL server with password authentication and TLS
//! (the machine's server trusts local connections): wrong password, sslmode, and a
//! server killed and restarted mid-run.

mod support;

use bmk_testkit::require;

use std::time::{Duration, Instant};

use bmk_sql::{Driver, DriverKind, SqlErrorKind, Value};
use support::throwaway_pg::{ThrowawayPostgres, PG_PASSWORD};
use support::{config, connect, exec, scalar};

#[test]
fn wrong_password_and_tls_modes() {
    let server = require!(ThrowawayPostgres::start());
    let port = server.port_str();
    let mut admin = connect(DriverKind::Pgsql, &server.superuser_opts()).unwrap();
    exec(
        &mut *admin,
        "CREATE ROLE tlsonly LOGIN PASSWORD 'TlsOnly_Pw1'",
    );

    // Wrong password: a clear connect error naming host, port and user, no password.
    let mut opts = server.superuser_opts();
    opts.push(("pgsql-password", "Wr0ngPassw0rd"));
    let e = connect(DriverKind::Pgsql, &opts)
        .err()
        .expect("wrong password");
    assert_eq!(e.kind, SqlErrorKind::Connect);
    assert_eq!(e.sqlstate, "28P01");
    // sysbench's driver prints libpq's message, which names the user.
    let lines = e.fatal_lines();
    assert!(
        lines[0].starts_with("FATAL: Connection to database failed: ")
            && lines[0].contains("password authentication failed for user \"postgres\""),
        "{lines:?}"
    );
    let all = format!("{lines:?} {e} {e:?}");
    assert!(!all.contains("Wr0ngPassw0rd") && !all.contains(PG_PASSWORD));

    let tls = |mode: &'static str| {
        vec![
            ("pgsql-host", "127.0.0.1"),
            ("pgsql-port", port.as_str()),
            ("pgsql-user", "tlsonly"),
            ("pgsql-password", "TlsOnly_Pw1"),
            ("pgsql-db", "postgres"),
            ("pgsql-sslmode", mode),
        ]
    };
    for mode in ["require", "prefer", "allow"] {
        let mut con =
            connect(DriverKind::Pgsql, &tls(mode)).unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(
            scalar(
                &mut *con,
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"
            )
            .as_deref(),
            Some("t")
        );
        let st = con.prepare("SELECT ?::text").unwrap();
        let rs = con
            .execute(st, &[Value::from("over tls")])
            .unwrap()
            .unwrap();
        assert_eq!(rs.get_str(0, 0).as_deref(), Some("over tls"));
    }
    // The account only accepts TLS.
    let e = connect(DriverKind::Pgsql, &tls("disable"))
        .err()
        .expect("hostnossl reject");
    assert_eq!(e.kind, SqlErrorKind::Connect);
    // A self-signed certificate fails verification of the chain, quickly.
    for mode in ["verify-ca", "verify-full"] {
        let t = Instant::now();
        let e = connect(DriverKind::Pgsql, &tls(mode))
            .err()
            .expect("self-signed");
        assert_eq!(e.kind, SqlErrorKind::Connect);
        assert!(e.to_string().contains("certificate"), "{mode}: {e}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}

#[test]
fn server_killed_mid_run_reconnects_when_listed() {
    let mut server = require!(ThrowawayPostgres::start());
    let mut opts = server.superuser_opts();
    opts.push(("pgsql-ignore-errors", "40P01,08,57P01,57P03"));
    let mut con = connect(DriverKind::Pgsql, &opts).unwrap();
    let st = con.prepare("SELECT ?::int + 1").unwrap();
    assert!(con.execute(st, &[Value::Int(1)]).is_ok());

    server.kill();
    std::thread::sleep(Duration::from_millis(300));
    for _ in 0..3 {
        let e = con.execute(st, &[Value::Int(1)]).unwrap_err();
        assert!(e.is_ignorable(), "{e}");
        assert!(!e.reconnected());
    }
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut reconnects = 0;
    loop {
        match con.execute(st, &[Value::Int(41)]) {
            Ok(Some(rs)) => {
                assert_eq!(rs.get_str(0, 0).as_deref(), Some("42"));
                break;
            }
            Ok(None) => panic!("no result"),
            Err(e) if e.is_ignorable() => reconnects += u32::from(e.reconnected()),
            Err(e) => panic!("fatal: {e}"),
        }
        assert!(Instant::now() < deadline, "never recovered");
    }
    assert!(reconnects >= 1);

    // Not listed: fatal.
    let mut plain = connect(DriverKind::Pgsql, &server.superuser_opts()).unwrap();
    assert_eq!(scalar(&mut *plain, "SELECT 1").as_deref(), Some("1"));
    server.kill();
    std::thread::sleep(Duration::from_millis(300));
    let e = plain.query("SELECT 1").unwrap_err();
    assert_eq!(e.kind, SqlErrorKind::Fatal, "{e}");
}

/// bmk's own protocol client (`--pgsql-fast-path`, here without TLS) logs in with
/// SCRAM-SHA-256, md5 and cleartext passwords, and reports a wrong or missing password
/// exactly as the `postgres` crate path does.
#[test]
fn fast_path_password_authentication() {
    let server = require!(ThrowawayPostgres::start());
    let port = server.port_str();
    let mut admin = connect(DriverKind::Pgsql, &server.superuser_opts()).unwrap();
    exec(&mut *admin, "SET password_encryption = 'md5'");
    exec(&mut *admin, "CREATE ROLE pw_md5 LOGIN PASSWORD 'Md5_Pw1'");
    exec(&mut *admin, "RESET password_encryption");
    exec(
        &mut *admin,
        "CREATE ROLE pw_clear LOGIN PASSWORD 'Clear_Pw1'",
    );
    exec(
        &mut *admin,
        "CREATE ROLE pw_scram LOGIN PASSWORD 'Scram_Pw1'",
    );
    let opts = |user: &'static str, password: &'static str, fast: &'static str| {
        vec![
            ("pgsql-host", "127.0.0.1"),
            ("pgsql-port", port.as_str()),
            ("pgsql-user", user),
            ("pgsql-password", password),
            ("pgsql-db", "postgres"),
            ("pgsql-sslmode", "disable"),
            ("pgsql-fast-path", fast),
        ]
    };
    for (user, password) in [
        ("pw_scram", "Scram_Pw1"),
        ("pw_md5", "Md5_Pw1"),
        ("pw_clear", "Clear_Pw1"),
    ] {
        let mut refusals = Vec::new();
        for fast in ["on", "off"] {
            let what = format!("{user} fast path {fast}");
            let o = opts(user, password, fast);
            assert_eq!(
                Driver::new(config(DriverKind::Pgsql, &o)).pgsql_fast_path(),
                fast == "on",
                "{what}"
            );
            let mut con = connect(DriverKind::Pgsql, &o).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(scalar(&mut *con, "SELECT current_user").unwrap(), user);
            let st = con.prepare("SELECT ?::text || current_user").unwrap();
            let rs = con.execute(st, &[Value::from("hi ")]).unwrap().unwrap();
            assert_eq!(rs.get_str(0, 0), Some(format!("hi {user}")), "{what}");

            let e = connect(DriverKind::Pgsql, &opts(user, "Wr0ng", fast))
                .err()
                .unwrap_or_else(|| panic!("{what}: wrong password accepted"));
            assert_eq!(e.kind, SqlErrorKind::Connect, "{what}");
            assert_eq!(e.sqlstate, "28P01", "{what}");
            let missing = connect(DriverKind::Pgsql, &opts(user, "", fast))
                .err()
                .unwrap_or_else(|| panic!("{what}: no password accepted"));
            assert_eq!(missing.kind, SqlErrorKind::Connect, "{what}");
            refusals.push((e.fatal_lines(), missing.fatal_lines()));
        }
        assert_eq!(refusals[0], refusals[1], "{user}");
        // libpq's one line: `FATAL: Connection to database failed: <server message>`.
        let lines = &refusals[0].0;
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains(&format!(
                "password authentication failed for user \"{user}\""
            )),
            "{lines:?}"
        );
    }
}
