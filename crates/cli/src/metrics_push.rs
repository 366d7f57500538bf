//! `--metrics-push=URL`: sends the run's registry to a Prometheus Pushgateway after
//! every interval and once when the run ends, so a run that finishes between two
//! scrapes (a Kubernetes Job's pod) is still seen.
//!
//! Each push replaces the run's group (`PUT`), keyed by `job="bmk"` and the run's
//! labels, so the gateway holds the latest values of every level and client side by
//! side. Pushes go out from a thread of their own: a slow gateway never holds up the
//! controlling thread, and a push that is still going when the next interval comes is
//! not queued behind (the next one carries newer values anyway).
//!
//! The HTTP client is a plain `PUT` over `std::net::TcpStream`: a push is one request
//! with a text body to a gateway on the cluster's network, and the HTTP crates in the
//! dependency tree are async ones that would need a runtime for that one request.
//! `https://` is refused with a clear message (a TLS-terminating proxy in front of the
//! gateway takes plain HTTP from bmk).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use base64::Engine as _;
use prometheus_client::registry::Registry;

use crate::run_metrics::RunLabels;

/// How long one push may take, connecting included.
const PUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// The `job` label of every group bmk pushes.
pub const JOB: &str = "bmk";

/// Where pushes go: the gateway's address and the group's path.
#[derive(Debug, Clone, PartialEq)]
pub struct PushTarget {
    /// `host:port`, as the `Host` header names it.
    host: String,
    /// The path up to and including the gateway's `/metrics`, without the group.
    base_path: String,
}

impl PushTarget {
    /// Parses `http://HOST[:PORT][/PREFIX]` (port 9091, the gateway's own, when none).
    pub fn parse(raw: &str) -> Result<PushTarget, String> {
        let bad = |why: &str| {
            format!("invalid value '{raw}' for option --metrics-push: {why} (e.g. http://127.0.0.1:9091)")
        };
        let rest = match raw.trim().split_once("://") {
            Some(("http", rest)) => rest,
            Some(("https", _)) => return Err(bad(
                "bmk pushes over plain HTTP; put a TLS-terminating proxy in front of the gateway",
            )),
            _ => return Err(bad("expected an http:// URL of a Pushgateway")),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(bad(
                "expected HOST[:PORT] after http:// (no user or password)",
            ));
        }
        let has_port = authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.contains(']'));
        let host = if has_port {
            authority.to_string()
        } else {
            format!("{authority}:9091")
        };
        Ok(PushTarget {
            host,
            base_path: format!("{path}/metrics"),
        })
    }

    /// The group's path: `/metrics/job/bmk/` and each label as `NAME@base64/VALUE`, so
    /// that any value (a `/` in a scenario, an empty one) makes a valid path.
    pub fn group_path(&self, labels: &RunLabels) -> String {
        let b64 = |v: &str| {
            if v.is_empty() {
                "=".to_string()
            } else {
                base64::engine::general_purpose::URL_SAFE.encode(v)
            }
        };
        let mut path = format!("{}/job/{JOB}", self.base_path);
        let level = labels.level.to_string();
        let mut pairs = vec![
            ("scenario", labels.scenario.as_str()),
            ("target", labels.target.as_str()),
            ("level", level.as_str()),
        ];
        if let Some(client) = &labels.client {
            pairs.push(("client", client.as_str()));
        }
        for (name, value) in pairs {
            path.push_str(&format!("/{name}@base64/{}", b64(value)));
        }
        path
    }
}

/// Sends one `PUT` of `body` to `host` at `path`; the gateway's status line when it
/// is not a success.
fn put(host: &str, path: &str, body: &str) -> Result<(), String> {
    let addrs: Vec<SocketAddr> = host
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .collect();
    let mut last = format!("{host} has no address");
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, PUSH_TIMEOUT) {
            Ok(stream) => return exchange(stream, host, path, body),
            Err(e) => last = format!("cannot connect to {addr}: {e}"),
        }
    }
    Err(last)
}

fn exchange(mut stream: TcpStream, host: &str, path: &str, body: &str) -> Result<(), String> {
    let io = |e: std::io::Error| format!("{host}: {e}");
    stream.set_read_timeout(Some(PUSH_TIMEOUT)).map_err(io)?;
    stream.set_write_timeout(Some(PUSH_TIMEOUT)).map_err(io)?;
    let request = format!(
        "PUT {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        body.len()
    );
    stream.write_all(request.as_bytes()).map_err(io)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).map_err(io)?;
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.lines().next().unwrap_or("").trim();
    let code = status.split_whitespace().nth(1).unwrap_or("");
    if code.starts_with('2') {
        Ok(())
    } else {
        let detail = answer
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.trim())
            .filter(|b| !b.is_empty())
            .map(|b| format!(": {}", b.lines().next().unwrap_or(b)))
            .unwrap_or_default();
        Err(format!("the gateway answered '{status}'{detail}"))
    }
}

/// The registry in the Prometheus text format, which every Pushgateway reads.
fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, registry);
    out
}

enum Push {
    Interval,
    Final,
}

/// The pushing thread of a run.
pub struct MetricsPusher {
    sender: SyncSender<Push>,
    thread: Option<JoinHandle<Result<(), String>>>,
}

impl MetricsPusher {
    /// Starts the thread that pushes `registry` to `target` as the group of `labels`.
    pub fn start(
        target: PushTarget,
        labels: &RunLabels,
        registry: Arc<Registry>,
    ) -> std::io::Result<MetricsPusher> {
        let path = target.group_path(labels);
        // One waiting request at most: pushes that fall due while one is going merge.
        let (sender, receiver) = sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("bmk-metrics-push".into())
            .spawn(move || pushes(&receiver, &target.host, &path, &registry))?;
        Ok(MetricsPusher {
            sender,
            thread: Some(thread),
        })
    }

    /// An interval has been recorded: push when the thread is free.
    pub fn interval(&self) {
        // Full: a push is waiting and will carry these values too. Disconnected: the
        // thread has ended, and the final push will say why.
        let _ = self.sender.try_send(Push::Interval);
    }

    /// Pushes the final values and waits for it; the error of the final push, if any.
    pub fn finish(mut self) -> Result<(), String> {
        let _ = self.sender.send(Push::Final);
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err("the push thread panicked".into()),
            None => Ok(()),
        }
    }
}

/// The push thread: pushes on each request; warns once on stderr when interval
/// pushes fail (the run goes on), and returns the final push's result.
fn pushes(
    receiver: &Receiver<Push>,
    host: &str,
    path: &str,
    registry: &Registry,
) -> Result<(), String> {
    let mut warned = false;
    while let Ok(push) = receiver.recv() {
        let result = put(host, path, &encode(registry));
        match push {
            Push::Final => return result,
            Push::Interval => {
                if let Err(e) = result {
                    if !warned {
                        eprintln!("WARNING: cannot push metrics to http://{host}: {e}");
                        warned = true;
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(client: Option<&str>) -> RunLabels {
        RunLabels {
            scenario: "OLTP_RW/x".into(),
            target: "".into(),
            level: 2,
            users: 8,
            client: client.map(str::to_string),
        }
    }

    #[test]
    fn urls_name_a_gateway_over_plain_http() {
        let t = PushTarget::parse("http://gw.example").unwrap();
        assert_eq!(t.host, "gw.example:9091");
        assert_eq!(t.base_path, "/metrics");
        let t = PushTarget::parse("http://127.0.0.1:9999/prefix/").unwrap();
        assert_eq!(t.host, "127.0.0.1:9999");
        assert_eq!(t.base_path, "/prefix/metrics");
        let t = PushTarget::parse("http://[::1]").unwrap();
        assert_eq!(t.host, "[::1]:9091");
        for bad in [
            "gw:9091",
            "https://gw",
            "http://",
            "http://user:secret@gw:9091",
        ] {
            let e = PushTarget::parse(bad).unwrap_err();
            assert!(e.starts_with("invalid value"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_group_path_encodes_every_label_value() {
        let t = PushTarget::parse("http://gw:9091").unwrap();
        assert_eq!(
            t.group_path(&labels(Some("index-1"))),
            "/metrics/job/bmk/scenario@base64/T0xUUF9SVy94/target@base64/=/level@base64/Mg==/client@base64/aW5kZXgtMQ=="
        );
        assert!(!t.group_path(&labels(None)).contains("client"));
    }

    #[test]
    fn a_refused_push_says_what_the_gateway_answered() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let host = listener.local_addr().unwrap().to_string();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap();
            let request = String::from_utf8_lossy(&buf[..n]).into_owned();
            s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 9\r\n\r\nbad label")
                .unwrap();
            request
        });
        let e = put(&host, "/metrics/job/bmk", "x_total 1\n").unwrap_err();
        assert_eq!(
            e,
            "the gateway answered 'HTTP/1.1 400 Bad Request': bad label"
        );
        let request = server.join().unwrap();
        assert!(
            request.starts_with("PUT /metrics/job/bmk HTTP/1.1\r\n"),
            "{request}"
        );
        assert!(request.ends_with("\r\n\r\nx_total 1\n"), "{request}");
    }
}
