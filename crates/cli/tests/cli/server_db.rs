//! A database of its own on one of the machine's servers (MariaDB as root on
//! 127.0.0.1:3306, PostgreSQL as postgres on 127.0.0.1:5432), dropped afterwards. A
//! missing server skips the test with a note, or fails it under `CI=true`
//! (`bmk_testkit::unavailable`).

use std::collections::HashMap;

use bmk_sql::{Connection, Driver, DriverConfig, DriverKind};

/// Connects with option pairs as the command line would give them.
pub fn connect(kind: DriverKind, opts: &[(&str, &str)]) -> Result<Box<dyn Connection>, String> {
    let m: HashMap<String, String> = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cfg =
        DriverConfig::from_options(kind, &move |k| m.get(k).cloned()).map_err(|e| e.to_string())?;
    Driver::new(cfg).connect(0).map_err(|e| e.to_string())
}

/// The test's database.
pub struct ServerDb {
    /// Which server.
    pub kind: DriverKind,
    /// The database's name (unique: `bmk_cli_<pid>_<n>`).
    pub name: String,
    /// bmk's options that reach it (driver, host, port, user, database).
    pub args: Vec<String>,
    admin: Box<dyn Connection>,
}

impl ServerDb {
    /// Creates the database, or returns `None` after the skip note.
    pub fn new(kind: DriverKind) -> Option<ServerDb> {
        Self::on_port(kind, None)
    }

    /// [`ServerDb::new`] on another PostgreSQL port. The password is never given here:
    /// the connection (and every bmk the test runs) reads it from `PGPASSWORD`, which
    /// `.ci/run` sets, or logs in without one where `pg_hba.conf` trusts 127.0.0.1.
    pub fn on_port(kind: DriverKind, pg_port: Option<u16>) -> Option<ServerDb> {
        let pg_port = pg_port.unwrap_or(5432).to_string();
        let pg_what = format!("PostgreSQL (postgres on 127.0.0.1:{pg_port})");
        let (what, admin_opts): (&str, &[(&str, &str)]) = match kind {
            DriverKind::Mysql => (
                "MariaDB (root on 127.0.0.1:3306)",
                &[
                    ("mysql-host", "127.0.0.1"),
                    ("mysql-port", "3306"),
                    ("mysql-user", "root"),
                    ("mysql-db", ""),
                ],
            ),
            _ => (
                &pg_what,
                &[
                    ("pgsql-host", "127.0.0.1"),
                    ("pgsql-port", &pg_port),
                    ("pgsql-user", "postgres"),
                    ("pgsql-db", "postgres"),
                    ("pgsql-sslmode", "disable"),
                ],
            ),
        };
        let admin = match connect(kind, admin_opts) {
            Ok(c) => c,
            Err(e) => return bmk_testkit::unavailable(what, &e),
        };
        let name = bmk_testkit::unique_name("bmk_cli");
        let args = match kind {
            DriverKind::Mysql => vec![
                "--db-driver=mysql".into(),
                "--mysql-host=127.0.0.1".into(),
                "--mysql-port=3306".into(),
                "--mysql-user=root".into(),
                format!("--mysql-db={name}"),
            ],
            _ => vec![
                "--db-driver=pgsql".into(),
                "--pgsql-host=127.0.0.1".into(),
                format!("--pgsql-port={pg_port}"),
                "--pgsql-user=postgres".into(),
                "--pgsql-sslmode=disable".into(),
                format!("--pgsql-db={name}"),
            ],
        };
        let mut db = ServerDb {
            kind,
            name,
            args,
            admin,
        };
        db.admin(&format!("CREATE DATABASE {}", db.name));
        Some(db)
    }

    /// Runs `sql` as the administrator; it must succeed.
    pub fn admin(&mut self, sql: &str) {
        self.admin
            .query(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Connects to the test database itself.
    pub fn conn(&self) -> Box<dyn Connection> {
        let opts: Vec<(String, String)> = self
            .args
            .iter()
            .filter_map(|a| a.strip_prefix("--")?.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let pairs: Vec<(&str, &str)> = opts.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        connect(self.kind, &pairs).expect("connect to the test database")
    }

    /// A `bmk.toml` target `db` for this database; its password, when asked for, comes
    /// from the environment variable `BMK_KIT_TEST_PW`.
    pub fn target(&self, with_password: bool) -> String {
        let pw = if with_password {
            "password_env = \"BMK_KIT_TEST_PW\"\n"
        } else {
            ""
        };
        match self.kind {
            DriverKind::Mysql => format!(
                "[targets.db]\ndriver = \"mysql\"\nhost = \"127.0.0.1\"\nport = 3306\nuser = \"root\"\ndatabase = \"{}\"\n{pw}",
                self.name
            ),
            _ => format!(
                "[targets.db]\ndriver = \"pgsql\"\nhost = \"127.0.0.1\"\nuser = \"postgres\"\ndatabase = \"{}\"\nssl = \"disable\"\n{pw}",
                self.name
            ),
        }
    }
}

impl Drop for ServerDb {
    fn drop(&mut self) {
        let sql = match self.kind {
            DriverKind::Mysql => format!("DROP DATABASE IF EXISTS {}", self.name),
            _ => format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        };
        let _ = self.admin.query(&sql);
    }
}
