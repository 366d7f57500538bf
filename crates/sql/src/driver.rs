//! A configured driver: the factory of [`Connection`]s of one kind.

use crate::config::DriverConfig;
use crate::connection::Connection;
use crate::driver_kind::DriverKind;
use crate::error::SqlError;
use crate::{dryrun, mysql, pgsql, sqlite};

/// A configured driver: creates connections.
#[derive(Debug, Clone)]
pub struct Driver {
    config: std::sync::Arc<DriverConfig>,
    /// [`Driver::pgsql_fast_path`], found out once (it may ask the server).
    pgsql_fast: std::sync::Arc<std::sync::OnceLock<bool>>,
}

impl Driver {
    /// A driver for `config.kind`.
    pub fn new(config: DriverConfig) -> Driver {
        Driver {
            config: std::sync::Arc::new(config),
            pgsql_fast: Default::default(),
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

    /// Whether MySQL executes take bmk's own protocol path (`--mysql-fast-path`, on a
    /// plain socket); false on the other drivers and in a dry run.
    pub fn mysql_fast_path(&self) -> bool {
        self.config.kind == DriverKind::Mysql
            && !self.config.mysql.dry_run
            && mysql::fast_path_allowed(&self.config)
    }

    /// Whether PostgreSQL connections speak the protocol through bmk's own client
    /// (`--pgsql-fast-path`, plain or over TLS; not the `verify-*` modes); false on the
    /// other drivers.
    pub fn pgsql_fast_path(&self) -> bool {
        self.config.kind == DriverKind::Pgsql
            && *self
                .pgsql_fast
                .get_or_init(|| pgsql::fast_path_in_use(&self.config))
    }

    /// Whether this driver's connections wait for the server's answers in
    /// [`bmk_engine::coop::wait_readable`], so that workers may share event-loop
    /// threads: MySQL over a plain socket and PostgreSQL over a plain or TLS socket
    /// (their own protocol paths). MySQL's TLS and compression, PostgreSQL's certificate
    /// verification and SQLite block their thread.
    pub fn waits_cooperatively(&self) -> bool {
        self.mysql_fast_path() || self.pgsql_fast_path()
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
