//! Test hosts on one machine: network namespaces joined by veth pairs to a bridge in the
//! root namespace, and a forwarder that makes MariaDB (which listens on 127.0.0.1 only)
//! reachable on the bridge's address. Needs root and `ip`; [`TestNetwork::new`] skips
//! with a note otherwise (a failure under `CI=true`). Each test passes a tag and a
//! subnet of its own, since nextest runs tests side by side.

use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Runs `ip ARGS`.
pub fn ip(args: &str) -> Result<(), String> {
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

/// The bridge `TAG-br` with address `10.231.SUBNET.1`, namespaces `TAG-ns<i>` with
/// addresses `10.231.SUBNET.<10+i>` on veth `TAG-v<i>` (peer `TAG-v<i>p` inside);
/// removed on drop.
pub struct TestNetwork {
    tag: String,
    /// The bridge's address, where the root namespace's listeners are reachable.
    pub bridge_ip: String,
    /// The namespaces' names.
    pub namespaces: Vec<String>,
}

impl TestNetwork {
    /// Makes the network, or returns `None` after the skip note.
    pub fn new(tag: &str, subnet: u8, hosts: usize) -> Option<TestNetwork> {
        // SAFETY: geteuid only reads the process's user id.
        if unsafe { libc::geteuid() } != 0 {
            return bmk_testkit::unavailable("root (for ip netns)", "not running as root");
        }
        if Command::new("ip").arg("-V").output().is_err() {
            return bmk_testkit::unavailable("the ip command", "not found");
        }
        match TestNetwork::make(tag, subnet, hosts) {
            Ok(net) => Some(net),
            Err(e) => bmk_testkit::unavailable("network namespaces", &e),
        }
    }

    fn make(tag: &str, subnet: u8, hosts: usize) -> Result<TestNetwork, String> {
        let bridge = format!("{tag}-br");
        // A leftover of an interrupted earlier run would make the set-up fail.
        let _ = ip(&format!("link del {bridge}"));
        let mut net = TestNetwork {
            tag: tag.to_string(),
            bridge_ip: format!("10.231.{subnet}.1"),
            namespaces: Vec::new(),
        };
        ip(&format!("link add {bridge} type bridge"))?;
        ip(&format!("addr add {}/24 dev {bridge}", net.bridge_ip))?;
        ip(&format!("link set {bridge} up"))?;
        for i in 0..hosts {
            let ns = format!("{tag}-ns{i}");
            let _ = ip(&format!("netns del {ns}"));
            ip(&format!("netns add {ns}"))?;
            net.namespaces.push(ns.clone());
            let host = net.veth(i);
            let _ = ip(&format!("link del {host}"));
            ip(&format!("link add {host} type veth peer name {host}p"))?;
            ip(&format!("link set {host}p netns {ns}"))?;
            ip(&format!("link set {host} master {bridge}"))?;
            ip(&format!("link set {host} up"))?;
            ip(&format!(
                "netns exec {ns} ip addr add 10.231.{subnet}.{}/24 dev {host}p",
                10 + i
            ))?;
            ip(&format!("netns exec {ns} ip link set {host}p up"))?;
            ip(&format!("netns exec {ns} ip link set lo up"))?;
        }
        Ok(net)
    }

    /// The root namespace's end of host `i`'s veth pair: setting it down cuts the link.
    pub fn veth(&self, i: usize) -> String {
        format!("{}-v{i}", self.tag)
    }
}

impl Drop for TestNetwork {
    fn drop(&mut self) {
        for (i, ns) in self.namespaces.iter().enumerate() {
            let _ = ip(&format!("link del {}", self.veth(i)));
            let _ = ip(&format!("netns del {ns}"));
        }
        let _ = ip(&format!("link del {}-br", self.tag));
    }
}

/// Forwards connections to `listen_ip`:3306 to MariaDB on 127.0.0.1:3306 until `stop`.
pub fn forward_mariadb(
    listen_ip: &str,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let listener = TcpListener::bind((listen_ip, 3306))?;
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
