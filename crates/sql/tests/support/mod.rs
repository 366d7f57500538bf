//! Test support: dedicated databases and users on the machine's servers (created via
//! the admin account, dropped afterwards), skip-or-fail when a server is missing, and a
//! throwaway MariaDB server ([`throwaway::ThrowawayMariadb`]).

#![allow(dead_code)]

pub mod no_bulk_proxy;
pub mod throwaway;
pub mod throwaway_pg;
pub mod types;

use std::collections::HashMap;

use bmk_sql::{Connection, Driver, DriverConfig, DriverKind};

/// The machine's MariaDB socket.
pub const MYSQL_SOCKET: &str = "/run/mysqld/mysqld.sock";

pub use bmk_testkit::unavailable;

/// A unique name `bmk_t_<pid>_<n>` for a database, user or table of these tests.
pub fn unique_name() -> String {
    bmk_testkit::unique_name("bmk_t")
}

/// Build a config of `kind` from option pairs.
pub fn config(kind: DriverKind, opts: &[(&str, &str)]) -> DriverConfig {
    let m: HashMap<String, String> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    DriverConfig::from_options(kind, &move |k| m.get(k).cloned()).expect("valid options")
}

/// Connect with option pairs.
pub fn connect(
    kind: DriverKind,
    opts: &[(&str, &str)],
) -> Result<Box<dyn Connection>, bmk_sql::SqlError> {
    Driver::new(config(kind, opts)).connect(0)
}

/// A MySQL connect to 127.0.0.1:`port` with a 1-second connect timeout (and `extra`
/// options) that must end in that timeout: checks the error and how long it took,
/// which it returns.
pub fn mysql_connect_timing_out(port: &str, extra: &[(&str, &str)]) -> std::time::Duration {
    use std::time::{Duration, Instant};
    let mut opts = vec![
        ("mysql-host", "127.0.0.1"),
        ("mysql-port", port),
        ("db-connect-timeout", "1"),
    ];
    opts.extend_from_slice(extra);
    let t = Instant::now();
    let e = connect(DriverKind::Mysql, &opts)
        .err()
        .expect("the connect must time out");
    let elapsed = t.elapsed();
    assert!(elapsed >= Duration::from_millis(900), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");
    assert_eq!(e.kind, bmk_sql::SqlErrorKind::Connect);
    assert_eq!(e.errno, 2003);
    assert!(e.message.contains("connect timeout"), "{}", e.message);
    elapsed
}

/// Run a statement that must succeed.
pub fn exec(con: &mut dyn Connection, sql: &str) {
    if let Err(e) = con.query(sql) {
        panic!("{sql}: {e}");
    }
}

/// First column of the first row as text.
pub fn scalar(con: &mut dyn Connection, sql: &str) -> Option<String> {
    let rs = con
        .query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .expect("result set");
    rs.get_str(0, 0)
}

/// Admin connection to the machine's MariaDB (root, empty password), socket first.
fn mysql_admin_opts() -> Option<Vec<(&'static str, &'static str)>> {
    let candidates: [Vec<(&str, &str)>; 2] = [
        vec![("mysql-socket", MYSQL_SOCKET)],
        vec![("mysql-host", "127.0.0.1"), ("mysql-port", "3306")],
    ];
    let mut last = String::new();
    for c in candidates {
        let mut opts = c.clone();
        opts.extend([
            ("mysql-user", "root"),
            ("mysql-password", ""),
            ("mysql-db", ""),
        ]);
        match connect(DriverKind::Mysql, &opts) {
            Ok(_) => return Some(opts),
            Err(e) => last = e.to_string(),
        }
    }
    unavailable(
        "MariaDB (root on /run/mysqld/mysqld.sock or 127.0.0.1:3306)",
        &last,
    )
}

/// A dedicated MariaDB database and user (with a password), dropped on drop.
pub struct MysqlTestDb {
    /// Database and user name.
    pub name: String,
    /// The user's password.
    pub password: String,
    admin: Box<dyn Connection>,
}

impl MysqlTestDb {
    /// Create it, or skip (`None`) / fail under CI when MariaDB is unreachable.
    pub fn create() -> Option<MysqlTestDb> {
        let admin_opts = mysql_admin_opts()?;
        let mut admin = connect(DriverKind::Mysql, &admin_opts).expect("admin connect");
        let name = unique_name();
        let password = format!("pw_{}_Secret", std::process::id());
        exec(&mut *admin, &format!("DROP DATABASE IF EXISTS {name}"));
        exec(&mut *admin, &format!("CREATE DATABASE {name}"));
        for host in ["localhost", "127.0.0.1", "%"] {
            exec(
                &mut *admin,
                &format!("DROP USER IF EXISTS '{name}'@'{host}'"),
            );
            exec(
                &mut *admin,
                &format!("CREATE USER '{name}'@'{host}' IDENTIFIED BY '{password}'"),
            );
            exec(
                &mut *admin,
                &format!("GRANT ALL ON {name}.* TO '{name}'@'{host}'"),
            );
        }
        Some(MysqlTestDb {
            name,
            password,
            admin,
        })
    }

    /// The admin (root) connection.
    pub fn admin(&mut self) -> &mut dyn Connection {
        &mut *self.admin
    }

    /// Options for this user over TCP, plus `extra`.
    pub fn tcp_opts<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut v = vec![
            ("mysql-host", "127.0.0.1"),
            ("mysql-port", "3306"),
            ("mysql-user", self.name.as_str()),
            ("mysql-password", self.password.as_str()),
            ("mysql-db", self.name.as_str()),
        ];
        v.extend_from_slice(extra);
        v
    }

    /// Options for this user over the UNIX socket, plus `extra`.
    pub fn socket_opts<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut v = vec![
            ("mysql-socket", MYSQL_SOCKET),
            ("mysql-user", self.name.as_str()),
            ("mysql-password", self.password.as_str()),
            ("mysql-db", self.name.as_str()),
        ];
        v.extend_from_slice(extra);
        v
    }

    /// Connect as this user over TCP with `extra` options.
    pub fn connect(&self, extra: &[(&str, &str)]) -> Box<dyn Connection> {
        connect(DriverKind::Mysql, &self.tcp_opts(extra)).unwrap_or_else(|e| panic!("{e}"))
    }
}

impl Drop for MysqlTestDb {
    fn drop(&mut self) {
        let name = self.name.clone();
        let _ = self.admin.query(&format!("DROP DATABASE IF EXISTS {name}"));
        for host in ["localhost", "127.0.0.1", "%"] {
            let _ = self
                .admin
                .query(&format!("DROP USER IF EXISTS '{name}'@'{host}'"));
        }
    }
}

fn pg_admin_opts() -> Option<Vec<(&'static str, &'static str)>> {
    let opts = vec![
        ("pgsql-host", "127.0.0.1"),
        ("pgsql-port", "5432"),
        ("pgsql-user", "postgres"),
        ("pgsql-db", "postgres"),
        ("pgsql-sslmode", "disable"),
    ];
    match connect(DriverKind::Pgsql, &opts) {
        Ok(_) => Some(opts),
        Err(e) => unavailable("PostgreSQL (postgres on 127.0.0.1:5432)", &e.to_string()),
    }
}

/// A dedicated PostgreSQL database and role (with a password), dropped on drop.
pub struct PgTestDb {
    /// Database and role name.
    pub name: String,
    /// The role's password.
    pub password: String,
    admin: Box<dyn Connection>,
}

impl PgTestDb {
    /// Create it, or skip (`None`) / fail under CI when PostgreSQL is unreachable.
    pub fn create() -> Option<PgTestDb> {
        let admin_opts = pg_admin_opts()?;
        let mut admin = connect(DriverKind::Pgsql, &admin_opts).expect("admin connect");
        let name = unique_name();
        let password = format!("pw_{}_Secret", std::process::id());
        exec(
            &mut *admin,
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        );
        exec(&mut *admin, &format!("DROP ROLE IF EXISTS {name}"));
        exec(
            &mut *admin,
            &format!("CREATE ROLE {name} LOGIN PASSWORD '{password}'"),
        );
        exec(&mut *admin, &format!("CREATE DATABASE {name} OWNER {name}"));
        Some(PgTestDb {
            name,
            password,
            admin,
        })
    }

    /// The admin (postgres) connection.
    pub fn admin(&mut self) -> &mut dyn Connection {
        &mut *self.admin
    }

    /// Options for this role, plus `extra`.
    pub fn opts<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut v = vec![
            ("pgsql-host", "127.0.0.1"),
            ("pgsql-port", "5432"),
            ("pgsql-user", self.name.as_str()),
            ("pgsql-password", self.password.as_str()),
            ("pgsql-db", self.name.as_str()),
        ];
        v.extend_from_slice(extra);
        v
    }

    /// Connect as this role with `extra` options.
    pub fn connect(&self, extra: &[(&str, &str)]) -> Box<dyn Connection> {
        connect(DriverKind::Pgsql, &self.opts(extra)).unwrap_or_else(|e| panic!("{e}"))
    }
}

impl Drop for PgTestDb {
    fn drop(&mut self) {
        let name = self.name.clone();
        let _ = self
            .admin
            .query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        let _ = self.admin.query(&format!("DROP ROLE IF EXISTS {name}"));
    }
}

/// A temporary directory (removed when dropped) named after `prefix`.
pub fn temp_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{prefix}-"))
        .tempdir()
        .expect("create a temporary directory")
}
