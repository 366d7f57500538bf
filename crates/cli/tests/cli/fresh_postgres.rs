//! The PostgreSQL tests' log-in on a cluster made as a new Debian machine makes it:
//! `pg_createcluster` with Debian's defaults (`pg_hba.conf` asks for scram-sha-256 on
//! 127.0.0.1), a password set for `postgres` as `.ci/run` sets it, and then the same
//! path every PostgreSQL test takes ([`ServerDb`], and `bmk` runs given its options),
//! with the password from `PGPASSWORD` only.
//!
//! It creates and drops a cluster on the machine, so it runs under `CI=true` only (as
//! root, where it is required); elsewhere it is a skip with a note.

use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use bmk_sql::DriverKind;

use crate::server_db::ServerDb;
use crate::util::*;

/// A cluster created for this test; stopped and dropped with it.
struct FreshCluster {
    version: String,
    name: String,
    port: u16,
}

impl Drop for FreshCluster {
    fn drop(&mut self) {
        let _ = Command::new("pg_dropcluster")
            .args(["--stop", &self.version, &self.name])
            .status();
    }
}

fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The newest PostgreSQL major version installed.
fn newest_version() -> Option<String> {
    let mut versions: Vec<u32> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    versions.sort();
    versions.pop().map(|v| v.to_string())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Creates and starts the cluster, or says why it cannot.
fn create(password: &str) -> Result<FreshCluster, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("creating a cluster needs root".into());
    }
    let version = newest_version().ok_or("no PostgreSQL under /usr/lib/postgresql")?;
    let cluster = FreshCluster {
        version,
        name: format!("bmkfresh{}", std::process::id()),
        port: free_port(),
    };
    let port = cluster.port.to_string();
    run(
        "pg_createcluster",
        &["-p", &port, &cluster.version, &cluster.name],
    )?;
    run(
        "pg_ctlcluster",
        &[
            "--skip-systemctl-redirect",
            &cluster.version,
            &cluster.name,
            "start",
        ],
    )?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while run("pg_isready", &["-h", "127.0.0.1", "-p", &port]).is_err() {
        if Instant::now() > deadline {
            return Err(format!("the cluster on port {port} did not start"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    // As .ci/run does it: through the local socket, where Debian lets the postgres
    // system user in, the password given as a psql variable (never on a command line).
    let mut psql = Command::new("su")
        .args([
            "postgres",
            "-c",
            &format!("psql -q -p {port} -v ON_ERROR_STOP=1 -v pw=\"$BMK_FRESH_PW\""),
        ])
        .env("BMK_FRESH_PW", password)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run psql: {e}"))?;
    use std::io::Write as _;
    psql.stdin
        .take()
        .expect("psql's stdin")
        .write_all(b"ALTER USER postgres PASSWORD :'pw'\n")
        .map_err(|e| e.to_string())?;
    let status = psql.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err("psql could not set the password".into());
    }
    Ok(cluster)
}

#[test]
fn the_postgresql_tests_log_in_on_a_fresh_debian_cluster() {
    if !bmk_testkit::ci() {
        bmk_testkit::unavailable::<()>(
            "a fresh PostgreSQL cluster",
            "created only under CI=true (it adds and drops a cluster on the machine)",
        );
        return;
    }
    let password = std::env::var("PGPASSWORD")
        .expect("PGPASSWORD is set under CI (.ci/run sets the postgres password from it)");
    let cluster = create(&password).unwrap_or_else(|e| panic!("fresh cluster: {e}"));
    // What the test is about: Debian's default asks for a password on 127.0.0.1.
    let hba = std::fs::read_to_string(format!(
        "/etc/postgresql/{}/{}/pg_hba.conf",
        cluster.version, cluster.name
    ))
    .expect("the cluster's pg_hba.conf");
    assert!(
        hba.lines().any(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.first() == Some(&"host")
                && w.get(3) == Some(&"127.0.0.1/32")
                && w.get(4) == Some(&"scram-sha-256")
        }),
        "not Debian's default pg_hba.conf:\n{hba}"
    );
    let dir = Dir::new();
    let port = format!("--pgsql-port={}", cluster.port);
    // Without the password, bmk cannot log in: the cluster does not trust 127.0.0.1.
    let without = dir
        .bmk()
        .args("oltp_point_select --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-user=postgres --pgsql-db=postgres --tables=1 --table-size=10 prepare")
        .arg(&port)
        .env_remove("PGPASSWORD")
        .run();
    assert_ne!(without.code, Some(0), "{}", without.context());
    assert!(
        format!("{}{}", without.stdout, without.stderr).contains("password"),
        "{}",
        without.context()
    );
    // The tests' own log-in path, with the password from PGPASSWORD only.
    let db = ServerDb::on_port(DriverKind::Pgsql, Some(cluster.port))
        .expect("the tests' admin connection logs in with PGPASSWORD");
    for command in ["prepare", "run", "cleanup"] {
        let mut cmd = dir
            .bmk()
            .args("oltp_point_select --tables=1 --table-size=10 --events=20 --time=0");
        for a in &db.args {
            cmd = cmd.arg(a);
        }
        cmd.arg(command).run().code(0);
    }
    drop(db);
    drop(cluster);
}
