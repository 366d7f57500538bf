//! Test support: the `bmk` binary, one dedicated database per test on SQLite, MariaDB
//! and PostgreSQL (skipped with a note when a server is unreachable, a failure under
//! `CI=true`), and parsers for bmk's reports.

#![allow(dead_code)]

use std::collections::HashMap;
use std::process::{Child, Command, Output, Stdio};

use bmk_sql::{Connection, Driver, DriverConfig, DriverKind};
use bmk_testkit::unavailable;

/// The machine's MariaDB socket.
pub const MYSQL_SOCKET: &str = "/run/mysqld/mysqld.sock";

/// A unique database name `bmk_wl_<pid>_<n>`.
pub fn unique_name() -> String {
    bmk_testkit::unique_name("bmk_wl")
}

pub use bmk_testkit::bmk_bin;

/// Output of one bmk invocation.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Run {
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "bmk failed (exit {})\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }
}

/// Runs bmk with `args`. A run limited by `--events` gets `--time=0` (no time limit;
/// the default is 10 s) unless it sets `--time` itself.
pub fn bmk(args: &[String]) -> Run {
    let mut args = args.to_vec();
    if args.iter().any(|a| a.starts_with("--events="))
        && !args.iter().any(|a| a.starts_with("--time="))
    {
        let at = args.len().saturating_sub(1);
        args.insert(at, "--time=0".into());
    }
    let out: Output = Command::new(bmk_bin())
        .args(&args)
        .env_remove("MYSQL_SESSION_OPTIONS")
        .output()
        .expect("run bmk");
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// Which server a test database lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Mysql,
    Pgsql,
}

/// A dedicated database, dropped on drop.
pub struct Db {
    pub kind: Kind,
    pub name: String,
    opts: Vec<(String, String)>,
    admin: Option<Box<dyn Connection>>,
    _dir: Option<tempfile::TempDir>,
}

fn config(kind: DriverKind, opts: &[(String, String)]) -> DriverConfig {
    let m: HashMap<String, String> = opts.iter().cloned().collect();
    DriverConfig::from_options(kind, &move |k| m.get(k).cloned()).expect("valid options")
}

fn connect(kind: DriverKind, opts: &[(String, String)]) -> Result<Box<dyn Connection>, String> {
    Driver::new(config(kind, opts))
        .connect(0)
        .map_err(|e| e.to_string())
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

impl Db {
    /// The database of `kind`, or `None` (skip) when its server is unreachable.
    pub fn new(kind: Kind) -> Option<Db> {
        match kind {
            Kind::Sqlite => Some(Db::sqlite()),
            Kind::Mysql => Db::mysql(),
            Kind::Pgsql => Db::pgsql(),
        }
    }

    fn sqlite() -> Db {
        let dir = tempfile::tempdir().expect("tempdir");
        let name = unique_name();
        let path = dir.path().join(format!("{name}.db"));
        Db {
            kind: Kind::Sqlite,
            name,
            opts: pairs(&[("sqlite-db", path.to_str().unwrap())]),
            admin: None,
            _dir: Some(dir),
        }
    }

    fn mysql() -> Option<Db> {
        let candidates = [
            pairs(&[("mysql-socket", MYSQL_SOCKET)]),
            pairs(&[("mysql-host", "127.0.0.1"), ("mysql-port", "3306")]),
        ];
        let mut last = String::new();
        for mut c in candidates {
            c.extend(pairs(&[("mysql-user", "root"), ("mysql-password", "")]));
            let mut admin_opts = c.clone();
            admin_opts.push(("mysql-db".into(), String::new()));
            match connect(DriverKind::Mysql, &admin_opts) {
                Ok(mut admin) => {
                    let name = unique_name();
                    exec_on(&mut *admin, &format!("DROP DATABASE IF EXISTS {name}"));
                    exec_on(&mut *admin, &format!("CREATE DATABASE {name}"));
                    c.push(("mysql-db".into(), name.clone()));
                    return Some(Db {
                        kind: Kind::Mysql,
                        name,
                        opts: c,
                        admin: Some(admin),
                        _dir: None,
                    });
                }
                Err(e) => last = e,
            }
        }
        unavailable(
            "MariaDB (root on /run/mysqld/mysqld.sock or 127.0.0.1:3306)",
            &last,
        )
    }

    fn pgsql() -> Option<Db> {
        let base = pairs(&[
            ("pgsql-host", "127.0.0.1"),
            ("pgsql-port", "5432"),
            ("pgsql-user", "postgres"),
            ("pgsql-sslmode", "disable"),
        ]);
        let mut admin_opts = base.clone();
        admin_opts.push(("pgsql-db".into(), "postgres".into()));
        let mut admin = match connect(DriverKind::Pgsql, &admin_opts) {
            Ok(a) => a,
            Err(e) => return unavailable("PostgreSQL (postgres on 127.0.0.1:5432)", &e),
        };
        let name = unique_name();
        exec_on(&mut *admin, &format!("DROP DATABASE IF EXISTS {name}"));
        exec_on(&mut *admin, &format!("CREATE DATABASE {name}"));
        let mut opts = base;
        opts.push(("pgsql-db".into(), name.clone()));
        Some(Db {
            kind: Kind::Pgsql,
            name,
            opts,
            admin: Some(admin),
            _dir: None,
        })
    }

    fn driver_kind(&self) -> DriverKind {
        match self.kind {
            Kind::Sqlite => DriverKind::Sqlite,
            Kind::Mysql => DriverKind::Mysql,
            Kind::Pgsql => DriverKind::Pgsql,
        }
    }

    /// `--db-driver=...` and the connection options of this database.
    pub fn args(&self) -> Vec<String> {
        let drv = match self.kind {
            Kind::Sqlite => "sqlite",
            Kind::Mysql => "mysql",
            Kind::Pgsql => "pgsql",
        };
        let mut v = vec![format!("--db-driver={drv}")];
        v.extend(self.opts.iter().map(|(k, val)| format!("--{k}={val}")));
        v
    }

    /// bmk `<workload> <extra args...> <command>` against this database.
    pub fn bmk(&self, workload: &str, command: &str, extra: &[&str]) -> Run {
        let mut args = vec![workload.to_string()];
        args.extend(self.args());
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(command.to_string());
        bmk(&args)
    }

    /// A fresh connection to the test database.
    pub fn conn(&self) -> Box<dyn Connection> {
        connect(self.driver_kind(), &self.opts).expect("connect to the test database")
    }

    /// First column of every row of `sql`, as text.
    pub fn column(&self, sql: &str) -> Vec<String> {
        let mut c = self.conn();
        let rs = c
            .query(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .expect("result set");
        (0..rs.nrows())
            .map(|r| rs.get_str(r, 0).unwrap_or_default())
            .collect()
    }

    /// First column of the first row of `sql`, as text.
    pub fn scalar(&self, sql: &str) -> String {
        self.column(sql).into_iter().next().unwrap_or_default()
    }

    /// Runs a statement on the test database.
    pub fn exec(&self, sql: &str) {
        let mut c = self.conn();
        exec_on(&mut *c, sql);
    }

    /// The user tables of the test database.
    pub fn tables(&self) -> Vec<String> {
        let sql = match self.kind {
            Kind::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
            Kind::Mysql => {
                "SELECT table_name FROM information_schema.tables WHERE table_schema = \
                 DATABASE() ORDER BY table_name"
            }
            Kind::Pgsql => {
                "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = 'public' \
                 ORDER BY tablename"
            }
        };
        self.column(sql)
    }

    /// The index names of `table`.
    pub fn indexes(&self, table: &str) -> Vec<String> {
        let sql = match self.kind {
            Kind::Sqlite => format!(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '{table}' \
                 ORDER BY name"
            ),
            Kind::Mysql => format!(
                "SELECT DISTINCT index_name FROM information_schema.statistics WHERE \
                 table_schema = DATABASE() AND table_name = '{table}' ORDER BY index_name"
            ),
            Kind::Pgsql => format!(
                "SELECT indexname FROM pg_catalog.pg_indexes WHERE schemaname = 'public' AND \
                 tablename = '{table}' ORDER BY indexname"
            ),
        };
        self.column(&sql)
    }

    /// The CREATE TABLE text (MySQL: SHOW CREATE TABLE; SQLite: sqlite_master).
    pub fn create_table_text(&self, table: &str) -> String {
        match self.kind {
            Kind::Mysql => {
                let mut c = self.conn();
                let sql = format!("SHOW CREATE TABLE {table}");
                let rs = c
                    .query(&sql)
                    .unwrap_or_else(|e| panic!("{sql}: {e}"))
                    .expect("rows");
                rs.get_str(0, 1).unwrap_or_default()
            }
            Kind::Sqlite => self.scalar(&format!(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '{table}'"
            )),
            Kind::Pgsql => self
                .column(&format!(
                    "SELECT column_name || ' ' || data_type FROM information_schema.columns \
                     WHERE table_name = '{table}' ORDER BY ordinal_position"
                ))
                .join(", "),
        }
    }
}

fn exec_on(c: &mut dyn Connection, sql: &str) {
    if let Err(e) = c.query(sql) {
        panic!("{sql}: {e}");
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Some(admin) = self.admin.as_mut() {
            let _ = admin.query(&format!("DROP DATABASE IF EXISTS {}", self.name));
        }
    }
}

/// Counters of bmk's final report.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
    pub read: u64,
    pub write: u64,
    pub other: u64,
    pub total: u64,
    pub transactions: u64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub events: u64,
}

fn number_after(text: &str, label: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let t = l.trim_start();
        t.strip_prefix(label)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
    })
}

/// Parses the SQL statistics of a final report.
pub fn stats(stdout: &str) -> Stats {
    let get = |label: &str| {
        number_after(stdout, label)
            .unwrap_or_else(|| panic!("no '{label}' in the report:\n{stdout}"))
    };
    Stats {
        read: get("read:"),
        write: get("write:"),
        other: get("other:"),
        total: get("total:"),
        transactions: get("transactions:"),
        ignored_errors: get("ignored errors:"),
        reconnects: get("reconnects:"),
        events: get("total number of events:"),
    }
}

/// Runs `f` on each available server kind given.
pub fn each_kind(kinds: &[Kind], f: impl Fn(&Db)) {
    for k in kinds {
        if let Some(db) = Db::new(*k) {
            f(&db);
        }
    }
}

/// Writes a Lua test script into a temp dir; returns (dir, path).
pub fn lua_script(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write script");
    let p = path.to_str().unwrap().to_string();
    (dir, p)
}

/// Starts `bmk <workload> <db args> <extra...> run` with `env` set, output piped.
pub fn spawn_run(db: &Db, workload: &str, extra: &[&str], env: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(bmk_bin());
    cmd.arg(workload)
        .args(db.args())
        .args(extra)
        .arg("run")
        .env_remove("MYSQL_SESSION_OPTIONS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().expect("start bmk")
}

/// Kills every other connection to the (MySQL) test database — a running bmk's
/// workers — and returns how many there were.
pub fn kill_other_connections(db: &Db) -> usize {
    let ids = db.column(&format!(
        "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '{}' AND ID <> CONNECTION_ID()",
        db.name
    ));
    for id in &ids {
        db.exec(&format!("KILL {id}"));
    }
    ids.len()
}
