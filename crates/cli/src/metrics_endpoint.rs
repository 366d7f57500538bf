//! `--metrics-addr=[HOST:]PORT`: serves the run's registry at `/metrics` in the
//! OpenMetrics text format for Prometheus to scrape, from a thread of its own.
//!
//! A scrape reads atomics and locks only the latency histogram's counts, which the
//! controlling thread (not a worker) takes once per interval. The HTTP is
//! `http_answer`'s (why it is hand-written is said there).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use prometheus_client::registry::Registry;

use crate::http_answer::{read_request, respond};
use crate::run_metrics::encode;

/// The content type of the OpenMetrics text format.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// `--metrics-addr`'s value.
pub fn parse_addr(raw: &str) -> Result<SocketAddr, String> {
    crate::http_answer::parse_listen_addr("metrics-addr", raw)
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
    let (method, path) = read_request(&mut stream)?;
    let text = "text/plain; charset=utf-8";
    match (method.as_str(), path.as_str()) {
        ("GET", "/metrics") => respond(&mut stream, "200 OK", CONTENT_TYPE, &encode(registry)),
        ("GET", _) => respond(
            &mut stream,
            "404 Not Found",
            text,
            "bmk serves its metrics at /metrics\n",
        ),
        _ => respond(
            &mut stream,
            "405 Method Not Allowed",
            text,
            "only GET /metrics\n",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

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
