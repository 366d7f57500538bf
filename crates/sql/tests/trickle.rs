//! Servers that trickle: a packet or message header announcing a large payload (16 MB,
//! or as much as a client takes), then one byte every half second, each byte well
//! within any socket timeout. The connect timeout
//! bounds the whole handshake, and `--db-timeout` every read of an answer as a whole:
//! `bmk prepare` and `bmk run` end within the limit plus a second, with one error line
//! and exit 1, on bmk's own clients and (for the MySQL login) the client library's.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

/// Where the scripted server starts trickling.
#[derive(Clone, Copy, Debug)]
enum Trickle {
    /// At once: the handshake never completes.
    Handshake,
    /// After a login that succeeds: the answer to the first command.
    Answer,
}

/// Sends `header`, then one byte every 0.5 s until the client hangs up.
fn trickle(mut s: TcpStream, header: &[u8]) {
    if s.write_all(header).is_err() {
        return;
    }
    loop {
        std::thread::sleep(Duration::from_millis(500));
        if s.write_all(b"x").is_err() {
            return;
        }
    }
}

fn read_mysql_packet(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
    let mut p = vec![0; len];
    s.read_exact(&mut p).ok()?;
    Some(p)
}

fn write_mysql_packet(s: &mut TcpStream, seq: u8, p: &[u8]) {
    let len = (p.len() as u32).to_le_bytes();
    let _ = s.write_all(&[len[0], len[1], len[2], seq]);
    let _ = s.write_all(p);
}

/// A MySQL packet header announcing a payload of almost 16 MB.
const MYSQL_BIG_HEADER: [u8; 4] = [0xfe, 0xff, 0xff, 0];
/// A greeting's header announcing 4000 bytes: the client library refuses a larger
/// packet before the login at once, which would not test its time limit.
const MYSQL_GREETING_HEADER: [u8; 4] = [0xa0, 0x0f, 0, 0];

/// One MySQL connection: a greeting naming `mysql_native_password`, any response
/// accepted, then the first command answered by a trickle.
fn serve_mysql(mut s: TcpStream, at: Trickle) {
    if let Trickle::Handshake = at {
        return trickle(s, &MYSQL_GREETING_HEADER);
    }
    // PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH, LONG_PASSWORD, TRANSACTIONS,
    // CONNECT_WITH_DB, MULTI_STATEMENTS, MULTI_RESULTS, PS_MULTI_RESULTS.
    let caps: u32 = 1 | 1 << 3 | 1 << 9 | 1 << 13 | 1 << 15 | 1 << 16 | 1 << 17 | 1 << 18 | 1 << 19;
    let mut g = vec![10];
    g.extend_from_slice(b"8.0.36-trickle\0");
    g.extend_from_slice(&1u32.to_le_bytes());
    g.extend_from_slice(b"01234567\0");
    g.extend_from_slice(&(caps as u16).to_le_bytes());
    g.push(255);
    g.extend_from_slice(&2u16.to_le_bytes());
    g.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    g.push(21);
    g.extend_from_slice(&[0; 10]);
    g.extend_from_slice(b"89abcdefghij\0mysql_native_password\0");
    write_mysql_packet(&mut s, 0, &g);
    if read_mysql_packet(&mut s).is_none() {
        return;
    }
    write_mysql_packet(&mut s, 2, &[0, 0, 0, 2, 0, 0, 0]);
    if read_mysql_packet(&mut s).is_none() {
        return;
    }
    trickle(s, &MYSQL_BIG_HEADER);
}

/// A PostgreSQL message header (tag, length) announcing 16 MB.
fn pg_big_header(tag: u8) -> Vec<u8> {
    let mut h = vec![tag];
    h.extend_from_slice(&(16i32 << 20).to_be_bytes());
    h
}

/// Reads one startup-phase message (length first, no tag).
fn read_pg_startup(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let mut body = vec![0; (i32::from_be_bytes(len) as usize).checked_sub(4)?];
    s.read_exact(&mut body).ok()?;
    Some(body)
}

/// One PostgreSQL connection: TLS declined, the startup message answered by a trickle
/// or by a login without password (then the first query answered by a trickle).
fn serve_pgsql(mut s: TcpStream, at: Trickle) {
    let Some(mut first) = read_pg_startup(&mut s) else {
        return;
    };
    // An SSLRequest (code 80877103) comes first under `prefer`.
    if first == 80877103i32.to_be_bytes() {
        let _ = s.write_all(b"N");
        match read_pg_startup(&mut s) {
            Some(m) => first = m,
            None => return,
        }
    }
    let _ = first;
    if let Trickle::Handshake = at {
        return trickle(s, &pg_big_header(b'R'));
    }
    // AuthenticationOk, ReadyForQuery (idle).
    let _ = s.write_all(&[b'R', 0, 0, 0, 8, 0, 0, 0, 0, b'Z', 0, 0, 0, 5, b'I']);
    let mut tag = [0u8; 5];
    if s.read_exact(&mut tag).is_err() {
        return;
    }
    trickle(s, &pg_big_header(b'T'));
}

/// A scripted server on 127.0.0.1 serving each connection on its own thread; its port.
fn server(serve: fn(TcpStream, Trickle), at: Trickle) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            std::thread::spawn(move || serve(s, at));
        }
    });
    port
}

/// `bmk oltp_point_select ... COMMAND` against the server on `port`; its exit code,
/// its output (standard output, then standard error), and how long it took. Killed
/// after 60 s.
fn bmk(driver: &str, port: u16, extra: &[&str], command: &str) -> (i32, String, Duration) {
    // Found (or built) before the clock starts.
    let bin = bmk_testkit::bmk_bin();
    let t = Instant::now();
    let out = Command::new("timeout")
        .args(["-s", "KILL", "60"])
        .arg(bin)
        .arg("oltp_point_select")
        .arg(format!("--db-driver={driver}"))
        .arg(format!("--{driver}-host=127.0.0.1"))
        .arg(format!("--{driver}-port={port}"))
        .arg(format!("--{driver}-password=secret"))
        .args(["--tables=1", "--table-size=10", "--threads=1", "--time=30"])
        .args(extra)
        .arg(command)
        .env_remove("MYSQL_SESSION_OPTIONS")
        .env_remove("BMK_NATIVE_OLTP")
        .env_remove("BMK_MYSQL_FASTPATH")
        .env_remove("BMK_PGSQL_FASTPATH")
        .output()
        .expect("run bmk");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        t.elapsed(),
    )
}

/// Runs `prepare` and `run` against a server trickling `at`, with `extra` options;
/// each must end within `limit` plus a second, exit 1, and say why in one line
/// containing `says`.
fn check(driver: &str, at: Trickle, extra: &[&str], limit: Duration, says: &str) {
    let serve = if driver == "mysql" {
        serve_mysql
    } else {
        serve_pgsql
    };
    let port = server(serve, at);
    for command in ["prepare", "run"] {
        let (code, output, took) = bmk(driver, port, extra, command);
        let what = format!("{driver} {command} {at:?} {extra:?}: {took:?}, exit {code}\n{output}");
        assert_eq!(code, 1, "{what}");
        assert!(took < limit + Duration::from_secs(1), "{what}");
        assert!(!output.contains("panicked"), "{what}");
        // An error line says what went wrong (the lines around it say which step
        // failed).
        assert!(
            output
                .lines()
                .any(|l| l.starts_with("FATAL: ") && l.contains(says)),
            "{what}"
        );
    }
}

#[test]
fn a_mysql_handshake_trickle_ends_at_the_connect_timeout() {
    for fast_path in ["on", "off"] {
        check(
            "mysql",
            Trickle::Handshake,
            &[
                "--db-connect-timeout=2",
                &format!("--mysql-fast-path={fast_path}"),
            ],
            Duration::from_secs(2),
            "connect timeout",
        );
    }
}

/// On bmk's own client each packet is bounded; on the client library's session
/// (`--mysql-fast-path=off`) the whole call, by the watchdog.
#[test]
fn a_mysql_answer_trickle_ends_at_the_db_timeout() {
    for fast_path in ["on", "off"] {
        check(
            "mysql",
            Trickle::Answer,
            &[
                "--db-connect-timeout=5",
                "--db-timeout=2",
                &format!("--mysql-fast-path={fast_path}"),
            ],
            Duration::from_secs(2),
            "Lost connection",
        );
    }
}

#[test]
fn a_pgsql_handshake_trickle_ends_at_the_connect_timeout() {
    for fast_path in ["on", "off"] {
        check(
            "pgsql",
            Trickle::Handshake,
            &[
                "--db-connect-timeout=2",
                &format!("--pgsql-fast-path={fast_path}"),
            ],
            Duration::from_secs(2),
            "timeout expired",
        );
    }
}

#[test]
fn a_pgsql_answer_trickle_ends_at_the_db_timeout() {
    check(
        "pgsql",
        Trickle::Answer,
        &["--db-connect-timeout=5", "--db-timeout=2"],
        Duration::from_secs(2),
        "no answer within --db-timeout",
    );
}
