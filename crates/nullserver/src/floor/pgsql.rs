//! The floor client's PostgreSQL side: start a session, prepare the statements, build
//! each request (Bind, Execute, Sync; BEGIN/COMMIT as simple queries) once, and find
//! where a reply ends (its `ReadyForQuery`). For the connect workload, a
//! non-blocking log-in ([`login`]) that answers the password request the server makes.

use std::io::{self, Read, Write};
use std::net::TcpStream;

use super::scramble::Secrets;
use super::workload::{Param, Step, STATEMENTS};
use crate::pgsql::framing::{message, put_cstr};

/// `$n` form of a `?` statement.
fn numbered(sql: &str) -> String {
    let mut out = String::new();
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

fn server_error(body: &[u8]) -> io::Error {
    io::Error::other(format!("server error: {}", String::from_utf8_lossy(body)))
}

/// Reads messages until `ReadyForQuery` (blocking), answering a password request.
fn until_ready(s: &mut TcpStream) -> io::Result<()> {
    let mut buf = Vec::new();
    loop {
        let mut used = 0;
        while buf.len() >= used + 5 {
            let len =
                u32::from_be_bytes(buf[used + 1..used + 5].try_into().expect("4 bytes")) as usize;
            if buf.len() < used + 1 + len {
                break;
            }
            let (tag, body) = (buf[used], &buf[used + 5..used + 1 + len]);
            used += 1 + len;
            match tag {
                b'Z' => return Ok(()),
                b'E' => return Err(server_error(body)),
                b'R' if body.get(..4) != Some(&[0, 0, 0, 0]) => {
                    let mut out = Vec::new();
                    message(&mut out, b'p', |b| put_cstr(b, b"x"));
                    s.write_all(&out)?;
                }
                _ => {}
            }
        }
        buf.drain(..used);
        let mut chunk = [0u8; 4096];
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The start-up message (protocol 3.0) for `user` and `db`.
pub fn startup(user: &str, db: &str) -> Vec<u8> {
    let mut start = Vec::new();
    start.extend_from_slice(&[0; 4]);
    start.extend_from_slice(&196_608i32.to_be_bytes());
    for v in ["user", user, "database", db, ""] {
        put_cstr(&mut start, v.as_bytes());
    }
    let len = start.len() as u32;
    start[..4].copy_from_slice(&len.to_be_bytes());
    start
}

/// `Terminate`, sent before closing so the server sees a clean end.
pub const TERMINATE: [u8; 5] = [b'X', 0, 0, 0, 4];

/// Consumes the complete messages of `buf` from `used` during a log-in, appending the
/// answer to a password request to `out`; true once `ReadyForQuery` arrived.
pub fn login(
    buf: &[u8],
    used: &mut usize,
    password: &str,
    secrets: &Secrets,
    out: &mut Vec<u8>,
) -> io::Result<bool> {
    while buf.len() >= *used + 5 {
        let len =
            u32::from_be_bytes(buf[*used + 1..*used + 5].try_into().expect("4 bytes")) as usize;
        if buf.len() < *used + 1 + len {
            break;
        }
        let (tag, body) = (buf[*used], &buf[*used + 5..*used + 1 + len]);
        *used += 1 + len;
        match (tag, body.get(..4)) {
            (b'Z', _) => return Ok(true),
            (b'E', _) => return Err(server_error(body)),
            (b'R', Some([0, 0, 0, 0])) => {}
            (b'R', Some([0, 0, 0, 3])) => {
                message(out, b'p', |b| put_cstr(b, password.as_bytes()));
            }
            (b'R', Some([0, 0, 0, 5])) if body.len() >= 8 => {
                message(out, b'p', |b| {
                    secrets.pgsql_md5(&body[4..8], b);
                    b.push(0);
                });
            }
            (b'R', _) => {
                return Err(io::Error::other(
                    "server asks for an authentication method the floor does not speak",
                ))
            }
            // Parameter statuses, BackendKeyData: nothing to do.
            _ => {}
        }
    }
    Ok(false)
}

/// Starts a session and prepares [`STATEMENTS`] as `s0`, `s1`, ...
pub fn setup(s: &mut TcpStream, user: &str, db: &str) -> io::Result<()> {
    s.write_all(&startup(user, db))?;
    until_ready(s)?;
    let mut out = Vec::new();
    for (i, sql) in STATEMENTS.iter().enumerate() {
        message(&mut out, b'P', |b| {
            put_cstr(b, format!("s{i}").as_bytes());
            put_cstr(b, numbered(sql).as_bytes());
            b.extend_from_slice(&0i16.to_be_bytes());
        });
    }
    message(&mut out, b'S', |_| {});
    s.write_all(&out)?;
    until_ready(s)
}

/// The request bytes of one step.
pub fn request(step: &Step) -> Vec<u8> {
    let mut out = Vec::new();
    match step {
        Step::Text(sql) => message(&mut out, b'Q', |b| put_cstr(b, sql.as_bytes())),
        Step::Execute(n, params) => {
            message(&mut out, b'B', |b| {
                b.push(0);
                put_cstr(b, format!("s{n}").as_bytes());
                b.extend_from_slice(&0i16.to_be_bytes());
                b.extend_from_slice(&(params.len() as i16).to_be_bytes());
                for p in params {
                    let v = match p {
                        Param::Int(v) => v.to_string(),
                        Param::Text(t) => t.to_string(),
                    };
                    b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    b.extend_from_slice(v.as_bytes());
                }
                b.extend_from_slice(&1i16.to_be_bytes());
                b.extend_from_slice(&1i16.to_be_bytes());
            });
            message(&mut out, b'E', |b| {
                b.push(0);
                b.extend_from_slice(&0i32.to_be_bytes());
            });
            message(&mut out, b'S', |_| {});
        }
    }
    out
}

/// Consumes the complete messages of `buf` from `used`: true once `ReadyForQuery` is
/// among them.
pub fn scan(buf: &[u8], used: &mut usize) -> io::Result<bool> {
    while buf.len() >= *used + 5 {
        let len =
            u32::from_be_bytes(buf[*used + 1..*used + 5].try_into().expect("4 bytes")) as usize;
        if buf.len() < *used + 1 + len {
            break;
        }
        let tag = buf[*used];
        let body = &buf[*used + 5..*used + 1 + len];
        *used += 1 + len;
        match tag {
            b'Z' => return Ok(true),
            b'E' => return Err(server_error(body)),
            _ => {}
        }
    }
    Ok(false)
}
