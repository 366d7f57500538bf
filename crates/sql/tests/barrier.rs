//! The start barrier against the machine's MariaDB and PostgreSQL: clients (here
//! threads with a connection each, as separate processes would have) register, agree
//! on one start instant, and fail together naming who is missing; a late client
//! refuses; a client whose connection closed no longer counts.

mod support;

use bmk_testkit::require;

use std::thread;
use std::time::{Duration, Instant};

use bmk_sql::{
    drop_barrier_table, Barrier, BarrierError, BarrierSpec, Connection, DriverKind, START_LEAD,
};
use support::{connect, scalar, unique_name, MysqlTestDb, PgTestDb};

/// Opens connections to one test database (the options, not the database's admin
/// connection, so that client threads can share it).
struct Target {
    kind: DriverKind,
    opts: Vec<(String, String)>,
}

impl Target {
    fn new(kind: DriverKind, opts: Vec<(&str, &str)>) -> Target {
        let opts = opts
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Target { kind, opts }
    }

    fn kind(&self) -> DriverKind {
        self.kind
    }

    fn conn(&self) -> Box<dyn Connection> {
        let opts: Vec<(&str, &str)> = self
            .opts
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        connect(self.kind, &opts).unwrap_or_else(|e| panic!("{e}"))
    }
}

fn spec(name: &str, clients: u32, client: &str) -> BarrierSpec {
    BarrierSpec {
        name: name.into(),
        clients,
        client: client.into(),
    }
}

fn join(db: &Target, name: &str, clients: u32, client: &str) -> Result<Barrier, BarrierError> {
    Barrier::join(db.conn(), db.kind(), spec(name, clients, client))
}

const NEVER: &dyn Fn() -> bool = &|| false;

/// Waits until the server has ended every session of the test's user but this probe's
/// own, the clients dropped before: their session locks are free from then on.
fn wait_for_sessions_to_end(db: &Target) {
    let mut probe = db.conn();
    // A user sees its own sessions in MariaDB's process list without privileges.
    let others = match db.kind() {
        DriverKind::Mysql => {
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()"
        }
        _ => {
            "SELECT count(*) FROM pg_stat_activity \
             WHERE usename = current_user AND pid <> pg_backend_pid()"
        }
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while scalar(&mut *probe, others).as_deref() != Some("0") {
        assert!(
            Instant::now() < deadline,
            "the dropped clients' sessions live on"
        );
        thread::sleep(POLL);
    }
}

/// How often a test looks again for what it waits for on the server.
const POLL: Duration = Duration::from_millis(5);

/// Three clients pass; all get the same start, a lead after the last arrival, and
/// clock samples that bracket the server's time.
fn all_clients_agree_on_one_start(db: &Target) {
    let name = unique_name();
    let starts: Vec<_> = thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let name = name.clone();
                s.spawn(move || {
                    thread::sleep(Duration::from_millis(100 * i));
                    let mut b = join(db, &name, 3, &format!("index-{i}")).expect("join");
                    let start = b.wait(Duration::from_secs(60), NEVER).expect("pass");
                    b.finish().expect("finish");
                    start
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first = &starts[0];
    for s in &starts {
        assert_eq!(s.start_us, first.start_us);
        assert_eq!(s.clients, ["index-0", "index-1", "index-2"]);
        assert_eq!(s.samples.len(), 5);
        for c in &s.samples {
            assert!(c.received >= c.sent);
            // Read before the start: the lead is longer than any sane round trip.
            assert!(
                c.server_us < s.start_us,
                "{} >= {}",
                c.server_us,
                s.start_us
            );
            assert!(s.start_us - c.server_us <= START_LEAD.as_micros() as i64);
        }
    }
    let mut c = db.conn();
    let states = scalar(
        &mut *c,
        &format!("SELECT COUNT(*) FROM bmk_barrier WHERE barrier = '{name}' AND state = 'done'"),
    );
    assert_eq!(states.as_deref(), Some("3"));
}

/// Two of three come; both fail after the time-out with one message naming index-2.
fn a_missing_client_fails_the_others_by_name(db: &Target) {
    let name = unique_name();
    let errors: Vec<String> = thread::scope(|s| {
        let handles: Vec<_> = [0u64, 1]
            .into_iter()
            .map(|i| {
                let name = name.clone();
                s.spawn(move || {
                    thread::sleep(Duration::from_millis(200 * i));
                    let mut b = join(db, &name, 3, &format!("index-{i}")).expect("join");
                    // Different time-outs: the second hears of the first one's.
                    let timeout = Duration::from_millis(800 + 2800 * i);
                    b.wait(timeout, NEVER).unwrap_err().to_string()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for e in &errors {
        assert!(
            e.starts_with(&format!("barrier '{name}' timed out after 0.8 s with 2 of 3 clients: missing index-2 (never joined); present index-0, index-1")),
            "{e}"
        );
    }
    // A new round under the same name once nobody of the old one is alive.
    let mut b = join(db, &name, 1, "index-0").expect("a new round");
    b.wait(Duration::from_secs(30), NEVER).expect("alone");
}

/// A client that comes after the start refuses to join while the run goes on, and a
/// new round begins after it.
fn a_late_client_refuses(db: &Target) {
    let name = unique_name();
    let mut a = join(db, &name, 2, "a:1").unwrap();
    let mut b = join(db, &name, 2, "b:2").unwrap();
    a.wait(Duration::from_secs(30), NEVER).unwrap();
    b.wait(Duration::from_secs(30), NEVER).unwrap();
    let late = join(db, &name, 2, "c:3").unwrap_err().to_string();
    // The clients' waits return at the start instant, which lies up to the barrier's
    // lead time ahead: the late client hears "starts in" then, "started ... ago" after.
    assert!(
        late.starts_with(&format!("barrier '{name}' started "))
            || late.starts_with(&format!("barrier '{name}' starts in ")),
        "{late}"
    );
    assert!(!late.contains(" -"), "no negative time: {late}");
    assert!(
        late.ends_with("with 2 clients (a:1, b:2); client 'c:3' arrived late and does not join"),
        "{late}"
    );
    a.finish().unwrap();
    // b's process died mid-run: its connection closes without marking it done.
    drop(b);
    wait_for_sessions_to_end(db);
    let c = join(db, &name, 1, "c:3").expect("the old round is over");
    drop(c);
}

/// A client that registered and then died does not count: the one that would complete
/// the count waits on, and its time-out names the dead one.
fn a_dead_client_does_not_count(db: &Target) {
    let name = unique_name();
    let dead = join(db, &name, 2, "index-0").unwrap();
    drop(dead);
    wait_for_sessions_to_end(db);
    let mut b = join(db, &name, 2, "index-1").unwrap();
    let e = b
        .wait(Duration::from_millis(500), NEVER)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!("barrier '{name}' timed out after 0.5 s with 1 of 2 clients: missing index-0 (registered, then left before the start: its connection closed); present index-1")
    );
}

/// A second client with a live client's identity, or with another `--clients`, is
/// refused at once; cleanup's drop takes the table away.
fn conflicting_clients_are_refused(db: &Target) {
    let name = unique_name();
    let _a = join(db, &name, 2, "index-0").unwrap();
    let dup = join(db, &name, 2, "index-0").unwrap_err().to_string();
    assert_eq!(
        dup,
        format!(
            "barrier '{name}' already has a live client 'index-0' (two clients with one identity?)"
        )
    );
    let other = join(db, &name, 3, "index-1").unwrap_err().to_string();
    assert_eq!(
        other,
        format!(
            "barrier '{name}' waits for 2 clients, but this client was started with --clients=3"
        )
    );
    let three = unique_name();
    let _first = join(db, &three, 3, "index-0").unwrap();
    let interrupted = {
        let mut b = join(db, &three, 3, "index-1").unwrap();
        b.wait(Duration::from_secs(30), &|| true).unwrap_err()
    };
    assert!(matches!(interrupted, BarrierError::Interrupted(_)));
    drop(_a);
    let mut c = db.conn();
    drop_barrier_table(&mut *c).unwrap();
    drop_barrier_table(&mut *c).unwrap();
}

fn each(db: &Target) {
    all_clients_agree_on_one_start(db);
    a_missing_client_fails_the_others_by_name(db);
    a_late_client_refuses(db);
    a_dead_client_does_not_count(db);
    conflicting_clients_are_refused(db);
}

#[test]
fn barrier_on_mariadb() {
    let db = require!(MysqlTestDb::create());
    each(&Target::new(DriverKind::Mysql, db.tcp_opts(&[])));
}

#[test]
fn barrier_on_postgresql() {
    let db = require!(PgTestDb::create());
    each(&Target::new(DriverKind::Pgsql, db.opts(&[])));
}
