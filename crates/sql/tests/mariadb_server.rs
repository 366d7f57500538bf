//! Tests that need a private MariaDB server: TLS-required accounts (the machine's
//! server has no TLS configured) and a server killed and restarted mid-run.

mod support;

use bmk_testkit::require;

use std::time::{Duration, Instant};

use bmk_sql::{Connection, DriverKind, SqlErrorKind, StatementId, Value};
use support::throwaway::ThrowawayMariadb;
use support::{connect, exec, scalar};

fn root_tcp(
    server: &ThrowawayMariadb,
    port: &str,
    extra: &[(&'static str, &str)],
) -> Box<dyn Connection> {
    let mut opts = vec![
        ("mysql-host", "127.0.0.1"),
        ("mysql-port", port),
        ("mysql-user", "root"),
        ("mysql-db", ""),
    ];
    opts.extend_from_slice(extra);
    let _ = server;
    connect(DriverKind::Mysql, &opts).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn tls_required_account() {
    let server = require!(ThrowawayMariadb::start(true));
    let port = server.port_str();
    let mut root = connect(DriverKind::Mysql, &server.root_opts_socket()).unwrap();
    assert_eq!(
        scalar(&mut *root, "SELECT @@have_ssl").as_deref(),
        Some("YES"),
        "{}",
        server.error_log()
    );
    exec(&mut *root, "CREATE DATABASE tlsdb");
    exec(
        &mut *root,
        "CREATE USER 'tlsuser'@'%' IDENTIFIED BY 'TlsPw_1' REQUIRE SSL",
    );
    exec(&mut *root, "GRANT ALL ON tlsdb.* TO 'tlsuser'@'%'");
    let base = |ssl: &'static str| {
        vec![
            ("mysql-host", "127.0.0.1"),
            ("mysql-port", port.as_str()),
            ("mysql-user", "tlsuser"),
            ("mysql-password", "TlsPw_1"),
            ("mysql-db", "tlsdb"),
            ("mysql-ssl", ssl),
        ]
    };
    for mode in ["REQUIRED", "required", "on", "PREFERRED"] {
        let mut con =
            connect(DriverKind::Mysql, &base(mode)).unwrap_or_else(|e| panic!("{mode}: {e}"));
        let rs = con
            .query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            .unwrap()
            .unwrap();
        let cipher = rs.get_str(0, 1).unwrap_or_default();
        assert!(!cipher.is_empty(), "{mode}: no TLS cipher");
        // Prepared statements work over TLS.
        let st = con.prepare("SELECT ?").unwrap();
        let rs = con.execute(st, &[Value::from("x")]).unwrap().unwrap();
        assert_eq!(rs.get_str(0, 0).as_deref(), Some("x"));
    }
    // A chosen cipher suite, and a client certificate/key pair.
    let cert_path = server.cert.clone().unwrap();
    let key_path = cert_path.with_file_name("key.pem");
    let (cert_s, key_s) = (
        cert_path.to_str().unwrap().to_string(),
        key_path.to_str().unwrap().to_string(),
    );
    let mut opts = base("REQUIRED");
    opts.push(("mysql-ssl-cipher", "TLS_AES_128_GCM_SHA256"));
    opts.push(("mysql-ssl-cert", &cert_s));
    opts.push(("mysql-ssl-key", &key_s));
    let mut con = connect(DriverKind::Mysql, &opts).unwrap_or_else(|e| panic!("{e}"));
    let rs = con
        .query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        .unwrap()
        .unwrap();
    assert_eq!(rs.get_str(0, 1).as_deref(), Some("TLS_AES_128_GCM_SHA256"));
    let mut opts = base("REQUIRED");
    opts.push(("mysql-ssl-cipher", "NO-SUCH-CIPHER"));
    let e = connect(DriverKind::Mysql, &opts)
        .err()
        .expect("unknown cipher");
    assert!(e.message.contains("NO-SUCH-CIPHER"), "{e}");

    // With the server's certificate as CA and identity checks: the self-signed
    // certificate is accepted or refused, but never hangs.
    let mut opts = base("VERIFY_CA");
    opts.push(("mysql-ssl-ca", &cert_s));
    let t = Instant::now();
    let _ = connect(DriverKind::Mysql, &opts);
    assert!(t.elapsed() < Duration::from_secs(10));

    // Without TLS: a clear access-denied connect error.
    for mode in ["DISABLED", "off"] {
        let e = connect(DriverKind::Mysql, &base(mode))
            .err()
            .expect("TLS is required");
        assert_eq!(e.kind, SqlErrorKind::Connect);
        assert_eq!(e.errno, 1045, "{e}");
        let lines = e.fatal_lines();
        assert!(
            lines[1].contains("Access denied for user 'tlsuser'"),
            "{lines:?}"
        );
        assert!(!format!("{lines:?}").contains("TlsPw_1"));
    }
}

#[test]
fn preferred_falls_back_without_server_tls() {
    let server = require!(ThrowawayMariadb::start(false));
    let port = server.port_str();
    let mut con = root_tcp(&server, &port, &[("mysql-ssl", "PREFERRED")]);
    assert_eq!(scalar(&mut *con, "SELECT 1").as_deref(), Some("1"));
    let e = connect(
        DriverKind::Mysql,
        &[
            ("mysql-host", "127.0.0.1"),
            ("mysql-port", &port),
            ("mysql-user", "root"),
            ("mysql-db", ""),
            ("mysql-ssl", "REQUIRED"),
        ],
    )
    .err()
    .expect("server has no TLS");
    assert_eq!(e.kind, SqlErrorKind::Connect);
    assert_eq!(e.errno, 2026);
}

/// Run `SELECT ?` until it succeeds or `limit` passes, counting reconnects.
fn run_until_ok(
    con: &mut dyn Connection,
    st: Option<StatementId>,
    limit: Duration,
) -> (bool, u32, u32) {
    let deadline = Instant::now() + limit;
    let (mut ignored, mut reconnects) = (0, 0);
    while Instant::now() < deadline {
        let r = match st {
            Some(st) => con.execute(st, &[Value::Int(6)]),
            None => con.query("SELECT 7"),
        };
        match r {
            Ok(Some(rs)) if rs.get_str(0, 0).as_deref() == Some("7") => {
                return (true, ignored, reconnects)
            }
            Ok(_) => panic!("unexpected result"),
            Err(e) if e.is_ignorable() => {
                ignored += 1;
                reconnects += u32::from(e.reconnected());
            }
            Err(e) => panic!("fatal while the server restarts: {e}"),
        }
    }
    (false, ignored, reconnects)
}

#[test]
fn server_killed_mid_run_reconnects_when_listed() {
    let mut server = require!(ThrowawayMariadb::start(false));
    let port = server.port_str();
    let mut con = root_tcp(
        &server,
        &port,
        &[("mysql-ignore-errors", "2013,2006,2002,2003")],
    );
    let st = con.prepare("SELECT ? + 1").unwrap();
    let st_sql = con.prepare("SELECT ?").unwrap();
    let rs = con.execute(st, &[Value::Int(1)]).unwrap().unwrap();
    assert_eq!(rs.get_str(0, 0).as_deref(), Some("2"));

    server.kill();
    // While the server is down every call is ignorable (the event restarts) and the
    // calls do not hang.
    let t = Instant::now();
    for _ in 0..3 {
        let e = con.execute(st, &[Value::Int(1)]).unwrap_err();
        assert!(e.is_ignorable(), "{e}");
        assert!(!e.reconnected());
    }
    assert!(t.elapsed() < Duration::from_secs(10));

    server.restart();
    let (ok, ignored, reconnects) = run_until_ok(&mut *con, Some(st), Duration::from_secs(30));
    assert!(ok, "never recovered");
    assert!(
        reconnects >= 1,
        "ignored {ignored}, reconnects {reconnects}"
    );
    // The statements prepared before the crash work again.
    let rs = con.execute(st_sql, &[Value::from("s")]).unwrap().unwrap();
    assert_eq!(rs.get_str(0, 0).as_deref(), Some("s"));

    // Not listed: the same crash is fatal.
    let mut plain = root_tcp(&server, &port, &[]);
    assert_eq!(scalar(&mut *plain, "SELECT 1").as_deref(), Some("1"));
    server.kill();
    let e = plain.query("SELECT 1").unwrap_err();
    assert_eq!(e.kind, SqlErrorKind::Fatal, "{e}");
    assert!(matches!(e.errno, 2013 | 2006), "{e}");
    assert!(e.fatal_lines()[0].starts_with(&format!(
        "FATAL: mysql_drv_query() returned error {}",
        e.errno
    )));

    // A clean shutdown (SIGTERM) with reconnects listed: also recovers after restart.
    server.restart();
    let mut con = root_tcp(
        &server,
        &port,
        &[("mysql-ignore-errors", "2013,2006,1053,1927")],
    );
    assert_eq!(scalar(&mut *con, "SELECT 1").as_deref(), Some("1"));
    server.stop();
    let e = con.query("SELECT 1").unwrap_err();
    assert!(e.is_ignorable(), "{e}");
    server.restart();
    let (ok, _, reconnects) = run_until_ok(&mut *con, None, Duration::from_secs(30));
    assert_eq!(reconnects, 1);
    assert!(ok);
}

#[test]
fn load_text_declines_when_the_server_refuses_local_infile() {
    let server = require!(ThrowawayMariadb::start(false));
    let mut root = connect(DriverKind::Mysql, &server.root_opts_socket()).unwrap();
    exec(&mut *root, "CREATE DATABASE nolocal");
    exec(&mut *root, "SET GLOBAL local_infile = OFF");
    let mut opts = server.root_opts_socket();
    opts.retain(|(k, _)| *k != "mysql-db");
    opts.push(("mysql-db", "nolocal"));
    let mut con = connect(DriverKind::Mysql, &opts).unwrap();
    exec(&mut *con, "CREATE TABLE t (id INT PRIMARY KEY)");
    exec(&mut *con, "BEGIN");
    assert_eq!(con.load_text("t", "id", b"1\n").unwrap(), None);
    // Declined for good, and the transaction is still usable for the INSERT fallback.
    assert_eq!(con.load_text("t", "id", b"2\n").unwrap(), None);
    exec(&mut *con, "INSERT INTO t VALUES (3)");
    exec(&mut *con, "COMMIT");
    assert_eq!(
        scalar(&mut *con, "SELECT GROUP_CONCAT(id) FROM t").as_deref(),
        Some("3")
    );
}
