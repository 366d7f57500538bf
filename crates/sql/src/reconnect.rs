//! The reconnect policy of the drivers that talk to a server (MySQL, PostgreSQL), once
//! a failure has closed their connection and the ignore list covers it:
//!
//! * the call that lost the connection reconnects at once and fails ignorably, saying
//!   whether the connection is back ([`after_listed_error`]);
//! * while it is not, every later call tries once more and fails ignorably; the call
//!   that gets it back reports `reconnected: true` (which the caller counts as a
//!   reconnect), one that finds the server still unreachable pauses for
//!   [`RETRY_PAUSE`] first ([`retry_lost`]);
//! * a connection closed any other way (on purpose, or by a failure the ignore list
//!   does not cover) stays closed: calls fail with the driver's "closed" error.
//!
//! The pause keeps a worker whose server is down from retrying at full speed (its
//! caller restarts the event at once). On an event loop it suspends only that worker
//! ([`bmk_engine::coop::sleep`]), so the loop's other workers go on; on a thread of
//! its own the worker sleeps.
//!
//! SQLite has no server to lose and no reconnect.

use std::time::Duration;

use crate::driver_kind::DriverKind;
use crate::error::{SqlError, SqlErrorKind, SqlOp};

/// How long a call that could not reconnect waits before it fails.
pub(crate) const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// A lost connection the driver is getting back: the client error number its calls
/// report meanwhile (0 where the driver reports a SQLSTATE only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lost {
    pub(crate) errno: u32,
}

/// What the policy needs from a driver's connection.
pub(crate) trait Reconnects {
    /// Opens the connection again, dropping what is left of the old one; success
    /// leaves it live with no [`Lost`] mark.
    fn reopen(&mut self) -> Result<(), SqlError>;

    /// Where the connection keeps the mark of a lost connection it is getting back.
    fn lost_mark(&mut self) -> &mut Option<Lost>;

    /// The error of a call on a connection that was closed, not lost.
    fn closed_error(&self, op: SqlOp) -> SqlError;

    /// The error of a call that found the connection lost and tried to reconnect
    /// (`reconnected`: it is back).
    fn lost_error(&self, lost: Lost, op: SqlOp, reconnected: bool) -> SqlError;
}

/// The error of call `op` that found `driver`'s connection lost (`errno` and `sqlstate`
/// as the driver reports a lost connection, `what` its words for it) and tried to
/// reconnect: the message says whether it is back.
pub(crate) fn lost_connection_error(
    driver: DriverKind,
    op: SqlOp,
    errno: u32,
    sqlstate: &str,
    what: &str,
    reconnected: bool,
) -> SqlError {
    let outcome = if reconnected {
        "reconnected"
    } else {
        "reconnect failed"
    };
    SqlError::new(driver, op, errno, sqlstate, format!("{what}; {outcome}"))
}

/// Makes `err`, which the ignore list covers, ignorable; when it lost the connection
/// (`lost`), reconnects first and says in `err` whether that worked.
pub(crate) fn after_listed_error<C: Reconnects>(
    con: &mut C,
    mut err: SqlError,
    lost: Option<Lost>,
) -> SqlError {
    let mut reconnected = false;
    if let Some(lost) = lost {
        *con.lost_mark() = Some(lost);
        reconnected = con.reopen().is_ok();
    }
    err.kind = SqlErrorKind::Ignorable { reconnected };
    err
}

/// The error of call `op` (running `sql`) on a connection that is not open: the closed
/// error, or, after a lost connection, one more attempt to get it back (see the module
/// text).
pub(crate) fn retry_lost<C: Reconnects>(con: &mut C, op: SqlOp, sql: &str) -> SqlError {
    let Some(lost) = *con.lost_mark() else {
        return con.closed_error(op).with_query(sql);
    };
    let reconnected = con.reopen().is_ok();
    if !reconnected {
        bmk_engine::coop::sleep(RETRY_PAUSE);
        *con.lost_mark() = Some(lost);
    }
    let mut err = con.lost_error(lost, op, reconnected).with_query(sql);
    err.kind = SqlErrorKind::Ignorable { reconnected };
    err
}
