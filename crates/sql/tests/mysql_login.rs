//! The MySQL driver's login against scripted servers: what bmk's own handshake does
//! itself, what it leaves to the `mysql` crate, and how long a connect may wait.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::sync::mpsc;
use std::time::Duration;

use bmk_sql::DriverKind;
use support::{connect, mysql_connect_timing_out};

/// A public key the scripted server hands out for `caching_sha2_password`'s RSA
/// exchange (the client encrypts with it; nothing here decrypts).
const PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAzvBGDqFaZInucDwsWlxp
YCPYmpFvI7dEHmgAganTMeE2QKGTKDM8BpXjpVWH8XytS9tmsthFXlQgGdJo3BTG
EIK6y0Vyn4f8talqvduqofL7j0fmCYa4xXzHQ7evMP52syaLQOgx+WzBfMF2laSf
gjFsZgz5IH9gIGJfEAKcIV8ndiu/ZOyTU4WAnwHYYMmC0PauqOKmm+Pi12G80mSs
no9+LwSKJnKVKSPNgztHVQtal3uFf7HvkQRS6EaLOTVnufmgkCmDO6+zyiW37hDT
5PQjMXUuHSqvQY6/cNztu2cgvt3fneFQNPOVjEc3bQhCuq2EkYqVHpR76QUZLZ6n
AwIDAQAB
-----END PUBLIC KEY-----
";

/// What one connection to the scripted server did after being asked for full
/// authentication.
#[derive(Debug, PartialEq)]
enum Answer {
    /// The client hung up.
    HungUp,
    /// It sent the password in clear (with its NUL).
    Cleartext(Vec<u8>),
    /// It asked for the public key, then sent this many encrypted bytes.
    Encrypted(usize),
}

fn read_packet(s: &mut impl Read) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
    let mut p = vec![0; len];
    s.read_exact(&mut p).ok()?;
    Some((h[3], p))
}

fn write_packet(s: &mut impl Write, seq: u8, p: &[u8]) {
    let len = (p.len() as u32).to_le_bytes();
    s.write_all(&[len[0], len[1], len[2], seq]).unwrap();
    s.write_all(p).unwrap();
}

/// A MySQL 8 greeting naming `caching_sha2_password`.
fn greeting() -> Vec<u8> {
    // PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH, LONG_PASSWORD, TRANSACTIONS,
    // CONNECT_WITH_DB, MULTI_STATEMENTS, MULTI_RESULTS, PS_MULTI_RESULTS.
    let caps: u32 = 1 | 1 << 3 | 1 << 9 | 1 << 13 | 1 << 15 | 1 << 16 | 1 << 17 | 1 << 18 | 1 << 19;
    let mut p = vec![10];
    p.extend_from_slice(b"8.0.36-scripted\0");
    p.extend_from_slice(&1u32.to_le_bytes());
    p.extend_from_slice(b"01234567");
    p.push(0);
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(255);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"89abcdefghij\0");
    p.extend_from_slice(b"caching_sha2_password\0");
    p
}

/// One login that always asks for full authentication (the server's password cache
/// empty): greeting, response, `0x01 0x04`, then whatever the client does, then OK.
fn serve_full_authentication(mut s: impl Read + Write) -> Answer {
    write_packet(&mut s, 0, &greeting());
    let Some((seq, _response)) = read_packet(&mut s) else {
        return Answer::HungUp;
    };
    write_packet(&mut s, seq + 1, &[0x01, 0x04]);
    let Some((seq, p)) = read_packet(&mut s) else {
        return Answer::HungUp;
    };
    let answer = if p == [0x02] {
        let mut key = vec![0x01];
        key.extend_from_slice(PUBLIC_KEY.as_bytes());
        write_packet(&mut s, seq + 1, &key);
        let Some((seq, encrypted)) = read_packet(&mut s) else {
            return Answer::HungUp;
        };
        write_packet(&mut s, seq + 1, &[0, 0, 0, 2, 0, 0, 0]);
        Answer::Encrypted(encrypted.len())
    } else {
        write_packet(&mut s, seq + 1, &[0, 0, 0, 2, 0, 0, 0]);
        Answer::Cleartext(p)
    };
    // The client's goodbye, then the end of the stream.
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    answer
}

/// Over TCP, `caching_sha2_password`'s full authentication needs the RSA exchange,
/// which bmk's own handshake leaves to the crate: the first attempt hangs up at the
/// request, the crate's login then completes it, and later connects of the process go
/// to the crate straight away.
#[test]
fn full_authentication_over_tcp_is_left_to_the_crate() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let _ = tx.send(serve_full_authentication(s.unwrap()));
        }
    });
    let opts = [
        ("mysql-host", "127.0.0.1"),
        ("mysql-port", port.as_str()),
        ("mysql-user", "sbtest"),
        ("mysql-password", "pw"),
        ("db-connect-timeout", "5"),
    ];
    let wait = || rx.recv_timeout(Duration::from_secs(10)).unwrap();
    drop(connect(DriverKind::Mysql, &opts).expect("logged in through the crate"));
    assert_eq!(wait(), Answer::HungUp);
    assert_eq!(wait(), Answer::Encrypted(256));
    drop(connect(DriverKind::Mysql, &opts).expect("second login"));
    assert_eq!(wait(), Answer::Encrypted(256));
}

/// Over a UNIX socket full authentication sends the password itself, which bmk's own
/// handshake does.
#[test]
fn full_authentication_over_a_unix_socket_sends_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mysqld.sock");
    let l = UnixListener::bind(&path).unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let _ = tx.send(serve_full_authentication(s.unwrap()));
        }
    });
    let opts = [
        ("mysql-socket", path.to_str().unwrap()),
        ("mysql-user", "sbtest"),
        ("mysql-password", "pw"),
    ];
    drop(connect(DriverKind::Mysql, &opts).expect("logged in"));
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(10)).unwrap(),
        Answer::Cleartext(b"pw\0".to_vec())
    );
}

/// A server whose accept queue is full drops the connection request; the TCP
/// connect itself is bounded by the connect timeout.
#[test]
fn a_connect_the_server_does_not_accept_ends_at_the_connect_timeout() {
    use socket2::{Domain, Socket, Type};
    let l = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    l.bind(
        &"127.0.0.1:0"
            .parse::<std::net::SocketAddr>()
            .unwrap()
            .into(),
    )
    .unwrap();
    l.listen(0).unwrap();
    let addr = l.local_addr().unwrap().as_socket().unwrap();
    // Fill the queue (nothing is ever accepted): connects that do not complete at
    // once from then on are waiting for the queue.
    let mut fillers = Vec::new();
    loop {
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        s.set_nonblocking(true).unwrap();
        let _ = s.connect(&addr.into());
        std::thread::sleep(Duration::from_millis(20));
        let connected = s.peer_addr().is_ok();
        fillers.push(s);
        if !connected || fillers.len() > 64 {
            break;
        }
    }
    mysql_connect_timing_out(&addr.port().to_string());
}
