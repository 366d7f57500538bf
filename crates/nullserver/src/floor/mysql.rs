//! The floor client's MySQL side: log in, prepare the statements, build each request
//! packet once, and find where a reply ends (by walking packet headers and the few
//! bytes that say what comes next; nothing is decoded). For the connect workload, a
//! non-blocking log-in ([`login`]) that answers the plugin the server names with a
//! real proof.

use std::io::{self, Read, Write};
use std::net::TcpStream;

use super::scramble::Secrets;
use super::workload::{Param, Step, STATEMENTS};
use crate::mysql::auth::{
    CONNECT_WITH_DB, MULTI_RESULTS, PLUGIN_AUTH, PROTOCOL_41, SECURE_CONNECTION, TRANSACTIONS,
};
use crate::mysql::framing::{get_cstr, get_lenenc, next_packet, put_lenenc_str, Writer, HEADER};

/// Reads one packet's payload (blocking, during set-up).
fn read_packet(s: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<Vec<u8>> {
    loop {
        if let Some((total, _)) = next_packet(buf) {
            let payload = buf[HEADER..total].to_vec();
            buf.drain(..total);
            return Ok(payload);
        }
        let mut chunk = [0u8; 4096];
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn server_error(payload: &[u8]) -> io::Error {
    io::Error::other(format!(
        "server error: {}",
        String::from_utf8_lossy(payload.get(9..).unwrap_or_default())
    ))
}

/// Writes the body of a handshake response: user `user`, database `db`, the auth
/// data `auth` appends (length-prefixed, at most 255 bytes) for plugin `plugin`.
fn handshake_response(
    b: &mut Vec<u8>,
    user: &str,
    db: &str,
    plugin: &[u8],
    auth: impl FnOnce(&mut Vec<u8>),
) {
    let caps = PROTOCOL_41
        | SECURE_CONNECTION
        | PLUGIN_AUTH
        | CONNECT_WITH_DB
        | TRANSACTIONS
        | MULTI_RESULTS;
    b.extend_from_slice(&caps.to_le_bytes());
    b.extend_from_slice(&(16u32 << 20).to_le_bytes());
    b.push(45);
    b.extend_from_slice(&[0; 23]);
    b.extend_from_slice(user.as_bytes());
    b.push(0);
    let len_at = b.len();
    b.push(0);
    auth(b);
    b[len_at] = (b.len() - len_at - 1) as u8;
    b.extend_from_slice(db.as_bytes());
    b.push(0);
    b.extend_from_slice(plugin);
    b.push(0);
}

/// Logs in and prepares the statements; returns the ids of [`STATEMENTS`].
pub fn setup(s: &mut TcpStream, user: &str, db: &str) -> io::Result<Vec<u32>> {
    let mut buf = Vec::new();
    read_packet(s, &mut buf)?;
    let mut out = Vec::new();
    Writer::new(&mut out, 1)
        .packet(|b| handshake_response(b, user, db, b"mysql_native_password", |_| {}));
    s.write_all(&out)?;
    loop {
        let p = read_packet(s, &mut buf)?;
        match p.first() {
            Some(0) => break,
            Some(0xff) => return Err(server_error(&p)),
            _ => {}
        }
    }
    let mut ids = Vec::new();
    for sql in STATEMENTS {
        let mut out = Vec::new();
        Writer::new(&mut out, 0).packet(|b| {
            b.push(0x16);
            b.extend_from_slice(sql.as_bytes());
        });
        s.write_all(&out)?;
        let p = read_packet(s, &mut buf)?;
        if p.first() != Some(&0) || p.len() < 9 {
            return Err(server_error(&p));
        }
        ids.push(u32::from_le_bytes([p[1], p[2], p[3], p[4]]));
        let cols = u16::from_le_bytes([p[5], p[6]]);
        let params = u16::from_le_bytes([p[7], p[8]]);
        for n in [params, cols] {
            if n > 0 {
                for _ in 0..=n {
                    read_packet(s, &mut buf)?;
                }
            }
        }
    }
    Ok(ids)
}

/// The request packet of one step.
pub fn request(step: &Step, ids: &[u32]) -> Vec<u8> {
    let mut out = Vec::new();
    Writer::new(&mut out, 0).packet(|b| match step {
        Step::Text(sql) => {
            b.push(0x03);
            b.extend_from_slice(sql.as_bytes());
        }
        Step::Execute(n, params) => {
            b.push(0x17);
            b.extend_from_slice(&ids[*n].to_le_bytes());
            b.push(0);
            b.extend_from_slice(&1u32.to_le_bytes());
            b.resize(b.len() + params.len().div_ceil(8), 0);
            b.push(1);
            for p in params {
                b.extend_from_slice(match p {
                    Param::Int(_) => &[3, 0],
                    Param::Text(_) => &[0xfe, 0],
                });
            }
            for p in params {
                match p {
                    Param::Int(v) => b.extend_from_slice(&v.to_le_bytes()),
                    Param::Text(t) => put_lenenc_str(b, t.as_bytes()),
                }
            }
        }
    });
    out
}

/// Where a reply stands while its packets arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reply {
    /// Waiting for the first packet.
    #[default]
    Start,
    /// Column definitions to skip, then their EOF.
    Columns(u64),
    /// Rows until the final EOF.
    Rows,
}

/// Consumes the complete packets of `buf` for `state`: `Ok(Some(n))` when the reply
/// ended after `n` bytes, `Ok(None)` when more must arrive (`used` bytes consumed).
pub fn scan(buf: &[u8], state: &mut Reply, used: &mut usize) -> io::Result<bool> {
    while let Some((total, len)) = next_packet(&buf[*used..]) {
        let p = &buf[*used + HEADER..*used + total];
        *used += total;
        let first = p.first().copied().unwrap_or(0);
        *state = match *state {
            Reply::Start => match first {
                0x00 => return Ok(true),
                0xff => return Err(server_error(p)),
                _ => Reply::Columns(get_lenenc(p).map_or(0, |(n, _)| n) + 1),
            },
            Reply::Columns(1) => Reply::Rows,
            Reply::Columns(n) => Reply::Columns(n - 1),
            Reply::Rows if first == 0xfe && len < 9 => return Ok(true),
            Reply::Rows if first == 0xff => return Err(server_error(p)),
            Reply::Rows => Reply::Rows,
        };
    }
    Ok(false)
}

/// Where a log-in of the connect workload stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Login {
    /// Waiting for the server's greeting.
    #[default]
    Greeting,
    /// Handshake response sent; waiting for OK (or an auth switch, or the
    /// `caching_sha2_password` fast-path notice that precedes OK).
    Auth,
}

/// `COM_QUIT`, sent before closing so the server sees a clean end.
pub const QUIT: [u8; 5] = [1, 0, 0, 0, 0x01];

/// Appends a plugin's proof for a nonce.
type Proof = fn(&Secrets, &[u8], &mut Vec<u8>);

/// The proof `plugin` expects.
fn proof(plugin: &[u8]) -> io::Result<Proof> {
    match plugin {
        b"mysql_native_password" => Ok(Secrets::mysql_native),
        b"caching_sha2_password" => Ok(Secrets::mysql_caching_sha2),
        other => Err(io::Error::other(format!(
            "server asks for unsupported plugin {}",
            String::from_utf8_lossy(other)
        ))),
    }
}

/// The nonce (20 bytes) and plugin name of a protocol-10 greeting.
fn parse_greeting(p: &[u8]) -> io::Result<(&[u8], &[u8], &[u8])> {
    let bad = || io::Error::other("malformed server greeting");
    match p.first() {
        Some(10) => {}
        Some(0xff) => return Err(server_error(p)),
        _ => return Err(bad()),
    }
    let (_, n) = get_cstr(&p[1..]);
    // Version, connection id (4), nonce part 1 (8), filler, capabilities (2),
    // charset, status (2), capabilities (2), nonce length, reserved (10).
    let at = 1 + n;
    let part1 = p.get(at + 4..at + 12).ok_or_else(bad)?;
    let part2 = p.get(at + 31..at + 43).ok_or_else(bad)?;
    let (plugin, _) = get_cstr(p.get(at + 44..).ok_or_else(bad)?);
    Ok((part1, part2, plugin))
}

/// Consumes the complete packets of `buf` from `used` during a log-in as `user` into
/// `db`, appending what must be sent to `out`; true once the server's OK arrived.
pub fn login(
    buf: &[u8],
    used: &mut usize,
    state: &mut Login,
    user: &str,
    db: &str,
    secrets: &Secrets,
    out: &mut Vec<u8>,
) -> io::Result<bool> {
    while let Some((total, _)) = next_packet(&buf[*used..]) {
        let seq = buf[*used + 3];
        let p = &buf[*used + HEADER..*used + total];
        *used += total;
        match *state {
            Login::Greeting => {
                let (part1, part2, plugin) = parse_greeting(p)?;
                let mut nonce = [0u8; 20];
                nonce[..8].copy_from_slice(part1);
                nonce[8..].copy_from_slice(part2);
                let answer = proof(plugin)?;
                Writer::new(out, seq.wrapping_add(1)).packet(|b| {
                    handshake_response(b, user, db, plugin, |b| answer(secrets, &nonce, b))
                });
                *state = Login::Auth;
            }
            Login::Auth => match p.first() {
                Some(0x00) => return Ok(true),
                Some(0xff) => return Err(server_error(p)),
                Some(0xfe) => {
                    // Auth switch: plugin name, then its nonce (NUL-terminated).
                    let (plugin, n) = get_cstr(&p[1..]);
                    let rest = &p[1 + n..];
                    let nonce = rest.strip_suffix(&[0]).unwrap_or(rest);
                    let answer = proof(plugin)?;
                    Writer::new(out, seq.wrapping_add(1)).packet(|b| answer(secrets, nonce, b));
                }
                // caching_sha2_password: 3 = fast authentication succeeded, OK follows.
                Some(0x01) if p.get(1) == Some(&3) => {}
                Some(0x01) => return Err(io::Error::other(
                    "server asks for full caching_sha2_password authentication (needs TLS or RSA)",
                )),
                _ => return Err(io::Error::other("unexpected packet during log-in")),
            },
        }
    }
    Ok(false)
}
