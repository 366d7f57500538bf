//! `--metrics-addr=[HOST:]PORT`: serves the run's registry at `/metrics` in the
//! OpenMetrics text format for Prometheus to scrape, from a thread of its own.
//!
//! The server is a few lines over `std::net::TcpListener` rather than an HTTP crate:
//! it answers one kind of request (`GET /metrics`, one at a time, then closes the
//! connection), which is all a scraper sends, and an HTTP server crate would bring an
//! async runtime into a program whose measuring threads must have the CPUs to
//! themselves. A scrape reads atomics and locks only the latency histogram's counts,
//! which the controlling thread (not a worker) takes once per interval.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use prometheus_client::registry::Registry;

use crate::run_metrics::encode;

/// The content type of the OpenMetrics text format.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How long a client may take to send its request: a stalled one holds up the next.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// The largest request head read; a scraper's is a few hundred bytes.
const MAX_REQUEST: usize = 16 * 1024;

/// `PORT` (on 127.0.0.1, so nothing outside this host reaches it unless asked),
/// `HOST:PORT` or `[IPv6]:PORT`.
pub fn parse_addr(raw: &str) -> Result<SocketAddr, String> {
    let bad = |why: &str| {
        format!(
            "invalid value '{raw}' for option --metrics-addr: expected PORT or HOST:PORT (e.g. 9464 or 0.0.0.0:9464){why}"
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

/// A running endpoint; dropping it stops the server thread.
pub struct MetricsEndpoint {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsEndpoint {
    /// Listens on `addr` and serves `registry` until dropped.
    pub fn start(addr: SocketAddr, registry: Arc<Registry>) -> std::io::Result<MetricsEndpoint> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("bmk-metrics".into())
            .spawn({
                let stop = Arc::clone(&stop);
                move || serve(&listener, &registry, &stop)
            })?;
        Ok(MetricsEndpoint {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    #[cfg(test)]
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The accept loop wakes on a connection; the one it accepts now finds `stop`.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(listener: &TcpListener, registry: &Registry, stop: &AtomicBool) {
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        if let Ok(stream) = stream {
            // A client that goes away mid-answer is its own problem.
            let _ = answer(stream, registry);
        }
    }
}

/// Reads one request head and answers it.
fn answer(mut stream: TcpStream, registry: &Registry) -> std::io::Result<()> {
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
    let mut request_line = head.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (request_line.next(), request_line.next());
    let path = target.map(|t| t.split('?').next().unwrap_or(t));
    let (status, content_type, body) = match (method, path) {
        (Some("GET"), Some("/metrics")) => ("200 OK", CONTENT_TYPE, encode(registry)),
        (Some("GET"), _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "bmk serves its metrics at /metrics\n".to_string(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET /metrics\n".to_string(),
        ),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes())?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_listens_on_loopback_only() {
        assert_eq!(
            parse_addr("9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(
            parse_addr(":9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(
            parse_addr("0.0.0.0:9464").unwrap(),
            "0.0.0.0:9464".parse().unwrap()
        );
        assert_eq!(parse_addr("[::1]:80").unwrap(), "[::1]:80".parse().unwrap());
        assert_eq!(parse_addr("localhost:9464").unwrap().port(), 9464);
        for bad in ["", "x", "99999", "1.2.3.4", "host:port", "0", "127.0.0.1:0"] {
            let e = parse_addr(bad).unwrap_err();
            assert!(e.starts_with("invalid value"), "{bad}: {e}");
        }
    }

    fn get(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_the_registry_at_metrics_and_nothing_else() {
        let mut registry = Registry::default();
        let c = prometheus_client::metrics::counter::Counter::<u64>::default();
        registry.register("probe", "a probe", c.clone());
        c.inc_by(7);
        let ep =
            MetricsEndpoint::start("127.0.0.1:0".parse().unwrap(), Arc::new(registry)).unwrap();
        let ok = get(ep.local_addr(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains(CONTENT_TYPE), "{ok}");
        assert!(ok.contains("\r\n\r\n# HELP probe a probe.\n"), "{ok}");
        assert!(
            ok.contains("probe_total 7\n") && ok.ends_with("# EOF\n"),
            "{ok}"
        );
        let missing = get(ep.local_addr(), "GET / HTTP/1.1\r\n\r\n");
        assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
        let post = get(ep.local_addr(), "POST /metrics HTTP/1.1\r\n\r\n");
        assert!(post.starts_with("HTTP/1.1 405"), "{post}");
        let addr = ep.local_addr();
        drop(ep);
        assert!(
            TcpStream::connect(addr).is_err(),
            "still listening after drop"
        );
    }
}
