//! Driver selection and sysbench's database options (plus bmk's sqlite and
//! pgsql additions): the static option table for the CLI and the parsed
//! [`DriverConfig`].

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use bmk_engine::bounded_file;
use bmk_engine::options::{OptKind, OptSpec, OptValue};

use crate::driver_kind::DriverKind;
use crate::error::SqlError;
use crate::mysql_rsa::ServerPublicKey;

/// `--db-ps-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PsMode {
    /// Server-side prepared statements where the driver can.
    #[default]
    Auto,
    /// Client-side emulation: text queries with parameters substituted and quoted.
    Disable,
}

fn opt(name: &str, default: Option<&str>, help: &str, kind: OptKind) -> OptSpec {
    OptSpec::new(name, kind, default, help)
}

/// TCP ports: 0 would let the system pick one, which no server listens on.
const PORT_RANGE: (f64, f64) = (1.0, 65535.0);

/// The longest a connect or a wait on a socket may be asked to take, in seconds
/// (11.5 days): beyond it a deadline computed from the value could overflow a clock.
const MAX_TIMEOUT_SECS: f64 = 1e6;

/// The SQLSTATEs that restart an event on PostgreSQL by default, those of sysbench's
/// PostgreSQL driver: deadlock, unique violation and serialization failure. The unique
/// violation is there for the stock read-write mix: under READ COMMITTED a DELETE that
/// waited for another worker's DELETE + INSERT of the same id deletes nothing, and its
/// INSERT then hits the primary key.
const PGSQL_IGNORED_BY_DEFAULT: &str = "40P01,23505,40001";

/// sysbench's database options and bmk's additions, each with its type, default, help
/// and the values it accepts: the one definition the CLI's validation and help, the
/// Lua API and [`DriverConfig::from_options`] all read.
pub fn option_specs() -> Vec<OptSpec> {
    vec![
    opt("db-driver", Some("mysql"), "database driver ('help' lists them)", OptKind::String),
    opt("db-ps-mode", Some("auto"), "prepared statements: auto (server-side) or disable (client-side substitution)", OptKind::String).with_choices(&["auto", "disable"]),
    opt("db-debug", Some("off"), "trace every database call", OptKind::Bool),
    opt("db-connect-timeout", Some("5"), "connect timeout in seconds, including the server handshake (all drivers)", OptKind::Int).with_range(0.0, MAX_TIMEOUT_SECS),
    opt("db-timeout", Some("300"), "seconds a read or write on a server connection may wait before the connection counts as lost (MySQL, PostgreSQL; 0 = no limit; off by default in prepare and cleanup)", OptKind::Int).with_range(0.0, MAX_TIMEOUT_SECS),
    opt("mysql-host", Some("localhost"), "MySQL/MariaDB host name(s); connections rotate over them", OptKind::List),
    opt("mysql-port", Some("3306"), "MySQL/MariaDB TCP port(s)", OptKind::List).with_range(PORT_RANGE.0, PORT_RANGE.1),
    opt("mysql-socket", None, "UNIX socket path(s), used instead of TCP", OptKind::List),
    opt("mysql-user", Some("sbtest"), "user to connect as", OptKind::String),
    opt("mysql-password", None, "password (never printed or stored in results); else --mysql-password-file, else env MYSQL_PWD", OptKind::String),
    opt("mysql-password-file", None, "file whose first line is the password (keeps it off the command line)", OptKind::File),
    opt("mysql-db", Some("sbtest"), "database (schema) to use", OptKind::String),
    opt("mysql-ssl", Some("disabled"), "TLS mode: DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY (on/off as in 1.0)", OptKind::String),
    opt("mysql-ssl-key", None, "client private key file (PEM)", OptKind::File),
    opt("mysql-ssl-ca", None, "certificate authority file (PEM)", OptKind::File),
    opt("mysql-ssl-cert", None, "client certificate file (PEM)", OptKind::File),
    opt("mysql-ssl-cipher", None, "TLS cipher to require", OptKind::String),
    opt("mysql-compression", Some("off"), "compress the client/server protocol", OptKind::Bool),
    opt("mysql-compression-algorithms", Some("zlib"), "protocol compression algorithm (zlib or uncompressed)", OptKind::String),
    opt("mysql-debug", Some("off"), "trace every client call to standard error", OptKind::Bool),
    opt("mysql-ignore-errors", Some("1213,1020,1205"), "server error numbers that restart the event instead of stopping the run, or \"all\"", OptKind::List),
    opt("mysql-dry-run", Some("off"), "skip the server: every client call succeeds at once (measures client overhead)", OptKind::Bool),
    opt("mysql-server-public-key", None, "PEM file with the server's RSA public key: caching_sha2_password's full authentication over plain TCP sends the password encrypted with it (without TLS, this or --mysql-get-server-public-key is needed)", OptKind::File),
    opt("mysql-get-server-public-key", Some("off"), "over plain TCP, encrypt the password for caching_sha2_password with the RSA key the server sends, unchecked (trusts whoever answers at the address)", OptKind::Bool),
    opt("mysql-fast-path", Some("on"), "execute prepared statements through bmk's own protocol code on plain (no TLS, no compression) connections; off leaves everything to the client library (default: $BMK_MYSQL_FASTPATH, else on)", OptKind::Bool),
    opt("pgsql-host", Some("localhost"), "PostgreSQL host name (or socket directory)", OptKind::String),
    opt("pgsql-port", Some("5432"), "PostgreSQL TCP port", OptKind::Int).with_range(PORT_RANGE.0, PORT_RANGE.1),
    opt("pgsql-user", Some("sbtest"), "user to connect as", OptKind::String),
    opt("pgsql-password", None, "password (never printed or stored in results); else --pgsql-password-file, else env PGPASSWORD", OptKind::String),
    opt("pgsql-password-file", None, "file whose first line is the password (keeps it off the command line)", OptKind::File),
    opt("pgsql-db", Some("sbtest"), "database to use", OptKind::String),
    opt("pgsql-sslmode", Some("prefer"), "TLS mode: disable, allow, prefer, require, verify-ca or verify-full", OptKind::String),
    opt("pgsql-ignore-errors", Some(PGSQL_IGNORED_BY_DEFAULT), "list of SQLSTATEs (5 characters) or SQLSTATE classes (2 characters) to ignore, or \"all\"; a lost connection (reported as its own SQLSTATE, e.g. 57P01, or 08006) that is listed (as itself, 08006 or class 08) triggers a reconnect", OptKind::List),
    opt("pgsql-fast-path", Some("on"), "speak the protocol with bmk's own code (plain or TLS, not the verify-* modes); off leaves everything to the client library (default: $BMK_PGSQL_FASTPATH, else on)", OptKind::Bool),
    opt("sqlite-db", Some("./sbtest.db"), "SQLite database file", OptKind::File),
    opt("sqlite-busy-timeout", Some("10000"), "SQLite busy timeout in milliseconds", OptKind::Int).with_range(0.0, i32::MAX as f64),
    opt("sqlite-ignore-errors", Some("busy,locked"), "list of SQLite result codes (names such as busy, locked, constraint, or numbers) to ignore, or \"all\"", OptKind::List),
    ]
}

/// `--mysql-ssl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MysqlSslMode {
    /// No TLS (`DISABLED`, `off`).
    #[default]
    Disabled,
    /// TLS when the server offers it.
    Preferred,
    /// TLS required, certificate not verified (`REQUIRED`, `on`).
    Required,
    /// TLS required, certificate verified against the CA, host name not checked.
    VerifyCa,
    /// TLS required, certificate and host name verified.
    VerifyIdentity,
}

impl FromStr for MysqlSslMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_uppercase().as_str() {
            "DISABLED" | "OFF" | "0" | "FALSE" | "NO" => Ok(MysqlSslMode::Disabled),
            "PREFERRED" => Ok(MysqlSslMode::Preferred),
            "REQUIRED" | "ON" | "1" | "TRUE" | "YES" => Ok(MysqlSslMode::Required),
            "VERIFY_CA" => Ok(MysqlSslMode::VerifyCa),
            "VERIFY_IDENTITY" => Ok(MysqlSslMode::VerifyIdentity),
            _ => Err(format!("invalid value for --mysql-ssl: '{s}'")),
        }
    }
}

/// `--pgsql-sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PgSslMode {
    /// No TLS.
    Disable,
    /// Treated like `prefer` (the client library tries TLS first).
    Allow,
    /// TLS if the server supports it.
    #[default]
    Prefer,
    /// TLS required, certificate not verified.
    Require,
    /// TLS required, certificate chain verified, host name not checked.
    VerifyCa,
    /// TLS required, certificate and host name verified.
    VerifyFull,
}

impl FromStr for PgSslMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "disable" => Ok(PgSslMode::Disable),
            "allow" => Ok(PgSslMode::Allow),
            "prefer" => Ok(PgSslMode::Prefer),
            "require" => Ok(PgSslMode::Require),
            "verify-ca" => Ok(PgSslMode::VerifyCa),
            "verify-full" => Ok(PgSslMode::VerifyFull),
            _ => Err(format!("invalid value for --pgsql-sslmode: '{s}'")),
        }
    }
}

/// An ignore list: `all`, or a set of entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IgnoreList<T> {
    /// Every error is ignorable.
    All,
    /// Only these.
    Some(Vec<T>),
}

impl<T> Default for IgnoreList<T> {
    fn default() -> Self {
        IgnoreList::Some(Vec::new())
    }
}

impl<T: PartialEq> IgnoreList<T> {
    /// True when `x` is in the list (or the list is `all`).
    pub fn contains(&self, x: &T) -> bool {
        match self {
            IgnoreList::All => true,
            IgnoreList::Some(v) => v.contains(x),
        }
    }
}

impl IgnoreList<String> {
    /// For SQLSTATE lists: true when `all`, or `state` equals a 5-character entry, or
    /// its class (first 2 characters) equals a 2-character entry.
    pub fn matches_sqlstate(&self, state: &str) -> bool {
        match self {
            IgnoreList::All => true,
            IgnoreList::Some(v) => v.iter().any(|e| {
                if e.len() == 2 {
                    state.len() >= 2 && state[..2].eq_ignore_ascii_case(e)
                } else {
                    state.eq_ignore_ascii_case(e)
                }
            }),
        }
    }
}

/// Options common to every driver.
#[derive(Debug, Clone, PartialEq)]
pub struct CommonOptions {
    /// `--db-ps-mode`.
    pub ps_mode: PsMode,
    /// `--db-debug`: print every query to stderr.
    pub debug: bool,
    /// `--db-connect-timeout` (seconds): connecting never hangs longer than this.
    pub connect_timeout: Duration,
    /// `--db-timeout` (seconds): the longest one read or write on a connection waits
    /// for the server (`None` = no limit). A server that stops answering, or a link
    /// that goes down, then ends in a lost-connection error instead of a hang.
    pub io_timeout: Option<Duration>,
}

/// The default `--db-timeout`: far above any statement of a benchmark run, far below
/// the tens of minutes TCP retransmits for before it gives up on a dead peer.
pub const DEFAULT_IO_TIMEOUT: Duration = Duration::from_secs(300);

impl Default for CommonOptions {
    fn default() -> Self {
        CommonOptions {
            ps_mode: PsMode::Auto,
            debug: false,
            connect_timeout: Duration::from_secs(5),
            io_timeout: Some(DEFAULT_IO_TIMEOUT),
        }
    }
}

/// The `--mysql-*` options.
#[derive(Clone, PartialEq)]
pub struct MysqlOptions {
    /// `--mysql-host`.
    pub hosts: Vec<String>,
    /// `--mysql-port`.
    pub ports: Vec<u16>,
    /// True when `--mysql-port` was given explicitly.
    pub port_given: bool,
    /// `--mysql-socket`.
    pub sockets: Vec<String>,
    /// `--mysql-user`.
    pub user: String,
    /// `--mysql-password` (never printed; `Debug` hides it).
    pub password: String,
    /// `--mysql-db`.
    pub db: String,
    /// `--mysql-ssl`.
    pub ssl: MysqlSslMode,
    /// `--mysql-ssl-key`.
    pub ssl_key: Option<PathBuf>,
    /// `--mysql-ssl-ca`.
    pub ssl_ca: Option<PathBuf>,
    /// `--mysql-ssl-cert`.
    pub ssl_cert: Option<PathBuf>,
    /// `--mysql-ssl-cipher` (colon- or comma-separated cipher suite names).
    pub ssl_cipher: Option<String>,
    /// `--mysql-compression`.
    pub compression: bool,
    /// `--mysql-compression-algorithms`.
    pub compression_algorithms: Vec<String>,
    /// `--mysql-debug`.
    pub debug: bool,
    /// `--mysql-ignore-errors`.
    pub ignore_errors: IgnoreList<u32>,
    /// `--mysql-dry-run`.
    pub dry_run: bool,
    /// `--mysql-fast-path` (else `BMK_MYSQL_FASTPATH`): whether executes may take
    /// bmk's own protocol path where the connection allows it.
    pub fast_path: bool,
    /// `--mysql-server-public-key`, read and parsed: the key the password may be
    /// encrypted with for `caching_sha2_password`'s full authentication over plain TCP.
    pub server_public_key: Option<ServerPublicKey>,
    /// `--mysql-get-server-public-key`: encrypt it with the key the server sends.
    pub get_server_public_key: bool,
}

impl fmt::Debug for MysqlOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MysqlOptions")
            .field("hosts", &self.hosts)
            .field("ports", &self.ports)
            .field("sockets", &self.sockets)
            .field("user", &self.user)
            .field("password", &"<hidden>")
            .field("db", &self.db)
            .field("ssl", &self.ssl)
            .field("compression", &self.compression)
            .field("ignore_errors", &self.ignore_errors)
            .field("dry_run", &self.dry_run)
            .field("fast_path", &self.fast_path)
            .field("server_public_key", &self.server_public_key)
            .field("get_server_public_key", &self.get_server_public_key)
            .finish_non_exhaustive()
    }
}

impl Default for MysqlOptions {
    fn default() -> Self {
        MysqlOptions {
            hosts: vec!["localhost".into()],
            ports: vec![3306],
            port_given: false,
            sockets: Vec::new(),
            user: "sbtest".into(),
            password: String::new(),
            db: "sbtest".into(),
            ssl: MysqlSslMode::Disabled,
            ssl_key: None,
            ssl_ca: None,
            ssl_cert: None,
            ssl_cipher: None,
            compression: false,
            compression_algorithms: vec!["zlib".into()],
            debug: false,
            ignore_errors: IgnoreList::Some(vec![1213, 1020, 1205]),
            dry_run: false,
            fast_path: true,
            server_public_key: None,
            get_server_public_key: false,
        }
    }
}

/// The `--pgsql-*` options.
#[derive(Clone, PartialEq)]
pub struct PgsqlOptions {
    /// `--pgsql-host`.
    pub host: String,
    /// `--pgsql-port`.
    pub port: u16,
    /// `--pgsql-user`.
    pub user: String,
    /// `--pgsql-password` (never printed; `Debug` hides it).
    pub password: String,
    /// `--pgsql-db`.
    pub db: String,
    /// `--pgsql-sslmode`.
    pub sslmode: PgSslMode,
    /// `--pgsql-ignore-errors`: SQLSTATEs or 2-character classes.
    pub ignore_errors: IgnoreList<String>,
    /// `--pgsql-fast-path` (else `BMK_PGSQL_FASTPATH`): whether connections without
    /// TLS may use bmk's own protocol client.
    pub fast_path: bool,
}

impl fmt::Debug for PgsqlOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgsqlOptions")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &"<hidden>")
            .field("db", &self.db)
            .field("sslmode", &self.sslmode)
            .field("ignore_errors", &self.ignore_errors)
            .field("fast_path", &self.fast_path)
            .finish()
    }
}

impl Default for PgsqlOptions {
    fn default() -> Self {
        PgsqlOptions {
            host: "localhost".into(),
            port: 5432,
            user: "sbtest".into(),
            password: String::new(),
            db: "sbtest".into(),
            sslmode: PgSslMode::Prefer,
            ignore_errors: IgnoreList::Some(
                PGSQL_IGNORED_BY_DEFAULT
                    .split(',')
                    .map(String::from)
                    .collect(),
            ),
            fast_path: true,
        }
    }
}

/// The `--sqlite-*` options.
#[derive(Debug, Clone, PartialEq)]
pub struct SqliteOptions {
    /// `--sqlite-db`.
    pub db: PathBuf,
    /// `--sqlite-busy-timeout`.
    pub busy_timeout: Duration,
    /// `--sqlite-ignore-errors`: primary result codes (`SQLITE_BUSY` = 5, ...).
    pub ignore_errors: IgnoreList<u32>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            db: PathBuf::from("./sbtest.db"),
            busy_timeout: Duration::from_millis(10_000),
            ignore_errors: IgnoreList::Some(vec![5, 6]),
        }
    }
}

/// Everything a [`crate::Driver`] needs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DriverConfig {
    /// The selected driver.
    pub kind: DriverKind,
    /// `--db-*` options.
    pub common: CommonOptions,
    /// `--mysql-*` options (defaults unless `kind` is mysql).
    pub mysql: MysqlOptions,
    /// `--pgsql-*` options (defaults unless `kind` is pgsql).
    pub pgsql: PgsqlOptions,
    /// `--sqlite-*` options (defaults unless `kind` is sqlite).
    pub sqlite: SqliteOptions,
}

/// The first line of the password file at `path`, without its line end: a regular
/// file of at most [`bounded_file::PASSWORD_FILE`] (a path given by mistake, a log or
/// `/dev/zero`, is refused, not read without end). The message of an error names the
/// file and the problem, never the file's content.
fn read_password_file(path: &std::path::Path) -> Result<String, String> {
    let shown = path.display();
    let text = bounded_file::read_to_string(path, bounded_file::PASSWORD_FILE).map_err(|e| {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            format!(
                "'{shown}' is larger than {}; a password file holds one line",
                bounded_file::PASSWORD_FILE.shown()
            )
        } else if e.kind() == std::io::ErrorKind::InvalidData {
            format!("'{shown}' is not UTF-8 text")
        } else {
            format!("cannot read '{shown}': {e}")
        }
    })?;
    let line = text.lines().next().unwrap_or("");
    Ok(line.trim_end_matches('\r').to_string())
}

/// The options of one driver configuration, read through the option table: every value
/// (given, else the table's default) is parsed by its [`OptSpec`], so the grammar, the
/// ranges and the error wording are those of every other option.
struct Lookup<'a> {
    kind: DriverKind,
    get: &'a dyn Fn(&str) -> Option<String>,
    specs: Vec<OptSpec>,
}

impl Lookup<'_> {
    fn raw(&self, name: &str) -> Option<String> {
        (self.get)(name)
    }

    fn err(&self, name: &str, value: &str) -> SqlError {
        SqlError::config(
            self.kind,
            format!("invalid value '{value}' for option --{name}"),
        )
    }

    /// The typed value of option `name`: the given one, else the default; `None` when
    /// it has neither.
    fn value(&self, name: &str) -> Result<Option<OptValue>, SqlError> {
        let Some(spec) = self.specs.iter().find(|s| s.name == name) else {
            return Err(SqlError::config(
                self.kind,
                format!("--{name} is not a database option"),
            ));
        };
        match self.raw(name).or_else(|| spec.default.clone()) {
            None => Ok(None),
            Some(raw) => spec
                .parse(&raw)
                .map(Some)
                .map_err(|e| SqlError::config(self.kind, e.to_string())),
        }
    }

    fn string(&self, name: &str) -> Result<String, SqlError> {
        Ok(self.value(name)?.map(|v| v.to_string()).unwrap_or_default())
    }

    /// The password: option `name` if given, else the first line of the file option
    /// `file` names, else environment variable `env` (what the servers' own clients
    /// read), else empty. Errors name the file, never what it holds.
    fn password(&self, name: &str, file: &str, env: &str) -> Result<String, SqlError> {
        if let Some(p) = self.raw(name) {
            return Ok(p);
        }
        if let Some(path) = self.opt_path(file)? {
            return read_password_file(&path)
                .map_err(|e| SqlError::config(self.kind, format!("--{file}: {e}")));
        }
        Ok(std::env::var(env).unwrap_or_default())
    }

    fn opt_path(&self, name: &str) -> Result<Option<PathBuf>, SqlError> {
        Ok(self.opt_string(name)?.map(PathBuf::from))
    }

    /// A string option's value, `None` when it is unset or empty.
    fn opt_string(&self, name: &str) -> Result<Option<String>, SqlError> {
        Ok(Some(self.string(name)?).filter(|s| !s.is_empty()))
    }

    fn bool(&self, name: &str) -> Result<bool, SqlError> {
        Ok(self.value(name)?.is_some_and(|v| v.as_bool()))
    }

    /// A boolean option whose environment variable `env` stands in for it when it is
    /// not given (an alias kept from before the option existed); a value of `env`
    /// that is not a boolean is an error naming the variable.
    fn bool_or_env(&self, name: &str, env: &str) -> Result<bool, SqlError> {
        if self.raw(name).is_none() {
            if let Ok(v) = std::env::var(env) {
                return bmk_engine::options::parse_bool(&v).ok_or_else(|| {
                    SqlError::config(
                        self.kind,
                        format!("invalid value '{v}' for {env}: expected on, off, 1 or 0"),
                    )
                });
            }
        }
        self.bool(name)
    }

    /// An integer option in the type the configuration holds it in; the option's range
    /// keeps it inside that type.
    fn int<T: TryFrom<i64>>(&self, name: &str) -> Result<T, SqlError> {
        let v = self.value(name)?;
        let n = v.as_ref().and_then(OptValue::as_i64).unwrap_or(0);
        T::try_from(n).map_err(|_| self.err(name, &n.to_string()))
    }

    fn list(&self, name: &str) -> Result<Vec<String>, SqlError> {
        Ok(match self.value(name)? {
            Some(OptValue::List(items)) => items.into_iter().filter(|s| !s.is_empty()).collect(),
            Some(other) => split_list(&other.to_string()),
            None => Vec::new(),
        })
    }

    fn parsed<T: FromStr<Err = String>>(&self, name: &str) -> Result<T, SqlError> {
        self.string(name)?
            .parse()
            .map_err(|e: String| SqlError::config(self.kind, e))
    }
}

fn split_list(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// SQLite primary result codes by name, for `--sqlite-ignore-errors`.
const SQLITE_CODES: &[(&str, u32)] = &[
    ("error", 1),
    ("internal", 2),
    ("perm", 3),
    ("abort", 4),
    ("busy", 5),
    ("locked", 6),
    ("nomem", 7),
    ("readonly", 8),
    ("interrupt", 9),
    ("ioerr", 10),
    ("corrupt", 11),
    ("notfound", 12),
    ("full", 13),
    ("cantopen", 14),
    ("protocol", 15),
    ("empty", 16),
    ("schema", 17),
    ("toobig", 18),
    ("constraint", 19),
    ("mismatch", 20),
    ("misuse", 21),
];

fn ignore_list<T>(
    entries: Vec<String>,
    mut parse: impl FnMut(&str) -> Option<T>,
    err: impl Fn(&str) -> SqlError,
) -> Result<IgnoreList<T>, SqlError> {
    if entries.iter().any(|e| e.eq_ignore_ascii_case("all")) {
        return Ok(IgnoreList::All);
    }
    let mut out = Vec::with_capacity(entries.len());
    for e in &entries {
        if e.eq_ignore_ascii_case("none") {
            continue;
        }
        out.push(parse(e).ok_or_else(|| err(e))?);
    }
    Ok(IgnoreList::Some(out))
}

impl DriverConfig {
    /// Build the configuration of driver `kind` from a lookup of option values
    /// (option name with `-` separators, e.g. `mysql-host`, → the raw value given by
    /// the user, or `None` for the default). Only the selected driver's options are
    /// parsed; the other sections keep their defaults.
    pub fn from_options(
        kind: DriverKind,
        get: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, SqlError> {
        let l = Lookup {
            kind,
            get,
            specs: option_specs(),
        };
        let ps_mode = if l.string("db-ps-mode")?.eq_ignore_ascii_case("disable") {
            PsMode::Disable
        } else {
            PsMode::Auto
        };
        let common = CommonOptions {
            ps_mode,
            debug: l.bool("db-debug")?,
            connect_timeout: Duration::from_secs(l.int::<u64>("db-connect-timeout")?.max(1)),
            io_timeout: match l.int::<u64>("db-timeout")? {
                0 => None,
                secs => Some(Duration::from_secs(secs)),
            },
        };
        let mut cfg = DriverConfig {
            kind,
            common,
            ..Default::default()
        };
        match kind {
            DriverKind::Mysql => {
                let ports = l
                    .list("mysql-port")?
                    .iter()
                    .map(|p| p.parse::<u16>().map_err(|_| l.err("mysql-port", p)))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut hosts = l.list("mysql-host")?;
                if hosts.is_empty() {
                    hosts.push("localhost".into());
                }
                cfg.mysql = MysqlOptions {
                    hosts,
                    ports: if ports.is_empty() { vec![3306] } else { ports },
                    port_given: l.raw("mysql-port").is_some(),
                    sockets: l.list("mysql-socket")?,
                    user: l.string("mysql-user")?,
                    password: l.password("mysql-password", "mysql-password-file", "MYSQL_PWD")?,
                    db: l.string("mysql-db")?,
                    ssl: l.parsed("mysql-ssl")?,
                    ssl_key: l.opt_path("mysql-ssl-key")?,
                    ssl_ca: l.opt_path("mysql-ssl-ca")?,
                    ssl_cert: l.opt_path("mysql-ssl-cert")?,
                    ssl_cipher: l.opt_string("mysql-ssl-cipher")?,
                    compression: l.bool("mysql-compression")?,
                    compression_algorithms: l.list("mysql-compression-algorithms")?,
                    debug: l.bool("mysql-debug")?,
                    ignore_errors: ignore_list(
                        l.list("mysql-ignore-errors")?,
                        |e| e.parse().ok(),
                        |e| l.err("mysql-ignore-errors", e),
                    )?,
                    dry_run: l.bool("mysql-dry-run")?,
                    fast_path: l.bool_or_env("mysql-fast-path", "BMK_MYSQL_FASTPATH")?,
                    server_public_key: match l.opt_path("mysql-server-public-key")? {
                        Some(path) => Some(ServerPublicKey::from_file(&path).map_err(|e| {
                            SqlError::config(kind, format!("--mysql-server-public-key: {e}"))
                        })?),
                        None => None,
                    },
                    get_server_public_key: l.bool("mysql-get-server-public-key")?,
                };
            }
            DriverKind::Pgsql => {
                cfg.pgsql = PgsqlOptions {
                    host: l.string("pgsql-host")?,
                    port: l.int("pgsql-port")?,
                    user: l.string("pgsql-user")?,
                    password: l.password("pgsql-password", "pgsql-password-file", "PGPASSWORD")?,
                    db: l.string("pgsql-db")?,
                    sslmode: l.parsed("pgsql-sslmode")?,
                    ignore_errors: ignore_list(
                        l.list("pgsql-ignore-errors")?,
                        |e| {
                            (matches!(e.len(), 2 | 5)
                                && e.bytes().all(|b| b.is_ascii_alphanumeric()))
                            .then(|| e.to_ascii_uppercase())
                        },
                        |e| l.err("pgsql-ignore-errors", e),
                    )?,
                    fast_path: l.bool_or_env("pgsql-fast-path", "BMK_PGSQL_FASTPATH")?,
                };
            }
            DriverKind::Sqlite => {
                cfg.sqlite = SqliteOptions {
                    db: PathBuf::from(l.string("sqlite-db")?),
                    busy_timeout: Duration::from_millis(l.int("sqlite-busy-timeout")?),
                    ignore_errors: ignore_list(
                        l.list("sqlite-ignore-errors")?,
                        |e| {
                            let lower = e.to_ascii_lowercase();
                            let name = lower.strip_prefix("sqlite_").unwrap_or(&lower);
                            SQLITE_CODES
                                .iter()
                                .find(|(n, _)| *n == name)
                                .map(|(_, c)| *c)
                                .or_else(|| e.parse().ok())
                        },
                        |e| l.err("sqlite-ignore-errors", e),
                    )?,
                };
            }
        }
        Ok(cfg)
    }

    /// The default configuration of driver `kind` (every option at its default).
    pub fn defaults(kind: DriverKind) -> Self {
        DriverConfig::from_options(kind, &|_| None).expect("defaults parse")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(kind: DriverKind, opts: &[(&str, &str)]) -> Result<DriverConfig, SqlError> {
        let m: HashMap<String, String> = opts
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        DriverConfig::from_options(kind, &move |k| m.get(k).cloned())
    }

    #[test]
    fn defaults_match_table() {
        let c = DriverConfig::defaults(DriverKind::Mysql);
        assert_eq!(c.mysql.hosts, vec!["localhost"]);
        assert_eq!(c.mysql.ports, vec![3306]);
        assert!(!c.mysql.port_given);
        assert_eq!(
            c.mysql.ignore_errors,
            IgnoreList::Some(vec![1213, 1020, 1205])
        );
        assert_eq!(c.common.ps_mode, PsMode::Auto);
        for spec in option_specs() {
            assert!(!spec.help.is_empty(), "{}", spec.name);
        }
        let p = DriverConfig::defaults(DriverKind::Pgsql);
        for sqlstate in ["40P01", "23505", "40001"] {
            assert!(
                p.pgsql.ignore_errors.matches_sqlstate(sqlstate),
                "{sqlstate}"
            );
        }
        assert!(!p.pgsql.ignore_errors.matches_sqlstate("08006"));
        let s = DriverConfig::defaults(DriverKind::Sqlite);
        assert_eq!(s.sqlite.ignore_errors, IgnoreList::Some(vec![5, 6]));
    }

    #[test]
    fn parses_values() {
        let c = cfg(
            DriverKind::Mysql,
            &[
                ("mysql-host", "a,b"),
                ("mysql-port", "1,2"),
                ("mysql-ssl", "on"),
                ("mysql-ignore-errors", "all"),
                ("db-ps-mode", "disable"),
                ("mysql-dry-run", "on"),
            ],
        )
        .unwrap();
        assert_eq!(c.mysql.hosts, vec!["a", "b"]);
        assert_eq!(c.mysql.ports, vec![1, 2]);
        assert!(c.mysql.port_given);
        assert_eq!(c.mysql.ssl, MysqlSslMode::Required);
        assert_eq!(c.mysql.ignore_errors, IgnoreList::All);
        assert_eq!(c.common.ps_mode, PsMode::Disable);
        assert!(c.mysql.dry_run);
        assert!(cfg(DriverKind::Mysql, &[("mysql-port", "x")]).is_err());
        assert!(cfg(DriverKind::Mysql, &[("mysql-ssl", "bogus")]).is_err());
        assert!(cfg(DriverKind::Mysql, &[("mysql-ignore-errors", "12a")]).is_err());
        let p = cfg(DriverKind::Pgsql, &[("pgsql-ignore-errors", "08,23505")]).unwrap();
        assert!(p.pgsql.ignore_errors.matches_sqlstate("08006"));
        assert!(p.pgsql.ignore_errors.matches_sqlstate("23505"));
        assert!(!p.pgsql.ignore_errors.matches_sqlstate("23503"));
        let s = cfg(
            DriverKind::Sqlite,
            &[("sqlite-ignore-errors", "SQLITE_BUSY,19")],
        )
        .unwrap();
        assert_eq!(s.sqlite.ignore_errors, IgnoreList::Some(vec![5, 19]));
    }

    #[test]
    fn debug_hides_password() {
        let c = cfg(DriverKind::Mysql, &[("mysql-password", "s3cret")]).unwrap();
        assert!(!format!("{c:?}").contains("s3cret"));
        let c = cfg(DriverKind::Pgsql, &[("pgsql-password", "s3cret")]).unwrap();
        assert!(!format!("{c:?}").contains("s3cret"));
    }

    /// The password comes from the option, else the file, else the environment; the
    /// errors of a bad file never show what is in it.
    #[test]
    fn password_sources_in_order() {
        let dir = std::env::temp_dir().join(format!("bmk-pwfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pw");
        std::fs::write(&file, "from-file\r\nsecond line\n").unwrap();
        let path = file.to_str().unwrap();
        // SAFETY: nextest runs each test in a process of its own.
        unsafe {
            std::env::set_var("MYSQL_PWD", "from-env");
            std::env::set_var("PGPASSWORD", "pg-env");
        }
        let m = |o: &[(&str, &str)]| cfg(DriverKind::Mysql, o).unwrap().mysql.password;
        assert_eq!(m(&[]), "from-env");
        assert_eq!(m(&[("mysql-password-file", path)]), "from-file");
        assert_eq!(
            m(&[("mysql-password-file", path), ("mysql-password", "opt")]),
            "opt"
        );
        let p = cfg(DriverKind::Pgsql, &[]).unwrap().pgsql.password;
        assert_eq!(p, "pg-env");
        let p = cfg(DriverKind::Pgsql, &[("pgsql-password-file", path)]);
        assert_eq!(p.unwrap().pgsql.password, "from-file");

        let big = dir.join("big");
        std::fs::write(&big, "SECRETLINE\n".repeat(10_000)).unwrap();
        for bad in [big.to_str().unwrap(), "/dev/zero", "/nonexistent/pw"] {
            let e = cfg(DriverKind::Mysql, &[("mysql-password-file", bad)]).unwrap_err();
            assert!(e.message.contains(bad), "{}", e.message);
            assert!(!e.message.contains("SECRETLINE"), "{}", e.message);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
