//! The Kubernetes pods' commands on one machine: three bmk clients, each in a network
//! namespace of its own (`ip netns`, a veth pair into a bridge), reach MariaDB through
//! the bridge's address, pass the start barrier and are merged. MariaDB listens on
//! 127.0.0.1 only, so a small TCP forwarder in this (the root) namespace listens on the
//! bridge's address for the test's duration. Needs root and `ip`: skipped with a note
//! otherwise (a failure under `CI=true`).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bmk_results::results_file::ResultsFile;
use bmk_sql::DriverKind;
use serde_json::Value;

use crate::barrier::assert_started_together;
use crate::server_db::ServerDb;
use crate::test_network::{forward_mariadb, TestNetwork};
use crate::util::Dir;

const CLIENTS: usize = 3;

/// What the kubelet does with `$(NAME)` in a container's arguments.
fn substitute(text: &str, index: usize) -> String {
    text.replace("$(BMK_DB_PASSWORD)", "")
        .replace("$(JOB_COMPLETION_INDEX)", &index.to_string())
}

#[test]
fn pods_in_network_namespaces_pass_the_barrier_and_merge() {
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
    let Some(net) = TestNetwork::new("scale", 7, CLIENTS) else {
        return;
    };
    let stop = Arc::new(AtomicBool::new(false));
    let forwarder =
        forward_mariadb(&net.bridge_ip, stop.clone()).expect("listen on the bridge's address");
    let manifest = dir
        .bmk()
        .args(&format!(
            "kit k8s OLTP_RO_200_1tab 2 2 --clients={CLIENTS} --job=scale-netns --mysql-host={} {}",
            net.bridge_ip,
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
                .args(["netns", "exec", &net.namespaces[i]])
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
    assert_started_together(&starts);
    for (i, r) in clients.iter().enumerate() {
        let b = r.start.as_ref().unwrap().barrier.as_ref().unwrap();
        assert_eq!(b.client, format!("index-{i}"));
        assert_eq!(b.clients.len(), CLIENTS);
    }
}
