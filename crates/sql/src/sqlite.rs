//! The embedded SQLite driver (`rusqlite`, bundled library): WAL journal and a busy
//! timeout so that several worker threads can share one database file.
//!
//! A deferred transaction (`BEGIN`) that reads and then writes cannot wait for the
//! write lock: when another connection committed meanwhile, SQLite fails the write at
//! once (`SQLITE_BUSY_SNAPSHOT`) and the event restarts, about once per transaction
//! with two writers. So a connection whose last transaction attempted a write opens
//! the next one as `BEGIN IMMEDIATE`, which takes the write lock first and waits for it
//! within the busy timeout; read-only transactions stay deferred and do not queue
//! behind writers.

use std::io::Write as _;
use std::sync::Arc;

use rusqlite::fallible_iterator::FallibleIterator as _;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{ffi, Connection as Db, OpenFlags, Statement, ToSql};

use crate::classify::{classify, QueryKind};
use crate::config::{DriverConfig, PsMode};
use crate::connection::{Connection, StatementId};
use crate::connection_state::{keeps_state_in_field, ConnectionState};
use crate::driver_kind::DriverKind;
use crate::emulate::{emulated_execute, Template};
use crate::error::{Endpoint, SqlError, SqlErrorKind, SqlOp};
use crate::resultset::ResultSet;
use crate::statement_table::{register, registered};
use crate::trace::trace;
use crate::value::Value;

/// One prepared statement (kept as SQL; rusqlite's statement cache holds the compiled
/// form, so statements survive reconnects).
struct Stmt {
    sql: String,
    role: TrxRole,
    template: Template,
    /// Column names of the last result, shared by the result sets while unchanged.
    names: Arc<[String]>,
}

/// What a statement does to the connection's transaction, for choosing how the next
/// one begins (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TrxRole {
    /// A plain `BEGIN` / `BEGIN TRANSACTION` / `BEGIN DEFERRED`.
    Begin,
    /// `COMMIT`, `END` or `ROLLBACK` (but not `ROLLBACK TO` a savepoint).
    End,
    /// `INSERT`, `UPDATE`, `DELETE` or `REPLACE`.
    Write,
    Other,
}

impl TrxRole {
    fn of(sql: &str) -> TrxRole {
        match classify(sql) {
            QueryKind::Write => return TrxRole::Write,
            QueryKind::Read => return TrxRole::Other,
            QueryKind::Other => {}
        }
        let mut words = sql.trim().trim_end_matches(';').split_ascii_whitespace();
        let is =
            |w: Option<&str>, keyword: &str| w.is_some_and(|w| w.eq_ignore_ascii_case(keyword));
        let (first, second, third, fourth) =
            (words.next(), words.next(), words.next(), words.next());
        // Nothing more, or only TRANSACTION.
        let bare =
            |a: Option<&str>, b: Option<&str>| a.is_none() || (is(a, "TRANSACTION") && b.is_none());
        if is(first, "BEGIN") {
            let plain = bare(second, third) || (is(second, "DEFERRED") && bare(third, fourth));
            if plain {
                return TrxRole::Begin;
            }
        } else if (is(first, "COMMIT") || is(first, "END") || is(first, "ROLLBACK"))
            && bare(second, third)
        {
            return TrxRole::End;
        }
        TrxRole::Other
    }
}

/// A SQLite connection.
pub(crate) struct SqliteConnection {
    cfg: Arc<DriverConfig>,
    db: Option<Db>,
    /// A write was attempted in the open transaction.
    trx_wrote: bool,
    /// The last transaction attempted a write: the next `BEGIN` is `BEGIN IMMEDIATE`.
    begin_immediate: bool,
    stmts: Vec<Option<Stmt>>,
    /// What the shared `Connection` methods keep.
    state: ConnectionState,
    debug: bool,
}

/// Binds a [`Value`] without copying.
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Float(f) => ValueRef::Real(f64::from(*f)),
            Value::Double(d) => ValueRef::Real(*d),
            Value::Text(t) => match std::str::from_utf8(t) {
                Ok(_) => ValueRef::Text(t),
                Err(_) => ValueRef::Blob(t),
            },
        }))
    }
}

/// The rows a statement that reported `changes` affected itself. SQLite's change count
/// is that of the last INSERT/UPDATE/DELETE, so after `COMMIT` or DDL it still holds
/// the previous write's; only a statement that moved the connection's total changed
/// rows (the rule that counts it as a write).
fn own_changes(db: &rusqlite::Connection, total_before: u64, changes: u64) -> u64 {
    if db.total_changes() > total_before {
        changes
    } else {
        0
    }
}

/// Bind, run and collect one statement.
fn run_stmt(
    stmt: &mut Statement<'_>,
    params: &[Value],
) -> rusqlite::Result<(Option<ResultSet>, u64)> {
    for (i, p) in params.iter().enumerate() {
        stmt.raw_bind_parameter(i + 1, Param(p))?;
    }
    let ncols = stmt.column_count();
    if ncols == 0 {
        let n = stmt.raw_execute()?;
        return Ok((None, n as u64));
    }
    let names = stmt.column_names().map(|s| s.to_string()).collect();
    let mut rs = ResultSet::new(names);
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next()? {
        for c in 0..ncols {
            match row.get_ref(c)? {
                ValueRef::Null => rs.push_cell(None),
                ValueRef::Integer(i) => rs.push_cell_with(|b| {
                    let _ = write!(b, "{i}");
                }),
                ValueRef::Real(f) => rs.push_cell_with(|b| {
                    let _ = write!(b, "{f}");
                }),
                ValueRef::Text(t) | ValueRef::Blob(t) => rs.push_cell(Some(t)),
            }
        }
    }
    Ok((Some(rs), 0))
}

/// Bind, run and collect one prepared statement into `out` (allocation-free once
/// `out`'s buffers and `names` fit). Returns (has a result set, affected rows).
fn run_stmt_into(
    stmt: &mut Statement<'_>,
    params: &[Value],
    names: &mut Arc<[String]>,
    out: &mut ResultSet,
) -> rusqlite::Result<(bool, u64)> {
    for (i, p) in params.iter().enumerate() {
        stmt.raw_bind_parameter(i + 1, Param(p))?;
    }
    let ncols = stmt.column_count();
    if ncols == 0 {
        let n = stmt.raw_execute()?;
        return Ok((false, n as u64));
    }
    if names.len() != ncols || (0..ncols).any(|i| stmt.column_name(i).ok() != Some(&names[i])) {
        *names = stmt.column_names().map(str::to_string).collect();
    }
    out.reset(names);
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next()? {
        for c in 0..ncols {
            match row.get_ref(c)? {
                ValueRef::Null => out.push_cell(None),
                ValueRef::Integer(i) => out.push_cell_with(|b| crate::mysql_fast::put_i64(b, i)),
                ValueRef::Real(f) => out.push_cell_with(|b| {
                    let _ = write!(b, "{f}");
                }),
                ValueRef::Text(t) | ValueRef::Blob(t) => out.push_cell(Some(t)),
            }
        }
    }
    Ok((true, 0))
}

/// Puts the database in WAL mode (readers and one writer work concurrently; the mode
/// is persistent, so a database already in WAL mode needs nothing).
///
/// Two connections opening a new database at once both try the switch, and SQLite
/// answers the loser `SQLITE_BUSY` at once, without calling the busy handler (waiting
/// there could deadlock inside its own locking). So the switch is retried here, a
/// millisecond apart, for as long as the busy timeout would have waited.
fn switch_to_wal(db: &Db, busy_timeout: std::time::Duration) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + busy_timeout;
    loop {
        match db.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    ffi::ErrorCode::DatabaseBusy | ffi::ErrorCode::DatabaseLocked
                ) && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
}

impl SqliteConnection {
    pub(crate) fn connect(cfg: Arc<DriverConfig>) -> Result<Self, SqlError> {
        let debug = cfg.common.debug;
        let mut c = SqliteConnection {
            cfg,
            db: None,
            trx_wrote: false,
            // Until a transaction shows otherwise, assume it writes: the first write
            // transaction of a connection would fail otherwise, a read-only one only
            // waits for the write lock once.
            begin_immediate: true,
            stmts: Vec::new(),
            state: ConnectionState::new(DriverKind::Sqlite),
            debug,
        };
        c.open()?;
        Ok(c)
    }

    fn trace(&self, what: &str, detail: &str) {
        if self.debug {
            trace("sqlite", what, detail);
        }
    }

    fn open(&mut self) -> Result<(), SqlError> {
        let path = &self.cfg.sqlite.db;
        self.trace("connect", &path.display().to_string());
        self.db = None;
        let res = Db::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .and_then(|db| {
            db.busy_timeout(self.cfg.sqlite.busy_timeout)?;
            switch_to_wal(&db, self.cfg.sqlite.busy_timeout)?;
            db.execute_batch("PRAGMA synchronous=NORMAL")?;
            db.set_prepared_statement_cache_capacity(256);
            Ok(db)
        });
        match res {
            Ok(db) => {
                self.db = Some(db);
                Ok(())
            }
            Err(e) => {
                let (errno, msg) = describe(&e);
                let mut err = SqlError::new(DriverKind::Sqlite, SqlOp::Connect, errno, "", msg);
                err.kind = SqlErrorKind::Connect;
                err.endpoint = Some(Box::new(Endpoint {
                    socket: Some(path.display().to_string()),
                    ..Default::default()
                }));
                Err(err)
            }
        }
    }

    fn closed(op: SqlOp, sql: &str) -> SqlError {
        SqlError::new(
            DriverKind::Sqlite,
            op,
            ffi::SQLITE_MISUSE as u32,
            "",
            "connection is closed",
        )
        .with_query(sql)
    }

    fn fail(&mut self, e: rusqlite::Error, op: SqlOp, sql: &str) -> SqlError {
        let (errno, msg) = describe(&e);
        self.trace("error", &format!("{errno} ({msg})"));
        let mut err = SqlError::new(DriverKind::Sqlite, op, errno, "", msg).with_query(sql);
        if self.cfg.sqlite.ignore_errors.contains(&(errno & 0xff)) {
            err.kind = SqlErrorKind::Ignorable { reconnected: false };
            // The event restarts from scratch: end a transaction left open so its
            // `BEGIN` works again.
            if let Some(db) = &self.db {
                if !db.is_autocommit() {
                    let _ = db.execute_batch("ROLLBACK");
                    self.begin_immediate = self.trx_wrote;
                }
            }
        }
        err
    }

    /// Notes what a statement of `role` does to the transaction; returns the text to
    /// run instead of a deferred `BEGIN` that should be immediate.
    fn track(&mut self, role: TrxRole) -> Option<&'static str> {
        match role {
            TrxRole::Begin => {
                self.trx_wrote = false;
                return self.begin_immediate.then_some("BEGIN IMMEDIATE");
            }
            TrxRole::End => self.begin_immediate = self.trx_wrote,
            TrxRole::Write => self.trx_wrote = true,
            TrxRole::Other => {}
        }
        None
    }

    fn run(
        &mut self,
        sql: &str,
        params: &[Value],
        cached: bool,
        op: SqlOp,
    ) -> Result<Option<ResultSet>, SqlError> {
        if self.db.is_none() {
            return Err(Self::closed(op, sql));
        }
        let sql = self.track(TrxRole::of(sql)).unwrap_or(sql);
        let db = self.db.as_ref().expect("checked above");
        let changes_before = db.total_changes();
        self.state.pending.clear();
        let res = if cached {
            db.prepare_cached(sql)
                .and_then(|mut s| run_stmt(&mut s, params))
        } else {
            // A text query may hold several statements: run them in order and keep
            // the later result sets for `next_result`.
            let mut batch = rusqlite::Batch::new(db, sql);
            let mut first = None;
            let mut res = Ok((None, 0));
            loop {
                match batch.next() {
                    Ok(Some(mut stmt)) => match run_stmt(&mut stmt, params) {
                        Ok(r) if first.is_none() => first = Some(r),
                        Ok((rs, n)) => {
                            self.state.pending.push_back(rs);
                            res = Ok((None, n));
                        }
                        Err(e) => {
                            res = Err(e);
                            break;
                        }
                    },
                    Ok(None) => break,
                    Err(e) => {
                        res = Err(e);
                        break;
                    }
                }
            }
            match (res, first) {
                (Err(e), _) => Err(e),
                (Ok(_), Some(f)) => Ok(f),
                (Ok(r), None) => Ok(r),
            }
        };
        match res {
            Ok((rs, n)) => {
                self.state.affected = own_changes(db, changes_before, n);
                Ok(rs)
            }
            Err(e) => {
                self.state.pending.clear();
                Err(self.fail(e, op, sql))
            }
        }
    }
}

/// (extended result code, message) of an error.
fn describe(e: &rusqlite::Error) -> (u32, String) {
    match e {
        rusqlite::Error::SqliteFailure(f, msg) => (
            f.extended_code as u32,
            msg.clone().unwrap_or_else(|| f.to_string()),
        ),
        other => (ffi::SQLITE_ERROR as u32, other.to_string()),
    }
}

keeps_state_in_field!(SqliteConnection);

impl Connection for SqliteConnection {
    fn query(&mut self, sql: &str) -> Result<Option<ResultSet>, SqlError> {
        #[cfg(feature = "test-panic")]
        if sql == crate::TEST_PANIC_QUERY {
            panic!("the driver was asked to panic");
        }
        self.trace("query", sql);
        self.run(sql, &[], false, SqlOp::Query)
    }

    fn prepare(&mut self, sql: &str) -> Result<StatementId, SqlError> {
        self.trace("prepare", sql);
        let stmt = Stmt {
            sql: sql.to_string(),
            role: TrxRole::of(sql),
            template: Template::parse(sql),
            names: Arc::default(),
        };
        if self.cfg.common.ps_mode == PsMode::Auto {
            let Some(db) = self.db.as_ref() else {
                return Err(Self::closed(SqlOp::Prepare, sql));
            };
            let res = db.prepare_cached(sql).map(|_| ());
            if let Err(e) = res {
                return Err(self.fail(e, SqlOp::Prepare, sql));
            }
        }
        Ok(register(&mut self.stmts, stmt))
    }

    fn execute_into(
        &mut self,
        id: StatementId,
        params: &[Value],
        out: &mut ResultSet,
    ) -> Result<bool, SqlError> {
        out.clear();
        let stmt = registered(&self.stmts, id, DriverKind::Sqlite)?;
        let mode = self.cfg.common.ps_mode;
        if let Some(sql) = emulated_execute(mode, &stmt.template, params, self.debug, "sqlite") {
            return self.query_into(&sql, out);
        }
        if self.db.is_none() {
            return Err(Self::closed(SqlOp::Execute, &stmt.sql));
        }
        let instead = self.track(stmt.role);
        let db = self.db.as_ref().expect("checked above");
        self.state.pending.clear();
        let st = self.stmts[id.0 as usize].as_mut().expect("checked above");
        let changes_before = db.total_changes();
        let res = db
            .prepare_cached(instead.unwrap_or(&st.sql))
            .and_then(|mut s| run_stmt_into(&mut s, params, &mut st.names, out));
        match res {
            Ok((has_rows, n)) => {
                self.state.affected = own_changes(db, changes_before, n);
                Ok(has_rows)
            }
            Err(e) => {
                out.clear();
                let sql = st.sql.clone();
                Err(self.fail(e, SqlOp::Execute, &sql))
            }
        }
    }

    fn close_statement(&mut self, id: StatementId) {
        if let Some(slot) = self.stmts.get_mut(id.0 as usize) {
            *slot = None;
        }
    }

    fn reconnect(&mut self) -> Result<(), SqlError> {
        self.db = None;
        self.open()
    }

    fn disconnect(&mut self) {
        self.db = None;
    }
}

#[cfg(test)]
mod tests {
    use super::TrxRole;

    #[test]
    fn transaction_roles() {
        for sql in [
            "BEGIN",
            " begin transaction; ",
            "BEGIN DEFERRED TRANSACTION",
        ] {
            assert_eq!(TrxRole::of(sql), TrxRole::Begin, "{sql}");
        }
        for sql in ["COMMIT", "commit;", "END TRANSACTION", "ROLLBACK"] {
            assert_eq!(TrxRole::of(sql), TrxRole::End, "{sql}");
        }
        for sql in [
            "INSERT INTO t VALUES (1)",
            "/* x */ update t set v=1",
            "DELETE FROM t",
        ] {
            assert_eq!(TrxRole::of(sql), TrxRole::Write, "{sql}");
        }
        // Already immediate (or exclusive), savepoints and reads are left alone.
        for sql in [
            "BEGIN IMMEDIATE",
            "BEGIN EXCLUSIVE",
            "ROLLBACK TO sp1",
            "RELEASE sp1",
            "SELECT 1",
            "BEGIN; INSERT INTO t VALUES (1); COMMIT",
        ] {
            assert_eq!(TrxRole::of(sql), TrxRole::Other, "{sql}");
        }
    }
}
