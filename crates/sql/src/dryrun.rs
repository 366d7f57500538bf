//! `--mysql-dry-run`: a connection whose every call succeeds without a server, to
//! measure pure client overhead.

use crate::config::DriverConfig;
use crate::connection::{Connection, StatementId};
use crate::connection_state::{keeps_state_in_field, ConnectionState};
use crate::driver_kind::DriverKind;
use crate::error::SqlError;
use crate::resultset::ResultSet;
use crate::trace::trace;
use crate::value::Value;

/// A connection that pretends every call succeeded.
pub(crate) struct DryRunConnection {
    next_stmt: u32,
    debug: bool,
    /// Never filled: a dry run has no pending results and affects no rows.
    state: ConnectionState,
}

impl DryRunConnection {
    pub(crate) fn new(cfg: &DriverConfig) -> Self {
        DryRunConnection {
            next_stmt: 0,
            debug: cfg.common.debug || cfg.mysql.debug,
            state: ConnectionState::new(DriverKind::Mysql),
        }
    }

    fn trace(&self, what: &str, detail: &str) {
        if self.debug {
            trace("mysql(dry-run)", what, detail);
        }
    }
}

keeps_state_in_field!(DryRunConnection);

impl Connection for DryRunConnection {
    fn query(&mut self, sql: &str) -> Result<Option<ResultSet>, SqlError> {
        self.trace("query", sql);
        Ok(None)
    }

    fn prepare(&mut self, sql: &str) -> Result<StatementId, SqlError> {
        self.trace("prepare", sql);
        self.next_stmt += 1;
        Ok(StatementId(self.next_stmt))
    }

    fn execute_into(
        &mut self,
        stmt: StatementId,
        _: &[Value],
        out: &mut ResultSet,
    ) -> Result<bool, SqlError> {
        out.clear();
        if self.debug {
            self.trace("execute", &stmt.0.to_string());
        }
        Ok(false)
    }

    fn close_statement(&mut self, _: StatementId) {}

    fn bulk_insert_init(&mut self, prefix: &str) -> Result<(), SqlError> {
        self.trace("bulk_insert_init", prefix);
        Ok(())
    }

    fn bulk_insert_next(&mut self, _: &str) -> Result<(), SqlError> {
        Ok(())
    }

    fn bulk_insert_done(&mut self) -> Result<(), SqlError> {
        Ok(())
    }

    fn reconnect(&mut self) -> Result<(), SqlError> {
        Ok(())
    }

    fn disconnect(&mut self) {}
}
