//! `--barrier NAME --clients N`: several bmk processes start one run together through
//! a table in the target database (MariaDB and PostgreSQL of the machine; skipped when
//! a server is missing, unless `CI=true`).

use std::process::Child;
use std::time::{Duration, Instant};

use bmk_sql::DriverKind;
use serde_json::Value;

use crate::server_db::ServerDb;
use crate::util::{Dir, Run};

/// Test-only uses of the database: the barrier table, and clients started on it.
trait BarrierDb {
    fn has_barrier_table(&self) -> bool;
    fn client(&self, dir: &Dir, barrier: &str, clients: u32, index: u32, extra: &str) -> Child;
}

impl BarrierDb for ServerDb {
    fn has_barrier_table(&self) -> bool {
        let sql = format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'bmk_barrier' AND {} = '{}'",
            match self.kind {
                DriverKind::Mysql => "table_schema",
                _ => "table_catalog",
            },
            self.name
        );
        let rs = self.conn().query(&sql).unwrap().unwrap();
        rs.get_str(0, 0).as_deref() != Some("0")
    }

    /// `bmk cpu run` as client `index` of barrier `barrier` (of `clients`), results in
    /// `dir/r<index>.json`.
    fn client(&self, dir: &Dir, barrier: &str, clients: u32, index: u32, extra: &str) -> Child {
        let mut cmd = dir
            .bmk()
            .args("cpu --cpu-max-prime=2000 --threads=1 --report-interval=0.25")
            .args(extra)
            .arg(format!("--barrier={barrier}"))
            .arg(format!("--clients={clients}"))
            .arg(format!("--results=r{index}.json"))
            .env("JOB_COMPLETION_INDEX", &index.to_string());
        for a in &self.args {
            cmd = cmd.arg(a);
        }
        cmd.arg("run").spawn().0
    }
}

/// Asserts that clients whose measuring began at `starts` (Unix nanoseconds) began
/// within 20 ms of each other.
pub fn assert_started_together(starts: &[u64]) {
    let spread = starts.iter().max().unwrap() - starts.iter().min().unwrap();
    assert!(
        spread < 20_000_000,
        "started {:.1} ms apart",
        spread as f64 / 1e6
    );
}

fn finish(child: Child, what: &str) -> Run {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut child = child;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "{what} still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
    Run::new(what.to_string(), child.wait_with_output().unwrap())
}

fn results(dir: &Dir, index: u32) -> Value {
    let text = std::fs::read_to_string(dir.join(&format!("r{index}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Three processes, arriving 0.3 s apart, start within 20 ms of each other at the one
/// instant they agreed on, and report on one grid; cleanup removes the barrier table.
fn three_clients_start_together(kind: DriverKind) {
    let Some(db) = ServerDb::new(kind) else {
        return;
    };
    let dir = Dir::new();
    let children: Vec<Child> = (0..3)
        .map(|i| {
            std::thread::sleep(Duration::from_millis(300));
            db.client(&dir, "together", 3, i, "--time=1")
        })
        .collect();
    let runs: Vec<Run> = children
        .into_iter()
        .enumerate()
        .map(|(i, c)| finish(c, &format!("client {i}")))
        .collect();
    for run in &runs {
        assert_eq!(run.code, Some(0), "{}", run.context());
        assert!(
            run.stdout
                .contains("Barrier 'together': 3 clients passed; measuring starts at "),
            "{}",
            run.context()
        );
    }
    let files: Vec<Value> = (0..3).map(|i| results(&dir, i)).collect();
    let starts: Vec<u64> = files
        .iter()
        .map(|f| f["start"]["measured_from_unix_ns"].as_u64().unwrap())
        .collect();
    assert_started_together(&starts);
    for (i, f) in files.iter().enumerate() {
        let b = &f["start"]["barrier"];
        assert_eq!(b["name"], "together");
        assert_eq!(b["client"], format!("index-{i}"));
        assert_eq!(
            b["clients"],
            serde_json::json!(["index-0", "index-1", "index-2"])
        );
        assert_eq!(
            b["server_start_unix_us"],
            files[0]["start"]["barrier"]["server_start_unix_us"]
        );
        assert!(b["placement_error_ms"].as_f64().unwrap() < 20.0);
        let stamps: Vec<f64> = f["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["time_s"].as_f64().unwrap())
            .collect();
        assert_eq!(stamps, [0.25, 0.5, 0.75, 1.0], "client {i}");
    }
    assert!(db.has_barrier_table());
    let mut cleanup = dir.bmk().arg("oltp_read_write");
    for a in &db.args {
        cleanup = cleanup.arg(a);
    }
    cleanup.arg("cleanup").run().code(0);
    assert!(!db.has_barrier_table(), "cleanup left the barrier table");
}

/// Two of three come: both fail, each with one line naming the one missing.
fn a_missing_client_is_named(kind: DriverKind) {
    let Some(db) = ServerDb::new(kind) else {
        return;
    };
    let dir = Dir::new();
    let a = db.client(&dir, "short", 3, 0, "--time=1 --barrier-timeout=1");
    let b = db.client(&dir, "short", 3, 1, "--time=1 --barrier-timeout=30");
    for (i, child) in [a, b].into_iter().enumerate() {
        let run = finish(child, &format!("client {i}"));
        let line = run.stderr.trim_end();
        assert_eq!(run.code, Some(1), "{}", run.context());
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.context());
        assert!(
            line.starts_with("FATAL: barrier 'short' timed out after 1 s with 2 of 3 clients: missing index-2 (never joined); present index-"),
            "{}",
            run.context()
        );
        assert!(!dir.join(&format!("r{i}.json")).exists());
    }
}

/// A client that comes while the others run refuses to join.
fn a_late_client_refuses(kind: DriverKind) {
    let Some(db) = ServerDb::new(kind) else {
        return;
    };
    let dir = Dir::new();
    let a = db.client(&dir, "early", 2, 0, "--time=4");
    // Registered in this order (the message lists clients in order of arrival).
    std::thread::sleep(Duration::from_millis(400));
    let b = db.client(&dir, "early", 2, 1, "--time=4");
    // Registered, then 1 s of lead: 2.5 s later the run goes on.
    std::thread::sleep(Duration::from_millis(2500));
    let late = finish(db.client(&dir, "early", 2, 2, "--time=1"), "late client");
    assert_eq!(late.code, Some(1), "{}", late.context());
    let line = late.stderr.trim_end();
    assert!(
        line.starts_with("FATAL: barrier 'early' started ")
            && line.ends_with(
                " s ago with 2 clients (index-0, index-1); client 'index-2' arrived late and does not join"
            ),
        "{}",
        late.context()
    );
    for (i, child) in [a, b].into_iter().enumerate() {
        finish(child, &format!("client {i}")).code(0);
    }
}

/// A client that registered and was killed before the start is named as such when
/// the barrier times out, not as one that never came.
fn a_client_killed_while_waiting_is_named(kind: DriverKind) {
    let Some(db) = ServerDb::new(kind) else {
        return;
    };
    let dir = Dir::new();
    let killed = db.client(&dir, "gone", 3, 1, "--time=1 --barrier-timeout=60");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !db.has_barrier_table() || !registered(&db, "gone", "index-1") {
        assert!(Instant::now() < deadline, "client index-1 never registered");
        std::thread::sleep(Duration::from_millis(50));
    }
    signal(&killed, libc::SIGKILL);
    let _ = finish(killed, "killed client");
    let run = finish(
        db.client(&dir, "gone", 3, 0, "--time=1 --barrier-timeout=1"),
        "client 0",
    );
    assert_eq!(run.code, Some(1), "{}", run.context());
    assert_eq!(
        run.stderr.trim_end(),
        "FATAL: barrier 'gone' timed out after 1 s with 1 of 3 clients: missing index-2 (never joined), index-1 (registered, then left before the start: its connection closed); present index-0",
        "{}",
        run.context()
    );
}

/// Whether `client` has a row at barrier `barrier`.
fn registered(db: &ServerDb, barrier: &str, client: &str) -> bool {
    let sql = format!(
        "SELECT COUNT(*) FROM bmk_barrier WHERE barrier = '{barrier}' AND client = '{client}'"
    );
    match db.conn().query(&sql) {
        Ok(Some(rs)) => rs.get_str(0, 0).as_deref() == Some("1"),
        _ => false,
    }
}

#[test]
fn a_client_killed_while_waiting_is_named_on_mariadb() {
    a_client_killed_while_waiting_is_named(DriverKind::Mysql);
}

#[test]
fn a_client_killed_while_waiting_is_named_on_postgresql() {
    a_client_killed_while_waiting_is_named(DriverKind::Pgsql);
}

#[test]
fn three_clients_start_together_on_mariadb() {
    three_clients_start_together(DriverKind::Mysql);
}

#[test]
fn three_clients_start_together_on_postgresql() {
    three_clients_start_together(DriverKind::Pgsql);
}

#[test]
fn a_missing_client_is_named_on_mariadb() {
    a_missing_client_is_named(DriverKind::Mysql);
}

#[test]
fn a_missing_client_is_named_on_postgresql() {
    a_missing_client_is_named(DriverKind::Pgsql);
}

#[test]
fn a_late_client_refuses_on_mariadb() {
    a_late_client_refuses(DriverKind::Mysql);
}

#[test]
fn a_late_client_refuses_on_postgresql() {
    a_late_client_refuses(DriverKind::Pgsql);
}

#[test]
fn barrier_options_are_checked_before_the_run() {
    let dir = Dir::new();
    dir.bmk().args("cpu --clients=3 run").run().fails_with(
        "--clients needs --barrier NAME: the barrier is how the clients start together",
    );
    dir.bmk()
        .args("cpu --barrier=x --db-driver=sqlite run")
        .run()
        .fails_with("--barrier needs a MySQL/MariaDB or PostgreSQL server that every client reaches (--db-driver=sqlite)");
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill only sends a signal to a client this test started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, sig);
    }
}

/// A client killed mid-run leaves no results: `bmk merge` of the others names it as
/// missing instead of giving a partial result; one stopped early (Ctrl-C) is refused
/// too; `--partial` merges anyway.
#[test]
fn a_client_killed_mid_run_is_missing_from_merge() {
    let Some(db) = ServerDb::new(DriverKind::Mysql) else {
        return;
    };
    let dir = Dir::new();
    let children: Vec<Child> = (0..3)
        .map(|i| db.client(&dir, "killed", 3, i, "--time=4"))
        .collect();
    // Registered, 1 s of lead, then well into the run.
    std::thread::sleep(Duration::from_millis(2800));
    signal(&children[2], libc::SIGKILL);
    let mut runs = children.into_iter().enumerate();
    for (i, c) in runs.by_ref().take(2) {
        finish(c, &format!("client {i}")).code(0);
    }
    let _ = finish(runs.next().unwrap().1, "killed client");
    assert!(!dir.join("r2.json").exists());
    dir.bmk()
        .args("merge r0.json r1.json")
        .run()
        .fails_with("cannot merge: 3 clients passed barrier 'killed' but index-2 is missing: killed mid-run or not given; the others alone are a partial result (use --partial to merge anyway)");
    let run = dir.bmk().args("merge --partial r0.json r1.json").run().ok();
    assert!(
        run.stdout.contains("Merged 2 results: 2 threads"),
        "{}",
        run.context()
    );

    // Both come, one is stopped by Ctrl-C mid-run: its result ends early.
    let children: Vec<Child> = (3..5)
        .map(|i| db.client(&dir, "stopped", 2, i, "--time=4"))
        .collect();
    std::thread::sleep(Duration::from_millis(2800));
    signal(&children[1], libc::SIGINT);
    let codes: Vec<Option<i32>> = children
        .into_iter()
        .enumerate()
        .map(|(i, c)| finish(c, &format!("client {i}")).code)
        .collect();
    assert_eq!(codes, [Some(0), Some(130)]);
    let run = dir.bmk().args("merge r3.json r4.json").run().code(1);
    assert!(
        run.stderr.starts_with("cannot merge: r4.json stopped measuring ")
            && run.stderr.trim_end().ends_with(
                " s before the others (status interrupted): a client that ended early makes a partial result (use --partial to merge anyway)"
            )
            && run.stderr.lines().count() == 1,
        "{}",
        run.context()
    );
}
