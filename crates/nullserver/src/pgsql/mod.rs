//! The PostgreSQL side of the null server: one [`PgSession`] per connection turns each
//! message into its answer. Start-up and authentication are in [`auth`], framing in
//! [`framing`], the extended protocol's statements and portals in [`extended`], and the
//! encoding of answers in [`results`]; what a statement answers with is decided by
//! [`crate::statements`].

pub mod auth;
pub mod extended;
pub mod framing;
pub mod results;

use std::sync::Arc;

use crate::flow::{Flow, ProtocolError};
use crate::statements::{analyse, split, Context, Dialect, Statement, Verb};
use auth::{AuthMethod, Startup, Welcome};
use extended::{Objects, Prepared};
use framing::{message, next_message, next_startup, Reader};

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the start-up packet (or an SSL/GSS request before it).
    Startup,
    /// Asked for a password.
    Password,
    /// Ready for queries.
    Ready,
}

/// The protocol state of one PostgreSQL connection.
#[derive(Debug)]
pub struct PgSession {
    phase: Phase,
    method: AuthMethod,
    version: Arc<str>,
    pid: u32,
    user: String,
    database: String,
    application: String,
    /// Transaction status for `ReadyForQuery`: `I`, `T`, or `E` (failed).
    tx: u8,
    /// An extended-protocol message failed: skip the rest until `Sync`.
    skipping: bool,
    objects: Objects,
}

impl PgSession {
    /// A new connection that authenticates with `method`.
    pub fn new(method: AuthMethod, version: Arc<str>, pid: u32) -> PgSession {
        PgSession {
            phase: Phase::Startup,
            method,
            version,
            pid,
            user: String::new(),
            database: String::new(),
            application: String::new(),
            tx: b'I',
            skipping: false,
            objects: Objects::default(),
        }
    }

    /// Bytes of the next complete message at the start of `input`, if one is there.
    pub fn next_request(&self, input: &[u8]) -> Result<Option<usize>, ProtocolError> {
        if self.phase == Phase::Startup {
            next_startup(input)
        } else {
            next_message(input)
        }
    }

    /// True once the session is ready for queries.
    pub fn logged_in(&self) -> bool {
        self.phase == Phase::Ready
    }

    /// True when answering `req` completes a query: a simple `Query`, or the `Sync` (or
    /// `Flush`) that ends an extended-protocol batch.
    pub fn is_query(&self, req: &[u8]) -> bool {
        self.phase == Phase::Ready && matches!(req[0], b'Q' | b'S' | b'H')
    }

    fn context(&self) -> Context<'_> {
        Context {
            version: &self.version,
            database: &self.database,
            user: &self.user,
            connection_id: self.pid,
            dialect: Dialect::Pgsql,
        }
    }

    fn welcome(&mut self, out: &mut Vec<u8>) {
        auth::welcome(
            out,
            &Welcome {
                version: &self.version,
                user: &self.user,
                application: &self.application,
                pid: self.pid,
            },
        );
        self.phase = Phase::Ready;
    }

    /// Appends the answer to one message.
    pub fn answer(&mut self, req: &[u8], out: &mut Vec<u8>) -> Flow {
        match self.phase {
            Phase::Startup => match auth::parse_startup(&req[4..]) {
                Startup::Ssl | Startup::Gss => {
                    out.push(b'N');
                    Flow::Continue
                }
                Startup::Cancel => Flow::Close,
                Startup::Unsupported(v) => {
                    results::error(
                        out,
                        "FATAL",
                        "0A000",
                        &format!("unsupported frontend protocol {}.{}", v >> 16, v & 0xffff),
                    );
                    Flow::Close
                }
                Startup::Start {
                    user,
                    database,
                    application,
                } => {
                    self.user = user;
                    self.database = database;
                    self.application = application;
                    if auth::challenge(out, self.method, self.pid.to_be_bytes()) {
                        self.phase = Phase::Password;
                    } else {
                        self.welcome(out);
                    }
                    Flow::Continue
                }
            },
            Phase::Password if req[0] == b'p' => {
                self.welcome(out);
                Flow::Continue
            }
            Phase::Password => {
                results::error(out, "FATAL", "08P01", "expected password response");
                Flow::Close
            }
            Phase::Ready => self.message(req[0], &req[5..], out),
        }
    }

    fn track(&mut self, verb: Verb) {
        match verb {
            Verb::Begin => self.tx = b'T',
            Verb::Commit | Verb::Rollback => {
                self.tx = b'I';
                self.objects.end_of_batch();
            }
            _ => {}
        }
    }

    fn fail(&mut self, out: &mut Vec<u8>, state: &str, text: &str) {
        results::error(out, "ERROR", state, text);
        self.skipping = true;
        if self.tx == b'T' {
            self.tx = b'E';
        }
    }

    fn message(&mut self, tag: u8, body: &[u8], out: &mut Vec<u8>) -> Flow {
        if self.skipping && !matches!(tag, b'S' | b'X' | b'Q') {
            return Flow::Continue;
        }
        match tag {
            b'Q' => {
                self.skipping = false;
                let sql =
                    String::from_utf8_lossy(Reader::new(body).cstr().unwrap_or(body)).into_owned();
                self.simple_query(&sql, out);
                results::ready(out, self.tx);
            }
            b'P' => {
                let mut r = Reader::new(body);
                let (Some(name), Some(sql), Some(n)) = (r.cstr(), r.cstr(), r.i16()) else {
                    self.fail(out, "08P01", "invalid Parse message");
                    return Flow::Continue;
                };
                let declared: Vec<u32> = (0..n.max(0))
                    .map_while(|_| r.i32().map(|t| t as u32))
                    .collect();
                let stmt = analyse(&String::from_utf8_lossy(sql), &self.context());
                self.objects
                    .add_statement(name, Prepared { stmt, declared });
                message(out, b'1', |_| {});
            }
            b'B' => match self.objects.bind(body) {
                Ok(()) => message(out, b'2', |_| {}),
                Err(e) => {
                    let state = match e {
                        extended::BindError::NoStatement(_) => "26000",
                        _ => "08P01",
                    };
                    self.fail(out, state, &e.to_string());
                }
            },
            b'D' => self.describe(body, out),
            b'E' => self.execute(body, out),
            b'C' => {
                let mut r = Reader::new(body);
                if let (Some(kind), Some(name)) = (r.bytes(1), r.cstr()) {
                    self.objects.close(kind[0], name);
                }
                message(out, b'3', |_| {});
            }
            b'S' => {
                self.skipping = false;
                if self.tx == b'I' {
                    self.objects.end_of_batch();
                }
                results::ready(out, self.tx);
            }
            b'H' => {}
            b'X' => return Flow::Close,
            _ => {
                results::error(
                    out,
                    "FATAL",
                    "08P01",
                    &format!("invalid frontend message type {}", tag as char),
                );
                return Flow::Close;
            }
        }
        Flow::Continue
    }

    fn describe(&mut self, body: &[u8], out: &mut Vec<u8>) {
        let mut r = Reader::new(body);
        let (Some(kind), Some(name)) = (r.bytes(1), r.cstr()) else {
            self.fail(out, "08P01", "invalid Describe message");
            return;
        };
        if kind[0] == b'S' {
            let Some(p) = self.objects.statement(name) else {
                let text = format!(
                    "prepared statement \"{}\" does not exist",
                    String::from_utf8_lossy(name)
                );
                self.fail(out, "26000", &text);
                return;
            };
            results::parameter_description(out, &p.stmt, &p.declared);
            describe_rows(out, &p.stmt, &[]);
        } else {
            let Some(p) = self.objects.portal(name) else {
                let text = format!(
                    "portal \"{}\" does not exist",
                    String::from_utf8_lossy(name)
                );
                self.fail(out, "34000", &text);
                return;
            };
            describe_rows(out, &p.prepared.stmt, &p.formats);
        }
    }

    fn execute(&mut self, body: &[u8], out: &mut Vec<u8>) {
        let name = Reader::new(body).cstr().unwrap_or_default();
        let Some(p) = self.objects.portal(name) else {
            let text = format!(
                "portal \"{}\" does not exist",
                String::from_utf8_lossy(name)
            );
            self.fail(out, "34000", &text);
            return;
        };
        let stmt = &p.prepared.stmt;
        let verb = stmt.verb;
        if stmt.empty {
            message(out, b'I', |_| {});
        } else {
            if stmt.has_rows() {
                results::data_rows(out, &stmt.columns, &p.extent, &p.formats);
            }
            results::command_complete(out, stmt, &p.extent);
        }
        self.track(verb);
    }

    fn simple_query(&mut self, sql: &str, out: &mut Vec<u8>) {
        for part in split(sql) {
            let stmt = analyse(part, &self.context());
            if stmt.empty {
                message(out, b'I', |_| {});
                continue;
            }
            let extent = stmt.extent(&|_| None);
            if stmt.has_rows() {
                results::row_description(out, &stmt.columns, &[]);
                results::data_rows(out, &stmt.columns, &extent, &[]);
            }
            results::command_complete(out, &stmt, &extent);
            self.track(stmt.verb);
        }
    }

    /// Appends an answer that no client can parse in place of the next one: a message
    /// of a type that does not exist.
    pub fn malformed(&mut self, out: &mut Vec<u8>) {
        message(out, b'!', |b| {
            b.extend_from_slice(b"bmk null server: malformed on purpose")
        });
    }
}

/// Appends the `RowDescription` of a statement, or `NoData`.
fn describe_rows(out: &mut Vec<u8>, stmt: &Statement, formats: &[i16]) {
    if stmt.has_rows() {
        results::row_description(out, &stmt.columns, formats);
    } else {
        message(out, b'n', |_| {});
    }
}
