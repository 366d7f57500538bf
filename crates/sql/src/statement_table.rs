//! The table of prepared statements every driver's connection keeps (indexed by
//! [`StatementId`]), and the error each server's client library gives for an id that
//! names no statement.

use crate::connection::StatementId;
use crate::driver_kind::DriverKind;
use crate::error::{SqlError, SqlOp};

/// Adds `stmt` to a driver's table; returns its id.
pub(crate) fn register<T>(stmts: &mut Vec<Option<T>>, stmt: T) -> StatementId {
    let id = StatementId(stmts.len() as u32);
    stmts.push(Some(stmt));
    id
}

/// The statement `id` of a driver's table, or the driver's "invalid statement" error:
/// MySQL's client error 2030, PostgreSQL's SQLSTATE 26000 (invalid SQL statement name),
/// SQLite's `SQLITE_MISUSE`.
pub(crate) fn registered<T>(
    stmts: &[Option<T>],
    id: StatementId,
    driver: DriverKind,
) -> Result<&T, SqlError> {
    stmts
        .get(id.0 as usize)
        .and_then(Option::as_ref)
        .ok_or_else(|| {
            let (errno, sqlstate) = match driver {
                DriverKind::Mysql => (2030, "HY000"),
                DriverKind::Pgsql => (0, "26000"),
                DriverKind::Sqlite => (rusqlite::ffi::SQLITE_MISUSE as u32, ""),
            };
            SqlError::new(
                driver,
                SqlOp::Execute,
                errno,
                sqlstate,
                format!("invalid statement id {}", id.0),
            )
        })
}
