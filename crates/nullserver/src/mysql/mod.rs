//! The MySQL side of the null server: one [`MysqlSession`] per connection turns each
//! request packet into its answer. The connection phase is in [`auth`], packet framing
//! in [`framing`], prepared statements in [`prepared`] and the encoding of answers in
//! [`results`]; what a statement answers with is decided by [`crate::statements`].

pub mod auth;
pub mod framing;
pub mod prepared;
pub mod results;

use std::sync::Arc;

use crate::flow::{Flow, ProtocolError};
use crate::statements::{analyse, split, Context, Dialect, Extent, Statement, Verb};
use auth::{Next, Plugin, STATUS_AUTOCOMMIT};
use framing::{next_packet, Writer, HEADER, MAX_PAYLOAD};
use prepared::Registry;
use results::{STATUS_IN_TRANS, STATUS_MORE_RESULTS};

const COM_QUIT: u8 = 0x01;
const COM_INIT_DB: u8 = 0x02;
const COM_QUERY: u8 = 0x03;
const COM_FIELD_LIST: u8 = 0x04;
const COM_STATISTICS: u8 = 0x09;
const COM_PING: u8 = 0x0e;
const COM_CHANGE_USER: u8 = 0x11;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_STMT_SEND_LONG_DATA: u8 = 0x18;
const COM_STMT_CLOSE: u8 = 0x19;
const COM_STMT_RESET: u8 = 0x1a;
const COM_SET_OPTION: u8 = 0x1b;
const COM_RESET_CONNECTION: u8 = 0x1f;

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Greeted; the handshake response comes next.
    Greeted,
    /// Switched the client to `mysql_native_password`; its answer comes next.
    Switched,
    /// Logged in: commands.
    Command,
}

/// The protocol state of one MySQL connection.
#[derive(Debug)]
pub struct MysqlSession {
    phase: Phase,
    plugin: Plugin,
    scramble: [u8; 20],
    connection_id: u32,
    version: Arc<str>,
    user: String,
    database: String,
    in_trans: bool,
    stmts: Registry,
}

impl MysqlSession {
    /// A new connection, greeted with `plugin` and server version `version`.
    pub fn new(plugin: Plugin, version: Arc<str>, connection_id: u32) -> MysqlSession {
        MysqlSession {
            phase: Phase::Greeted,
            plugin,
            scramble: auth::scramble(connection_id),
            connection_id,
            version,
            user: String::new(),
            database: String::new(),
            in_trans: false,
            stmts: Registry::default(),
        }
    }

    /// Appends the greeting.
    pub fn greet(&mut self, out: &mut Vec<u8>) {
        auth::greeting(
            out,
            &self.version,
            self.connection_id,
            &self.scramble,
            self.plugin,
        );
    }

    /// Bytes of the next complete request at the start of `input`, if one is there.
    pub fn next_request(&self, input: &[u8]) -> Result<Option<usize>, ProtocolError> {
        match next_packet(input) {
            Some((_, len)) if len >= MAX_PAYLOAD => Err(ProtocolError::TooLarge),
            Some((total, _)) => Ok(Some(total)),
            None if input.len() >= HEADER
                && (usize::from(input[0])
                    | usize::from(input[1]) << 8
                    | usize::from(input[2]) << 16)
                    >= MAX_PAYLOAD =>
            {
                Err(ProtocolError::TooLarge)
            }
            None => Ok(None),
        }
    }

    /// True once logged in: every request is then a command (a query, for the faults).
    pub fn logged_in(&self) -> bool {
        self.phase == Phase::Command
    }

    fn context(&self) -> Context<'_> {
        Context {
            version: &self.version,
            database: &self.database,
            user: &self.user,
            connection_id: self.connection_id,
            dialect: Dialect::Mysql,
        }
    }

    fn status(&self) -> u16 {
        STATUS_AUTOCOMMIT | if self.in_trans { STATUS_IN_TRANS } else { 0 }
    }

    /// Appends the answer to one request packet (header included).
    pub fn answer(&mut self, req: &[u8], out: &mut Vec<u8>) -> Flow {
        let seq = req[3];
        let payload = &req[HEADER..];
        match self.phase {
            Phase::Greeted => match auth::parse_response(payload) {
                Ok(r) => {
                    let next = auth::accept(out, seq, &r, self.plugin, &self.scramble);
                    self.user = r.user;
                    self.database = r.database;
                    self.phase = match next {
                        Next::LoggedIn => Phase::Command,
                        Next::Switched => Phase::Switched,
                    };
                    Flow::Continue
                }
                Err(e) => {
                    let mut w = Writer::new(out, seq.wrapping_add(1));
                    results::err(&mut w, 1043, "08S01", &format!("Bad handshake: {e}"));
                    Flow::Close
                }
            },
            Phase::Switched => {
                auth::accept_switched(out, seq);
                self.phase = Phase::Command;
                Flow::Continue
            }
            Phase::Command => self.command(payload, out),
        }
    }

    fn command(&mut self, payload: &[u8], out: &mut Vec<u8>) -> Flow {
        let mut w = Writer::new(out, 1);
        let Some((&cmd, body)) = payload.split_first() else {
            results::err(&mut w, 1047, "08S01", "Unknown command");
            return Flow::Continue;
        };
        match cmd {
            COM_QUIT => return Flow::Close,
            COM_QUERY => self.query(&String::from_utf8_lossy(body), &mut w),
            COM_STMT_EXECUTE => self.execute(body, &mut w),
            COM_STMT_PREPARE => self.prepare(&String::from_utf8_lossy(body), &mut w),
            COM_STMT_CLOSE => {
                if let Some(id) = body.get(..4) {
                    self.stmts
                        .remove(u32::from_le_bytes(id.try_into().expect("4 bytes")));
                }
            }
            COM_STMT_SEND_LONG_DATA => {}
            COM_INIT_DB => {
                self.database = String::from_utf8_lossy(body).into_owned();
                results::ok(&mut w, 0, self.status());
            }
            COM_PING | COM_STMT_RESET | COM_CHANGE_USER => results::ok(&mut w, 0, self.status()),
            COM_RESET_CONNECTION => {
                self.stmts.clear();
                self.in_trans = false;
                results::ok(&mut w, 0, self.status());
            }
            COM_SET_OPTION | COM_FIELD_LIST => results::eof(&mut w, self.status()),
            COM_STATISTICS => {
                w.packet(|b| b.extend_from_slice(b"Uptime: 1  Threads: 1  Questions: 1"))
            }
            _ => results::err(&mut w, 1047, "08S01", "Unknown command"),
        }
        Flow::Continue
    }

    /// Tracks BEGIN/COMMIT for the status flags.
    fn track(&mut self, verb: Verb) {
        match verb {
            Verb::Begin => self.in_trans = true,
            Verb::Commit | Verb::Rollback => self.in_trans = false,
            _ => {}
        }
    }

    fn query(&mut self, sql: &str, w: &mut Writer<'_>) {
        let parts = split(sql);
        let last = parts.len() - 1;
        for (i, part) in parts.into_iter().enumerate() {
            let stmt = analyse(part, &self.context());
            if stmt.empty {
                results::err(w, 1065, "42000", "Query was empty");
                return;
            }
            self.track(stmt.verb);
            let more = if i < last { STATUS_MORE_RESULTS } else { 0 };
            let extent = stmt.extent(&|_| None);
            respond(w, &stmt, &extent, false, self.status() | more);
        }
    }

    fn prepare(&mut self, sql: &str, w: &mut Writer<'_>) {
        let stmt = Arc::new(analyse(sql, &self.context()));
        if stmt.empty {
            results::err(w, 1065, "42000", "Query was empty");
            return;
        }
        let id = self.stmts.add(stmt.clone());
        w.packet(|b| {
            b.push(0);
            b.extend_from_slice(&id.to_le_bytes());
            b.extend_from_slice(&(stmt.columns.len() as u16).to_le_bytes());
            b.extend_from_slice(&(stmt.params as u16).to_le_bytes());
            b.push(0);
            b.extend_from_slice(&0u16.to_le_bytes());
        });
        if stmt.params > 0 {
            for _ in 0..stmt.params {
                results::param_def(w);
            }
            results::eof(w, self.status());
        }
        if stmt.has_rows() {
            for c in &stmt.columns {
                results::column_def(w, c);
            }
            results::eof(w, self.status());
        }
    }

    fn execute(&mut self, body: &[u8], w: &mut Writer<'_>) {
        let Some(id) = body.get(..4) else {
            results::err(w, 1835, "HY000", "Malformed communication packet");
            return;
        };
        let id = u32::from_le_bytes(id.try_into().expect("4 bytes"));
        let Some(p) = self.stmts.get_mut(id) else {
            results::err(
                w,
                1243,
                "HY000",
                &format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"),
            );
            return;
        };
        let values = match prepared::decode_params(p, body.get(9..).unwrap_or_default()) {
            Ok(v) => v,
            Err(e) => {
                results::err(w, 1835, "HY000", &e.to_string());
                return;
            }
        };
        let stmt = p.stmt.clone();
        self.track(stmt.verb);
        let extent = stmt.extent(&|i| values.get(i).copied().flatten());
        respond(w, &stmt, &extent, true, self.status());
    }

    /// Appends an answer that no client can parse in place of the next one: a packet
    /// that starts as an OK packet but ends inside its affected-rows field.
    pub fn malformed(&mut self, out: &mut Vec<u8>) {
        Writer::new(out, 1).packet(|b| b.extend_from_slice(&[0x00, 0xfc]));
    }
}

/// Appends a statement's answer: OK with affected rows, or a result set.
fn respond(w: &mut Writer<'_>, stmt: &Statement, e: &Extent, binary: bool, status: u16) {
    if !stmt.has_rows() {
        let affected = match stmt.verb {
            Verb::Insert | Verb::Update | Verb::Delete => e.rows,
            _ => 0,
        };
        results::ok(w, affected, status);
    } else if binary {
        results::binary_result(w, &stmt.columns, e, status);
    } else {
        results::text_result(w, &stmt.columns, e, status);
    }
}
