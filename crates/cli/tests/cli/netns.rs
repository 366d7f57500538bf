//! The Kubernetes pods' commands on one machine: three bmk clients, each in a network
//! namespace of its own (`ip netns`, a veth pair into a bridge), reach MariaDB through
//! the bridge's address, pass the start barrier and are merged. MariaDB listens on
//! 127.0.0.1 only, so a small TCP forwarder in this (the root) namespace listens on the
//! bridge's address for the test's duration. Needs root and `ip`: skipped with a note
//! otherwise (a failure under `CI=true`).

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bmk_report::results::ResultsFile;
use bmk_sql::DriverKind;
use serde_json::Value;

use crate::server_db::ServerDb;
use crate::util::Dir;

const BRIDGE: &str = "scale-br0";
const BRIDGE_IP: &str = "10.231.7.1";
const CLIENTS: usize = 3;

fn ip(args: &str) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args.split_whitespace())
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {args}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The bridge, the namespaces and their veth pairs; removed on drop.
struct Network {
    names: Vec<String>,
}

impl Network {
    fn new() -> Result<Network, String> {
        // A leftover of an interrupted earlier run would make the set-up fail.
        let _ = ip(&format!("link del {BRIDGE}"));
        let mut net = Network { names: Vec::new() };
        ip(&format!("link add {BRIDGE} type bridge"))?;
        ip(&format!("addr add {BRIDGE_IP}/24 dev {BRIDGE}"))?;
        ip(&format!("link set {BRIDGE} up"))?;
        for i in 0..CLIENTS {
            let ns = format!("scale-ns{i}");
            let _ = ip(&format!("netns del {ns}"));
            ip(&format!("netns add {ns}"))?;
            net.names.push(ns.clone());
            let host = format!("scale-v{i}");
            ip(&format!("link add {host} type veth peer name {host}p"))?;
            ip(&format!("link set {host}p netns {ns}"))?;
            ip(&format!("link set {host} master {BRIDGE}"))?;
            ip(&format!("link set {host} up"))?;
            ip(&format!(
                "netns exec {ns} ip addr add 10.231.7.{}/24 dev {host}p",
                10 + i
            ))?;
            ip(&format!("netns exec {ns} ip link set {host}p up"))?;
            ip(&format!("netns exec {ns} ip link set lo up"))?;
        }
        Ok(net)
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        for (i, ns) in self.names.iter().enumerate() {
            let _ = ip(&format!("link del scale-v{i}"));
            let _ = ip(&format!("netns del {ns}"));
        }
        let _ = ip(&format!("link del {BRIDGE}"));
    }
}

/// Forwards connections to the bridge's address to MariaDB on 127.0.0.1:3306.
fn forward(stop: Arc<AtomicBool>) -> std::io::Result<std::thread::JoinHandle<()>> {
    let listener = TcpListener::bind((BRIDGE_IP, 3306))?;
    listener.set_nonblocking(true)?;
    Ok(std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((inbound, _)) => {
                    let _ = inbound.set_nonblocking(false);
                    let Ok(outbound) = TcpStream::connect(("127.0.0.1", 3306)) else {
                        continue;
                    };
                    let (mut a, mut b) =
                        (inbound.try_clone().unwrap(), outbound.try_clone().unwrap());
                    let (mut c, mut d) = (outbound, inbound);
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut a, &mut b);
                        let _ = b.shutdown(std::net::Shutdown::Write);
                    });
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut c, &mut d);
                        let _ = d.shutdown(std::net::Shutdown::Write);
                    });
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }))
}

/// What the kubelet does with `$(NAME)` in a container's arguments.
fn substitute(text: &str, index: usize) -> String {
    text.replace("$(BMK_DB_PASSWORD)", "")
        .replace("$(JOB_COMPLETION_INDEX)", &index.to_string())
}

#[test]
fn pods_in_network_namespaces_pass_the_barrier_and_merge() {
    // SAFETY: geteuid only reads the process's user id.
    if unsafe { libc::geteuid() } != 0 {
        return bmk_testkit::unavailable("root (for ip netns)", "not running as root")
            .unwrap_or(());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return bmk_testkit::unavailable("the ip command", "not found").unwrap_or(());
    }
    let Some(db) = ServerDb::new(DriverKind::Mysql) else {
        return;
    };
    let dir = Dir::new();
    let conn: Vec<String> = db
        .args
        .iter()
        .filter(|a| !a.starts_with("--mysql-host") && !a.starts_with("--db-driver"))
        .cloned()
        .collect();
    dir.bmk()
        .args(&format!(
            "oltp_read_only {} --tables=1 --table-size=200 prepare",
            db.args.join(" ")
        ))
        .run()
        .ok();
    let net = match Network::new() {
        Ok(n) => n,
        Err(e) => return bmk_testkit::unavailable("network namespaces", &e).unwrap_or(()),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let forwarder = forward(stop.clone()).expect("listen on the bridge's address");
    let manifest = dir
        .bmk()
        .args(&format!(
            "kit k8s OLTP_RO_200_1tab 2 2 --clients={CLIENTS} --job=scale-netns --mysql-host={BRIDGE_IP} {}",
            conn.join(" ")
        ))
        .run()
        .ok();
    let job: Value = serde_json::from_str(&manifest.stdout).unwrap();
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    let words = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect()
    };
    let (command, args) = (words(&container["command"]), words(&container["args"]));
    // The pod's volume is a folder here; `bmk` on the PATH is the binary under test.
    let results = dir.join("results");
    let local = |w: &str| w.replace("/results", results.to_str().unwrap());
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_bmk")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let children: Vec<Child> = (0..CLIENTS)
        .map(|i| {
            Command::new("ip")
                .args(["netns", "exec", &format!("scale-ns{i}")])
                .arg("env")
                .arg(format!("JOB_COMPLETION_INDEX={i}"))
                .arg(format!("PATH={path}"))
                .args(command.iter().map(|w| local(w)))
                .args(args.iter().map(|w| local(&substitute(w, i))))
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    let outputs: Vec<std::process::Output> = children
        .into_iter()
        .map(|mut c| {
            while c.try_wait().unwrap().is_none() {
                assert!(Instant::now() < deadline, "a client still runs");
                std::thread::sleep(Duration::from_millis(20));
            }
            c.wait_with_output().unwrap()
        })
        .collect();
    stop.store(true, Ordering::Relaxed);
    let _ = forwarder.join();
    drop(net);
    for (i, o) in outputs.iter().enumerate() {
        assert!(
            o.status.success(),
            "client {i}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let files: Vec<String> = (0..CLIENTS)
        .map(|i| format!("results/scale-netns/index-{i}.json"))
        .collect();
    let clients: Vec<ResultsFile> = files
        .iter()
        .map(|f| ResultsFile::read(dir.join(f)).unwrap())
        .collect();
    dir.bmk()
        .args(&format!("merge --results=merged.json {}", files.join(" ")))
        .run()
        .ok();
    let merged = ResultsFile::read(dir.join("merged.json")).unwrap();
    let f = &merged.final_stats;
    let sum = |g: &dyn Fn(&ResultsFile) -> u64| clients.iter().map(g).sum::<u64>();
    assert!(f.events > 0);
    assert_eq!(f.threads, 2 * CLIENTS as u32);
    assert_eq!(f.events, sum(&|r| r.final_stats.events));
    assert_eq!(f.counters.reads, sum(&|r| r.final_stats.counters.reads));
    assert_eq!(f.counters.other, sum(&|r| r.final_stats.counters.other));
    let starts: Vec<u64> = clients
        .iter()
        .map(|r| r.start.as_ref().unwrap().measured_from_unix_ns)
        .collect();
    let spread = starts.iter().max().unwrap() - starts.iter().min().unwrap();
    assert!(
        spread < 20_000_000,
        "started {:.1} ms apart",
        spread as f64 / 1e6
    );
    for (i, r) in clients.iter().enumerate() {
        let b = r.start.as_ref().unwrap().barrier.as_ref().unwrap();
        assert_eq!(b.client, format!("index-{i}"));
        assert_eq!(b.clients.len(), CLIENTS);
    }
}
