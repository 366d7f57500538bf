//! The [`Connection`] every driver implements, and what its provided methods share.
//!
//! The calls whose logic is the same on every server — the `bulk_insert_*` batching,
//! the result sets a multi-statement query leaves for `next_result`, the affected-row
//! count, and loading rows with prepared multi-row INSERTs — are written once here, over
//! the [`ConnectionState`](crate::connection_state::ConnectionState) each driver keeps. Drivers override
//! [`Connection::insert_rows`] with their server's cheapest path (MariaDB's bulk
//! execute, PostgreSQL's COPY) and fall back to [`multi_row`].

use crate::connection_state::KeepsConnectionState;
use crate::error::SqlError;
use crate::resultset::ResultSet;
use crate::row_source::RowSource;
use crate::value::Value;

/// Handle of a prepared statement within one [`Connection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StatementId(pub u32);

/// One database connection. Not shared between threads (`Send` only).
///
/// Every method that talks to the server returns an [`SqlError`] whose
/// [`kind`](SqlError::kind) says whether the caller may restart the event
/// ([`SqlErrorKind::Ignorable`](crate::SqlErrorKind::Ignorable)) or must abort ([`SqlErrorKind::Fatal`](crate::SqlErrorKind::Fatal)).
pub trait Connection: Send + KeepsConnectionState {
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
    /// [`PsMode::Disable`](crate::PsMode::Disable) the statement is emulated client-side.
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
    fn bulk_insert_init(&mut self, prefix: &str) -> Result<(), SqlError> {
        self.state_mut().bulk.init(prefix);
        Ok(())
    }

    /// Add one tuple such as `(1,'x')`; a multi-row INSERT is sent (as a text
    /// [`query`](Connection::query)) whenever the next tuple would make it exceed
    /// [`BULK_MAX_BYTES`](crate::BULK_MAX_BYTES).
    fn bulk_insert_next(&mut self, values_tuple: &str) -> Result<(), SqlError> {
        let state = self.state_mut();
        if let Some(stmt) = state.bulk.next(state.driver, values_tuple)? {
            self.query(&stmt)?;
        }
        Ok(())
    }

    /// Send the remaining tuples and end the bulk insert.
    fn bulk_insert_done(&mut self) -> Result<(), SqlError> {
        if let Some(stmt) = self.state_mut().bulk.done() {
            self.query(&stmt)?;
        }
        Ok(())
    }

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
        multi_row(self, table, columns, rows)
    }

    /// Close and re-open the connection. Prepared statements stay valid: the driver
    /// keeps their SQL and re-prepares them transparently on their next execution.
    fn reconnect(&mut self) -> Result<(), SqlError>;

    /// True when the last query produced further result sets not yet fetched.
    fn more_results(&mut self) -> bool {
        !self.state_mut().pending.is_empty()
    }

    /// The next pending result set of the last query (`Ok(None)` when there is none or
    /// it has no rows part).
    fn next_result(&mut self) -> Result<Option<ResultSet>, SqlError> {
        Ok(self.state_mut().pending.pop_front().flatten())
    }

    /// Rows affected by the last statement without a result set (0 if unknown).
    fn affected_rows(&self) -> u64 {
        self.state().affected
    }

    /// Close the connection; later calls fail (or reconnect via
    /// [`reconnect`](Connection::reconnect)).
    fn disconnect(&mut self);
}

/// Rows of a multi-row INSERT: enough that the statement overhead vanishes, few enough
/// that the statement stays far below packet limits for rows of a few hundred bytes.
const ROWS_PER_INSERT: usize = 1000;
/// Bind values per statement: below MySQL's and PostgreSQL's 65 535 and SQLite's 32 766.
const MAX_BIND_VALUES: usize = 32_000;

/// `INSERT INTO table (c1, ..) VALUES (?, ..), .. ` for `rows` rows.
pub(crate) fn insert_sql(table: &str, columns: &[&str], rows: usize) -> String {
    let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
    let tuple = format!("({})", vec!["?"; columns.len()].join(","));
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        sql.push_str(&tuple);
    }
    sql
}

/// Inserts every row of `rows` with prepared multi-row INSERTs; returns the number of
/// rows inserted.
pub(crate) fn multi_row<C: Connection + ?Sized>(
    con: &mut C,
    table: &str,
    columns: &[&str],
    rows: &mut dyn RowSource,
) -> Result<u64, SqlError> {
    let ncols = columns.len().max(1);
    let per_insert = (MAX_BIND_VALUES / ncols).clamp(1, ROWS_PER_INSERT);
    let mut values = vec![Value::Null; per_insert * ncols];
    let mut out = ResultSet::default();
    let mut full: Option<StatementId> = None;
    let mut total = 0u64;
    let result = loop {
        let mut n = 0;
        while n < per_insert && rows.next_row(&mut values[n * ncols..(n + 1) * ncols]) {
            n += 1;
        }
        if n == 0 {
            break Ok(total);
        }
        let stmt = match (n == per_insert, full) {
            (true, Some(s)) => s,
            (true, None) => {
                let s = con.prepare(&insert_sql(table, columns, n))?;
                full = Some(s);
                s
            }
            (false, _) => con.prepare(&insert_sql(table, columns, n))?,
        };
        let done = con.execute_into(stmt, &values[..n * ncols], &mut out);
        if Some(stmt) != full {
            con.close_statement(stmt);
        }
        if let Err(e) = done {
            break Err(e);
        }
        total += n as u64;
        if n < per_insert {
            break Ok(total);
        }
    };
    if let Some(s) = full {
        con.close_statement(s);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_sql_has_one_tuple_per_row() {
        assert_eq!(
            insert_sql("t", &["id", "k"], 3),
            "INSERT INTO t (id, k) VALUES (?,?),(?,?),(?,?)"
        );
    }
}
