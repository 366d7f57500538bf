//! The PostgreSQL driver: connections speak the protocol through bmk's own client
//! ([`wire`], `--pgsql-fast-path`), plain or over TLS ([`tls_stream`]); the modes that
//! verify the server's certificate (and all connections with the fast path off) go
//! through the sync `postgres` crate. TLS is rustls everywhere, like the MySQL
//! driver's, so the binary carries one TLS stack and no OpenSSL.
//!
//! Text queries use the simple-query protocol, whose values arrive as text. Prepared
//! statements send their parameters in text format (the server parses them by the
//! parameter types it inferred) and receive binary values, which [`pgtext`] renders
//! the way the server prints them.

use std::collections::VecDeque;
use std::error::Error as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::config::SslMode;
use postgres::tls::MakeTlsConnect;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use postgres::{Client, SimpleQueryMessage, Statement};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::config::{DriverConfig, PgSslMode, PsMode};
use crate::connection::{Connection, StatementId};
use crate::connection_state::{keeps_state_in_field, ConnectionState};
use crate::deadline::run_with_deadline;
use crate::driver_kind::DriverKind;
use crate::emulate::{emulated_execute, Template};
use crate::error::{Endpoint, SqlError, SqlErrorKind, SqlOp};
use crate::reconnect::{after_listed_error, lost_connection_error, retry_lost, Lost, Reconnects};
use crate::resultset::ResultSet;
use crate::row_source::RowSource;
use crate::statement_table::registered;
use crate::trace::{trace, trace_if};
use crate::value::Value;

mod pgtext;
mod tls_stream;
mod wire;

pub(crate) use pgtext::fuzz_value;
use wire::{WireConn, WireError};

/// How long dropping a failed connection's client may take (see
/// [`PgConnection::discard_client`]).
const DISCARD_WAIT: Duration = Duration::from_secs(1);

/// Size of the pieces COPY data is sent in.
const COPY_CHUNK: usize = 256 << 10;

/// SQLSTATE used for a lost connection (`connection_failure`).
const LOST_STATE: &str = "08006";

struct Stmt {
    template: Template,
    numbered: Arc<str>,
    server: Option<Statement>,
    /// The statement prepared on a [`WireConn`].
    wire: Option<wire::Prepared>,
    /// Column names of `server`'s result, shared by its result sets.
    names: Arc<[String]>,
}

/// The client of a live connection.
enum Backend {
    /// Through the `postgres` crate (TLS, or the fast path off).
    Crate(Client),
    /// bmk's own protocol client.
    Wire(WireConn),
}

impl Backend {
    fn is_closed(&self) -> bool {
        match self {
            Backend::Crate(c) => c.is_closed(),
            Backend::Wire(w) => w.is_broken(),
        }
    }
}

/// A failed call, whichever client made it.
struct Failure {
    /// SQLSTATE of a server error.
    state: Option<String>,
    msg: String,
    /// The server reported it (the stream is in step).
    db: bool,
    /// A FATAL or PANIC server error: the server ends the session.
    fatal: bool,
    /// The connection is gone (closed, or a stream that cannot be trusted).
    closed: bool,
    /// Where in the query a server error points (1-based characters).
    position: Option<u32>,
}

impl From<postgres::Error> for Failure {
    fn from(e: postgres::Error) -> Failure {
        Failure {
            state: e.code().map(|s| s.code().to_string()),
            msg: full_message(&e),
            db: e.as_db_error().is_some(),
            fatal: e
                .as_db_error()
                .is_some_and(|d| matches!(d.severity(), "FATAL" | "PANIC")),
            closed: e.is_closed(),
            position: match e.as_db_error().and_then(|d| d.position()) {
                Some(postgres::error::ErrorPosition::Original(p)) => Some(*p),
                _ => None,
            },
        }
    }
}

impl From<WireError> for Failure {
    fn from(e: WireError) -> Failure {
        match e {
            WireError::Db {
                code,
                message,
                severity,
                position,
            } => Failure {
                state: Some(code),
                msg: message,
                db: true,
                fatal: matches!(severity.as_str(), "FATAL" | "PANIC"),
                closed: false,
                position,
            },
            WireError::Broken(msg) => Failure {
                state: None,
                msg,
                db: false,
                fatal: false,
                closed: true,
                position: None,
            },
            WireError::ConnectTimeout(secs) => Failure {
                state: Some("08001".to_string()),
                msg: format!("timeout expired after {secs} s"),
                db: false,
                fatal: false,
                closed: true,
                position: None,
            },
            WireError::Client(msg) => Failure {
                state: None,
                msg,
                db: false,
                fatal: false,
                closed: false,
                position: None,
            },
        }
    }
}

/// Whether connections of `cfg` use the wire client: the fast path on and a mode that
/// does not verify the server's certificate (`verify-ca` and `verify-full` go through
/// the `postgres` crate).
pub(crate) fn fast_path_in_use(cfg: &DriverConfig) -> bool {
    cfg.pgsql.fast_path
        && matches!(
            cfg.pgsql.sslmode,
            PgSslMode::Disable | PgSslMode::Allow | PgSslMode::Prefer | PgSslMode::Require
        )
}

/// The TLS configuration of the wire client's connections under `mode`, built once
/// per process and mode (a connect should not rebuild the root store).
fn wire_tls_config(mode: PgSslMode) -> Result<Arc<rustls::ClientConfig>, String> {
    static BUILT: Mutex<Vec<(PgSslMode, Arc<rustls::ClientConfig>)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, c)) = built.iter().find(|(m, _)| *m == mode) {
        return Ok(c.clone());
    }
    let c = Arc::new(tls_client_config(mode)?);
    built.push((mode, c.clone()));
    Ok(c)
}

/// A PostgreSQL connection.
pub(crate) struct PgConnection {
    cfg: Arc<DriverConfig>,
    client: Option<Backend>,
    stmts: Vec<Option<Stmt>>,
    /// What the shared `Connection` methods keep.
    state: ConnectionState,
    debug: bool,
    /// The lost connection being got back (see [`crate::reconnect`]).
    lost: Option<Lost>,
    /// The stream failed below SQL (I/O, or a message the client could not parse):
    /// closing the client may wait for ever.
    broken: bool,
}

/// A bound value sent in text format: the server converts it to the parameter type.
#[derive(Debug)]
struct TextParam<'a>(&'a Value);

impl ToSql for TextParam<'_> {
    fn to_sql(
        &self,
        _ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        Ok(if wire::put_text_param(self.0, out) {
            IsNull::No
        } else {
            IsNull::Yes
        })
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, _ty: &Type) -> postgres::types::Format {
        postgres::types::Format::Text
    }

    to_sql_checked!();
}

/// Raw binary value of any type (decoded to text by [`pgtext::push`]).
struct Raw<'a>(Option<&'a [u8]>);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(Some(raw)))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(None))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// One row in COPY's text format: tab-separated, `\N` for NULL, backslash escapes.
fn push_copy_row(buf: &mut Vec<u8>, row: &[Value]) {
    use std::io::Write as _;
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            buf.push(b'\t');
        }
        match v {
            Value::Null => buf.extend_from_slice(b"\\N"),
            Value::Int(n) => {
                let _ = write!(buf, "{n}");
            }
            Value::Float(f) => {
                let _ = write!(buf, "{f}");
            }
            Value::Double(d) => {
                let _ = write!(buf, "{d}");
            }
            Value::Text(t) => {
                for &b in t {
                    match b {
                        b'\\' => buf.extend_from_slice(b"\\\\"),
                        b'\t' => buf.extend_from_slice(b"\\t"),
                        b'\n' => buf.extend_from_slice(b"\\n"),
                        b'\r' => buf.extend_from_slice(b"\\r"),
                        other => buf.push(other),
                    }
                }
            }
        }
    }
    buf.push(b'\n');
}

/// The TLS set-up of `--pgsql-sslmode`, as libpq reads the modes: `verify-full`
/// checks the chain and the host name, `verify-ca` the chain only (trusting the
/// Mozilla roots, as the MySQL driver does without `--mysql-ssl-ca`), and the other
/// modes encrypt without checking who answers.
fn make_tls(mode: PgSslMode) -> Result<PgTls, String> {
    Ok(PgTls(MakeRustlsConnect::new(tls_client_config(mode)?)))
}

/// The rustls configuration for `mode`: the certificate verified (`verify-full`), its
/// chain only (`verify-ca`), or anything accepted (the modes that only encrypt).
fn tls_client_config(mode: PgSslMode) -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let roots = || {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        Arc::new(roots)
    };
    let config = match mode {
        PgSslMode::VerifyFull => builder
            .with_root_certificates(roots())
            .with_no_client_auth(),
        PgSslMode::VerifyCa => {
            let chain = WebPkiServerVerifier::builder_with_provider(roots(), provider)
                .build()
                .map_err(|e| e.to_string())?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly(chain)))
                .with_no_client_auth()
        }
        _ => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth(),
    };
    Ok(config)
}

/// The rustls connector, for any host: the `postgres` crate asks for a connector even
/// for a UNIX socket directory, which is no server name (and gets no TLS), so such a
/// host is given a placeholder name instead of failing the connection.
struct PgTls(MakeRustlsConnect);

impl<S> MakeTlsConnect<S> for PgTls
where
    MakeRustlsConnect: MakeTlsConnect<S>,
{
    type Stream = <MakeRustlsConnect as MakeTlsConnect<S>>::Stream;
    type TlsConnect = <MakeRustlsConnect as MakeTlsConnect<S>>::TlsConnect;
    type Error = <MakeRustlsConnect as MakeTlsConnect<S>>::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<Self::TlsConnect, Self::Error> {
        if ServerName::try_from(domain).is_ok() {
            self.0.make_tls_connect(domain)
        } else {
            self.0.make_tls_connect("localhost")
        }
    }
}

/// `verify-ca`: the certificate chain must lead to a trusted root; the name in it may
/// be any.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `disable` through `require`: any certificate (the handshake signatures are still
/// checked, so the session key belongs to whoever presented it).
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Full text of an error including its sources (`postgres` puts the useful part in
/// the source chain).
fn full_message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_string();
    }
    let mut msg = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let t = s.to_string();
        if !msg.contains(&t) {
            msg.push_str(": ");
            msg.push_str(&t);
        }
        src = s.source();
    }
    msg
}

impl Drop for PgConnection {
    fn drop(&mut self) {
        // A client whose connection already failed may never finish closing.
        if self.broken || self.client.as_ref().is_some_and(Backend::is_closed) {
            self.discard_client();
        }
    }
}

impl PgConnection {
    pub(crate) fn connect(cfg: Arc<DriverConfig>) -> Result<Self, SqlError> {
        let debug = cfg.common.debug;
        let mut c = PgConnection {
            cfg,
            client: None,
            stmts: Vec::new(),
            state: ConnectionState::new(DriverKind::Pgsql),
            debug,
            lost: None,
            broken: false,
        };
        c.open()?;
        Ok(c)
    }

    fn trace(&self, what: &str, detail: &str) {
        if self.debug {
            trace("pgsql", what, detail);
        }
    }

    fn endpoint(&self) -> Endpoint {
        let p = &self.cfg.pgsql;
        if p.host.starts_with('/') {
            Endpoint {
                host: None,
                port: None,
                socket: Some(p.host.clone()),
                user: Some(p.user.clone()),
            }
        } else {
            Endpoint {
                host: Some(p.host.clone()),
                port: Some(p.port),
                socket: None,
                user: Some(p.user.clone()),
            }
        }
    }

    fn open(&mut self) -> Result<(), SqlError> {
        self.discard_client();
        let cfg = self.cfg.clone();
        let p = &cfg.pgsql;
        trace_if(self.debug, "pgsql", "connect", || {
            format!("{}:{} user '{}' db '{}'", p.host, p.port, p.user, p.db)
        });
        let limit = self.cfg.common.connect_timeout;
        if fast_path_in_use(&cfg) {
            let tls = match p.sslmode {
                PgSslMode::Disable => None,
                mode => Some(wire_tls_config(mode).map_err(|e| {
                    self.connect_error(String::new(), format!("TLS set-up failed: {e}"))
                })?),
            };
            return match WireConn::connect(p, limit, cfg.common.io_timeout, tls) {
                Ok(w) => {
                    self.connected(Backend::Wire(w));
                    Ok(())
                }
                Err(e) => {
                    let f = Failure::from(e);
                    Err(self.connect_error(f.state.unwrap_or_default(), f.msg))
                }
            };
        }
        let mut c = postgres::Config::new();
        if p.host.starts_with('/') {
            c.host_path(&p.host);
        } else {
            c.host(&p.host);
        }
        c.port(p.port)
            .user(&p.user)
            .dbname(&p.db)
            .application_name("bmk")
            .connect_timeout(self.cfg.common.connect_timeout)
            .ssl_mode(match p.sslmode {
                PgSslMode::Disable => SslMode::Disable,
                PgSslMode::Allow | PgSslMode::Prefer => SslMode::Prefer,
                _ => SslMode::Require,
            });
        if !p.password.is_empty() {
            c.password(&p.password);
        }
        if let Some(t) = self.cfg.common.io_timeout {
            // The crate has no read timeout: unacknowledged writes give up after `t`
            // (TCP_USER_TIMEOUT), and keepalive probes unanswered for about two thirds
            // of `t` end a connection whose answer is awaited over a dead link. A
            // server process that stops answering while its kernel keeps the
            // connection up is bounded by the run's stop grace instead.
            let third = (t / 3).max(Duration::from_secs(1));
            c.tcp_user_timeout(t)
                .keepalives(true)
                .keepalives_idle(third)
                .keepalives_interval((t / 9).max(Duration::from_secs(1)))
                .keepalives_retries(3);
        }
        let res = match make_tls(p.sslmode) {
            Ok(tls) => run_with_deadline(limit, move || {
                c.connect(tls).map_err(|e| {
                    let state = e.code().map(|s| s.code().to_string()).unwrap_or_default();
                    (state, full_message(&e))
                })
            })
            .unwrap_or_else(|| {
                Err((
                    "08001".to_string(),
                    format!("timeout expired after {} s", limit.as_secs()),
                ))
            }),
            Err(e) => Err((String::new(), format!("TLS set-up failed: {e}"))),
        };
        match res {
            Ok(client) => {
                self.connected(Backend::Crate(client));
                Ok(())
            }
            Err((state, msg)) => Err(self.connect_error(state, msg)),
        }
    }

    /// Take `client` as the live connection; statements are prepared again on it.
    fn connected(&mut self, client: Backend) {
        self.client = Some(client);
        self.lost = None;
        self.broken = false;
        for s in self.stmts.iter_mut().flatten() {
            s.server = None;
            s.wire = None;
        }
    }

    fn connect_error(&self, state: String, msg: String) -> SqlError {
        let mut err = SqlError::new(DriverKind::Pgsql, SqlOp::Connect, 0, state, msg);
        err.kind = SqlErrorKind::Connect;
        err.endpoint = Some(Box::new(self.endpoint()));
        err
    }

    /// Drops the client of a connection that failed or is replaced, without waiting
    /// for it more than [`DISCARD_WAIT`]: dropping a `postgres::Client` waits for its
    /// connection task to end, which after a broken message from a server that keeps the
    /// socket open is never. The helper thread that drops it is then left to the
    /// process exit.
    fn discard_client(&mut self) {
        match self.client.take() {
            Some(Backend::Crate(client)) => {
                let _ = run_with_deadline(DISCARD_WAIT, move || drop(client));
            }
            // Closing it never waits (see `WireConn`'s `Drop`).
            Some(Backend::Wire(w)) => drop(w),
            None => {}
        }
    }

    fn fail(&mut self, e: impl Into<Failure>, op: SqlOp, sql: &str) -> SqlError {
        let e: Failure = e.into();
        if !e.db {
            self.broken = true;
        }
        let lost = e.closed || e.fatal || !matches!(&self.client, Some(c) if !c.is_closed());
        let state = match e.state {
            Some(s) => s,
            None if lost => LOST_STATE.to_string(),
            None => String::new(),
        };
        let msg = e.msg;
        trace_if(self.debug, "pgsql", "error", || format!("{state} ({msg})"));
        let mut err = SqlError::new(DriverKind::Pgsql, op, 0, state.clone(), msg).with_query(sql);
        err.position = e.position;
        if lost {
            self.discard_client();
            self.state.pending.clear();
        }
        let list = &self.cfg.pgsql.ignore_errors;
        if !(list.matches_sqlstate(&state) || (lost && list.matches_sqlstate(LOST_STATE))) {
            return err;
        }
        if !lost {
            // The event restarts: end the aborted transaction so its BEGIN works.
            match self.client.as_mut() {
                Some(Backend::Crate(c)) => {
                    let _ = c.batch_execute("ROLLBACK");
                }
                Some(Backend::Wire(w)) => {
                    let _ = w.simple_query("ROLLBACK", &mut self.state.pending);
                    self.state.pending.clear();
                }
                None => {}
            }
        }
        after_listed_error(self, err, lost.then_some(Lost { errno: 0 }))
    }

    fn live(&mut self, op: SqlOp, sql: &str) -> Result<&mut Backend, SqlError> {
        if self.client.is_none() {
            return Err(retry_lost(self, op, sql));
        }
        self.client.as_mut().ok_or_else(|| {
            SqlError::new(
                DriverKind::Pgsql,
                op,
                0,
                "08003",
                "internal error: no connection after the check for one",
            )
        })
    }

    fn run_text(&mut self, sql: &str, op: SqlOp) -> Result<Option<ResultSet>, SqlError> {
        self.trace("query", sql);
        self.state.pending.clear();
        self.live(op, sql)?;
        let client = match self.client.as_mut() {
            Some(Backend::Crate(c)) => c,
            Some(Backend::Wire(w)) => {
                let r = w.simple_query(sql, &mut self.state.pending);
                return match r {
                    Ok(affected) => {
                        self.state.affected = affected;
                        Ok(self.state.pending.pop_front().flatten())
                    }
                    Err(e) => Err(self.fail(e, op, sql)),
                };
            }
            None => unreachable!("live() checked the client"),
        };
        match client.simple_query(sql) {
            Ok(msgs) => {
                let mut sets = VecDeque::new();
                let mut cur: Option<ResultSet> = None;
                let mut affected = 0;
                for m in msgs {
                    match m {
                        SimpleQueryMessage::RowDescription(cols) => {
                            cur = Some(ResultSet::new(
                                cols.iter().map(|c| c.name().to_string()).collect(),
                            ));
                        }
                        SimpleQueryMessage::Row(row) => {
                            let rs = cur.get_or_insert_with(|| ResultSet::with_nfields(row.len()));
                            for i in 0..row.len() {
                                rs.push_cell(row.get(i).map(str::as_bytes));
                            }
                        }
                        SimpleQueryMessage::CommandComplete(n) => {
                            affected = if cur.is_some() { 0 } else { n };
                            sets.push_back(cur.take());
                        }
                        _ => {}
                    }
                }
                if cur.is_some() {
                    sets.push_back(cur.take());
                }
                self.state.affected = affected;
                let first = sets.pop_front().flatten();
                self.state.pending = sets;
                Ok(first)
            }
            Err(e) => Err(self.fail(e, op, sql)),
        }
    }
}

keeps_state_in_field!(PgConnection);

/// Server-side name of statement `id` on a wire connection.
fn statement_name(id: u32) -> String {
    format!("bmk_{id}")
}

impl PgConnection {
    /// A prepared execute on the wire client: the statement is (re)prepared when the
    /// connection does not have it yet.
    fn execute_wire(
        &mut self,
        id: StatementId,
        params: &[Value],
        out: &mut ResultSet,
    ) -> Result<bool, SqlError> {
        let Some(Some(stmt)) = self.stmts.get(id.0 as usize) else {
            unreachable!("statement checked by the caller")
        };
        let numbered = stmt.numbered.clone();
        if stmt.wire.is_none() {
            let Backend::Wire(w) = self.live(SqlOp::Execute, &numbered)? else {
                unreachable!("a reconnect keeps the kind of client")
            };
            match w.prepare(&statement_name(id.0), &numbered) {
                Ok(p) => {
                    if let Some(Some(st)) = self.stmts.get_mut(id.0 as usize) {
                        st.wire = Some(p);
                    }
                }
                Err(e) => return Err(self.fail(e, SqlOp::Prepare, &numbered)),
            }
        }
        let (Some(Some(Stmt { wire: Some(p), .. })), Some(Backend::Wire(w))) =
            (self.stmts.get(id.0 as usize), self.client.as_mut())
        else {
            // The statement's connection was lost on the way here.
            self.live(SqlOp::Execute, &numbered)?;
            unreachable!("live() fails without a connection")
        };
        match w.execute(p, params, out) {
            Ok(n) => {
                let rows = p.has_columns();
                self.state.affected = if rows { 0 } else { n };
                Ok(rows)
            }
            Err(e) => Err(self.fail(e, SqlOp::Execute, &numbered)),
        }
    }
}

impl Reconnects for PgConnection {
    fn reopen(&mut self) -> Result<(), SqlError> {
        self.open()
    }

    fn lost_mark(&mut self) -> &mut Option<Lost> {
        &mut self.lost
    }

    fn closed_error(&self, op: SqlOp) -> SqlError {
        SqlError::new(DriverKind::Pgsql, op, 0, "08003", "connection is closed")
    }

    fn lost_error(&self, _lost: Lost, op: SqlOp, reconnected: bool) -> SqlError {
        lost_connection_error(
            DriverKind::Pgsql,
            op,
            0,
            LOST_STATE,
            "connection to server was lost",
            reconnected,
        )
    }
}

impl Connection for PgConnection {
    fn query(&mut self, sql: &str) -> Result<Option<ResultSet>, SqlError> {
        self.run_text(sql, SqlOp::Query)
    }

    fn prepare(&mut self, sql: &str) -> Result<StatementId, SqlError> {
        self.trace("prepare", sql);
        let template = Template::parse(sql);
        let numbered: Arc<str> = Arc::from(template.numbered());
        let id = self.stmts.len() as u32;
        let mut stmt = Stmt {
            template,
            numbered,
            server: None,
            wire: None,
            names: Arc::default(),
        };
        if self.cfg.common.ps_mode == PsMode::Auto {
            let numbered = stmt.numbered.clone();
            match self.live(SqlOp::Prepare, sql)? {
                Backend::Crate(client) => match client.prepare(&numbered) {
                    Ok(s) => stmt.server = Some(s),
                    Err(e) => return Err(self.fail(e, SqlOp::Prepare, sql)),
                },
                Backend::Wire(w) => match w.prepare(&statement_name(id), &numbered) {
                    Ok(p) => stmt.wire = Some(p),
                    Err(e) => return Err(self.fail(e, SqlOp::Prepare, sql)),
                },
            }
        }
        self.stmts.push(Some(stmt));
        Ok(StatementId(id))
    }

    fn execute_into(
        &mut self,
        id: StatementId,
        params: &[Value],
        out: &mut ResultSet,
    ) -> Result<bool, SqlError> {
        out.clear();
        let stmt = registered(&self.stmts, id, DriverKind::Pgsql)?;
        let mode = self.cfg.common.ps_mode;
        if let Some(sql) = emulated_execute(mode, &stmt.template, params, self.debug, "pgsql") {
            return self.query_into(&sql, out);
        }
        self.state.pending.clear();
        if let Some(Backend::Wire(_)) = self.client {
            return self.execute_wire(id, params, out);
        }
        let numbered = stmt.numbered.clone();
        let server = stmt.server.clone();
        let client = match self.live(SqlOp::Execute, &numbered)? {
            Backend::Crate(c) => c,
            Backend::Wire(_) => unreachable!("a reconnect keeps the kind of client"),
        };
        let server = match server {
            Some(s) => s,
            None => match client.prepare(&numbered) {
                Ok(s) => {
                    if let Some(Some(st)) = self.stmts.get_mut(id.0 as usize) {
                        st.server = Some(s.clone());
                    }
                    s
                }
                Err(e) => return Err(self.fail(e, SqlOp::Prepare, &numbered)),
            },
        };
        let Some(Backend::Crate(client)) = self.client.as_mut() else {
            unreachable!("live connection")
        };
        let bound: Vec<TextParam<'_>> = params.iter().map(TextParam).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            bound.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        if server.columns().is_empty() {
            return match client.execute(&server, &refs) {
                Ok(n) => {
                    self.state.affected = n;
                    Ok(false)
                }
                Err(e) => Err(self.fail(e, SqlOp::Execute, &numbered)),
            };
        }
        match client.query(&server, &refs) {
            Ok(rows) => {
                let cols = server.columns();
                let Some(Some(st)) = self.stmts.get_mut(id.0 as usize) else {
                    unreachable!("statement checked above")
                };
                if st.names.len() != cols.len()
                    || st.names.iter().zip(cols).any(|(a, c)| a != c.name())
                {
                    st.names = cols.iter().map(|c| c.name().to_string()).collect();
                }
                out.reset(&st.names);
                for row in &rows {
                    for (i, c) in cols.iter().enumerate() {
                        let Raw(v) = row.get::<_, Raw<'_>>(i);
                        pgtext::push(out, c.type_(), v);
                    }
                }
                self.state.affected = 0;
                Ok(true)
            }
            Err(e) => Err(self.fail(e, SqlOp::Execute, &numbered)),
        }
    }

    fn close_statement(&mut self, id: StatementId) {
        if let Some(slot) = self.stmts.get_mut(id.0 as usize) {
            // Dropping a crate `Statement` closes it on the server; the wire client's
            // are closed here.
            if let (Some(Stmt { wire: Some(p), .. }), Some(Backend::Wire(w))) =
                (slot.take(), self.client.as_mut())
            {
                w.close_statement(p.name());
            }
        }
    }

    fn load_text(
        &mut self,
        table: &str,
        columns: &str,
        data: &[u8],
    ) -> Result<Option<u64>, SqlError> {
        let sql = format!("COPY {table} ({columns}) FROM STDIN");
        self.trace("query", &sql);
        self.state.pending.clear();
        let r = match self.live(SqlOp::Query, &sql)? {
            Backend::Crate(client) => client
                .copy_in(&sql)
                .and_then(|mut w| {
                    // An I/O error here is the connection's; finish() reports the server's.
                    let _ = std::io::Write::write_all(&mut w, data);
                    w.finish()
                })
                .map_err(Failure::from),
            Backend::Wire(w) => w
                .copy_in(&sql, &mut |write| {
                    for chunk in data.chunks(COPY_CHUNK) {
                        if !write(chunk) {
                            break;
                        }
                    }
                })
                .map_err(Failure::from),
        };
        match r {
            Ok(n) => {
                self.state.affected = n;
                Ok(Some(n))
            }
            Err(e) => Err(self.fail(e, SqlOp::Query, &sql)),
        }
    }

    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &mut dyn RowSource,
    ) -> Result<u64, SqlError> {
        // COPY is PostgreSQL's cheapest way in: no statement per row or per batch.
        let sql = format!("COPY {table} ({}) FROM STDIN", columns.join(", "));
        self.trace("query", &sql);
        self.state.pending.clear();
        let mut row = vec![Value::Null; columns.len()];
        let mut buf = Vec::with_capacity(COPY_CHUNK + 4096);
        // Encodes the rows in chunks, handing each to `write`; false when it failed.
        let mut feed = |write: &mut dyn FnMut(&[u8]) -> bool| {
            while rows.next_row(&mut row) {
                push_copy_row(&mut buf, &row);
                if buf.len() >= COPY_CHUNK {
                    let ok = write(&buf);
                    buf.clear();
                    if !ok {
                        return;
                    }
                }
            }
            write(&buf);
        };
        let r = match self.live(SqlOp::Query, &sql)? {
            Backend::Crate(client) => client
                .copy_in(&sql)
                .and_then(|mut w| {
                    // An I/O error here is the connection's; finish() reports it.
                    feed(&mut |chunk| std::io::Write::write_all(&mut w, chunk).is_ok());
                    w.finish()
                })
                .map_err(Failure::from),
            Backend::Wire(w) => w.copy_in(&sql, &mut feed).map_err(Failure::from),
        };
        match r {
            Ok(n) => {
                self.state.affected = n;
                Ok(n)
            }
            Err(e) => Err(self.fail(e, SqlOp::Query, &sql)),
        }
    }

    fn reconnect(&mut self) -> Result<(), SqlError> {
        self.discard_client();
        self.state.pending.clear();
        self.open()
    }

    fn disconnect(&mut self) {
        self.client = None;
        self.lost = None;
        self.state.pending.clear();
    }
}
