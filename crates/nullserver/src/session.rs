//! A connection's protocol session, whichever protocol its listener speaks: the one
//! interface the event loop drives (split the input into requests, answer each one,
//! tell which requests are queries for the faults).

use crate::flow::{Flow, ProtocolError};
use crate::mysql::MysqlSession;
use crate::pgsql::PgSession;

/// The session of one connection.
#[derive(Debug)]
pub enum Protocol {
    /// A MySQL connection.
    Mysql(MysqlSession),
    /// A PostgreSQL connection.
    Pgsql(PgSession),
}

impl Protocol {
    /// Appends what the server says first (MySQL's greeting; nothing on PostgreSQL).
    pub fn greet(&mut self, out: &mut Vec<u8>) {
        if let Protocol::Mysql(m) = self {
            m.greet(out);
        }
    }

    /// Bytes of the next complete request at the start of `input`, if one is there.
    pub fn next_request(&self, input: &[u8]) -> Result<Option<usize>, ProtocolError> {
        match self {
            Protocol::Mysql(m) => m.next_request(input),
            Protocol::Pgsql(p) => p.next_request(input),
        }
    }

    /// True when answering `req` completes a query (what the faults count): every
    /// MySQL command after log-in; a PostgreSQL `Query`, `Sync` or `Flush`.
    pub fn is_query(&self, req: &[u8]) -> bool {
        match self {
            Protocol::Mysql(m) => m.logged_in(),
            Protocol::Pgsql(p) => p.is_query(req),
        }
    }

    /// True once the client has logged in.
    pub fn logged_in(&self) -> bool {
        match self {
            Protocol::Mysql(m) => m.logged_in(),
            Protocol::Pgsql(p) => p.logged_in(),
        }
    }

    /// Appends the answer to request `req`.
    pub fn answer(&mut self, req: &[u8], out: &mut Vec<u8>) -> Flow {
        match self {
            Protocol::Mysql(m) => m.answer(req, out),
            Protocol::Pgsql(p) => p.answer(req, out),
        }
    }

    /// Appends a malformed answer (the fault `--malformed-after`).
    pub fn malformed(&mut self, out: &mut Vec<u8>) {
        match self {
            Protocol::Mysql(m) => m.malformed(out),
            Protocol::Pgsql(p) => p.malformed(out),
        }
    }
}
