//! The little HTTP the live endpoints speak (`--metrics-addr`, `bmk report --serve`):
//! read one request's line, write one whole answer, close. Hand-written over
//! `std::net::TcpStream` rather than taken from an HTTP server crate: each endpoint
//! answers a `GET` of one or two paths to one client at a time, and the server crates
//! in reach bring an async runtime into a program whose measuring threads must have the
//! CPUs to themselves.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long a client may take to send its request: a stalled one holds up the next.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// The largest request head read; a browser's or a scraper's is a few hundred bytes.
const MAX_REQUEST: usize = 16 * 1024;

/// `PORT` (on 127.0.0.1, so nothing outside this host reaches it unless asked),
/// `HOST:PORT` or `[IPv6]:PORT`, for the option `option` (named in the error).
pub fn parse_listen_addr(option: &str, raw: &str) -> Result<SocketAddr, String> {
    let bad = |why: &str| {
        format!(
            "invalid value '{raw}' for option --{option}: expected PORT or HOST:PORT (e.g. 9464 or 0.0.0.0:9464){why}"
        )
    };
    let text = raw.trim();
    let addr = if let Ok(port) = text.trim_start_matches(':').parse::<u16>() {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
    } else if let Ok(addr) = text.parse::<SocketAddr>() {
        addr
    } else if !text.contains(':') {
        return Err(bad(""));
    } else {
        match text.to_socket_addrs() {
            Ok(mut addrs) => addrs
                .next()
                .ok_or_else(|| bad(": the host has no address"))?,
            Err(e) => return Err(bad(&format!(": {e}"))),
        }
    };
    // Port 0 would listen on a port nobody is told about.
    if addr.port() == 0 {
        return Err(bad(": the port must be 1 to 65535"));
    }
    Ok(addr)
}

/// Reads a request head from `stream`: its method and path (without the query).
pub fn read_request(stream: &mut TcpStream) -> std::io::Result<(String, String)> {
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut line = head.lines().next().unwrap_or("").split_whitespace();
    let method = line.next().unwrap_or("").to_string();
    let target = line.next().unwrap_or("");
    let path = target.split('?').next().unwrap_or(target).to_string();
    Ok((method, path))
}

/// Writes a whole answer and flushes it; the connection closes when `stream` drops.
pub fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_listens_on_loopback_only() {
        let p = |s| parse_listen_addr("metrics-addr", s);
        assert_eq!(p("9464").unwrap(), "127.0.0.1:9464".parse().unwrap());
        assert_eq!(p(":9464").unwrap(), "127.0.0.1:9464".parse().unwrap());
        assert_eq!(p("0.0.0.0:9464").unwrap(), "0.0.0.0:9464".parse().unwrap());
        assert_eq!(p("[::1]:80").unwrap(), "[::1]:80".parse().unwrap());
        assert_eq!(p("localhost:9464").unwrap().port(), 9464);
        for bad in ["", "x", "99999", "1.2.3.4", "host:port", "0", "127.0.0.1:0"] {
            let e = p(bad).unwrap_err();
            assert!(
                e.starts_with(&format!("invalid value '{bad}' for option --metrics-addr")),
                "{bad}: {e}"
            );
        }
    }
}
