//! The start barrier held in the target database: several bmk processes (on one host or
//! many) register in one small table, wait until all of them are there, and agree on an
//! instant of the database server's clock at which they all start measuring.
//!
//! The table, [`BARRIER_TABLE`], holds per barrier name one header row (client `''`:
//! the expected number of clients, the state, the agreed start) and one row per client.
//! Every change happens in a transaction that first locks the header row, so arrivals,
//! the start decision and a time-out are serialised by the server. A client is *live*
//! while it holds a session lock named after it (`GET_LOCK` on MySQL/MariaDB, an
//! advisory lock on PostgreSQL): the server drops the lock when the client's connection
//! ends, however the process died, so a dead client is never counted and a round is
//! over once nobody who took part is alive.
//!
//! States of a barrier (its header row):
//! * `gathering`: clients register; the one that completes the count (after removing
//!   registrations whose client has died) sets `started` and the start instant, a
//!   fixed lead ([`START_LEAD`]) after the server's current time, so that every waiter
//!   notices before it comes.
//! * `started`: a newcomer refuses to join while any client of the round is alive; once
//!   none is, the next arrival begins a new round under the same name.
//! * `abandoned`: a waiter timed out; the header keeps its message (who is missing),
//!   which the other waiters print too. A new round begins once no waiter is alive.
//!
//! This module only speaks the protocol and reads the server's clock; turning the
//! agreed server instant into a local one is the caller's job ([`ClockSample`]).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::driver_kind::DriverKind;
use crate::emulate::{push_quoted, Dialect};
use crate::error::SqlError;
use crate::Connection;

/// The table that holds every barrier of a database; `cleanup` drops it.
pub const BARRIER_TABLE: &str = "bmk_barrier";

/// How long after the last arrival the run starts: enough for every waiter to see the
/// start (it polls every [`POLL_INTERVAL`]) and to read the server's clock a few times,
/// even on a loaded client machine.
pub const START_LEAD: Duration = Duration::from_millis(1000);

/// How often a waiting client looks at the barrier.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// The longest barrier name and client identity (column widths).
const MAX_NAME: usize = 64;
const MAX_CLIENT: usize = 128;

/// How many names a message lists before it says "and N more".
const LISTED: usize = 16;

/// Why a client could not pass the barrier. Each message is one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum BarrierError {
    /// The database failed.
    #[error("barrier: {0}")]
    Sql(#[from] SqlError),
    /// The driver has no server that several processes share.
    #[error("--barrier needs a MySQL/MariaDB or PostgreSQL server (--db-driver={0})")]
    Unsupported(&'static str),
    /// A barrier name or client identity with characters the protocol does not take.
    #[error("invalid barrier {what} '{value}': use 1 to {max} letters, digits and . _ - : @")]
    InvalidName {
        /// `name` or `client identity`.
        what: &'static str,
        /// The value given.
        value: String,
        /// Its longest length.
        max: usize,
    },
    /// The barrier waits for another number of clients.
    #[error("barrier '{name}' waits for {expected} clients, but this client was started with --clients={given}")]
    ClientsMismatch {
        /// Barrier name.
        name: String,
        /// Clients the barrier was opened for.
        expected: u32,
        /// This client's `--clients`.
        given: u32,
    },
    /// A live client already uses this identity.
    #[error(
        "barrier '{name}' already has a live client '{client}' (two clients with one identity?)"
    )]
    Duplicate {
        /// Barrier name.
        name: String,
        /// The identity.
        client: String,
    },
    /// The run had started (or was complete and about to start) when this client
    /// arrived.
    #[error(
        "barrier '{name}' {when} with {clients}; client '{client}' arrived late and does not join"
    )]
    Late {
        /// Barrier name.
        name: String,
        /// Since when, on the server's clock ([`late_when`]).
        when: String,
        /// The clients of the run, listed.
        clients: String,
        /// This client's identity.
        client: String,
    },
    /// The barrier timed out (here or in another client): who is missing.
    #[error("{0}")]
    Abandoned(String),
    /// A signal arrived while waiting.
    #[error("interrupted while waiting at barrier '{0}'")]
    Interrupted(String),
}

/// Which barrier a client joins, as whom, and how many clients it waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarrierSpec {
    /// The barrier's name (unique per run).
    pub name: String,
    /// Clients that must be there before the run starts.
    pub clients: u32,
    /// This client's identity ([`client_identity`]).
    pub client: String,
}

/// A client's identity: `index-K` for the pod of an Indexed Job (`job_index`, from
/// `JOB_COMPLETION_INDEX`), else `HOST:PID`. Characters the protocol does not take
/// become `_`.
pub fn client_identity(job_index: Option<&str>, host: &str, pid: u32) -> String {
    let raw = match job_index.map(str::trim).filter(|s| !s.is_empty()) {
        Some(index) => format!("index-{index}"),
        None => format!("{host}:{pid}"),
    };
    raw.chars()
        .map(|c| if name_char(c) { c } else { '_' })
        .take(MAX_CLIENT)
        .collect()
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '@')
}

fn check_name(what: &'static str, value: &str, max: usize) -> Result<(), BarrierError> {
    if value.is_empty() || value.len() > max || !value.chars().all(name_char) {
        return Err(BarrierError::InvalidName {
            what,
            value: value.to_string(),
            max,
        });
    }
    Ok(())
}

/// One reading of the server's clock: local instants just before the query was sent and
/// just after its answer arrived, and the server's time in between (microseconds since
/// the Unix epoch).
#[derive(Debug, Clone, Copy)]
pub struct ClockSample {
    /// Before sending.
    pub sent: Instant,
    /// After the answer.
    pub received: Instant,
    /// The server's time, read while the query ran.
    pub server_us: i64,
}

/// What the clients agreed on.
#[derive(Debug, Clone)]
pub struct AgreedStart {
    /// The start instant on the server's clock (microseconds since the Unix epoch).
    pub start_us: i64,
    /// Readings of the server's clock taken after the start was known, to place that
    /// instant on the local clock.
    pub samples: Vec<ClockSample>,
    /// Every client of the run, in order of arrival.
    pub clients: Vec<String>,
}

/// The state of the barrier's header row.
struct Header {
    state: String,
    clients: u32,
    start_us: Option<i64>,
    note: Option<String>,
    now_us: i64,
}

/// A registered client's row.
struct Member {
    client: String,
    /// `waiting`, `done`, or `left`: it registered and its connection closed before the
    /// start (kept, so that a time-out names it as such, not as never come).
    state: String,
}

impl Member {
    fn left(&self) -> bool {
        self.state == "left"
    }
}

/// A client registered at a barrier; holds the connection (and the session lock that
/// says it is alive) until [`Barrier::finish`] or drop.
pub struct Barrier {
    conn: Box<dyn Connection>,
    kind: DriverKind,
    spec: BarrierSpec,
    /// What the session locks' names are made of besides the barrier and the client:
    /// MySQL's locks are server-wide, so the database is part of their name.
    scope: String,
}

impl std::fmt::Debug for Barrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Barrier").field("spec", &self.spec).finish()
    }
}

impl Barrier {
    /// Registers `spec.client` at barrier `spec.name` over `conn` (a connection of
    /// `kind`, used for nothing else): creates the table when missing, takes the
    /// client's session lock, and joins the current round, or starts a new one. Fails
    /// when the run has started (a late client), when the barrier waits for another
    /// number of clients, or when a live client has the same identity.
    pub fn join(
        conn: Box<dyn Connection>,
        kind: DriverKind,
        spec: BarrierSpec,
    ) -> Result<Barrier, BarrierError> {
        if kind == DriverKind::Sqlite {
            return Err(BarrierError::Unsupported(kind.name()));
        }
        check_name("name", &spec.name, MAX_NAME)?;
        check_name("client identity", &spec.client, MAX_CLIENT)?;
        let mut barrier = Barrier {
            conn,
            kind,
            spec,
            scope: String::new(),
        };
        barrier.prepare_session()?;
        if !barrier.take_own_lock()? {
            return Err(BarrierError::Duplicate {
                name: barrier.spec.name.clone(),
                client: barrier.spec.client.clone(),
            });
        }
        barrier.ensure_header()?;
        barrier.retry_transaction(|b| b.register())?;
        Ok(barrier)
    }

    /// The barrier and this client.
    pub fn spec(&self) -> &BarrierSpec {
        &self.spec
    }

    /// Waits until every client is there (polling every [`POLL_INTERVAL`]), up to
    /// `timeout`; `interrupted` is asked between polls. On time-out the barrier is
    /// abandoned for everyone, with a message naming who is missing.
    pub fn wait(
        &mut self,
        timeout: Duration,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<AgreedStart, BarrierError> {
        let deadline = Instant::now() + timeout;
        loop {
            let header = self.header(false)?;
            match header.state.as_str() {
                "started" => return self.agreed(&header),
                "abandoned" => return Err(self.abandoned(&header)),
                _ => {}
            }
            if interrupted() {
                return Err(BarrierError::Interrupted(self.spec.name.clone()));
            }
            if Instant::now() >= deadline {
                let timeout_s = timeout.as_secs_f64();
                let header = self.retry_transaction(|b| b.give_up(timeout_s))?;
                return match header.state.as_str() {
                    "started" => self.agreed(&header),
                    _ => Err(self.abandoned(&header)),
                };
            }
            std::thread::sleep(
                POLL_INTERVAL.min(deadline.saturating_duration_since(Instant::now())),
            );
        }
    }

    /// Reads the server's clock `count` times, each with the local instants around it.
    pub fn clock_samples(&mut self, count: usize) -> Result<Vec<ClockSample>, BarrierError> {
        let sql = format!("SELECT {}", self.now_us());
        let mut samples = Vec::with_capacity(count);
        for _ in 0..count {
            let sent = Instant::now();
            let rs = self.query_rows(&sql)?;
            let received = Instant::now();
            let server_us = parse_i64(rs.first().and_then(|r| r.first()).cloned().flatten())?;
            samples.push(ClockSample {
                sent,
                received,
                server_us,
            });
        }
        Ok(samples)
    }

    /// Marks this client's run as finished and closes the connection (which releases
    /// its lock).
    pub fn finish(mut self) -> Result<(), BarrierError> {
        let sql = format!(
            "UPDATE {BARRIER_TABLE} SET state = 'done' WHERE barrier = {} AND client = {}",
            self.quoted(&self.spec.name),
            self.quoted(&self.spec.client)
        );
        self.exec(&sql)?;
        self.conn.disconnect();
        Ok(())
    }

    fn dialect(&self) -> Dialect {
        match self.kind {
            DriverKind::Mysql => Dialect::Mysql,
            _ => Dialect::Standard,
        }
    }

    fn quoted(&self, s: &str) -> String {
        let mut out = String::new();
        push_quoted(&mut out, s, self.dialect());
        out
    }

    /// The server's current time in microseconds since the Unix epoch, as SQL. Both
    /// read the time when the expression is evaluated, not when the statement began.
    fn now_us(&self) -> &'static str {
        match self.kind {
            DriverKind::Mysql => "CAST(UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 AS SIGNED)",
            _ => "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)",
        }
    }

    fn exec(&mut self, sql: &str) -> Result<(), SqlError> {
        self.conn.query(sql).map(|_| ())
    }

    fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, SqlError> {
        let rs = self.conn.query(sql)?;
        Ok(rs
            .map(|rs| {
                (0..rs.nrows())
                    .map(|r| {
                        (0..rs.nfields)
                            .map(|c| rs.get_str(r, c))
                            .collect::<Vec<_>>()
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// MySQL: UTC for `UNIX_TIMESTAMP` (no daylight-saving ambiguity) and committed
    /// reads inside the transactions, which must see the other clients' arrivals.
    fn prepare_session(&mut self) -> Result<(), SqlError> {
        if self.kind == DriverKind::Mysql {
            self.exec("SET time_zone = '+00:00'")?;
            self.exec("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")?;
            let rows = self.query_rows("SELECT DATABASE()")?;
            self.scope = rows
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().next().flatten())
                .unwrap_or_default();
        }
        Ok(())
    }

    /// The session lock of `client`: a MySQL lock name, or PostgreSQL's two keys.
    fn lock_key(&self, client: &str) -> (String, i32, i32) {
        // FNV-1a: a stable 64-bit hash of the barrier and the client, short enough for
        // MySQL's 64-character lock names and splitting into PostgreSQL's two keys.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self
            .scope
            .bytes()
            .chain(std::iter::once(0))
            .chain(self.spec.name.bytes())
            .chain(std::iter::once(0))
            .chain(client.bytes())
        {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        (format!("bmk_barrier_{h:016x}"), (h >> 32) as i32, h as i32)
    }

    fn take_own_lock(&mut self) -> Result<bool, SqlError> {
        let (name, k1, k2) = self.lock_key(&self.spec.client);
        let sql = match self.kind {
            DriverKind::Mysql => format!("SELECT GET_LOCK('{name}', 0)"),
            _ => format!("SELECT CASE WHEN pg_try_advisory_lock({k1}, {k2}) THEN 1 ELSE 0 END"),
        };
        let rows = self.query_rows(&sql)?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .cloned()
            .flatten()
            .as_deref()
            == Some("1"))
    }

    /// Whether the client of each of `members` is alive (holds its session lock).
    fn alive(&mut self, members: &[Member]) -> Result<Vec<bool>, SqlError> {
        let mut out = Vec::with_capacity(members.len());
        for m in members {
            if m.client == self.spec.client {
                // Our own lock: held by us. A row of ours from before belongs to a
                // dead predecessor, which the caller handles.
                out.push(true);
                continue;
            }
            let (name, k1, k2) = self.lock_key(&m.client);
            let free = match self.kind {
                DriverKind::Mysql => {
                    let rows = self.query_rows(&format!("SELECT IS_FREE_LOCK('{name}')"))?;
                    rows.first()
                        .and_then(|r| r.first())
                        .cloned()
                        .flatten()
                        .as_deref()
                        == Some("1")
                }
                _ => {
                    let rows = self.query_rows(&format!(
                        "SELECT CASE WHEN pg_try_advisory_lock({k1}, {k2}) THEN 1 ELSE 0 END"
                    ))?;
                    let got = rows
                        .first()
                        .and_then(|r| r.first())
                        .cloned()
                        .flatten()
                        .as_deref()
                        == Some("1");
                    if got {
                        self.exec(&format!("SELECT pg_advisory_unlock({k1}, {k2})"))?;
                    }
                    got
                }
            };
            out.push(!free);
        }
        Ok(out)
    }

    /// Creates the table and the barrier's header row when missing (outside any
    /// transaction, so that the header row exists before anyone locks it).
    fn ensure_header(&mut self) -> Result<(), SqlError> {
        let create = format!(
            "CREATE TABLE IF NOT EXISTS {BARRIER_TABLE} (\
             barrier VARCHAR({MAX_NAME}) NOT NULL, \
             client VARCHAR({MAX_CLIENT}) NOT NULL, \
             clients INTEGER NOT NULL, \
             joined_us BIGINT NOT NULL, \
             start_us BIGINT NULL, \
             state VARCHAR(16) NOT NULL, \
             note TEXT NULL, \
             PRIMARY KEY (barrier, client))"
        );
        if let Err(e) = self.exec(&create) {
            // Two PostgreSQL sessions creating the table at once: one of them fails on
            // the catalog's unique index; by the time it has, the table exists.
            std::thread::sleep(Duration::from_millis(50));
            self.exec(&create).map_err(|_| e)?;
        }
        let values = format!(
            "({}, '', {}, {}, NULL, 'gathering', NULL)",
            self.quoted(&self.spec.name),
            self.spec.clients,
            self.now_us()
        );
        let columns = "(barrier, client, clients, joined_us, start_us, state, note)";
        let insert = match self.kind {
            DriverKind::Mysql => {
                format!("INSERT IGNORE INTO {BARRIER_TABLE} {columns} VALUES {values}")
            }
            _ => format!(
                "INSERT INTO {BARRIER_TABLE} {columns} VALUES {values} ON CONFLICT DO NOTHING"
            ),
        };
        self.exec(&insert)
    }

    /// The header row; `lock`: for update (inside a transaction).
    fn header(&mut self, lock: bool) -> Result<Header, BarrierError> {
        let sql = format!(
            "SELECT state, clients, start_us, note, {} FROM {BARRIER_TABLE} \
             WHERE barrier = {} AND client = ''{}",
            self.now_us(),
            self.quoted(&self.spec.name),
            if lock { " FOR UPDATE" } else { "" }
        );
        let rows = self.query_rows(&sql)?;
        let Some(row) = rows.into_iter().next() else {
            // Someone ran cleanup meanwhile.
            return Err(BarrierError::Abandoned(format!(
                "barrier '{}' was removed while this client waited (cleanup?)",
                self.spec.name
            )));
        };
        let mut cells = row.into_iter();
        let mut next = || cells.next().flatten();
        Ok(Header {
            state: next().unwrap_or_default(),
            clients: next().and_then(|v| v.parse().ok()).unwrap_or(0),
            start_us: next().and_then(|v| v.parse().ok()),
            note: next(),
            now_us: parse_i64(next())?,
        })
    }

    fn members(&mut self) -> Result<Vec<Member>, SqlError> {
        let sql = format!(
            "SELECT client, state FROM {BARRIER_TABLE} WHERE barrier = {} AND client <> '' \
             ORDER BY joined_us, client",
            self.quoted(&self.spec.name)
        );
        Ok(self
            .query_rows(&sql)?
            .into_iter()
            .map(|r| {
                let mut cells = r.into_iter();
                Member {
                    client: cells.next().flatten().unwrap_or_default(),
                    state: cells.next().flatten().unwrap_or_default(),
                }
            })
            .collect())
    }

    /// Marks the registration of `client`, whose connection has closed, as left.
    fn mark_left(&mut self, client: &str) -> Result<(), SqlError> {
        let sql = format!(
            "UPDATE {BARRIER_TABLE} SET state = 'left' WHERE barrier = {} AND client = {}",
            self.quoted(&self.spec.name),
            self.quoted(client)
        );
        self.exec(&sql)
    }

    fn remove_member(&mut self, client: &str) -> Result<(), SqlError> {
        let sql = format!(
            "DELETE FROM {BARRIER_TABLE} WHERE barrier = {} AND client = {}",
            self.quoted(&self.spec.name),
            self.quoted(client)
        );
        self.exec(&sql)
    }

    /// Runs `body` in a transaction, again (up to a few times) when the server chose it
    /// as a deadlock victim or could not serialise it.
    fn retry_transaction<T>(
        &mut self,
        mut body: impl FnMut(&mut Barrier) -> Result<T, BarrierError>,
    ) -> Result<T, BarrierError> {
        let begin = match self.kind {
            DriverKind::Mysql => "START TRANSACTION",
            _ => "BEGIN",
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            self.exec(begin)?;
            let result = body(self);
            let result = match result {
                Ok(v) => self.exec("COMMIT").map(|_| v).map_err(BarrierError::from),
                Err(e) => Err(e),
            };
            match result {
                Ok(v) => return Ok(v),
                Err(e) => {
                    let _ = self.exec("ROLLBACK");
                    let retry = matches!(&e, BarrierError::Sql(s)
                        if matches!(s.errno, 1213 | 1205)
                            || matches!(s.sqlstate.as_str(), "40P01" | "40001"));
                    if !retry || attempt >= 5 {
                        return Err(e);
                    }
                    std::thread::sleep(Duration::from_millis(10 * attempt));
                }
            }
        }
    }

    /// Joins the round in progress, or begins a new one; inside a transaction.
    fn register(&mut self) -> Result<(), BarrierError> {
        let header = self.header(true)?;
        let members = self.members()?;
        let alive = self.alive(&members)?;
        let any_alive = members
            .iter()
            .zip(&alive)
            .any(|(m, &a)| a && m.client != self.spec.client);
        let name = self.quoted(&self.spec.name);
        match header.state.as_str() {
            "started" if any_alive => {
                let clients: Vec<&str> = members
                    .iter()
                    .filter(|m| !m.left())
                    .map(|m| m.client.as_str())
                    .collect();
                return Err(BarrierError::Late {
                    name: self.spec.name.clone(),
                    when: late_when(header.now_us, header.start_us.unwrap_or(header.now_us)),
                    clients: format!("{} clients ({})", clients.len(), list(&clients)),
                    client: self.spec.client.clone(),
                });
            }
            "abandoned" if any_alive => return Err(self.abandoned(&header)),
            "gathering" => {}
            _ => {
                // The previous round is over (nobody of it is alive): a new one.
                self.exec(&format!(
                    "DELETE FROM {BARRIER_TABLE} WHERE barrier = {name} AND client <> ''"
                ))?;
                self.exec(&format!(
                    "UPDATE {BARRIER_TABLE} SET state = 'gathering', clients = {}, \
                     start_us = NULL, note = NULL, joined_us = {} \
                     WHERE barrier = {name} AND client = ''",
                    self.spec.clients,
                    self.now_us()
                ))?;
                return self.join_gathering(self.spec.clients, Vec::new());
            }
        }
        // Registrations whose client has died no longer count, but are kept as `left`
        // so that a time-out says who registered and went away; a row of our own
        // identity, left by a predecessor that died (we hold its lock now), goes.
        let mut present = Vec::new();
        for (m, a) in members.into_iter().zip(alive) {
            if m.client == self.spec.client {
                self.remove_member(&m.client)?;
            } else if a {
                present.push(m.client);
            } else if !m.left() {
                self.mark_left(&m.client)?;
            }
        }
        if present.is_empty() && header.clients != self.spec.clients {
            // Nobody alive waits: whoever opened the round for another count is gone,
            // and so is that round.
            self.exec(&format!(
                "DELETE FROM {BARRIER_TABLE} WHERE barrier = {name} AND client <> ''"
            ))?;
            self.exec(&format!(
                "UPDATE {BARRIER_TABLE} SET clients = {} WHERE barrier = {name} AND client = ''",
                self.spec.clients
            ))?;
            return self.join_gathering(self.spec.clients, present);
        }
        self.join_gathering(header.clients, present)
    }

    /// Adds this client to a gathering round that waits for `expected` clients, of
    /// which `present` (alive) are there; starts the run when this one completes it.
    fn join_gathering(&mut self, expected: u32, present: Vec<String>) -> Result<(), BarrierError> {
        if expected != self.spec.clients {
            return Err(BarrierError::ClientsMismatch {
                name: self.spec.name.clone(),
                expected,
                given: self.spec.clients,
            });
        }
        let name = self.quoted(&self.spec.name);
        self.exec(&format!(
            "INSERT INTO {BARRIER_TABLE} (barrier, client, clients, joined_us, start_us, state, note) \
             VALUES ({name}, {}, {}, {}, NULL, 'waiting', NULL)",
            self.quoted(&self.spec.client),
            self.spec.clients,
            self.now_us()
        ))?;
        if present.len() as u32 + 1 >= expected {
            self.exec(&format!(
                "UPDATE {BARRIER_TABLE} SET state = 'started', start_us = {} + {} \
                 WHERE barrier = {name} AND client = ''",
                self.now_us(),
                START_LEAD.as_micros()
            ))?;
        }
        Ok(())
    }

    /// After this client's time-out, inside a transaction: unless the run started
    /// meanwhile, marks the barrier abandoned with a message naming who is missing.
    fn give_up(&mut self, timeout_s: f64) -> Result<Header, BarrierError> {
        let header = self.header(true)?;
        if header.state != "gathering" {
            return Ok(header);
        }
        let members = self.members()?;
        let alive = self.alive(&members)?;
        let mut present = Vec::new();
        let mut died = Vec::new();
        for (m, a) in members.iter().zip(alive) {
            if a {
                present.push(m.client.as_str());
            } else {
                died.push(m.client.as_str());
            }
        }
        let mut missing = Vec::new();
        // Identities of an Indexed Job say who never came; others only how many.
        let indexed: Option<Vec<u32>> = members
            .iter()
            .map(|m| m.client.strip_prefix("index-").and_then(|i| i.parse().ok()))
            .collect();
        match indexed {
            Some(indices) => {
                for i in 0..header.clients {
                    let id = format!("index-{i}");
                    if !indices.contains(&i) {
                        missing.push(format!("{id} (never joined)"));
                    }
                }
            }
            None => {
                let never = (header.clients as usize).saturating_sub(members.len());
                if never > 0 {
                    missing.push(format!("{never} client(s) that never joined"));
                }
            }
        }
        for d in &died {
            missing.push(format!(
                "{d} (registered, then left before the start: its connection closed)"
            ));
        }
        let missing: Vec<&str> = missing.iter().map(String::as_str).collect();
        let mut note = format!(
            "barrier '{}' timed out after {} s with {} of {} clients: missing {}",
            self.spec.name,
            trim_secs(timeout_s),
            present.len(),
            header.clients,
            list(&missing)
        );
        if !present.is_empty() {
            let _ = write!(note, "; present {}", list(&present));
        }
        let name = self.quoted(&self.spec.name);
        let quoted_note = self.quoted(&note);
        self.exec(&format!(
            "UPDATE {BARRIER_TABLE} SET state = 'abandoned', note = {quoted_note} \
             WHERE barrier = {name} AND client = ''"
        ))?;
        Ok(Header {
            state: "abandoned".into(),
            note: Some(note),
            ..header
        })
    }

    fn abandoned(&self, header: &Header) -> BarrierError {
        BarrierError::Abandoned(
            header
                .note
                .clone()
                .unwrap_or_else(|| format!("barrier '{}' was abandoned", self.spec.name)),
        )
    }

    /// The agreed start, with the server's clock read right after it was seen.
    fn agreed(&mut self, header: &Header) -> Result<AgreedStart, BarrierError> {
        let start_us = header.start_us.unwrap_or(header.now_us);
        let samples = self.clock_samples(CLOCK_SAMPLES)?;
        let clients = self
            .members()?
            .into_iter()
            .filter(|m| !m.left())
            .map(|m| m.client)
            .collect();
        Ok(AgreedStart {
            start_us,
            samples,
            clients,
        })
    }
}

/// Readings of the server's clock taken to place the start on the local clock: the
/// one with the shortest round trip bounds the error best.
const CLOCK_SAMPLES: usize = 5;

/// Drops the barrier table, when it exists (`cleanup`).
pub fn drop_barrier_table(conn: &mut dyn Connection) -> Result<(), SqlError> {
    conn.query(&format!("DROP TABLE IF EXISTS {BARRIER_TABLE}"))
        .map(|_| ())
}

fn parse_i64(cell: Option<String>) -> Result<i64, SqlError> {
    let text = cell.unwrap_or_default();
    // PostgreSQL's EXTRACT is numeric; a cast may still print a fraction elsewhere.
    let whole = text.split('.').next().unwrap_or("");
    whole.trim().parse().map_err(|_| {
        SqlError::new(
            DriverKind::Mysql,
            crate::SqlOp::Query,
            0,
            "",
            format!("the server's clock read as '{text}', not a number"),
        )
    })
}

/// `a, b, c`, or the first [`LISTED`] and "and N more".
fn list(names: &[&str]) -> String {
    let mut out = names
        .iter()
        .take(LISTED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > LISTED {
        let _ = write!(out, " and {} more", names.len() - LISTED);
    }
    out
}

/// When the barrier's run starts, for a late client: `started 2.5 s ago`, or, while the
/// start is still ahead (the barrier is complete, its lead not yet over), `starts in
/// 0.7 s`. Never a negative time.
pub fn late_when(now_us: i64, start_us: i64) -> String {
    if now_us >= start_us {
        format!("started {:.1} s ago", (now_us - start_us) as f64 / 1e6)
    } else {
        format!("starts in {:.1} s", (start_us - now_us) as f64 / 1e6)
    }
}

fn trim_secs(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_come_from_the_job_index_or_host_and_pid() {
        assert_eq!(client_identity(Some("3"), "h", 7), "index-3");
        assert_eq!(client_identity(Some(" "), "db-1", 7), "db-1:7");
        assert_eq!(client_identity(None, "db 1'x", 7), "db_1_x:7");
    }

    #[test]
    fn names_outside_the_protocol_s_characters_are_refused() {
        assert!(check_name("name", "run-1.a_b:c@d", MAX_NAME).is_ok());
        for bad in ["", "a b", "a'b", &"x".repeat(65)] {
            let e = check_name("name", bad, MAX_NAME).unwrap_err();
            assert!(e.to_string().starts_with("invalid barrier name"), "{e}");
        }
    }

    #[test]
    fn a_late_client_is_told_a_time_that_is_never_negative() {
        let start = 1_000_000_000_000;
        assert_eq!(late_when(start + 2_500_000, start), "started 2.5 s ago");
        assert_eq!(late_when(start, start), "started 0.0 s ago");
        // Complete 0.3 s ago: its start is 0.7 s ahead (the lead is 1 s).
        assert_eq!(late_when(start - 700_000, start), "starts in 0.7 s");
        let e = BarrierError::Late {
            name: "b".into(),
            when: late_when(start - 1_000_000, start),
            clients: "2 clients (index-0, index-1)".into(),
            client: "index-2".into(),
        };
        assert_eq!(
            e.to_string(),
            "barrier 'b' starts in 1.0 s with 2 clients (index-0, index-1); client 'index-2' arrived late and does not join"
        );
    }

    #[test]
    fn long_lists_are_cut() {
        let names: Vec<String> = (0..20).map(|i| format!("index-{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let l = list(&refs);
        assert!(l.ends_with("index-15 and 4 more"), "{l}");
    }
}
