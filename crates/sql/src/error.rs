//! SQL errors, their ignorable/fatal classification and the exact message lines the
//! Lua layer prints, worded as sysbench words them.

use crate::driver_kind::DriverKind;

/// How the caller must react to an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlErrorKind {
    /// The error is in the driver's ignore list: count it and restart the event.
    /// `reconnected` is true when it was a lost connection and the driver reconnected
    /// (the caller counts a reconnect).
    Ignorable {
        /// The connection was re-established after a lost-connection error.
        reconnected: bool,
    },
    /// Abort the run (unless a `sql_error_ignorable` hook says otherwise).
    Fatal,
    /// The connection could not be established.
    Connect,
}

/// Which driver operation failed; selects the function name in the FATAL line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlOp {
    /// Connecting (or reconnecting).
    Connect,
    /// A text query (`con:query`, bulk insert flushes, emulated statements).
    Query,
    /// Preparing a statement.
    Prepare,
    /// Executing a server-side prepared statement (emulated statements report
    /// [`SqlOp::Query`], as their text goes through the query path).
    Execute,
}

/// Where a connection was going: used for the connect-failure lines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Endpoint {
    /// Host name, when connecting over TCP.
    pub host: Option<String>,
    /// TCP port.
    pub port: Option<u16>,
    /// UNIX socket path, or the database file for SQLite.
    pub socket: Option<String>,
    /// The user name (never the password).
    pub user: Option<String>,
}

/// An error from a driver. `Display` gives the Lua error text
/// `SQL error, errno = N, state = 'S': message`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("SQL error, errno = {errno}, state = '{sqlstate}': {message}")]
pub struct SqlError {
    /// Ignorable, fatal or connect failure.
    pub kind: SqlErrorKind,
    /// Server (or client library) error number; MySQL error numbers for mysql,
    /// SQLite extended result codes for sqlite, 0 for pgsql (see `sqlstate`).
    pub errno: u32,
    /// SQLSTATE (5 characters) when known, else empty.
    pub sqlstate: String,
    /// The server's or client's message. Never contains a password.
    pub message: String,
    /// The failing query text, when there is one.
    pub query: Option<String>,
    /// The driver that produced the error.
    pub driver: DriverKind,
    /// The failing operation.
    pub op: SqlOp,
    /// Connection target, for connect errors.
    pub endpoint: Option<Box<Endpoint>>,
    /// Where in the query the server located the error (1-based, in characters), when
    /// it said (PostgreSQL).
    pub position: Option<u32>,
}

impl SqlError {
    /// A new fatal error with no query attached.
    pub fn new(
        driver: DriverKind,
        op: SqlOp,
        errno: u32,
        sqlstate: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        SqlError {
            kind: SqlErrorKind::Fatal,
            errno,
            sqlstate: sqlstate.into(),
            message: message.into(),
            query: None,
            driver,
            op,
            endpoint: None,
            position: None,
        }
    }

    /// A configuration (option value) error.
    pub fn config(driver: DriverKind, message: impl Into<String>) -> Self {
        SqlError::new(driver, SqlOp::Connect, 0, "", message)
    }

    /// Attach the failing query text.
    pub fn with_query(mut self, sql: &str) -> Self {
        self.query = Some(sql.to_string());
        self
    }

    /// True when the caller should restart the event rather than abort.
    pub fn is_ignorable(&self) -> bool {
        matches!(self.kind, SqlErrorKind::Ignorable { .. })
    }

    /// True when the statement named a table that does not exist (MySQL 1146,
    /// PostgreSQL 42P01, SQLite "no such table").
    pub fn is_missing_table(&self) -> bool {
        match self.driver {
            DriverKind::Mysql => self.errno == 1146,
            DriverKind::Pgsql => self.sqlstate == "42P01",
            DriverKind::Sqlite => self.message.starts_with("no such table"),
        }
    }

    /// True when the driver reconnected after this (lost-connection) error.
    pub fn reconnected(&self) -> bool {
        matches!(self.kind, SqlErrorKind::Ignorable { reconnected: true })
    }

    /// The run counter this failure adds to: a reconnect when the driver reconnected,
    /// else an error — fatal ones too, as sysbench 1.0.20 counts them (checked side by
    /// side: a script that catches them with `pcall` and goes on sees them in `ignored
    /// errors` and `err/s`). A failed connect is no statement: `None`.
    pub fn counter(&self) -> Option<bmk_engine::Counter> {
        match self.kind {
            SqlErrorKind::Ignorable { reconnected: true } => Some(bmk_engine::Counter::Reconnect),
            SqlErrorKind::Ignorable { reconnected: false } | SqlErrorKind::Fatal => {
                Some(bmk_engine::Counter::Error)
            }
            SqlErrorKind::Connect => None,
        }
    }

    /// The driver function name used in the FATAL query line, e.g. `mysql_drv_query()`.
    pub fn function_name(&self) -> &'static str {
        match (self.driver, self.op) {
            (DriverKind::Mysql, SqlOp::Execute) => "mysql_stmt_execute()",
            (DriverKind::Mysql, SqlOp::Prepare) => "mysql_stmt_prepare()",
            (DriverKind::Mysql, _) => "mysql_drv_query()",
            (DriverKind::Pgsql, SqlOp::Execute) => "pgsql_drv_execute()",
            (DriverKind::Pgsql, SqlOp::Prepare) => "pgsql_drv_prepare()",
            (DriverKind::Pgsql, _) => "pgsql_drv_query()",
            (DriverKind::Sqlite, SqlOp::Execute) => "sqlite_drv_execute()",
            (DriverKind::Sqlite, SqlOp::Prepare) => "sqlite_drv_prepare()",
            (DriverKind::Sqlite, _) => "sqlite_drv_query()",
        }
    }

    /// The `FATAL: ...` lines to print for this error (without trailing newlines).
    ///
    /// Query errors:
    /// `FATAL: mysql_drv_query() returned error 1146 (Table 'sbtest.sbtest9' doesn't exist) for query 'SELECT ...'`.
    /// Connect errors:
    /// `FATAL: unable to connect to MySQL server on host 'H', port P, aborting...` (or
    /// `on socket 'S'`), then `FATAL: error N: message`, then `FATAL: user 'U'`.
    pub fn fatal_lines(&self) -> Vec<String> {
        if self.kind != SqlErrorKind::Connect && self.driver == DriverKind::Pgsql {
            return self.pgsql_fatal_lines();
        }
        if self.op == SqlOp::Prepare && self.driver == DriverKind::Mysql {
            return vec![
                "FATAL: mysql_stmt_prepare() failed".to_string(),
                format!("FATAL: MySQL error: {} \"{}\"", self.errno, self.message),
            ];
        }
        if self.kind == SqlErrorKind::Connect && self.driver == DriverKind::Pgsql {
            return vec![format!(
                "FATAL: Connection to database failed: {}",
                self.libpq_connect_message()
            )];
        }
        if self.kind == SqlErrorKind::Connect {
            let ep = self.endpoint.as_deref().cloned().unwrap_or_default();
            let server = match self.driver {
                DriverKind::Mysql => "MySQL server",
                DriverKind::Pgsql => "PostgreSQL server",
                DriverKind::Sqlite => "SQLite database",
            };
            let target = match (&ep.socket, &ep.host) {
                (Some(s), _) if self.driver == DriverKind::Sqlite => format!("file '{s}'"),
                (Some(s), _) => format!("socket '{s}'"),
                (None, Some(h)) => format!("host '{h}', port {}", ep.port.unwrap_or(0)),
                (None, None) => "(unknown)".to_string(),
            };
            // A name that does not resolve reads as libmysqlclient says it.
            let (errno, message) = match &ep.host {
                Some(h)
                    if self.driver == DriverKind::Mysql
                        && self.message.contains("lookup address") =>
                {
                    (2005, format!("Unknown MySQL server host '{h}' (0)"))
                }
                _ => (self.errno, self.message.clone()),
            };
            return vec![
                format!("FATAL: unable to connect to {server} on {target}, aborting..."),
                format!("FATAL: error {errno}: {message}"),
            ];
        }
        let mut line = format!(
            "FATAL: {} returned error {} ({})",
            self.function_name(),
            self.errno,
            self.message
        );
        if let Some(q) = &self.query {
            line.push_str(" for query '");
            line.push_str(q);
            line.push('\'');
        }
        vec![line]
    }
}

impl SqlError {
    /// sysbench's pgsql driver prints libpq's messages: `PQprepare() failed:` with the
    /// whole server message (`ERROR:  ...`, the query line it points into), and for a
    /// failed statement the result status (7, a fatal error) and the failed query.
    fn pgsql_fatal_lines(&self) -> Vec<String> {
        if self.op == SqlOp::Prepare {
            let mut text = format!("FATAL: PQprepare() failed: ERROR:  {}\n", self.message);
            if let (Some(pos), Some(q)) = (self.position, &self.query) {
                text.push_str(&position_excerpt(q, pos));
            }
            return vec![text];
        }
        let function = match self.op {
            SqlOp::Execute => "PQexecPrepared",
            _ => "PQexec",
        };
        let mut lines = vec![format!("FATAL: {function}() failed: 7 {}", self.message)];
        if let (SqlOp::Query, Some(q)) = (self.op, &self.query) {
            lines.push(format!("FATAL: failed query was: {q}"));
        }
        lines
    }

    /// A connect failure as libpq words the common ones.
    fn libpq_connect_message(&self) -> String {
        let host = self.endpoint.as_deref().and_then(|e| e.host.clone());
        match host {
            Some(h) if self.message.contains("lookup address") => {
                let why = self
                    .message
                    .rsplit(": ")
                    .next()
                    .unwrap_or("Name or service not known")
                    .trim_end();
                format!("could not translate host name \"{h}\" to address: {why}\n")
            }
            _ => format!("{}\n", self.message.trim_end()),
        }
    }
}

/// libpq's `LINE n: text` and caret lines under a server error that gave a position
/// (1-based, in characters) in `query`.
fn position_excerpt(query: &str, position: u32) -> String {
    let chars: Vec<char> = query.chars().collect();
    let at = (position as usize).saturating_sub(1).min(chars.len());
    let line_no = chars[..at].iter().filter(|&&c| c == '\n').count() + 1;
    let start = chars[..at]
        .iter()
        .rposition(|&c| c == '\n')
        .map_or(0, |i| i + 1);
    let end = chars[at..]
        .iter()
        .position(|&c| c == '\n')
        .map_or(chars.len(), |i| at + i);
    let line: String = chars[start..end].iter().collect();
    let prefix = format!("LINE {line_no}: ");
    let caret = " ".repeat(prefix.len() + (at - start));
    format!("{prefix}{line}\n{caret}^\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn pgsql_prepare_points_into_the_query() {
        let mut e = SqlError::new(
            DriverKind::Pgsql,
            SqlOp::Prepare,
            0,
            "42P01",
            "relation \"missing\" does not exist",
        )
        .with_query("SELECT a FROM missing");
        e.position = Some(15);
        assert_eq!(
            e.fatal_lines(),
            vec![
                "FATAL: PQprepare() failed: ERROR:  relation \"missing\" does not exist\n\
                  LINE 1: SELECT a FROM missing\n                      ^\n"
            ]
        );
    }

    #[test]
    fn pgsql_query_lines() {
        let e = SqlError::new(DriverKind::Pgsql, SqlOp::Query, 0, "22001", "too long")
            .with_query("INSERT 1");
        assert_eq!(
            e.fatal_lines(),
            vec![
                "FATAL: PQexec() failed: 7 too long",
                "FATAL: failed query was: INSERT 1"
            ]
        );
    }

    #[test]
    fn mysql_prepare_lines() {
        let e = SqlError::new(DriverKind::Mysql, SqlOp::Prepare, 1146, "42S02", "no t");
        assert_eq!(
            e.fatal_lines(),
            vec![
                "FATAL: mysql_stmt_prepare() failed",
                "FATAL: MySQL error: 1146 \"no t\""
            ]
        );
    }

    use super::*;

    #[test]
    fn query_line() {
        let e = SqlError::new(
            DriverKind::Mysql,
            SqlOp::Query,
            1146,
            "42S02",
            "Table 'sbtest.sbtest9' doesn't exist",
        )
        .with_query("SELECT 1");
        assert_eq!(
            e.fatal_lines(),
            vec!["FATAL: mysql_drv_query() returned error 1146 (Table 'sbtest.sbtest9' doesn't exist) for query 'SELECT 1'"]
        );
        assert_eq!(
            e.to_string(),
            "SQL error, errno = 1146, state = '42S02': Table 'sbtest.sbtest9' doesn't exist"
        );
    }

    #[test]
    fn connect_lines() {
        let mut e = SqlError::new(DriverKind::Mysql, SqlOp::Connect, 2003, "HY000", "refused");
        e.kind = SqlErrorKind::Connect;
        e.endpoint = Some(Box::new(Endpoint {
            host: Some("h".into()),
            port: Some(1),
            socket: None,
            user: Some("u".into()),
        }));
        assert_eq!(
            e.fatal_lines(),
            vec![
                "FATAL: unable to connect to MySQL server on host 'h', port 1, aborting...",
                "FATAL: error 2003: refused",
            ]
        );
    }
}
