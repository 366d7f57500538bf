//! bmk's SQL driver layer.
//!
//! This crate owns:
//! * the three drivers — MySQL/MariaDB ([`mysql`](crate::DriverKind::Mysql): bmk's own
//!   login and protocol path on plain sockets, the pure-Rust `mysql` crate for TLS and
//!   compression), PostgreSQL (bmk's own protocol client, plain or TLS; the `postgres`
//!   crate for the certificate-verifying modes) and embedded SQLite (`rusqlite`,
//!   bundled) — behind one [`Connection`] trait: connect, query, prepare, execute with
//!   bound [`Value`]s, result sets as text, bulk insert, reconnect;
//! * one reconnect policy for the drivers with a server (`reconnect.rs`);
//! * sysbench's database options (`--db-driver`, `--mysql-*`, `--pgsql-*`, ...) and
//!   bmk's additions ([`option_specs`], [`DriverConfig`]);
//! * how a statement counts as read, write or other ([`counted_as`]);
//! * the start barrier that several processes pass together, held in a table of the
//!   target database ([`Barrier`]);
//! * error classification into ignorable (restart the event, maybe after a reconnect)
//!   and fatal ([`SqlError`], [`SqlErrorKind`]) and the exact FATAL message lines.
//!
//! It must not: know about Lua, use the engine beyond its event-loop waits
//! ([`bmk_engine::coop`]: `active`, `wait_readable`, `sleep`), its option table types and
//! the names of its counters, print reports, or print anything except
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
//!   stays down every call fails ignorably (after a 100 ms pause, which on an event
//!   loop holds up only its own worker) until a reconnect succeeds, which is reported
//!   once as `Ignorable { reconnected: true }`.
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
//! the `mysql` crate with a small hand-written protocol path on the socket bmk's own
//! login opened (see `mysql_fast.rs`; `--mysql-fast-path=off`, or `BMK_MYSQL_FASTPATH=0`, turns it
//! off for comparison); everything else goes through the crate. PostgreSQL connections
//! (plain or TLS) speak the whole protocol through bmk's own client (`pgsql/wire.rs`: Bind,
//! Execute and Sync in one write, the answer decoded in place into the `ResultSet`;
//! `--pgsql-fast-path=off`, or `BMK_PGSQL_FASTPATH=0`, leaves them to the `postgres`
//! crate). Both own paths wait on event loops through `coop_read.rs`, so
//! [`Driver::waits_cooperatively`] is true for them.
//!
//! Prepared statements keep their SQL: after a reconnect they are re-prepared on their
//! next execution. `--db-ps-mode=disable` (and statements MySQL cannot prepare) are
//! emulated client-side with quoting per server dialect ([`Template`]).

#![deny(missing_docs)]

mod barrier;
mod bulk;
mod classify;
mod config;
mod connection;
mod connection_state;
mod coop_read;
mod deadline;
mod driver;
mod driver_kind;
mod dryrun;
mod emulate;
mod error;
mod last_segment;
mod mysql;
mod mysql_ed25519;
mod mysql_fast;
mod mysql_handshake;
mod mysql_rsa;
mod pgsql;
mod reconnect;
mod resultset;
mod row_source;
mod socket_timeouts;
mod sqlite;
mod statement_table;
mod trace;
mod value;

/// The query the SQLite driver panics on, with the `test-panic` feature (tests only).
#[cfg(feature = "test-panic")]
pub const TEST_PANIC_QUERY: &str = "SELECT 'bmk-test: panic'";

pub use barrier::{
    client_identity, drop_barrier_table, AgreedStart, Barrier, BarrierError, BarrierSpec,
    ClockSample, BARRIER_TABLE, POLL_INTERVAL, START_LEAD,
};
pub use bulk::{BulkBuffer, BULK_MAX_BYTES};

/// Entry points for the fuzz targets (`fuzz/`) and the tests that replay their corpus:
/// the decoders of server bytes on the fast paths, which must turn any input into a
/// result or an error, never a panic. Not an API.
#[doc(hidden)]
pub mod fuzz_entry {
    /// The MySQL fast path's binary and text row decoders (see `mysql_fast`).
    pub fn mysql_rows(data: &[u8]) {
        crate::mysql_fast::fuzz_rows(data);
    }

    /// The PostgreSQL binary value renderer (see `pgsql::pgtext`).
    pub fn pgsql_value(data: &[u8]) {
        crate::pgsql::fuzz_value(data);
    }
}
pub use classify::{classify, counted_as, QueryKind};
pub use config::{
    option_specs, CommonOptions, DriverConfig, IgnoreList, MysqlOptions, MysqlSslMode, PgSslMode,
    PgsqlOptions, PsMode, SqliteOptions,
};
pub use connection::{Connection, StatementId};
pub use driver::Driver;
pub use driver_kind::DriverKind;
pub use emulate::{push_literal, push_quoted, Dialect, Template};
pub use error::{Endpoint, SqlError, SqlErrorKind, SqlOp};
pub use mysql_rsa::ServerPublicKey;
pub use resultset::ResultSet;
pub use row_source::RowSource;
pub use value::{SqlType, Value};
