//! A throwaway PostgreSQL server: `initdb` into a temporary directory with
//! scram-sha-256 authentication and TLS (a certificate generated at start), `postgres`
//! on a free loopback port with its socket inside that directory. Runs as the
//! `postgres` system user when the tests run as root. Killed and removed on drop.

use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bmk_sql::DriverKind;

use super::{connect, temp_dir, unavailable};

/// Superuser password of the throwaway server.
pub const PG_PASSWORD: &str = "Throwaway_Pg_Pw1";

const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A private PostgreSQL server for one test.
pub struct ThrowawayPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// TCP port on 127.0.0.1.
    pub port: u16,
    ids: Option<(u32, u32)>,
    child: Option<Child>,
}

fn find_bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("initdb").exists() && p.join("postgres").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// (uid, gid) of the `postgres` user, when we are root and must drop privileges.
fn run_as() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let out = Command::new("id").args(["-u", "postgres"]).output().ok()?;
    let uid = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    let out = Command::new("id").args(["-g", "postgres"]).output().ok()?;
    let gid = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some((uid, gid))
}

fn chown_tree(path: &Path, ids: Option<(u32, u32)>) {
    if let Some((u, g)) = ids {
        let st = Command::new("chown")
            .arg("-R")
            .arg(format!("{u}:{g}"))
            .arg(path)
            .status()
            .expect("chown");
        assert!(st.success());
    }
}

impl ThrowawayPostgres {
    /// Create and start the server. `None` (skip) when the PostgreSQL server binaries
    /// are missing, except under CI where that panics.
    pub fn start() -> Option<ThrowawayPostgres> {
        let Some(bin) = find_bin_dir() else {
            return unavailable(
                "throwaway PostgreSQL",
                "no /usr/lib/postgresql/*/bin/initdb",
            );
        };
        let ids = run_as();
        // SAFETY: geteuid has no preconditions.
        if ids.is_none() && unsafe { libc::geteuid() } == 0 {
            return unavailable(
                "throwaway PostgreSQL",
                "running as root without a postgres user",
            );
        }
        let dir = temp_dir("bmk-pg");
        std::fs::write(dir.path().join("pw"), PG_PASSWORD).unwrap();
        let st = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args(["-subj", "/CN=localhost", "-keyout"])
            .arg(dir.path().join("key.pem"))
            .arg("-out")
            .arg(dir.path().join("cert.pem"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run openssl");
        assert!(st.success(), "openssl req failed");
        chown_tree(dir.path(), ids);
        let mut cmd = Command::new(bin.join("initdb"));
        cmd.arg("-D")
            .arg(dir.path().join("data"))
            .args(["--auth=scram-sha-256", "--username=postgres", "-E", "UTF8"])
            .arg(format!("--pwfile={}", dir.path().join("pw").display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some((u, g)) = ids {
            cmd.uid(u).gid(g);
        }
        let out = cmd.output().expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // TLS-only account for the sslmode tests, password accounts for everything.
        let hba = "local all all scram-sha-256\n\
                   hostssl all tlsonly 127.0.0.1/32 scram-sha-256\n\
                   hostnossl all tlsonly 127.0.0.1/32 reject\n\
                   host all pw_md5 127.0.0.1/32 md5\n\
                   host all pw_clear 127.0.0.1/32 password\n\
                   host all all 127.0.0.1/32 scram-sha-256\n";
        std::fs::write(dir.path().join("data/pg_hba.conf"), hba).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free port");
        let mut s = ThrowawayPostgres {
            dir,
            bin,
            port,
            ids,
            child: None,
        };
        s.spawn_and_wait();
        Some(s)
    }

    fn spawn_and_wait(&mut self) {
        let d = self.dir.path();
        let mut cmd = Command::new(self.bin.join("postgres"));
        cmd.arg("-D")
            .arg(d.join("data"))
            .arg("-p")
            .arg(self.port.to_string())
            .arg("-k")
            .arg(d)
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "ssl=on"])
            .arg("-c")
            .arg(format!("ssl_cert_file={}", d.join("cert.pem").display()))
            .arg("-c")
            .arg(format!("ssl_key_file={}", d.join("key.pem").display()))
            .args(["-c", "shared_buffers=16MB", "-c", "fsync=off"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(d.join("server.log"))
                    .expect("log"),
            ));
        if let Some((u, g)) = self.ids {
            cmd.uid(u).gid(g);
        }
        self.child = Some(cmd.spawn().expect("spawn postgres"));
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(st)) = c.try_wait() {
                    panic!("postgres exited ({st}) during start:\n{}", self.log());
                }
            }
            if connect(DriverKind::Pgsql, &self.superuser_opts()).is_ok() {
                return;
            }
            if Instant::now() > deadline {
                self.kill();
                panic!(
                    "postgres not ready within {READY_TIMEOUT:?}:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The server log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The port as text.
    pub fn port_str(&self) -> String {
        self.port.to_string()
    }

    /// Options for the superuser over TCP.
    pub fn superuser_opts(&self) -> Vec<(&'static str, &'static str)> {
        let port: &'static str = Box::leak(self.port.to_string().into_boxed_str());
        vec![
            ("pgsql-host", "127.0.0.1"),
            ("pgsql-port", port),
            ("pgsql-user", "postgres"),
            ("pgsql-password", PG_PASSWORD),
            ("pgsql-db", "postgres"),
        ]
    }

    /// SIGKILL the postmaster (its backends exit when they notice) and wait for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
            // Backends of a killed postmaster linger briefly; wait for the pid file
            // lock to be released by removing it (postgres checks the pid inside).
            let _ = std::fs::remove_file(self.dir.path().join("data/postmaster.pid"));
        }
    }

    /// Start again on the same port.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn_and_wait();
    }
}

impl Drop for ThrowawayPostgres {
    fn drop(&mut self) {
        if let Some(c) = self.child.take() {
            // Fast shutdown so backends exit too.
            // SAFETY: plain kill(2) on our own child's pid.
            unsafe {
                libc::kill(c.id() as libc::pid_t, libc::SIGQUIT);
            }
            let mut c = c;
            let deadline = Instant::now() + Duration::from_secs(10);
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
}
