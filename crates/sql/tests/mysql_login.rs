//! The MySQL driver's login against scripted servers: what bmk's own handshake does
//! itself, what it leaves to the `mysql` crate, where the password may go, and how
//! long a connect may wait.

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixListener;
use std::sync::{mpsc, OnceLock};
use std::time::Duration;

use bmk_sql::{DriverConfig, DriverKind, SqlErrorKind};
use rsa::pkcs8::{EncodePublicKey, LineEnding};
use rsa::{Oaep, RsaPrivateKey};
use sha1::Sha1;
use support::{connect, mysql_connect_timing_out};

/// The scripted server's nonce (the greeting's two parts).
const NONCE: &[u8; 20] = b"0123456789abcdefghij";

/// The scripted server's RSA key pair, made per test process (1024 bits: quick to
/// make; the size does not matter to what is tested).
fn key_pair() -> &'static (RsaPrivateKey, String) {
    static KEYS: OnceLock<(RsaPrivateKey, String)> = OnceLock::new();
    KEYS.get_or_init(|| {
        let private = RsaPrivateKey::new(&mut rand_core::OsRng, 1024).unwrap();
        let public = private
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        (private, public)
    })
}

/// What the scripted server sends when the client asks for its public key.
#[derive(Clone, Copy)]
enum KeySent {
    /// Its own public key.
    Valid,
    /// Bytes that are no key.
    Malformed,
}

/// What one connection to the scripted server did after being asked for the
/// password (full authentication, or a switch to another plugin).
#[derive(Debug, PartialEq)]
enum Answer {
    /// The client hung up, having sent nothing more.
    HungUp,
    /// It asked for the public key, then hung up.
    AskedKeyThenHungUp,
    /// It sent these bytes in clear (the password with its NUL, over a UNIX socket).
    Cleartext(Vec<u8>),
    /// It sent the password encrypted with the server's key: what the server
    /// decrypted (XORed with the nonce back, without the NUL), and whether the client
    /// had asked for the key first.
    Encrypted { asked_key: bool, password: Vec<u8> },
    /// It sent something the server could not decrypt (this many bytes).
    Undecryptable(usize),
}

fn read_packet(s: &mut impl Read) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
    let mut p = vec![0; len];
    s.read_exact(&mut p).ok()?;
    Some((h[3], p))
}

/// Writes a packet; a client that hung up already is no failure of the server.
fn write_packet(s: &mut impl Write, seq: u8, p: &[u8]) {
    let len = (p.len() as u32).to_le_bytes();
    let _ = s.write_all(&[len[0], len[1], len[2], seq]);
    let _ = s.write_all(p);
}

/// The client's next packet after a request for the password; `None` when it hung
/// up, or said goodbye (`COM_QUIT`, which the client library sends when it gives up).
fn read_answer(s: &mut impl Read) -> Option<(u8, Vec<u8>)> {
    read_packet(s).filter(|(_, p)| p != &[0x01])
}

/// A MySQL 8 greeting naming `caching_sha2_password`.
fn greeting() -> Vec<u8> {
    // PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH, LONG_PASSWORD, TRANSACTIONS,
    // CONNECT_WITH_DB, MULTI_STATEMENTS, MULTI_RESULTS, PS_MULTI_RESULTS.
    let caps: u32 = 1 | 1 << 3 | 1 << 9 | 1 << 13 | 1 << 15 | 1 << 16 | 1 << 17 | 1 << 18 | 1 << 19;
    let mut p = vec![10];
    p.extend_from_slice(b"8.0.36-scripted\0");
    p.extend_from_slice(&1u32.to_le_bytes());
    p.extend_from_slice(&NONCE[..8]);
    p.push(0);
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(255);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(&NONCE[8..]);
    p.push(0);
    p.extend_from_slice(b"caching_sha2_password\0");
    p
}

/// The password the server decrypts from `blob`, if it can.
fn decrypt(blob: &[u8]) -> Option<Vec<u8>> {
    let plain = key_pair().0.decrypt(Oaep::new::<Sha1>(), blob).ok()?;
    let mut pw: Vec<u8> = plain
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ NONCE[i % NONCE.len()])
        .collect();
    assert_eq!(pw.pop(), Some(0), "the password ends with a NUL");
    Some(pw)
}

/// The client's goodbye, then the end of the stream.
fn drain(mut s: impl Read) {
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
}

/// One login that always asks for full authentication (the server's password cache
/// empty): greeting, response, `0x01 0x04`, then whatever the client does, then OK.
fn serve_full_authentication(mut s: impl Read + Write, key: KeySent) -> Answer {
    write_packet(&mut s, 0, &greeting());
    let Some((seq, _response)) = read_packet(&mut s) else {
        return Answer::HungUp;
    };
    write_packet(&mut s, seq + 1, &[0x01, 0x04]);
    let Some((seq, p)) = read_answer(&mut s) else {
        return Answer::HungUp;
    };
    let answer = if p == [0x02] {
        let mut packet = vec![0x01];
        match key {
            KeySent::Valid => packet.extend_from_slice(key_pair().1.as_bytes()),
            KeySent::Malformed => packet.extend_from_slice(
                b"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOC\n-----END PUBLIC KEY-----\n",
            ),
        }
        write_packet(&mut s, seq + 1, &packet);
        let Some((seq, blob)) = read_answer(&mut s) else {
            return Answer::AskedKeyThenHungUp;
        };
        write_packet(&mut s, seq + 1, &[0, 0, 0, 2, 0, 0, 0]);
        match decrypt(&blob) {
            Some(password) => Answer::Encrypted {
                asked_key: true,
                password,
            },
            None => Answer::Undecryptable(blob.len()),
        }
    } else {
        write_packet(&mut s, seq + 1, &[0, 0, 0, 2, 0, 0, 0]);
        match decrypt(&p) {
            Some(password) => Answer::Encrypted {
                asked_key: false,
                password,
            },
            None => Answer::Cleartext(p),
        }
    };
    drain(s);
    answer
}

/// One login that switches the client to authentication plugin `plugin`.
fn serve_plugin_switch(mut s: impl Read + Write, plugin: &str) -> Answer {
    write_packet(&mut s, 0, &greeting());
    let Some((seq, _response)) = read_packet(&mut s) else {
        return Answer::HungUp;
    };
    let mut switch = vec![0xfe];
    switch.extend_from_slice(plugin.as_bytes());
    switch.push(0);
    switch.extend_from_slice(NONCE);
    switch.push(0);
    write_packet(&mut s, seq + 1, &switch);
    let Some((seq, p)) = read_answer(&mut s) else {
        return Answer::HungUp;
    };
    write_packet(&mut s, seq + 1, &[0, 0, 0, 2, 0, 0, 0]);
    drain(s);
    Answer::Cleartext(p)
}

/// One login switched to MariaDB's `client_ed25519` with a scramble whose last byte is
/// 0 (no terminating NUL follows it): OK when the answer is a signature of the whole
/// scramble that the key of password "pw" verifies, else an access-denied error.
fn serve_ed25519(mut s: impl Read + Write) -> Answer {
    use ed25519_dalek::hazmat::ExpandedSecretKey;
    use ed25519_dalek::{Signature, VerifyingKey};
    use sha2::{Digest, Sha512};
    let scramble: Vec<u8> = (1..32).chain([0]).collect();
    write_packet(&mut s, 0, &greeting());
    let Some((seq, _response)) = read_packet(&mut s) else {
        return Answer::HungUp;
    };
    let mut switch = b"\xfeclient_ed25519\0".to_vec();
    switch.extend_from_slice(&scramble);
    write_packet(&mut s, seq + 1, &switch);
    let Some((seq, p)) = read_answer(&mut s) else {
        return Answer::HungUp;
    };
    let key: [u8; 64] = Sha512::digest(b"pw").into();
    let public = VerifyingKey::from(&ExpandedSecretKey::from_bytes(&key));
    let verified = <[u8; 64]>::try_from(p.as_slice()).is_ok_and(|sig| {
        public
            .verify_strict(&scramble, &Signature::from_bytes(&sig))
            .is_ok()
    });
    if verified {
        write_packet(&mut s, seq + 1, &[0, 0, 0, 2, 0, 0, 0]);
    } else {
        write_packet(&mut s, seq + 1, b"\xff\x15\x04#28000Access denied");
    }
    drain(s);
    Answer::Cleartext(p)
}

/// A scripted server on 127.0.0.1 serving every connection with `serve`; what each
/// did arrives on the receiver. Returns the port.
fn scripted_server(
    serve: impl Fn(TcpStream) -> Answer + Send + 'static,
) -> (String, mpsc::Receiver<Answer>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let _ = tx.send(serve(s.unwrap()));
        }
    });
    (port, rx)
}

fn wait(rx: &mpsc::Receiver<Answer>) -> Answer {
    rx.recv_timeout(Duration::from_secs(10)).unwrap()
}

/// No further connection reached the server (no second attempt through the client
/// library).
fn no_more_connections(rx: &mpsc::Receiver<Answer>) {
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
}

/// The options of a login as `sbtest`/`pw` to the scripted server on `port`, by bmk's
/// own login unless `more` says otherwise (`BMK_MYSQL_FASTPATH=0` would turn it off).
fn tcp_login<'a>(port: &'a str, more: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut opts = vec![
        ("mysql-fast-path", "on"),
        ("mysql-host", "127.0.0.1"),
        ("mysql-port", port),
        ("mysql-user", "sbtest"),
        ("mysql-password", "pw"),
        ("db-connect-timeout", "5"),
    ];
    opts.extend_from_slice(more);
    opts
}

/// Over plain TCP, full authentication would send the password to whoever answers:
/// without a trusted key (or the opt-in) the login fails with a line naming the ways
/// out, and the server got nothing of the password, neither from bmk's own login nor
/// from the client library's (`--mysql-fast-path=off`).
#[test]
fn full_authentication_over_tcp_without_a_trusted_key_sends_nothing() {
    for (more, own) in [(None, true), (Some(("mysql-fast-path", "off")), false)] {
        let (port, rx) = scripted_server(|s| serve_full_authentication(s, KeySent::Valid));
        let e = connect(
            DriverKind::Mysql,
            &tcp_login(&port, &more.into_iter().collect::<Vec<_>>()),
        )
        .err()
        .expect("the login must fail");
        assert_eq!(wait(&rx), Answer::HungUp, "own login: {own}");
        no_more_connections(&rx);
        assert_eq!(e.kind, SqlErrorKind::Connect);
        assert_eq!(e.errno, 2061);
        assert!(!e.message.contains('\n'), "{}", e.message);
        for way in [
            "--mysql-ssl",
            "--mysql-server-public-key",
            "--mysql-get-server-public-key",
        ] {
            assert!(e.message.contains(way), "{}", e.message);
        }
        assert!(!e.message.contains("DriverError"), "{}", e.message);
    }
}

/// With `--mysql-server-public-key=FILE` the password goes encrypted with that key,
/// without asking the server for one; the server decrypts it and lets the client in.
#[test]
fn a_trusted_key_file_encrypts_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("server.pem");
    std::fs::write(&key, &key_pair().1).unwrap();
    let (port, rx) = scripted_server(|s| serve_full_authentication(s, KeySent::Malformed));
    let opts = tcp_login(&port, &[("mysql-server-public-key", key.to_str().unwrap())]);
    drop(connect(DriverKind::Mysql, &opts).expect("logged in"));
    assert_eq!(
        wait(&rx),
        Answer::Encrypted {
            asked_key: false,
            password: b"pw".to_vec()
        }
    );
    no_more_connections(&rx);
}

/// With `--mysql-get-server-public-key` the client asks for the server's key and
/// encrypts the password with it.
#[test]
fn the_opt_in_takes_the_key_the_server_sends() {
    let (port, rx) = scripted_server(|s| serve_full_authentication(s, KeySent::Valid));
    let opts = tcp_login(&port, &[("mysql-get-server-public-key", "on")]);
    drop(connect(DriverKind::Mysql, &opts).expect("logged in"));
    assert_eq!(
        wait(&rx),
        Answer::Encrypted {
            asked_key: true,
            password: b"pw".to_vec()
        }
    );
}

/// A malformed key from the server is a connect error (no panic), and nothing was
/// sent after it.
#[test]
fn a_malformed_key_from_the_server_is_a_clean_connect_error() {
    let (port, rx) = scripted_server(|s| serve_full_authentication(s, KeySent::Malformed));
    let opts = tcp_login(&port, &[("mysql-get-server-public-key", "on")]);
    let e = connect(DriverKind::Mysql, &opts)
        .err()
        .expect("the login must fail");
    assert_eq!(wait(&rx), Answer::AskedKeyThenHungUp);
    no_more_connections(&rx);
    assert_eq!(e.kind, SqlErrorKind::Connect);
    assert!(
        e.message.contains("the public key the server sent is not"),
        "{}",
        e.message
    );
}

/// A key file that holds no key, or is missing, is a configuration error naming it.
#[test]
fn a_malformed_key_file_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pem");
    std::fs::write(
        &bad,
        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.pem");
    for path in [&bad, &missing] {
        let path = path.to_str().unwrap().to_string();
        let e = DriverConfig::from_options(DriverKind::Mysql, &|k| {
            (k == "mysql-server-public-key").then(|| path.clone())
        })
        .unwrap_err();
        assert!(
            e.message.starts_with("--mysql-server-public-key: "),
            "{}",
            e.message
        );
        assert!(e.message.contains(&path), "{}", e.message);
        assert!(!e.message.contains('\n'), "{}", e.message);
    }
}

/// A server asking for the password in clear text, or for `dialog`, is refused with
/// a plain message, by bmk's own login and by the client library's; nothing is sent.
#[test]
fn clear_text_and_dialog_plugins_are_refused_plainly() {
    for plugin in ["mysql_clear_password", "dialog"] {
        for fast_path in ["on", "off"] {
            let (port, rx) = scripted_server(move |s| serve_plugin_switch(s, plugin));
            let opts = tcp_login(&port, &[("mysql-fast-path", fast_path)]);
            let e = connect(DriverKind::Mysql, &opts)
                .err()
                .expect("the login must fail");
            // The client library answers a plugin it does not know with an empty
            // packet before it gives up: nothing of the password either.
            let answer = wait(&rx);
            assert!(
                answer == Answer::HungUp || answer == Answer::Cleartext(Vec::new()),
                "{plugin}, fast path {fast_path}: {answer:?}"
            );
            no_more_connections(&rx);
            assert_eq!(e.errno, 2059, "{}", e.message);
            assert!(
                e.message.starts_with(&format!(
                    "the server asks for authentication plugin '{plugin}', which bmk refuses"
                )),
                "{}",
                e.message
            );
            assert!(!e.message.contains("DriverError"), "{}", e.message);
        }
    }
}

/// MariaDB's `client_ed25519` is answered by bmk's own login, on the one connection
/// (the client library is not tried), with a signature of the whole 32-byte scramble,
/// a last byte of 0 included; a wrong password signs with another key.
#[test]
fn client_ed25519_is_answered_by_the_own_login() {
    let (port, rx) = scripted_server(serve_ed25519);
    drop(connect(DriverKind::Mysql, &tcp_login(&port, &[])).expect("logged in"));
    let Answer::Cleartext(signature) = wait(&rx) else {
        panic!("no answer to the switch")
    };
    assert_eq!(signature.len(), 64);
    no_more_connections(&rx);
    let e = connect(
        DriverKind::Mysql,
        &tcp_login(&port, &[("mysql-password", "pW")]),
    )
    .err()
    .expect("another password signs with another key");
    assert_eq!(e.errno, 1045, "{}", e.message);
    let Answer::Cleartext(other) = wait(&rx) else {
        panic!("no answer to the switch")
    };
    assert_eq!(other.len(), 64);
    assert_ne!(other, signature);
    no_more_connections(&rx);
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
            let _ = tx.send(serve_full_authentication(s.unwrap(), KeySent::Valid));
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
    mysql_connect_timing_out(&addr.port().to_string(), &[]);
}

/// A server asking for MariaDB's `parsec`, which only the client library speaks, while
/// the workers are on event loops: the library's connection would block its loop's
/// other workers on every read, so the connect fails with a line saying to run with
/// `--event-loops=off`.
#[test]
fn parsec_on_event_loops_is_refused_naming_the_way_out() {
    let (port, _rx) = scripted_server(|s| serve_plugin_switch(s, "parsec"));
    let out = std::process::Command::new(bmk_testkit::bmk_bin())
        .args([
            "oltp_point_select",
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
        ])
        .arg(format!("--mysql-port={port}"))
        .args([
            "--mysql-password=pw",
            "--threads=4",
            "--event-loops=2",
            "--time=5",
        ])
        .arg("run")
        .env_remove("BMK_MYSQL_FASTPATH")
        .output()
        .expect("run bmk");
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{output}");
    assert!(
        output
            .lines()
            .any(|l| l.starts_with("FATAL: ") && l.contains("run with --event-loops=off")),
        "{output}"
    );
    assert!(!output.contains("panicked"), "{output}");
}
