//! A throwaway MariaDB server: `mariadb-install-db` into a temporary directory,
//! `mariadbd` on a free loopback port and a socket inside that directory, optionally
//! with a TLS certificate generated at start. It can be killed, stopped and restarted
//! on the same port (for lost-connection tests) and is killed and removed on drop.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bmk_sql::DriverKind;

use super::{connect, temp_dir, unavailable};

/// How long a start may take before it is considered failed.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A private MariaDB server for one test.
pub struct ThrowawayMariadb {
    dir: tempfile::TempDir,
    /// TCP port on 127.0.0.1.
    pub port: u16,
    /// UNIX socket path.
    pub socket: PathBuf,
    /// Server certificate (PEM) when started with TLS.
    pub cert: Option<PathBuf>,
    child: Option<Child>,
    tls: bool,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn find_tool(name: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
}

impl ThrowawayMariadb {
    /// Install and start a server (with a self-signed TLS certificate when `tls`).
    /// `None` (skip) when the MariaDB server binaries are missing, except under CI where
    /// that panics.
    pub fn start(tls: bool) -> Option<ThrowawayMariadb> {
        let Some(install) = find_tool("mariadb-install-db") else {
            return unavailable("throwaway MariaDB", "mariadb-install-db not found");
        };
        if find_tool("mariadbd").is_none() {
            return unavailable("throwaway MariaDB", "mariadbd not found");
        }
        let dir = temp_dir("bmk-mariadb");
        let data = dir.path().join("data");
        let log = std::fs::File::create(dir.path().join("install.log")).expect("log");
        // A private tmpdir: concurrent servers must not share temporary files.
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).expect("tmpdir");
        let st = bmk_testkit::mariadb_install_db(&install, &data, &tmp)
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .status()
            .expect("run mariadb-install-db");
        assert!(
            st.success(),
            "mariadb-install-db failed: {}",
            std::fs::read_to_string(dir.path().join("install.log")).unwrap_or_default()
        );
        let mut cert = None;
        if tls {
            let c = dir.path().join("cert.pem");
            let st = Command::new("openssl")
                .args([
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                ])
                .args(["-subj", "/CN=localhost", "-keyout"])
                .arg(dir.path().join("key.pem"))
                .arg("-out")
                .arg(&c)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("run openssl");
            assert!(st.success(), "openssl req failed");
            cert = Some(c);
        }
        let mut s = ThrowawayMariadb {
            socket: dir.path().join("mysqld.sock"),
            dir,
            port: free_port(),
            cert,
            child: None,
            tls,
        };
        s.spawn_and_wait();
        Some(s)
    }

    /// The server's error log.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }

    fn spawn_and_wait(&mut self) {
        let d = self.dir.path();
        let mut cmd = Command::new(find_tool("mariadbd").expect("mariadbd"));
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", d.join("data").display()))
            .arg(format!("--port={}", self.port))
            .arg(format!("--socket={}", self.socket.display()))
            .arg(format!("--pid-file={}", d.join("mysqld.pid").display()))
            .arg(format!("--log-error={}", d.join("error.log").display()))
            .arg(format!("--tmpdir={}", d.join("tmp").display()))
            .args([
                "--bind-address=127.0.0.1",
                "--user=root",
                "--skip-log-bin",
                "--skip-name-resolve",
                "--innodb-buffer-pool-size=32M",
                "--max-connections=100",
            ]);
        if self.tls {
            cmd.arg(format!("--ssl-cert={}", d.join("cert.pem").display()))
                .arg(format!("--ssl-key={}", d.join("key.pem").display()))
                .arg(format!("--ssl-ca={}", d.join("cert.pem").display()));
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mariadbd");
        self.child = Some(child);
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(st)) = c.try_wait() {
                    panic!("mariadbd exited ({st}) during start:\n{}", self.error_log());
                }
            }
            if connect(DriverKind::Mysql, &self.root_opts_socket()).is_ok() {
                return;
            }
            if Instant::now() > deadline {
                self.kill();
                panic!(
                    "mariadbd not ready within {READY_TIMEOUT:?}:\n{}",
                    self.error_log()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Options for root over the socket (empty password).
    pub fn root_opts_socket(&self) -> Vec<(&str, &str)> {
        vec![
            ("mysql-socket", self.socket.to_str().expect("utf-8 path")),
            ("mysql-user", "root"),
            ("mysql-password", ""),
            ("mysql-db", ""),
        ]
    }

    /// The port as a string (for option values).
    pub fn port_str(&self) -> String {
        self.port.to_string()
    }

    /// SIGKILL the server (simulates a crash) and wait for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stop the server cleanly (SIGTERM), killing it if it takes over 30 s.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            // SAFETY: plain kill(2) on our own child's pid.
            unsafe {
                libc::kill(c.id() as libc::pid_t, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start again on the same port and socket (after `kill` or `stop`).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn_and_wait();
    }
}

impl Drop for ThrowawayMariadb {
    fn drop(&mut self) {
        self.kill();
    }
}
