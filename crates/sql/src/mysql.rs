//! The MySQL/MariaDB driver. Plain sockets log in with bmk's own handshake
//! (`mysql_handshake.rs`) and run every command on bmk's own protocol path
//! (`mysql_fast.rs`); the `mysql` crate logs in and serves TLS, compression,
//! `--mysql-fast-path=off` and the one login bmk's handshake does not do (MariaDB's
//! `parsec`). A connection is one or the other for its whole life: the own protocol
//! path never speaks on a socket the crate logged in.
//!
//! # `parsec` and event loops
//! A crate connection blocks its thread on every read. The driver tells the engine
//! that a plain-socket MySQL run waits cooperatively before any connect, so a run
//! whose server turns out to want `parsec` may already be on event loops, where one
//! worker's blocking read would hold up every other worker of its loop and skew what
//! is measured (a worker cannot move to a thread of its own once on a loop). There
//! such a connect fails instead, saying to run with `--event-loops=off`.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mysql::consts::ColumnType;
use mysql::prelude::Queryable;
use mysql::{ClientIdentity, Conn, LocalInfileHandler, OptsBuilder, SslOpts};

use crate::config::{DriverConfig, MysqlSslMode, PsMode};
use crate::connection::{Connection, StatementId};
use crate::connection_state::{keeps_state_in_field, ConnectionState};
use crate::deadline::watch;
use crate::driver_kind::DriverKind;
use crate::emulate::{Dialect, Template};
use crate::error::{Endpoint, SqlError, SqlErrorKind, SqlOp};
use crate::last_segment::{hold_until_close, send_last};
use crate::mysql_fast::{BulkOutcome, FastIo, StmtMeta};
use crate::mysql_handshake::{
    log_in, plugin_refusal, refusal, HandshakeError, Login, CR_AUTH_PLUGIN_CANNOT_LOAD,
    CR_AUTH_PLUGIN_ERR,
};
use crate::reconnect::{after_listed_error, lost_connection_error, retry_lost, Lost, Reconnects};
use crate::resultset::ResultSet;
use crate::row_source::{Replay, RowSource};
use crate::socket_timeouts::{set_socket_timeouts, timed_out};
use crate::statement_table::{register, registered};
use crate::trace::{trace, trace_if};
use crate::value::Value;

/// Client error numbers that mean the connection is gone. When one of them is in
/// `--mysql-ignore-errors`, the driver reconnects.
pub const LOST_CONNECTION_ERRORS: [u32; 7] = [2013, 2006, 2055, 2011, 1053, 1927, 4031];

/// Socket paths tried for host `localhost` without port or socket (MySQL client
/// convention).
const DEFAULT_SOCKETS: [&str; 3] = [
    "/run/mysqld/mysqld.sock",
    "/var/run/mysqld/mysqld.sock",
    "/tmp/mysql.sock",
];

/// Set once bmk's own login met an authentication it does not do (see
/// [`crate::mysql_handshake`]): from then on the process logs in through the crate
/// straight away instead of paying for a refused attempt per connect. The servers of
/// one run normally share their authentication set-up.
static OWN_LOGIN_REFUSED: AtomicBool = AtomicBool::new(false);

/// `COM_QUIT`, framed.
const COM_QUIT: [u8; 5] = [1, 0, 0, 0, 0x01];

/// The authenticated socket: the crate's session (TLS, compression,
/// `--mysql-fast-path=off`, or a login bmk's own handshake does not do; every command
/// through the crate), or bmk's own (plain sockets; every command through
/// [`crate::mysql_fast`]).
enum Session {
    Crate(Conn),
    Own(OwnedFd),
}

impl Session {
    /// Says goodbye (`COM_QUIT`, leaving with the FIN) and closes the socket.
    fn close(self) {
        match self {
            Session::Crate(conn) => hold_until_close(conn.as_raw_fd()),
            Session::Own(fd) => send_last(fd.as_raw_fd(), &COM_QUIT),
        }
    }
}

/// A statement prepared on the server: through the crate (which executes it when the
/// fast path is off), or through the fast path (its id).
#[derive(Clone)]
enum Prepared {
    Crate(mysql::Statement),
    Own(u32),
}

impl Prepared {
    fn id(&self) -> u32 {
        match self {
            Prepared::Crate(s) => s.id(),
            Prepared::Own(id) => *id,
        }
    }
}

/// One prepared statement: its SQL is kept so it can be re-prepared after a reconnect.
struct Stmt {
    template: Template,
    sql: Arc<str>,
    /// Server-side handle; `None` when emulated or not (re-)prepared yet.
    server: Option<Prepared>,
    /// Emulate client-side (ps-mode disable, or the server cannot prepare it).
    emulate: bool,
    /// Result metadata for the fast path (with `server`).
    meta: Option<StmtMeta>,
}

/// A MySQL connection.
pub(crate) struct MysqlConnection {
    cfg: Arc<DriverConfig>,
    endpoint: Endpoint,
    /// The crate's options, for a connection the crate serves (built at connect, which
    /// checks them). A fast-path connection builds them only if the crate logs it in:
    /// building them (strings, TLS settings, host name parsing) is work its own login
    /// does not need.
    opts: Option<OptsBuilder>,
    conn: Option<Session>,
    stmts: Vec<Option<Stmt>>,
    /// What the shared `Connection` methods keep.
    state: ConnectionState,
    debug: bool,
    /// The lost connection being got back (see [`crate::reconnect`]): set when a
    /// listed error lost it, cleared by a successful connect.
    lost: Option<Lost>,
    /// Buffers of the hand-written execute path, exactly when the session is bmk's own;
    /// `None` when the crate logged in (TLS, compression, `--mysql-fast-path=off`, or
    /// a login bmk's handshake declines), where the crate does everything.
    fast: Option<FastIo>,
    /// Column names of the last text query (fast path), reused while unchanged.
    text_meta: StmtMeta,
    /// The rows of the running `LOAD DATA LOCAL INFILE` (`load_text`): the crate's
    /// file handler must be `'static`, so it reads them from here.
    infile: Arc<Mutex<Vec<u8>>>,
    /// The server refused `LOAD DATA LOCAL INFILE`: `load_text` declines from now on.
    infile_refused: bool,
    /// Whether the server takes MariaDB's bulk execute (`None`: not tried yet).
    bulk_execute: Option<bool>,
    /// `@@max_allowed_packet`, once asked.
    max_packet: Option<usize>,
    /// The table `insert_rows` last loaded, and whether ASCII text may go to it as
    /// binary parameters (see `ascii_as_binary`); forgotten on DDL through this
    /// connection, which may have redefined the table.
    binary_text_table: Option<(String, bool)>,
}

/// Server errors that mean "LOAD DATA LOCAL INFILE is not allowed here": 1148
/// (local_infile=OFF), 4166 (MariaDB: the client capability is off), 3948 (MySQL 8:
/// local_infile=OFF).
const INFILE_REFUSED: [u32; 3] = [1148, 4166, 3948];

/// Whether executes may bypass the crate (see [`crate::mysql_fast`]): plain sockets
/// only; `--mysql-fast-path=off` (or `BMK_MYSQL_FASTPATH=0`) turns it off (for
/// comparisons and diagnosis).
pub(crate) fn fast_path_allowed(cfg: &DriverConfig) -> bool {
    cfg.mysql.fast_path && cfg.mysql.ssl == MysqlSslMode::Disabled && !cfg.mysql.compression
}

/// Host, port or socket for connection `index`.
fn pick_endpoint(cfg: &DriverConfig, index: usize) -> Endpoint {
    let m = &cfg.mysql;
    let user = Some(m.user.clone());
    if !m.sockets.is_empty() {
        return Endpoint {
            host: None,
            port: None,
            socket: Some(m.sockets[index % m.sockets.len()].clone()),
            user,
        };
    }
    let n = m.hosts.len() * m.ports.len();
    let i = index % n.max(1);
    let host = m.hosts[i / m.ports.len()].clone();
    let port = m.ports[i % m.ports.len()];
    if host == "localhost" && !m.port_given {
        if let Some(s) = DEFAULT_SOCKETS.iter().find(|s| Path::new(s).exists()) {
            return Endpoint {
                host: None,
                port: None,
                socket: Some((*s).to_string()),
                user,
            };
        }
    }
    Endpoint {
        host: Some(host),
        port: Some(port),
        socket: None,
        user,
    }
}

fn ssl_opts(cfg: &DriverConfig) -> Result<Option<SslOpts>, SqlError> {
    let m = &cfg.mysql;
    let mut o = SslOpts::default();
    match m.ssl {
        MysqlSslMode::Disabled => return Ok(None),
        MysqlSslMode::Preferred | MysqlSslMode::Required => {
            o = o
                .with_danger_accept_invalid_certs(true)
                .with_danger_skip_domain_validation(true);
        }
        MysqlSslMode::VerifyCa => o = o.with_danger_skip_domain_validation(true),
        MysqlSslMode::VerifyIdentity => {}
    }
    if let Some(ca) = &m.ssl_ca {
        o = o.with_root_cert_path(Some(ca.clone()));
    }
    match (&m.ssl_cert, &m.ssl_key) {
        (Some(cert), Some(key)) => {
            o = o.with_client_identity(Some(ClientIdentity::new(cert.clone(), key.clone())));
        }
        (None, None) => {}
        _ => {
            return Err(SqlError::config(
                DriverKind::Mysql,
                "--mysql-ssl-cert and --mysql-ssl-key must be given together",
            ))
        }
    }
    if let Some(cipher) = &m.ssl_cipher {
        let wanted: Vec<String> = cipher
            .split([':', ','])
            .filter(|s| !s.is_empty())
            .map(cipher_key)
            .collect();
        let suites: Vec<_> = rustls::crypto::ring::ALL_CIPHER_SUITES
            .iter()
            .filter(|s| wanted.contains(&cipher_key(&format!("{:?}", s.suite()))))
            .copied()
            .collect();
        if suites.is_empty() {
            return Err(SqlError::config(
                DriverKind::Mysql,
                format!("--mysql-ssl-cipher: no supported cipher suite matches '{cipher}'"),
            ));
        }
        o = o.with_cipher_suites(&suites);
    }
    Ok(Some(o))
}

/// Canonical form of a cipher suite name, so OpenSSL names (`TLS_AES_128_GCM_SHA256`,
/// `ECDHE-RSA-AES128-GCM-SHA256`) match rustls names (`TLS13_AES_128_GCM_SHA256`,
/// `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`).
fn cipher_key(name: &str) -> String {
    let up = name.trim().to_ascii_uppercase();
    let up = up
        .strip_prefix("TLS13_")
        .or_else(|| up.strip_prefix("TLS_"))
        .unwrap_or(&up)
        .replace("_WITH_", "_");
    let key: String = up.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    match key.strip_suffix("SHA256") {
        Some(k) if k.ends_with("CHACHA20POLY1305") => k.to_string(),
        _ => key,
    }
}

fn base_opts(cfg: &DriverConfig, ep: &Endpoint) -> Result<OptsBuilder, SqlError> {
    let m = &cfg.mysql;
    let mut b = OptsBuilder::new()
        .user(Some(m.user.clone()))
        .pass(Some(m.password.clone()))
        .db_name((!m.db.is_empty()).then(|| m.db.clone()))
        .prefer_socket(false)
        .tcp_nodelay(true)
        .stmt_cache_size(0)
        // A client-side packet limit given here spares every connect the crate's
        // `SELECT @@max_allowed_packet` round trip (the C client libraries ask nothing
        // either). 1 GiB is the largest the server accepts, so the client never refuses
        // what the server would take; the server enforces its own limit.
        .max_allowed_packet(Some(1 << 30))
        .server_key_path(Some(no_key_path()))
        .tcp_connect_timeout(Some(cfg.common.connect_timeout))
        .read_timeout(cfg.common.io_timeout)
        .write_timeout(cfg.common.io_timeout);
    if let Some(s) = &ep.socket {
        b = b.socket(Some(s.clone()));
    } else {
        b = b
            .ip_or_hostname(ep.host.clone())
            .tcp_port(ep.port.unwrap_or(3306));
    }
    if m.compression {
        let algs: Vec<String> = m
            .compression_algorithms
            .iter()
            .map(|a| a.to_ascii_lowercase())
            .collect();
        if algs.is_empty() || algs.iter().any(|a| a == "zlib") {
            b = b.compress(Some(mysql::Compression::default()));
        } else if !algs.iter().all(|a| a == "uncompressed") {
            return Err(SqlError::config(
                DriverKind::Mysql,
                format!(
                    "--mysql-compression-algorithms: unsupported algorithm(s) '{}' (supported: zlib, uncompressed)",
                    algs.join(",")
                ),
            ));
        }
    }
    Ok(b.ssl_opts(ssl_opts(cfg)?))
}

/// The key file the crate is given: a path no file can have. The crate encrypts the
/// password for `caching_sha2_password`'s full authentication over plain TCP with
/// whatever key the server sends, and has no option to refuse; but given a key file,
/// it reads it at that moment instead of asking, and gives up when the read fails,
/// before it sends anything. A path with a NUL byte fails that read before any file
/// system access. Its full authentication over plain TCP therefore always fails (see
/// [`crate_refused_full_auth`]): only bmk's own login does the RSA exchange, with a
/// key the user trusts. Over TLS or a UNIX socket the crate never reads the file.
fn no_key_path() -> std::path::PathBuf {
    use std::os::unix::ffi::OsStringExt as _;
    std::ffi::OsString::from_vec(b"bmk: no key for the client library\0".to_vec()).into()
}

/// Whether `e` is the crate's failure to read [`no_key_path`].
fn crate_refused_full_auth(e: &std::io::Error) -> bool {
    static READ_ERROR: OnceLock<String> = OnceLock::new();
    let expected = READ_ERROR.get_or_init(|| match std::fs::read(no_key_path()) {
        Err(e) => e.to_string(),
        Ok(_) => String::new(),
    });
    e.kind() == ErrorKind::InvalidInput && !expected.is_empty() && e.to_string() == *expected
}

/// The refusal of full authentication over plain TCP on the crate's login.
fn crate_full_auth_refusal() -> mysql::Error {
    refusal(
        CR_AUTH_PLUGIN_ERR,
        "caching_sha2_password: the server asks for the password over plain TCP, which \
         bmk sends only over TLS (--mysql-ssl=REQUIRED or stricter), a UNIX socket, or \
         through its own login (--mysql-fast-path=on, no --mysql-compression) with \
         --mysql-server-public-key=FILE or --mysql-get-server-public-key"
            .into(),
    )
}

/// The refusal of a crate login, which would block its thread, on an event loop
/// (see the module doc).
fn crate_login_refused_on_a_loop() -> mysql::Error {
    refusal(
        CR_AUTH_PLUGIN_CANNOT_LOAD,
        "the server asks for an authentication plugin only the client library speaks \
         (MariaDB's parsec), whose connections block their thread: on an event loop \
         that would hold up the loop's other workers; run with --event-loops=off"
            .into(),
    )
}

/// `call` on the crate's session `conn`, which must end within `io_timeout` as a
/// whole (see [`watch`]); the watch ends before the caller can drop the connection.
fn watched<T>(
    conn: &mut Conn,
    io_timeout: Option<Duration>,
    call: impl FnOnce(&mut Conn) -> Result<T, mysql::Error>,
) -> Result<T, mysql::Error> {
    let _watch = watch(conn.as_raw_fd(), io_timeout);
    call(conn)
}

/// Map a client error to (errno, sqlstate, message, connection lost).
fn describe(e: &mysql::Error, op: SqlOp, ep: &Endpoint) -> (u32, String, String, bool) {
    let target = match (&ep.socket, &ep.host) {
        (Some(s), _) => format!("socket '{s}'"),
        (None, Some(h)) => format!("'{h}:{}'", ep.port.unwrap_or(3306)),
        _ => String::new(),
    };
    match e {
        mysql::Error::MySqlError(me) => (
            u32::from(me.code),
            me.state.clone(),
            me.message.clone(),
            LOST_CONNECTION_ERRORS.contains(&u32::from(me.code)),
        ),
        mysql::Error::IoError(io) if op == SqlOp::Connect => {
            let code = if ep.socket.is_some() { 2002 } else { 2003 };
            (
                code,
                "HY000".into(),
                format!("Can't connect to server on {target} ({io})"),
                true,
            )
        }
        mysql::Error::IoError(io) => {
            let (code, what) = match io.kind() {
                ErrorKind::BrokenPipe | ErrorKind::NotConnected => (2006, "Server has gone away"),
                _ => (2013, "Lost connection to server during query"),
            };
            (code, "HY000".into(), format!("{what} ({io})"), true)
        }
        mysql::Error::DriverError(mysql::DriverError::ConnectTimeout) => (
            2003,
            "HY000".into(),
            format!("Can't connect to server on {target} (connect timeout)"),
            true,
        ),
        mysql::Error::DriverError(mysql::DriverError::CouldNotConnect(d)) => {
            let detail = d
                .as_ref()
                .map(|(addr, desc, _)| format!("{addr}: {desc}"))
                .unwrap_or_default();
            (
                if ep.socket.is_some() { 2002 } else { 2003 },
                "HY000".into(),
                format!("Can't connect to server on {target} ({detail})"),
                true,
            )
        }
        mysql::Error::DriverError(mysql::DriverError::TlsNotSupported) => (
            2026,
            "HY000".into(),
            "SSL connection error: the server does not support TLS".into(),
            false,
        ),
        mysql::Error::DriverError(mysql::DriverError::PacketOutOfSync)
        | mysql::Error::DriverError(mysql::DriverError::UnexpectedPacket) => (
            2013,
            "HY000".into(),
            format!("Lost connection to server during query ({e})"),
            true,
        ),
        mysql::Error::DriverError(mysql::DriverError::PacketTooLarge) => (
            2020,
            "HY000".into(),
            "Got packet bigger than 'max_allowed_packet' bytes".into(),
            false,
        ),
        mysql::Error::CodecError(c) if op == SqlOp::Connect => (
            2026,
            "HY000".into(),
            format!("SSL connection error or connection lost during the handshake: {c}"),
            true,
        ),
        mysql::Error::CodecError(c) => (
            2013,
            "HY000".into(),
            format!("Lost connection to server during query ({c})"),
            true,
        ),
        mysql::Error::TlsError(t) => (
            2026,
            "HY000".into(),
            format!("SSL connection error: {t}"),
            op == SqlOp::Connect,
        ),
        other => (2000, "HY000".into(), other.to_string(), false),
    }
}

/// Append the text form of a binary-protocol value, as the server would print it.
fn push_value(rs: &mut ResultSet, v: mysql::Value, col: &mysql::Column) {
    use std::io::Write as _;
    match v {
        mysql::Value::NULL => rs.push_cell(None),
        mysql::Value::Bytes(b) => rs.push_cell(Some(&b)),
        mysql::Value::Int(i) => rs.push_cell_with(|buf| {
            let _ = write!(buf, "{i}");
        }),
        mysql::Value::UInt(u) => rs.push_cell_with(|buf| {
            let _ = write!(buf, "{u}");
        }),
        mysql::Value::Float(f) => rs.push_cell_with(|buf| {
            let _ = write!(buf, "{f}");
        }),
        mysql::Value::Double(d) => rs.push_cell_with(|buf| {
            let _ = write!(buf, "{d}");
        }),
        mysql::Value::Date(y, mo, d, h, mi, s, us) => rs.push_cell_with(|buf| {
            let _ = write!(buf, "{y:04}-{mo:02}-{d:02}");
            if col.column_type() != ColumnType::MYSQL_TYPE_DATE {
                let _ = write!(buf, " {h:02}:{mi:02}:{s:02}");
                push_fraction(buf, us, col.decimals());
            }
        }),
        mysql::Value::Time(neg, days, h, mi, s, us) => rs.push_cell_with(|buf| {
            let hours = days * 24 + u32::from(h);
            let sign = if neg { "-" } else { "" };
            let _ = write!(buf, "{sign}{hours:02}:{mi:02}:{s:02}");
            push_fraction(buf, us, col.decimals());
        }),
    }
}

fn push_fraction(buf: &mut Vec<u8>, micros: u32, decimals: u8) {
    use std::io::Write as _;
    let d = usize::from(decimals.min(6));
    if d > 0 {
        let digits = format!("{micros:06}");
        let _ = write!(buf, ".{}", &digits[..d]);
    }
}

/// Collect every result set of a query result.
fn collect<P: mysql::prelude::Protocol>(
    mut qr: mysql::QueryResult<'_, '_, '_, P>,
) -> Result<(VecDeque<Option<ResultSet>>, u64), mysql::Error> {
    let mut sets = VecDeque::new();
    let mut affected = 0;
    while let Some(mut set) = qr.iter() {
        let columns = set.columns();
        let cols = columns.as_ref();
        if cols.is_empty() {
            affected = set.affected_rows();
            for row in set.by_ref() {
                row?;
            }
            sets.push_back(None);
            continue;
        }
        let mut rs = ResultSet::new(cols.iter().map(|c| c.name_str().into_owned()).collect());
        for row in set.by_ref() {
            let row = row?;
            let cols = row.columns();
            for (v, c) in row.unwrap().into_iter().zip(cols.iter()) {
                push_value(&mut rs, v, c);
            }
        }
        affected = 0;
        sets.push_back(Some(rs));
    }
    Ok((sets, affected))
}

impl Drop for MysqlConnection {
    fn drop(&mut self) {
        self.close();
    }
}

impl MysqlConnection {
    pub(crate) fn connect(cfg: Arc<DriverConfig>, index: usize) -> Result<Self, SqlError> {
        let endpoint = pick_endpoint(&cfg, index);
        let debug = cfg.common.debug || cfg.mysql.debug;
        let fast = fast_path_allowed(&cfg).then(|| FastIo::new(cfg.common.io_timeout));
        let opts = match fast {
            Some(_) => None,
            None => Some(base_opts(&cfg, &endpoint)?),
        };
        let mut c = MysqlConnection {
            fast,
            text_meta: StmtMeta::default(),
            cfg,
            endpoint,
            opts,
            conn: None,
            stmts: Vec::new(),
            state: ConnectionState::new(DriverKind::Mysql),
            debug,
            lost: None,
            infile: Arc::default(),
            infile_refused: false,
            bulk_execute: None,
            max_packet: None,
            binary_text_table: None,
        };
        c.open()?;
        Ok(c)
    }

    fn trace(&self, what: &str, detail: &str) {
        if self.debug {
            trace("mysql", what, detail);
        }
    }

    /// Close the connection: `COM_QUIT` leaves with the FIN.
    fn close(&mut self) {
        if let Some(session) = self.conn.take() {
            session.close();
        }
    }

    fn target(&self) -> String {
        match (&self.endpoint.socket, &self.endpoint.host) {
            (Some(s), _) => format!("socket {s}"),
            (None, Some(h)) => format!("{h}:{}", self.endpoint.port.unwrap_or(3306)),
            _ => String::new(),
        }
    }

    /// Open the connection (with `PREFERRED` falling back to plain text).
    fn open(&mut self) -> Result<(), SqlError> {
        trace_if(self.debug, "mysql", "connect", || {
            format!(
                "{} user '{}' db '{}'",
                self.target(),
                self.cfg.mysql.user,
                self.cfg.mysql.db
            )
        });
        self.conn = None;
        let res = self.log_in();
        match res {
            Ok(session) => {
                if let Session::Crate(_) = session {
                    // A login bmk's handshake declined: the crate serves this
                    // connection from now on (see `log_in`).
                    self.fast = None;
                }
                self.conn = Some(session);
                self.lost = None;
                for s in self.stmts.iter_mut().flatten() {
                    s.server = None;
                    s.meta = None;
                }
                if let Some(f) = self.fast.as_mut() {
                    f.reset();
                }
                Ok(())
            }
            Err(e) => {
                let (errno, state, msg, _) = describe(&e, SqlOp::Connect, &self.endpoint);
                let mut err = SqlError::new(DriverKind::Mysql, SqlOp::Connect, errno, state, msg);
                err.kind = SqlErrorKind::Connect;
                err.endpoint = Some(Box::new(self.endpoint.clone()));
                Err(err)
            }
        }
    }

    /// Connects and authenticates within the connect timeout (every read and write by
    /// socket timeouts no longer than it); the queries then get the I/O timeout. Plain
    /// sockets log in with bmk's own handshake, on the calling thread, unless it
    /// declined before; the rest through the crate (see [`Self::crate_log_in`]). A
    /// plain-socket connection the crate logs in is the crate's for good (the caller
    /// drops the fast path), and is refused on an event loop (see the module doc).
    ///
    /// Handing the own handshake to a helper thread bounded the whole of it too, but
    /// cost a thread start and two cross-CPU wake-ups per connect: 147 us of client CPU
    /// per connect against 54 us without it on a 2-core VM. It bounds the whole instead
    /// by lowering its socket timeouts to what is left of the connect timeout.
    fn log_in(&self) -> Result<Session, mysql::Error> {
        let limit = self.cfg.common.connect_timeout;
        let step = self.cfg.common.io_timeout.map_or(limit, |io| io.min(limit));
        if self.fast.is_some() && !OWN_LOGIN_REFUSED.load(Ordering::Relaxed) {
            let m = &self.cfg.mysql;
            let login = Login {
                endpoint: &self.endpoint,
                user: &m.user,
                password: &m.password,
                db: &m.db,
                server_key: m.server_public_key.as_ref(),
                get_server_key: m.get_server_public_key,
            };
            match log_in(&login, limit, step, self.cfg.common.io_timeout) {
                Ok(fd) => return Ok(Session::Own(fd)),
                Err(HandshakeError::Failed(e)) => return Err(e),
                Err(HandshakeError::Unsupported(what)) => {
                    trace_if(self.debug, "mysql", "connect", || {
                        format!("{what}: logging in through the mysql crate")
                    });
                    OWN_LOGIN_REFUSED.store(true, Ordering::Relaxed);
                }
            }
        }
        if self.fast.is_some() && bmk_engine::coop::active() {
            return Err(crate_login_refused_on_a_loop());
        }
        self.crate_log_in(step).map(Session::Crate)
    }

    /// The crate's login (with `PREFERRED` falling back to plain text) on a helper
    /// thread, given up after the connect timeout: the crate bounds its TCP connect and
    /// each read and write (by `step`), but not the handshake as a whole, so a server
    /// that trickles its answers could hold it for ever; and its socket is not ours
    /// until it returns, so nothing can shut it down sooner. A thread start per connect
    /// costs little next to what this path does anyway (TLS, compression, or a plugin
    /// bmk's own login declines). A login given up on goes on in its thread until the
    /// server ends it or a read reaches `step`; its connection is then dropped.
    fn crate_log_in(&self, step: Duration) -> Result<Conn, mysql::Error> {
        let limit = self.cfg.common.connect_timeout;
        let base = match &self.opts {
            Some(o) => o.clone(),
            // Without TLS and compression (a fast-path connection) nothing in them can
            // be refused; should it be, the message still reaches the user.
            None => base_opts(&self.cfg, &self.endpoint)
                .map_err(|e| mysql::Error::IoError(std::io::Error::other(e.message)))?,
        };
        let opts = base.read_timeout(Some(step)).write_timeout(Some(step));
        let fall_back = self.cfg.mysql.ssl == MysqlSslMode::Preferred;
        let conn =
            crate::deadline::run_with_deadline(limit, move || Self::crate_connect(opts, fall_back))
                .unwrap_or(Err(mysql::Error::DriverError(
                    mysql::DriverError::ConnectTimeout,
                )))?;
        set_socket_timeouts(conn.as_raw_fd(), self.cfg.common.io_timeout)?;
        Ok(conn)
    }

    /// The crate's connect with `opts` (plain text again if the server has no TLS and
    /// `fall_back`), its errors as bmk reports them.
    fn crate_connect(opts: OptsBuilder, fall_back: bool) -> Result<Conn, mysql::Error> {
        match Conn::new(opts.clone()) {
            Err(mysql::Error::DriverError(mysql::DriverError::TlsNotSupported)) if fall_back => {
                Conn::new(opts.ssl_opts(None::<SslOpts>))
            }
            other => other,
        }
        .map_err(|e| {
            // A read or write that reached its socket timeout: the crate reports it
            // bare or from its packet reader.
            let io = match &e {
                mysql::Error::IoError(io) => Some(io),
                mysql::Error::CodecError(c) => {
                    std::error::Error::source(c).and_then(|s| s.downcast_ref::<std::io::Error>())
                }
                _ => None,
            };
            match &e {
                mysql::Error::IoError(io) if crate_refused_full_auth(io) => {
                    return crate_full_auth_refusal();
                }
                mysql::Error::DriverError(mysql::DriverError::UnknownAuthPlugin(name)) => {
                    return plugin_refusal(name.as_bytes());
                }
                mysql::Error::DriverError(mysql::DriverError::CleartextPluginDisabled) => {
                    return plugin_refusal(b"mysql_clear_password");
                }
                mysql::Error::DriverError(mysql::DriverError::OldMysqlPasswordDisabled) => {
                    return plugin_refusal(b"mysql_old_password");
                }
                _ => {}
            }
            if io.is_some_and(timed_out) {
                mysql::Error::DriverError(mysql::DriverError::ConnectTimeout)
            } else {
                e
            }
        })
    }

    /// Turn a client error into an [`SqlError`], reconnecting after a listed
    /// lost-connection error.
    fn fail(&mut self, e: mysql::Error, op: SqlOp, sql: &str) -> SqlError {
        let (errno, state, msg, lost) = describe(&e, op, &self.endpoint);
        trace_if(self.debug, "mysql", "error", || format!("{errno} ({msg})"));
        let err = SqlError::new(DriverKind::Mysql, op, errno, state, msg).with_query(sql);
        if lost {
            self.conn = None;
            self.state.pending.clear();
        }
        if !self.cfg.mysql.ignore_errors.contains(&errno) {
            return err;
        }
        after_listed_error(self, err, lost.then_some(Lost { errno }))
    }

    /// The live connection, reconnecting first if an earlier lost connection left it
    /// closed. A successful lazy reconnect is reported as an ignorable error with
    /// `reconnected: true` so the caller counts it and restarts the event.
    fn live(&mut self, op: SqlOp, sql: &str) -> Result<&mut Session, SqlError> {
        if self.conn.is_none() {
            return Err(retry_lost(self, op, sql));
        }
        self.conn.as_mut().ok_or_else(|| {
            SqlError::new(
                DriverKind::Mysql,
                op,
                2000,
                "HY000",
                "internal error: no connection after the check for one",
            )
        })
    }

    /// The live connection when it is the crate's session (the crate-only paths: the
    /// fast path off, TLS, compression, or a crate login; bmk's own sessions exist only
    /// with the fast path, which never comes here).
    fn live_crate(&mut self, op: SqlOp, sql: &str) -> Result<&mut Conn, SqlError> {
        match self.live(op, sql)? {
            Session::Crate(conn) => Ok(conn),
            Session::Own(_) => Err(SqlError::new(
                DriverKind::Mysql,
                op,
                2000,
                "HY000",
                "internal error: a crate-only command on bmk's own session",
            )
            .with_query(sql)),
        }
    }

    /// The live connection's socket when it is bmk's own session (the fast path's
    /// commands: crate sessions never have the fast path).
    fn live_own(&mut self, op: SqlOp, sql: &str) -> Result<RawFd, SqlError> {
        match self.live(op, sql)? {
            Session::Own(fd) => Ok(fd.as_raw_fd()),
            Session::Crate(_) => Err(SqlError::new(
                DriverKind::Mysql,
                op,
                2000,
                "HY000",
                "internal error: a fast-path command on the crate's session",
            )
            .with_query(sql)),
        }
    }

    fn run_text(&mut self, sql: &str, op: SqlOp) -> Result<Option<ResultSet>, SqlError> {
        if self.fast.is_some() {
            let mut rs = ResultSet::default();
            return Ok(self.run_text_into(sql, op, &mut rs)?.then_some(rs));
        }
        self.trace("query", sql);
        self.state.pending.clear();
        let io_timeout = self.cfg.common.io_timeout;
        let conn = self.live_crate(op, sql)?;
        let res = watched(conn, io_timeout, |c| c.query_iter(sql).and_then(collect));
        self.crate_outcome(res, op, sql)
    }

    /// The first result set of a command the crate ran (the rest kept pending), or its
    /// error as bmk reports it.
    fn crate_outcome(
        &mut self,
        res: Result<(VecDeque<Option<ResultSet>>, u64), mysql::Error>,
        op: SqlOp,
        sql: &str,
    ) -> Result<Option<ResultSet>, SqlError> {
        match res {
            Ok((mut sets, affected)) => {
                self.state.affected = affected;
                let first = sets.pop_front().flatten();
                self.state.pending = sets;
                Ok(first)
            }
            Err(e) => Err(self.fail(e, op, sql)),
        }
    }

    /// A text query through the fast path when the session is bmk's own, else through
    /// the crate (the fast path sends an empty file for a `LOAD DATA LOCAL INFILE`'s
    /// request).
    fn run_text_into(
        &mut self,
        sql: &str,
        op: SqlOp,
        out: &mut ResultSet,
    ) -> Result<bool, SqlError> {
        self.forget_tables_on_ddl(sql);
        if self.fast.is_none() {
            return Ok(match self.run_text(sql, op)? {
                Some(rs) => {
                    out.assign_from(&rs);
                    true
                }
                None => false,
            });
        }
        self.fast_query(sql, op, None, out)
    }

    /// A text query through the fast path; `file` answers a `LOAD DATA LOCAL INFILE`.
    fn fast_query(
        &mut self,
        sql: &str,
        op: SqlOp,
        file: Option<&[u8]>,
        out: &mut ResultSet,
    ) -> Result<bool, SqlError> {
        self.trace("query", sql);
        self.state.pending.clear();
        let fd = self.live_own(op, sql)?;
        let fast = self.fast.as_mut().expect("fast path on");
        match fast.query(
            fd,
            sql.as_bytes(),
            file,
            &mut self.text_meta,
            out,
            &mut self.state.pending,
        ) {
            Ok(done) => {
                self.state.affected = done.affected;
                Ok(done.has_rows)
            }
            Err(e) => {
                self.state.pending.clear();
                Err(self.fail(e, op, sql))
            }
        }
    }

    fn stmt(&self, id: StatementId) -> Result<&Stmt, SqlError> {
        registered(&self.stmts, id, DriverKind::Mysql)
    }
}

/// Errors that mean "this statement cannot be prepared server-side": emulate instead.
fn cannot_prepare(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(me) if me.code == 1295)
}

impl MysqlConnection {
    /// Execute through the fast path when possible, else through the crate; the first
    /// result set goes to `out`.
    fn exec_stmt(
        &mut self,
        id: StatementId,
        params: &[Value],
        out: &mut ResultSet,
    ) -> Result<bool, SqlError> {
        let stmt = self.stmt(id)?;
        if self.fast.is_some() && stmt.emulate {
            let sql = stmt.template.render(params, Dialect::Mysql);
            return self.run_text_into(&sql, SqlOp::Query, out);
        }
        if self.fast.is_none() || stmt.emulate {
            return Ok(match self.exec_crate(id, params)? {
                Some(rs) => {
                    out.assign_from(&rs);
                    true
                }
                None => false,
            });
        }
        if self.debug {
            self.trace("execute", &stmt.template.render(params, Dialect::Mysql));
        }
        let sql = stmt.sql.clone();
        self.state.pending.clear();
        let (fd, server_id) = self.on_server(id)?;
        let fast = self.fast.as_mut().expect("checked above");
        let Some(Some(st)) = self.stmts.get_mut(id.0 as usize) else {
            unreachable!("statement checked above")
        };
        let meta = st.meta.as_mut().expect("set with server");
        match fast.execute(fd, server_id, meta, params, out, &mut self.state.pending) {
            Ok(done) => {
                self.state.affected = done.affected;
                Ok(done.has_rows)
            }
            Err(e) => {
                // A server error leaves the stream in sync; any other error is reported
                // as a lost connection and `fail` drops the connection, so a stream that
                // may be out of sync is never reused.
                self.state.pending.clear();
                Err(self.fail(e, SqlOp::Execute, &sql))
            }
        }
    }

    /// Makes sure statement `id` (not emulated) is prepared on the live connection,
    /// reconnecting and re-preparing as needed; returns the socket and the server's
    /// statement id.
    fn on_server(&mut self, id: StatementId) -> Result<(RawFd, u32), SqlError> {
        let stmt = self.stmt(id)?;
        let unprepared = stmt.server.is_none();
        let sql = stmt.sql.clone();
        if unprepared {
            let fd = self.live_own(SqlOp::Execute, &sql)?;
            let fast = self.fast.as_mut().expect("fast path on");
            match fast.prepare(fd, sql.as_bytes()) {
                Ok((server, meta)) => {
                    if let Some(Some(st)) = self.stmts.get_mut(id.0 as usize) {
                        st.meta = Some(meta);
                        st.server = Some(Prepared::Own(server));
                    }
                }
                Err(e) => return Err(self.fail(e, SqlOp::Prepare, &sql)),
            }
        }
        let fd = self.live_own(SqlOp::Execute, &sql)?;
        let server = self.stmt(id)?.server.as_ref().expect("prepared above");
        Ok((fd, server.id()))
    }

    /// Largest bulk execute command: a few MiB (one command per round trip keeps the
    /// server busy without large buffers), and below the server's packet limit.
    fn bulk_command_limit(&mut self) -> usize {
        const MAX: usize = 4 << 20;
        if self.max_packet.is_none() {
            let value = self
                .run_text("SELECT @@max_allowed_packet", SqlOp::Query)
                .ok()
                .flatten()
                .and_then(|rs| rs.get_str(0, 0))
                .and_then(|v| v.parse::<usize>().ok());
            self.max_packet = Some(value.unwrap_or(MAX));
        }
        let packet = self.max_packet.unwrap_or(MAX);
        packet.saturating_sub(64 << 10).clamp(16 << 10, MAX)
    }

    /// Drops what `ascii_as_binary` knows of a table when `sql` may redefine one. Called
    /// by `run_text_into` only: bulk loads need the fast path, whose text queries all
    /// pass there.
    fn forget_tables_on_ddl(&mut self, sql: &str) {
        if self.binary_text_table.is_none() {
            return;
        }
        let head = sql.trim_start().as_bytes();
        let ddl = ["CREATE", "DROP", "ALTER", "RENAME"]
            .iter()
            .any(|k| head.len() >= k.len() && head[..k.len()].eq_ignore_ascii_case(k.as_bytes()));
        if ddl {
            self.binary_text_table = None;
        }
    }

    /// Whether ASCII text may be sent to `table` as binary parameters: when every
    /// column of it is in an ASCII-based charset (or none), where such bytes land
    /// unchanged. Asked once per table; a name the query cannot quote plainly, or a
    /// table the server does not list, gets the usual string parameters.
    fn ascii_as_binary(&mut self, table: &str) -> bool {
        if let Some((t, ok)) = &self.binary_text_table {
            if t == table {
                return *ok;
            }
        }
        let plain = !table.is_empty()
            && table
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$');
        let ok = plain && {
            let sql = format!(
                "SELECT COUNT(*), COALESCE(SUM(CHARACTER_SET_NAME IN \
                 ('ucs2', 'utf16', 'utf16le', 'utf32')), 0) FROM information_schema.COLUMNS \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}'"
            );
            let rs = self.run_text(&sql, SqlOp::Query).ok().flatten();
            let cell = |col| rs.as_ref().and_then(|rs| rs.get_str(0, col));
            matches!((cell(0), cell(1)), (Some(n), Some(wide)) if n != "0" && wide == "0")
        };
        self.binary_text_table = Some((table.to_string(), ok));
        ok
    }

    /// `insert_rows` through MariaDB's bulk execute; `Ok(None)` with nothing inserted
    /// (and the rows taken from `rows` in `taken`) when the server has none.
    fn bulk_insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn RowSource,
        taken: &mut Vec<Vec<Value>>,
    ) -> Result<Option<u64>, SqlError> {
        let sql = crate::connection::insert_sql(table, columns, 1);
        let limit = self.bulk_command_limit();
        let ascii_as_binary = self.ascii_as_binary(table);
        let id = self.prepare(&sql)?;
        let result = if self.stmt(id)?.emulate {
            Ok(None)
        } else {
            self.trace("bulk execute", &sql);
            self.state.pending.clear();
            let (fd, server_id) = self.on_server(id)?;
            let probe = self.bulk_execute != Some(true);
            let fast = self.fast.as_mut().expect("checked by the caller");
            let taken = probe.then_some(taken);
            let done = fast.bulk_execute(
                fd,
                server_id,
                columns.len(),
                rows,
                limit,
                ascii_as_binary,
                taken,
            );
            fast.release_request_buffer();
            match done {
                Ok(BulkOutcome::Inserted(n)) => {
                    self.bulk_execute = Some(true);
                    self.state.affected = n;
                    Ok(Some(n))
                }
                Ok(BulkOutcome::Refused) => {
                    self.bulk_execute = Some(false);
                    Ok(None)
                }
                Err(e) => Err(self.fail(e, SqlOp::Execute, &sql)),
            }
        };
        self.close_statement(id);
        result
    }

    /// Execute through the crate (TLS, compression, emulated statements).
    fn exec_crate(
        &mut self,
        id: StatementId,
        params: &[Value],
    ) -> Result<Option<ResultSet>, SqlError> {
        let stmt = self.stmt(id)?;
        if stmt.emulate {
            let sql = stmt.template.render(params, Dialect::Mysql);
            return self.run_text(&sql, SqlOp::Query);
        }
        let sql = stmt.sql.clone();
        let server = stmt.server.clone();
        if self.debug {
            self.trace("execute", &stmt.template.render(params, Dialect::Mysql));
        }
        self.state.pending.clear();
        let io_timeout = self.cfg.common.io_timeout;
        let conn = self.live_crate(SqlOp::Execute, &sql)?;
        let server = match server {
            Some(Prepared::Crate(s)) => s,
            _ => match watched(conn, io_timeout, |c| c.prep(&*sql)) {
                Ok(s) => {
                    if let Some(Some(st)) = self.stmts.get_mut(id.0 as usize) {
                        st.server = Some(Prepared::Crate(s.clone()));
                    }
                    s
                }
                Err(e) => return Err(self.fail(e, SqlOp::Prepare, &sql)),
            },
        };
        let Some(Session::Crate(conn)) = self.conn.as_mut() else {
            unreachable!("live crate session above")
        };
        let values: Vec<mysql::Value> = params
            .iter()
            .map(|p| match p {
                Value::Null => mysql::Value::NULL,
                Value::Int(i) => mysql::Value::Int(*i),
                Value::Float(f) => mysql::Value::Float(*f),
                Value::Double(d) => mysql::Value::Double(*d),
                Value::Text(t) => mysql::Value::Bytes(t.clone()),
            })
            .collect();
        let params = if values.is_empty() {
            mysql::Params::Empty
        } else {
            mysql::Params::Positional(values)
        };
        let res = watched(conn, io_timeout, |c| {
            c.exec_iter(&server, params).and_then(collect)
        });
        self.crate_outcome(res, SqlOp::Execute, &sql)
    }
}

keeps_state_in_field!(MysqlConnection);

impl Reconnects for MysqlConnection {
    fn reopen(&mut self) -> Result<(), SqlError> {
        self.open()
    }

    fn lost_mark(&mut self) -> &mut Option<Lost> {
        &mut self.lost
    }

    fn closed_error(&self, op: SqlOp) -> SqlError {
        SqlError::new(
            DriverKind::Mysql,
            op,
            2006,
            "HY000",
            "Server has gone away (connection closed)",
        )
    }

    fn lost_error(&self, lost: Lost, op: SqlOp, reconnected: bool) -> SqlError {
        lost_connection_error(
            DriverKind::Mysql,
            op,
            lost.errno,
            "HY000",
            "Lost connection to server",
            reconnected,
        )
    }
}

impl Connection for MysqlConnection {
    fn query(&mut self, sql: &str) -> Result<Option<ResultSet>, SqlError> {
        self.run_text(sql, SqlOp::Query)
    }

    fn query_into(&mut self, sql: &str, out: &mut ResultSet) -> Result<bool, SqlError> {
        let r = self.run_text_into(sql, SqlOp::Query, out);
        if !matches!(r, Ok(true)) {
            out.clear();
        }
        r
    }

    fn prepare(&mut self, sql: &str) -> Result<StatementId, SqlError> {
        self.trace("prepare", sql);
        let template = Template::parse(sql);
        let mut stmt = Stmt {
            template,
            sql: Arc::from(sql),
            server: None,
            emulate: self.cfg.common.ps_mode == PsMode::Disable,
            meta: None,
        };
        if !stmt.emulate {
            self.live(SqlOp::Prepare, sql)?;
            let io_timeout = self.cfg.common.io_timeout;
            let session = self.conn.as_mut().expect("live connection");
            let prepared = match (self.fast.as_mut(), session) {
                (Some(fast), Session::Own(fd)) => fast
                    .prepare(fd.as_raw_fd(), sql.as_bytes())
                    .map(|(id, meta)| (Prepared::Own(id), Some(meta))),
                (None, Session::Crate(conn)) => {
                    watched(conn, io_timeout, |c| c.prep(sql)).map(|s| (Prepared::Crate(s), None))
                }
                _ => unreachable!("the fast path exactly with bmk's own session"),
            };
            match prepared {
                Ok((server, meta)) => {
                    stmt.meta = meta;
                    stmt.server = Some(server);
                }
                Err(e) if cannot_prepare(&e) => stmt.emulate = true,
                Err(e) => return Err(self.fail(e, SqlOp::Prepare, sql)),
            }
        }
        Ok(register(&mut self.stmts, stmt))
    }

    fn execute(
        &mut self,
        id: StatementId,
        params: &[Value],
    ) -> Result<Option<ResultSet>, SqlError> {
        if self.fast.is_some() {
            let mut rs = ResultSet::default();
            return Ok(self.exec_stmt(id, params, &mut rs)?.then_some(rs));
        }
        self.exec_crate(id, params)
    }

    fn execute_into(
        &mut self,
        id: StatementId,
        params: &[Value],
        out: &mut ResultSet,
    ) -> Result<bool, SqlError> {
        let r = self.exec_stmt(id, params, out);
        if !matches!(r, Ok(true)) {
            out.clear();
        }
        r
    }

    fn close_statement(&mut self, id: StatementId) {
        if let Some(slot) = self.stmts.get_mut(id.0 as usize) {
            if let Some(stmt) = slot.take() {
                // A failed close means a broken connection, which the next command
                // reports.
                let io_timeout = self.cfg.common.io_timeout;
                match (stmt.server, self.conn.as_mut(), self.fast.as_mut()) {
                    (Some(Prepared::Crate(s)), Some(Session::Crate(conn)), _) => {
                        let _ = watched(conn, io_timeout, |c| c.close(s));
                    }
                    (Some(Prepared::Own(id)), Some(Session::Own(fd)), Some(fast)) => {
                        let _ = fast.close_statement(fd.as_raw_fd(), id);
                    }
                    _ => {}
                }
            }
        }
    }

    fn load_text(
        &mut self,
        table: &str,
        columns: &str,
        data: &[u8],
    ) -> Result<Option<u64>, SqlError> {
        if self.infile_refused {
            return Ok(None);
        }
        // The text is UTF-8 from the caller, whatever the database's default charset.
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'bmk-rows' INTO TABLE {table} CHARACTER SET utf8mb4 \
             ({columns})"
        );
        let r = if let Session::Own(_) = self.live(SqlOp::Query, &sql)? {
            let mut scratch = ResultSet::default();
            self.fast_query(&sql, SqlOp::Query, Some(data), &mut scratch)
                .map(|_| None)
        } else {
            {
                let mut buf = self.infile.lock().unwrap_or_else(|p| p.into_inner());
                buf.clear();
                buf.extend_from_slice(data);
            }
            let rows = self.infile.clone();
            // The handler is per crate connection (a reconnect drops it): set it every
            // time.
            self.live_crate(SqlOp::Query, &sql)?
                .set_local_infile_handler(Some(LocalInfileHandler::new(move |_, out| {
                    let buf = rows.lock().unwrap_or_else(|p| p.into_inner());
                    std::io::Write::write_all(out, &buf)
                })));
            let r = self.run_text(&sql, SqlOp::Query);
            self.infile
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clear();
            r
        };
        match r {
            Ok(_) => Ok(Some(self.state.affected)),
            Err(e) if INFILE_REFUSED.contains(&e.errno) => {
                self.infile_refused = true;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn RowSource,
    ) -> Result<u64, SqlError> {
        if self.fast.is_none() || self.bulk_execute == Some(false) {
            return crate::connection::multi_row(self, table, columns, rows);
        }
        let mut taken = Vec::new();
        match self.bulk_insert_rows(table, columns, rows, &mut taken)? {
            Some(n) => Ok(n),
            None => {
                let mut replay = Replay {
                    first: taken.into_iter(),
                    rest: rows,
                };
                crate::connection::multi_row(self, table, columns, &mut replay)
            }
        }
    }

    fn reconnect(&mut self) -> Result<(), SqlError> {
        trace_if(self.debug, "mysql", "reconnect", || self.target());
        self.close();
        self.state.pending.clear();
        self.open()
    }

    fn disconnect(&mut self) {
        trace_if(self.debug, "mysql", "disconnect", || self.target());
        self.close();
        self.lost = None;
        self.state.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::cipher_key;

    #[test]
    fn cipher_names_match_across_libraries() {
        assert_eq!(
            cipher_key("TLS_AES_128_GCM_SHA256"),
            cipher_key("TLS13_AES_128_GCM_SHA256")
        );
        assert_eq!(
            cipher_key("ECDHE-RSA-AES128-GCM-SHA256"),
            cipher_key("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
        );
        assert_eq!(
            cipher_key("ECDHE-RSA-CHACHA20-POLY1305"),
            cipher_key("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256")
        );
        assert_ne!(
            cipher_key("TLS_AES_256_GCM_SHA384"),
            cipher_key("TLS13_AES_128_GCM_SHA256")
        );
    }
}
