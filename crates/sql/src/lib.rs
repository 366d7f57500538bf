//! bmk's SQL driver layer.
//!
//! This crate owns:
//! * the three drivers — MySQL/MariaDB ([`mysql`](crate::DriverKind::Mysql) via the
//!   pure-Rust `mysql` crate), PostgreSQL (the `postgres` crate) and embedded SQLite
//!   (`rusqlite`, bundled) — behind one [`Connection`] trait: connect, query, prepare,
//!   execute with bound [`Value`]s, result sets as text, bulk insert, reconnect;
//! * the database options of spec 1 §3 ([`option_specs`], [`DriverConfig`]);
//! * statement classification into read/write/other ([`classify`]);
//! * the start barrier that several processes pass together, held in a table of the
//!   target database ([`Barrier`]);
//! * error classification into ignorable (restart the event, maybe after a reconnect)
//!   and fatal ([`SqlError`], [`SqlErrorKind`]) and the exact FATAL message lines.
//!
//! It must not: know about Lua, use the engine beyond [`bmk_engine::coop::wait_readable`]
//! and the names of its counters, print reports, or print anything except
//! the `--db-debug`/`--mysql-debug` query trace on stderr. Passwords are never printed
//! or logged (the `Debug` impls of the option structs hide them; error messages never
//! contain them).
//!
//! # Error semantics
//! Every failing call returns an [`SqlError`]; the caller counts it where
//! [`SqlError::counter`] says (fatal errors too, as sysbench does), prints
//! [`SqlError::fatal_lines`] and raises its `Display` text for fatal errors, and
//! restarts the event for ignorable ones.
//! * mysql: `errno` is the server error number (client errors 2002/2003 connect,
//!   2006/2013 lost connection, 2026 TLS). Ignorable when listed in
//!   `--mysql-ignore-errors` (or `all`). A listed lost-connection error (2013, 2006,
//!   2055, 2011, and MariaDB's 1053/1927, 4031) reconnects at once; while the server
//!   stays down every call fails ignorably (after a 100 ms pause) until a reconnect
//!   succeeds, which is reported once as `Ignorable { reconnected: true }`.
//! * pgsql: `errno` is 0 and `sqlstate` carries the code; `--pgsql-ignore-errors` holds
//!   SQLSTATEs or 2-character classes. A lost connection (closed socket, or a FATAL
//!   server error such as 57P01) reconnects when its SQLSTATE, 08006 or class 08 is
//!   listed. An ignorable error inside a transaction sends `ROLLBACK` so the restarted
//!   event can `BEGIN` again.
//! * sqlite: `errno` is the extended result code; `--sqlite-ignore-errors` matches the
//!   primary code (names like `busy`, `locked`, or numbers). Ignorable errors roll back
//!   an open transaction.
//!
//! # Hot path
//! Callers that run many statements should use [`Connection::execute_into`] with one
//! [`ResultSet`] kept per connection or statement: its buffers and column names are
//! reused, so the steady state allocates nothing. On the MySQL driver, server-side
//! prepared executes and text queries on plain sockets (no TLS, no compression) bypass
//! the `mysql` crate's per-row machinery with a small hand-written protocol path on the
//! same socket (see `mysql_fast.rs`; `BMK_MYSQL_FASTPATH=0` in the environment turns it
//! off for comparison); everything else goes through the crate.
//!
//! Prepared statements keep their SQL: after a reconnect they are re-prepared on their
//! next execution. `--db-ps-mode=disable` (and statements MySQL cannot prepare) are
//! emulated client-side with quoting per server dialect ([`Template`]).

#![deny(missing_docs)]

mod barrier;
mod bulk;
mod classify;
mod config;
mod deadline;
mod dryrun;
mod emulate;
mod error;
mod insert_rows;
mod mysql;
mod mysql_fast;
mod pgsql;
mod resultset;
mod sqlite;
mod trace;
mod value;

pub use barrier::{
    client_identity, drop_barrier_table, AgreedStart, Barrier, BarrierError, BarrierSpec,
    ClockSample, BARRIER_TABLE, POLL_INTERVAL, START_LEAD,
};
pub use bulk::{BulkBuffer, BULK_MAX_BYTES};
pub use classify::{classify, QueryKind};
pub use config::{
    option_specs, parse_bool, CommonOptions, DriverConfig, DriverKind, IgnoreList, MysqlOptions,
    MysqlSslMode, OptKind, OptionSpec, PgSslMode, PgsqlOptions, PsMode, SqliteOptions,
};
pub use emulate::{push_literal, push_quoted, Dialect, Template};
pub use error::{Endpoint, SqlError, SqlErrorKind, SqlOp};
pub use insert_rows::RowSource;
pub use resultset::ResultSet;
pub use value::{SqlType, Value};

/// Handle of a prepared statement within one [`Connection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StatementId(pub u32);

/// One database connection. Not shared between threads (`Send` only).
///
/// Every method that talks to the server returns an [`SqlError`] whose
/// [`kind`](SqlError::kind) says whether the caller may restart the event
/// ([`SqlErrorKind::Ignorable`]) or must abort ([`SqlErrorKind::Fatal`]).
pub trait Connection: Send {
    /// Run a text query. `Ok(None)` for statements without a result set. When the text
    /// holds several statements (MySQL, PostgreSQL), the first result is returned and the
    /// others are available through [`more_results`](Connection::more_results) /
    /// [`next_result`](Connection::next_result).
    fn query(&mut self, sql: &str) -> Result<Option<ResultSet>, SqlError>;

    /// Run a text query like [`query`](Connection::query), writing the first result set
    /// into the caller-owned `out` (emptied first, buffers reused). Returns `Ok(true)`
    /// when the first statement produced a result set (in `out`), `Ok(false)` otherwise
    /// (`out` empty). On error `out` is left empty. Further result sets are available
    /// through [`more_results`](Connection::more_results) as after `query`.
    fn query_into(&mut self, sql: &str, out: &mut ResultSet) -> Result<bool, SqlError> {
        out.clear();
        match self.query(sql)? {
            Some(rs) => {
                *out = rs;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Prepare a statement with MySQL-style `?` placeholders (for every driver). With
    /// [`PsMode::Disable`] the statement is emulated client-side.
    fn prepare(&mut self, sql: &str) -> Result<StatementId, SqlError>;

    /// Execute a prepared statement with one value per placeholder. The default runs
    /// [`execute_into`](Connection::execute_into) into a new result set.
    fn execute(
        &mut self,
        stmt: StatementId,
        params: &[Value],
    ) -> Result<Option<ResultSet>, SqlError> {
        let mut rs = ResultSet::default();
        Ok(self.execute_into(stmt, params, &mut rs)?.then_some(rs))
    }

    /// Execute a prepared statement like [`execute`](Connection::execute), writing the
    /// first result set into the caller-owned `out` instead of returning a new one.
    ///
    /// `out` is emptied first and its buffers are reused, so a caller that keeps one
    /// `ResultSet` per connection (sysbench's own model: a connection's result set is
    /// valid until its next query) executes with no allocation for the result on the
    /// MySQL driver. Returns `Ok(true)` when the statement produced a result set (now in
    /// `out`, possibly with zero rows) and `Ok(false)` when it did not (`out` is then
    /// empty with `nfields == 0`; see [`affected_rows`](Connection::affected_rows)).
    /// On error `out` is left empty. Further result sets are available through
    /// [`more_results`](Connection::more_results) exactly as after `execute`.
    fn execute_into(
        &mut self,
        stmt: StatementId,
        params: &[Value],
        out: &mut ResultSet,
    ) -> Result<bool, SqlError>;

    /// Release a prepared statement (unknown ids are ignored).
    fn close_statement(&mut self, stmt: StatementId);

    /// Start a bulk insert; `prefix` is e.g. `INSERT INTO t (a,b) VALUES`.
    fn bulk_insert_init(&mut self, prefix: &str) -> Result<(), SqlError>;

    /// Add one tuple such as `(1,'x')`; a multi-row INSERT is sent whenever the next
    /// tuple would make it exceed [`BULK_MAX_BYTES`].
    fn bulk_insert_next(&mut self, values_tuple: &str) -> Result<(), SqlError>;

    /// Send the remaining tuples and end the bulk insert.
    fn bulk_insert_done(&mut self) -> Result<(), SqlError>;

    /// Load rows into `table` (`columns`: a comma-separated column list) from `data` in
    /// the tab-separated text format that MySQL's `LOAD DATA` and PostgreSQL's `COPY`
    /// share: one row per `\n`-terminated line, fields separated by tabs, `\N` for NULL,
    /// backslash escapes `\\`, `\t`, `\n`. Counts as one statement. Returns the
    /// number of rows loaded: MySQL's `LOCAL` load skips rows with duplicate keys
    /// (with a warning) instead of failing, so callers compare it with what they sent.
    ///
    /// `Ok(None)` means this connection has no such bulk path (the driver has none,
    /// or the server refused it, e.g. MySQL with `local_infile=OFF`); nothing was
    /// loaded and the caller should fall back to INSERTs. Once refused, later calls
    /// return `Ok(None)` at once.
    fn load_text(
        &mut self,
        table: &str,
        columns: &str,
        data: &[u8],
    ) -> Result<Option<u64>, SqlError> {
        let _ = (table, columns, data);
        Ok(None)
    }

    /// Inserts every row of `rows` into `table` (`columns` names one column per value)
    /// the cheapest way the driver has, and returns the number of rows inserted. The
    /// rows go in as one or more statements in the caller's transaction (or one
    /// autocommit each): MariaDB gets bulk executes of one prepared single-row INSERT,
    /// PostgreSQL `COPY`, anything else prepared multi-row INSERTs.
    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn RowSource,
    ) -> Result<u64, SqlError> {
        insert_rows::multi_row(self, table, columns, rows)
    }

    /// Close and re-open the connection. Prepared statements stay valid: the driver
    /// keeps their SQL and re-prepares them transparently on their next execution.
    fn reconnect(&mut self) -> Result<(), SqlError>;

    /// True when the last query produced further result sets not yet fetched.
    fn more_results(&mut self) -> bool;

    /// The next pending result set of the last query (`Ok(None)` when there is none or
    /// it has no rows part).
    fn next_result(&mut self) -> Result<Option<ResultSet>, SqlError>;

    /// Rows affected by the last statement without a result set (0 if unknown).
    fn affected_rows(&self) -> u64 {
        0
    }

    /// Close the connection; later calls fail (or reconnect via
    /// [`reconnect`](Connection::reconnect)).
    fn disconnect(&mut self);
}

/// A configured driver: creates connections.
#[derive(Debug, Clone)]
pub struct Driver {
    config: std::sync::Arc<DriverConfig>,
}

impl Driver {
    /// A driver for `config.kind`.
    pub fn new(config: DriverConfig) -> Driver {
        Driver {
            config: std::sync::Arc::new(config),
        }
    }

    /// The driver's name (`mysql`, `pgsql`, `sqlite`).
    pub fn name(&self) -> &'static str {
        self.config.kind.name()
    }

    /// The driver kind.
    pub fn kind(&self) -> DriverKind {
        self.config.kind
    }

    /// The configuration.
    pub fn config(&self) -> &DriverConfig {
        &self.config
    }

    /// Whether this driver's connections wait for the server's answers in
    /// [`bmk_engine::coop::wait_readable`], so that workers may share event-loop
    /// threads: MySQL over a plain socket (its own protocol path). TLS, compression,
    /// PostgreSQL and SQLite block their thread.
    pub fn waits_cooperatively(&self) -> bool {
        self.config.kind == DriverKind::Mysql
            && !self.config.mysql.dry_run
            && mysql::fast_path_allowed(&self.config)
    }

    /// Open a connection. `connection_index` picks the host/port/socket round-robin
    /// (MySQL: hosts × ports, or sockets when given).
    pub fn connect(&self, connection_index: usize) -> Result<Box<dyn Connection>, SqlError> {
        match self.config.kind {
            DriverKind::Mysql if self.config.mysql.dry_run => {
                Ok(Box::new(dryrun::DryRunConnection::new(&self.config)))
            }
            DriverKind::Mysql => Ok(Box::new(mysql::MysqlConnection::connect(
                self.config.clone(),
                connection_index,
            )?)),
            DriverKind::Pgsql => Ok(Box::new(pgsql::PgConnection::connect(self.config.clone())?)),
            DriverKind::Sqlite => Ok(Box::new(sqlite::SqliteConnection::connect(
                self.config.clone(),
            )?)),
        }
    }
}
