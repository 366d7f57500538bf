//! Which driver a connection uses (`--db-driver`).

use std::fmt;
use std::str::FromStr;

/// Which driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DriverKind {
    /// MySQL / MariaDB.
    #[default]
    Mysql,
    /// PostgreSQL.
    Pgsql,
    /// Embedded SQLite.
    Sqlite,
}

impl DriverKind {
    /// Every driver, for `--db-driver=help`.
    pub const ALL: [DriverKind; 3] = [DriverKind::Mysql, DriverKind::Pgsql, DriverKind::Sqlite];

    /// The name used with `--db-driver`.
    pub fn name(self) -> &'static str {
        match self {
            DriverKind::Mysql => "mysql",
            DriverKind::Pgsql => "pgsql",
            DriverKind::Sqlite => "sqlite",
        }
    }

    /// One-line description for `--db-driver=help`.
    pub fn description(self) -> &'static str {
        match self {
            DriverKind::Mysql => "MySQL driver",
            DriverKind::Pgsql => "PostgreSQL driver",
            DriverKind::Sqlite => "SQLite driver (embedded, no server needed)",
        }
    }
}

impl fmt::Display for DriverKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DriverKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "mysql" => Ok(DriverKind::Mysql),
            "pgsql" => Ok(DriverKind::Pgsql),
            "sqlite" | "sqlite3" => Ok(DriverKind::Sqlite),
            other => Err(format!("invalid database driver name: '{other}'")),
        }
    }
}
