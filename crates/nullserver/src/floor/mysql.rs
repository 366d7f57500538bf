//! The floor client's MySQL side: log in, prepare the statements, build each request
//! packet once, and find where a reply ends (by walking packet headers and the few
//! bytes that say what comes next; nothing is decoded).

use std::io::{self, Read, Write};
use std::net::TcpStream;

use super::workload::{Param, Step, STATEMENTS};
use crate::mysql::auth::{
    CONNECT_WITH_DB, MULTI_RESULTS, PLUGIN_AUTH, PROTOCOL_41, SECURE_CONNECTION, TRANSACTIONS,
};
use crate::mysql::framing::{get_lenenc, next_packet, put_lenenc_str, Writer, HEADER};

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

/// Logs in and prepares the statements; returns the ids of [`STATEMENTS`].
pub fn setup(s: &mut TcpStream, user: &str, db: &str) -> io::Result<Vec<u32>> {
    let mut buf = Vec::new();
    read_packet(s, &mut buf)?;
    let mut out = Vec::new();
    Writer::new(&mut out, 1).packet(|b| {
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
        b.push(0);
        b.extend_from_slice(db.as_bytes());
        b.push(0);
        b.extend_from_slice(b"mysql_native_password\0");
    });
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
