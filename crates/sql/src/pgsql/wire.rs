//! bmk's own PostgreSQL client for connections without TLS (`--pgsql-fast-path`).
//!
//! # Why
//! The `postgres` crate is a blocking facade over `tokio-postgres`: each connection has
//! a runtime and a connection task, every call crosses to that task through channels
//! and wake-ups, every row is a `Row` with its own buffer, and the socket belongs to the
//! task, so an event loop cannot wait on it. On the null server that left bmk's client
//! CPU per query at about a third of what the round trip itself costs.
//!
//! Without TLS the protocol is small enough to speak directly over a blocking socket:
//! a prepared execute is Bind + Execute + Sync in one `write`, and its answer (usually
//! one `read`) is decoded from a reused receive buffer straight into the caller's
//! [`ResultSet`], binary values rendered by [`pgtext`](super::pgtext) as on the crate
//! path, so the output does not depend on the path. Steady state: no allocation.
//!
//! The frontend messages, authentication (md5, SCRAM-SHA-256) and the parsing of the
//! rarer backend messages (authentication requests, errors, row descriptions) come from
//! `postgres-protocol`; only the per-query messages (DataRow, CommandComplete,
//! ReadyForQuery) are decoded here, in place, because its parser copies every message
//! into a shared buffer.
//!
//! On an event loop ([`bmk_engine::coop::active`]) a worker waiting for an answer is
//! suspended in [`read_some`] instead of blocking its thread.
//!
//! Any I/O error or message out of place makes the connection [`WireError::Broken`]:
//! the caller drops it (a lost connection), so a desynchronised stream is never reused.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::Type;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
use postgres_protocol::message::backend::{self, Message};
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;
use rustls::ClientConfig;
use socket2::{SockRef, TcpKeepalive};

use crate::config::{PgSslMode, PgsqlOptions};
use crate::coop_read::{read_blocking, read_some};
use crate::emulate::{push_literal, Dialect};
use crate::last_segment::send_last;
use crate::resultset::ResultSet;
use crate::socket_timeouts::{
    connect_tcp, set_receive_timeout, set_send_timeout, set_socket_timeouts, timed_out,
    ConnectFailure, ReadDeadline,
};
use crate::value::Value;

use super::pgtext;
use super::tls_stream::TlsStream;

/// Initial size of the receive buffer (a point select's answer is ~100 bytes); it grows
/// for larger answers and is given back after one larger than [`KEEP_BUF`].
const INITIAL_BUF: usize = 4096;
/// Receive buffers larger than this are released after the answer.
const KEEP_BUF: usize = 64 * 1024;
/// Result format codes.
const TEXT: i16 = 0;
const BINARY: i16 = 1;

/// An error of the wire client.
#[derive(Debug)]
pub(crate) enum WireError {
    /// The server's ErrorResponse; the connection stays usable unless `severity` is
    /// FATAL or PANIC.
    Db {
        /// SQLSTATE.
        code: String,
        /// Primary message.
        message: String,
        /// Severity (`ERROR`, `FATAL`, ...).
        severity: String,
        /// 1-based character position in the query the error points at, if any.
        position: Option<u32>,
    },
    /// The stream is unusable (I/O error, closed, malformed or unexpected message):
    /// the full message, worded as the `postgres` crate words it.
    Broken(String),
    /// The request could not be made (connect failure, missing password, too many
    /// parameters); nothing was left half-sent.
    Client(String),
    /// A step of the connect (TCP connect, handshake read or write) reached the
    /// connect timeout of this many seconds.
    ConnectTimeout(u64),
}

impl WireError {
    fn io(e: io::Error) -> WireError {
        WireError::Broken(format!("error communicating with the server: {e}"))
    }

    fn parse(what: &str) -> WireError {
        WireError::Broken(format!("error parsing response from server: {what}"))
    }

    fn unexpected() -> WireError {
        WireError::Broken("unexpected message from server".into())
    }

    fn closed() -> WireError {
        WireError::Broken("connection closed".into())
    }
}

/// The socket: TCP, TLS over TCP, or a UNIX socket when the host is a directory.
enum Stream {
    Tcp(TcpStream),
    Tls(Box<TlsStream>),
    Unix(UnixStream),
}

impl Stream {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.write_all(buf),
            Stream::Tls(s) => s.write_plain(buf),
            Stream::Unix(s) => s.write_all(buf),
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }
}

/// A statement prepared on the server, with what its executes need.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// Server-side name.
    name: String,
    /// Column types (`Type::TEXT` for a column received as text).
    types: Vec<Type>,
    /// Result format per column: binary for the built-in types [`pgtext`] renders as
    /// on the crate path, text for the others (the server's own rendering).
    formats: Vec<i16>,
    /// Column names, shared by the result sets.
    pub names: Arc<[String]>,
}

impl Prepared {
    /// Server-side name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether executes return rows.
    pub fn has_columns(&self) -> bool {
        !self.types.is_empty()
    }
}

/// What [`WireConn::copy_in`] sends: it hands the COPY data, in chunks, to the writer
/// it is given, which returns false once sending failed (the feed should then stop).
pub(crate) type CopyFeed<'a> = dyn FnMut(&mut dyn FnMut(&[u8]) -> bool) + 'a;

/// A connection speaking the protocol itself.
pub(crate) struct WireConn {
    stream: Stream,
    out: BytesMut,
    inbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// Identity of the socket for event-loop waits (0: not yet numbered).
    socket_id: u64,
    /// A request was sent and nothing read since: on an event loop the answer is waited
    /// for before the first read rather than after a read that finds nothing.
    awaiting: bool,
    /// The stream failed: every later call fails at once.
    broken: bool,
    /// While the handshake runs: the connect timeout. Its reads then block on the
    /// calling thread (an event-loop wait has no time limit) and a socket timeout is
    /// reported as [`WireError::ConnectTimeout`].
    handshake_limit: Option<Duration>,
    /// While the handshake runs: the end of the connect timeout, which bounds it as a
    /// whole.
    handshake_deadline: Option<ReadDeadline>,
    /// `--db-timeout`, the socket's receive timeout after the handshake: the longest
    /// one message may take to arrive, as a whole, when the read blocks.
    read_limit: Option<Duration>,
}

impl Drop for WireConn {
    fn drop(&mut self) {
        if !self.broken {
            // Say goodbye without waiting on a server that may not read any more.
            self.out.clear();
            frontend::terminate(&mut self.out);
            let fd = self.stream.as_raw_fd();
            match &mut self.stream {
                Stream::Tls(t) => send_last(fd, &t.goodbye(&self.out)),
                _ => send_last(fd, &self.out),
            }
        }
    }
}

/// Keepalive and unacknowledged-write limits for `--db-timeout`, as the crate path sets
/// them: a dead link ends in an I/O error after about `t`; a server process that stops
/// answering while its kernel keeps the connection up is bounded by the run's stop
/// grace instead.
fn set_tcp_timeouts(s: &TcpStream, t: Duration) {
    // Whole seconds, at least one, within the kernel's int; the user timeout likewise
    // in milliseconds.
    let secs = |d: Duration| Duration::from_secs(d.as_secs().clamp(1, i32::MAX as u64));
    let keepalive = TcpKeepalive::new()
        .with_time(secs(t / 3))
        .with_interval(secs(t / 9))
        .with_retries(3);
    let sock = SockRef::from(s);
    // Best effort: a socket that refuses one keeps the system's default.
    let _ = sock.set_tcp_keepalive(&keepalive);
    let _ = sock.set_tcp_user_timeout(Some(t.min(Duration::from_millis(i32::MAX as u64))));
}

fn open_stream(
    p: &PgsqlOptions,
    connect_timeout: Duration,
    deadline: Instant,
) -> Result<Stream, WireError> {
    let fail = |e: io::Error| WireError::Client(format!("error connecting to server: {e}"));
    if p.host.starts_with('/') {
        let path = format!("{}/.s.PGSQL.{}", p.host.trim_end_matches('/'), p.port);
        return UnixStream::connect(path).map(Stream::Unix).map_err(fail);
    }
    match connect_tcp(&p.host, p.port, connect_timeout, deadline) {
        Ok(s) => Ok(Stream::Tcp(s)),
        Err(ConnectFailure::TimedOut) => Err(WireError::ConnectTimeout(connect_timeout.as_secs())),
        Err(ConnectFailure::Io(e)) => Err(fail(e)),
    }
}

/// A failed read or write of the connect: a socket timeout is the connect timeout.
fn connect_io_error(e: io::Error, limit: Duration) -> WireError {
    if timed_out(&e) {
        WireError::ConnectTimeout(limit.as_secs())
    } else {
        WireError::io(e)
    }
}

/// Asks the server for TLS on `tcp` (as libpq does first under `prefer`, `allow` and
/// `require`) and runs the handshake when it accepts; a plain stream when it declines
/// and the mode allows that.
fn negotiate_tls(
    mut tcp: TcpStream,
    p: &PgsqlOptions,
    tls: Arc<ClientConfig>,
    limit: Duration,
    deadline: &mut ReadDeadline,
) -> Result<Stream, WireError> {
    let mut request = BytesMut::new();
    frontend::ssl_request(&mut request);
    tcp.write_all(&request)
        .map_err(|e| connect_io_error(e, limit))?;
    let mut answer = [0u8; 1];
    let read = deadline
        .before_recv(tcp.as_raw_fd())
        .and_then(|()| tcp.read(&mut answer));
    match read {
        Ok(1) if answer[0] == b'N' && p.sslmode == PgSslMode::Require => Err(WireError::Client(
            "error performing TLS handshake: server does not support TLS".into(),
        )),
        Ok(1) if answer[0] == b'N' => Ok(Stream::Tcp(tcp)),
        Ok(1) if answer[0] == b'S' => match TlsStream::handshake(tcp, tls, &p.host, deadline) {
            Ok(t) => Ok(Stream::Tls(Box::new(t))),
            Err(e) if timed_out(&e) => Err(WireError::ConnectTimeout(limit.as_secs())),
            Err(e) => Err(WireError::Client(format!(
                "error performing TLS handshake: {e}"
            ))),
        },
        Ok(0) => Err(WireError::closed()),
        Ok(_) => Err(WireError::unexpected()),
        Err(e) => Err(connect_io_error(e, limit)),
    }
}

/// Append `v` as a text-format parameter (the server converts it to the parameter's
/// type); false for NULL.
pub(crate) fn put_text_param(v: &Value, out: &mut BytesMut) -> bool {
    use std::fmt::Write as _;
    match v {
        Value::Null => return false,
        Value::Text(t) => out.extend_from_slice(t),
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Float(f) if !f.is_finite() => out.extend_from_slice(non_finite(f64::from(*f))),
        Value::Double(d) if !d.is_finite() => out.extend_from_slice(non_finite(*d)),
        v => {
            let mut s = String::new();
            push_literal(&mut s, v, Dialect::Standard);
            out.extend_from_slice(s.as_bytes());
        }
    }
    true
}

/// PostgreSQL's spelling of NaN and the infinities.
fn non_finite(v: f64) -> &'static [u8] {
    if v.is_nan() {
        b"NaN"
    } else if v > 0.0 {
        b"Infinity"
    } else {
        b"-Infinity"
    }
}

/// Rows affected according to a CommandComplete tag (its last word, as the crate
/// reads it; 0 for tags without a count).
fn affected_rows(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let last = tag.rsplit(|&b| b == b' ').next().unwrap_or(&[]);
    std::str::from_utf8(last)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A whole backend message (tag and body) parsed by `postgres-protocol`.
fn parse_message(tag: u8, body: &[u8]) -> Result<Message, WireError> {
    let mut buf = BytesMut::with_capacity(body.len() + 5);
    buf.put_u8(tag);
    buf.put_i32(body.len() as i32 + 4);
    buf.extend_from_slice(body);
    match Message::parse(&mut buf) {
        Ok(Some(m)) => Ok(m),
        Ok(None) => Err(WireError::parse("incomplete message")),
        Err(e) => Err(WireError::parse(&e.to_string())),
    }
}

/// The server error of an ErrorResponse body.
fn db_error(body: &[u8]) -> WireError {
    let Ok(Message::ErrorResponse(e)) = parse_message(b'E', body) else {
        return WireError::parse("invalid error response");
    };
    let (mut code, mut message, mut severity) = (String::new(), String::new(), String::new());
    let mut position = None;
    let mut fields = e.fields();
    loop {
        match fields.next() {
            Ok(Some(f)) => {
                let v = String::from_utf8_lossy(f.value_bytes()).into_owned();
                match f.type_() {
                    b'C' => code = v,
                    b'M' => message = v,
                    b'S' => severity = v,
                    b'P' => position = v.parse().ok(),
                    _ => {}
                }
            }
            Ok(None) => break,
            Err(_) => return WireError::parse("invalid error response"),
        }
    }
    WireError::Db {
        code,
        message,
        severity,
        position,
    }
}

/// Append the values of a DataRow body to `out`: binary ones rendered by [`pgtext`]
/// for their type, text ones as they are. `cols` is `None` for text rows of unknown
/// layout (simple queries).
fn push_row(body: &[u8], cols: Option<(&[Type], &[i16])>, out: &mut ResultSet) -> bool {
    let Some(n) = body
        .get(..2)
        .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
    else {
        return false;
    };
    if cols.is_some_and(|(t, _)| t.len() != n) {
        return false;
    }
    let mut p = 2;
    for i in 0..n {
        let Some(len) = body.get(p..p + 4) else {
            return false;
        };
        let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        p += 4;
        let value = if len < 0 {
            None
        } else {
            let Some(v) = body.get(p..p + len as usize) else {
                return false;
            };
            p += len as usize;
            Some(v)
        };
        match cols {
            Some((types, formats)) if formats[i] == BINARY => pgtext::push(out, &types[i], value),
            _ => out.push_cell(value),
        }
    }
    true
}

impl WireConn {
    /// Open and authenticate a connection on the calling thread. With `tls` (the modes
    /// other than `disable`) a TCP connection asks the server for TLS first, as libpq
    /// does, and takes it when offered (`require`: fails without). The whole connect
    /// ends within `connect_timeout`, blocking even on an event loop: the TCP connect
    /// and every handshake read and write are bounded by socket timeouts, lowered to
    /// what is left of it when they would reach past it ([`ReadDeadline`]), so a server
    /// that trickles its answers cannot stretch it. Afterwards each message read while
    /// blocking must arrive within `io_timeout`, as a whole.
    pub(crate) fn connect(
        p: &PgsqlOptions,
        connect_timeout: Duration,
        io_timeout: Option<Duration>,
        tls: Option<Arc<ClientConfig>>,
    ) -> Result<WireConn, WireError> {
        let deadline = Instant::now() + connect_timeout;
        let mut stream = open_stream(p, connect_timeout, deadline)?;
        if let (Stream::Tcp(s), Some(t)) = (&stream, io_timeout) {
            set_tcp_timeouts(s, t);
        }
        let step = io_timeout.map_or(connect_timeout, |io| io.min(connect_timeout));
        // A TCP stream has the connect timeout already (`connect_tcp`).
        if !matches!(stream, Stream::Tcp(_)) || step != connect_timeout {
            set_socket_timeouts(stream.as_raw_fd(), Some(step))
                .map_err(|e| WireError::Client(format!("error connecting to server: {e}")))?;
        }
        let mut handshake_deadline = ReadDeadline::new(deadline, Some(step));
        // As libpq, no TLS on a UNIX socket.
        if let (Stream::Tcp(_), Some(tls)) = (&stream, tls) {
            let Stream::Tcp(tcp) = stream else {
                unreachable!("matched above")
            };
            stream = negotiate_tls(tcp, p, tls, connect_timeout, &mut handshake_deadline)?;
        }
        let mut c = WireConn {
            stream,
            out: BytesMut::with_capacity(1024),
            inbuf: vec![0; INITIAL_BUF],
            start: 0,
            end: 0,
            socket_id: 0,
            awaiting: false,
            broken: false,
            handshake_limit: Some(connect_timeout),
            handshake_deadline: Some(handshake_deadline),
            read_limit: io_timeout,
        };
        c.startup(p)?;
        // The queries' writes wait without a socket limit (unacknowledged data is
        // bounded by `TCP_USER_TIMEOUT`); their reads, when they block, by the I/O
        // timeout.
        let fd = c.stream.as_raw_fd();
        set_send_timeout(fd, None)
            .and_then(|()| set_receive_timeout(fd, io_timeout))
            .map_err(|e| c.fail_io(e))?;
        c.handshake_limit = None;
        c.handshake_deadline = None;
        Ok(c)
    }

    fn startup(&mut self, p: &PgsqlOptions) -> Result<(), WireError> {
        let params = [
            ("client_encoding", "UTF8"),
            ("user", p.user.as_str()),
            ("database", p.db.as_str()),
            ("application_name", "bmk"),
        ];
        self.out.clear();
        frontend::startup_message(params, &mut self.out).map_err(WireError::io)?;
        self.send()?;
        let password = || {
            if p.password.is_empty() {
                Err(WireError::Client(
                    "invalid configuration: password missing".into(),
                ))
            } else {
                Ok(p.password.as_bytes())
            }
        };
        let mut scram: Option<ScramSha256> = None;
        let auth_error =
            |e: &dyn std::fmt::Display| WireError::Client(format!("authentication error: {e}"));
        loop {
            let (tag, s, e) = self.next_message()?;
            match tag {
                b'R' => {}
                b'E' => return Err(db_error(&self.inbuf[s..e])),
                b'N' => continue,
                _ => return Err(self.out_of_place(tag, s, e)),
            }
            self.out.clear();
            match parse_message(tag, &self.inbuf[s..e])? {
                Message::AuthenticationOk => break,
                Message::AuthenticationCleartextPassword => {
                    frontend::password_message(password()?, &mut self.out)
                        .map_err(WireError::io)?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let hash = md5_hash(p.user.as_bytes(), password()?, body.salt());
                    frontend::password_message(hash.as_bytes(), &mut self.out)
                        .map_err(WireError::io)?;
                }
                Message::AuthenticationSasl(body) => {
                    let mut offered = false;
                    let mut mechanisms = body.mechanisms();
                    while let Some(m) = mechanisms
                        .next()
                        .map_err(|e| WireError::parse(&e.to_string()))?
                    {
                        offered |= m == SCRAM_SHA_256;
                    }
                    if !offered {
                        return Err(auth_error(&"unsupported SASL mechanism"));
                    }
                    let s = ScramSha256::new(password()?, ChannelBinding::unsupported());
                    frontend::sasl_initial_response(SCRAM_SHA_256, s.message(), &mut self.out)
                        .map_err(WireError::io)?;
                    scram = Some(s);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let s = scram.as_mut().ok_or_else(WireError::unexpected)?;
                    s.update(body.data()).map_err(|e| auth_error(&e))?;
                    frontend::sasl_response(s.message(), &mut self.out).map_err(WireError::io)?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let s = scram.as_mut().ok_or_else(WireError::unexpected)?;
                    s.finish(body.data()).map_err(|e| auth_error(&e))?;
                    continue;
                }
                _ => return Err(auth_error(&"unsupported authentication method requested")),
            }
            self.send()?;
        }
        // Parameter statuses and the backend key until the server is ready.
        loop {
            let (tag, s, e) = self.next_message()?;
            match tag {
                b'Z' => return Ok(()),
                b'E' => return Err(db_error(&self.inbuf[s..e])),
                b'S' | b'K' | b'N' => {}
                _ => return Err(self.out_of_place(tag, s, e)),
            }
        }
    }

    /// Whether the stream failed (the connection must be dropped).
    pub(crate) fn is_broken(&self) -> bool {
        self.broken
    }

    /// The error for message `tag` (body `s..e`) where it has no place: malformed or
    /// unknown as `postgres-protocol` words it, else unexpected.
    #[cold]
    fn out_of_place(&mut self, tag: u8, s: usize, e: usize) -> WireError {
        let err = match parse_message(tag, &self.inbuf[s..e]) {
            Err(parse) => parse,
            Ok(_) => WireError::unexpected(),
        };
        self.fail(err)
    }

    fn fail(&mut self, e: WireError) -> WireError {
        if matches!(e, WireError::Broken(_) | WireError::ConnectTimeout(_)) {
            self.broken = true;
        }
        e
    }

    /// The error for a failed read or write: during the handshake a socket timeout
    /// is the connect timeout.
    fn fail_io(&mut self, e: io::Error) -> WireError {
        let err = match self.handshake_limit {
            Some(limit) if timed_out(&e) => WireError::ConnectTimeout(limit.as_secs()),
            // A read that reached `--db-timeout` (a send has no timeout here).
            None if timed_out(&e) => WireError::Broken(
                "error communicating with the server: no answer within --db-timeout".into(),
            ),
            _ => WireError::io(e),
        };
        self.fail(err)
    }

    fn send(&mut self) -> Result<(), WireError> {
        if self.broken {
            return Err(WireError::closed());
        }
        if let Err(e) = self.stream.write_all(&self.out) {
            return Err(self.fail_io(e));
        }
        self.awaiting = true;
        Ok(())
    }

    /// Read more, so that at least `n` bytes are buffered from `start`: during the
    /// handshake by its deadline, afterwards, when the read blocks, by `deadline` (the
    /// one of the message being read, set up here at its first read).
    fn fill(&mut self, n: usize, deadline: &mut Option<ReadDeadline>) -> Result<(), WireError> {
        if self.start + n > self.inbuf.len() {
            self.inbuf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if n > self.inbuf.len() {
                let size = n.max(self.inbuf.len() * 2);
                self.inbuf.resize(size, 0);
            }
        }
        let fd = self.stream.as_raw_fd();
        let blocking = self.handshake_limit.is_some();
        let mut limit = match (&mut self.handshake_deadline, self.read_limit) {
            (Some(h), _) => Some(h),
            (None, Some(t)) if !bmk_engine::coop::active() => {
                Some(deadline.get_or_insert_with(|| ReadDeadline::new(Instant::now() + t, Some(t))))
            }
            _ => None,
        };
        let (socket_id, awaiting) = (&mut self.socket_id, &mut self.awaiting);
        let mut recv = |fd: RawFd, buf: &mut [u8]| {
            if let Some(d) = limit.as_deref_mut() {
                d.before_recv(fd)?;
            }
            if blocking {
                read_blocking(fd, buf)
            } else {
                read_some(fd, socket_id, awaiting, buf)
            }
        };
        let buf = &mut self.inbuf[self.end..];
        let got = match &mut self.stream {
            Stream::Tls(t) => t.read_plain(buf, recv),
            _ => recv(fd, buf),
        };
        match got {
            Ok(0) => Err(self.fail(WireError::closed())),
            Ok(got) => {
                self.end += got;
                if self.end == self.inbuf.len() && self.inbuf.len() < KEEP_BUF {
                    // A full buffer: the answers are larger, take them in fewer reads.
                    self.inbuf.resize(self.inbuf.len() * 2, 0);
                }
                Ok(())
            }
            Err(e) => Err(self.fail_io(e)),
        }
    }

    /// [`Self::next_message`] within an answer whose server error, if one came, is
    /// `err`: when the read fails that error is returned instead (FATAL errors come just
    /// before the server closes the connection and say more than the failed read).
    #[inline]
    fn next_message_after(
        &mut self,
        err: &mut Option<WireError>,
    ) -> Result<(u8, usize, usize), WireError> {
        self.next_message().map_err(|e| err.take().unwrap_or(e))
    }

    /// The next backend message: its tag and the range of its body in `inbuf`.
    #[inline]
    fn next_message(&mut self) -> Result<(u8, usize, usize), WireError> {
        let mut deadline = None;
        loop {
            let have = self.end - self.start;
            if have >= 5 {
                let header = match backend::Header::parse(&self.inbuf[self.start..self.end]) {
                    Ok(Some(h)) => h,
                    Ok(None) => return Err(self.fail(WireError::parse("short header"))),
                    Err(e) => return Err(self.fail(WireError::parse(&e.to_string()))),
                };
                let total = 1 + header.len() as usize;
                if have >= total {
                    if let Some(d) = deadline.as_mut() {
                        let restored = ReadDeadline::restore(d, self.stream.as_raw_fd());
                        restored.map_err(|e| self.fail_io(e))?;
                    }
                    let s = self.start + 5;
                    self.start += total;
                    return Ok((header.tag(), s, self.start));
                }
                self.fill(total, &mut deadline)?;
            } else {
                self.fill(5, &mut deadline)?;
            }
        }
    }

    /// The answer ended (ReadyForQuery): forget consumed input, give back a buffer
    /// grown for a large answer.
    fn answered(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.inbuf.len() > KEEP_BUF {
                self.inbuf = vec![0; INITIAL_BUF];
            }
        }
    }

    /// Read to ReadyForQuery after an error, returning it.
    fn drain_with(&mut self, err: WireError) -> WireError {
        loop {
            match self.next_message() {
                Ok((b'Z', _, _)) => {
                    self.answered();
                    return err;
                }
                Ok(_) => {}
                Err(e) => return e,
            }
        }
    }

    /// Run `sql` with the simple-query protocol: one entry in `sets` per statement
    /// (`None` for one without rows), text values as the server sends them. Returns
    /// the affected rows of the last statement (0 when it had rows).
    pub(crate) fn simple_query(
        &mut self,
        sql: &str,
        sets: &mut std::collections::VecDeque<Option<ResultSet>>,
    ) -> Result<u64, WireError> {
        sets.clear();
        self.out.clear();
        if let Err(e) = frontend::query(sql, &mut self.out) {
            return Err(WireError::Client(e.to_string()));
        }
        self.send()?;
        let mut cur: Option<ResultSet> = None;
        let mut affected = 0;
        let mut err = None;
        loop {
            let (tag, s, e) = self.next_message_after(&mut err)?;
            match tag {
                b'T' => match parse_message(tag, &self.inbuf[s..e]) {
                    Ok(Message::RowDescription(body)) => {
                        let names: Result<Vec<String>, _> =
                            body.fields().map(|f| Ok(f.name().to_string())).collect();
                        match names {
                            Ok(names) => cur = Some(ResultSet::new(names)),
                            Err(_) => return Err(self.fail(WireError::parse("row description"))),
                        }
                    }
                    Ok(_) => return Err(self.fail(WireError::unexpected())),
                    Err(e) => return Err(self.fail(e)),
                },
                b'D' => {
                    let body = &self.inbuf[s..e];
                    let n = body
                        .get(..2)
                        .map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])));
                    let rs = cur.get_or_insert_with(|| ResultSet::with_nfields(n));
                    if !push_row(body, None, rs) {
                        return Err(self.fail(WireError::parse("data row")));
                    }
                }
                b'C' => {
                    let n = affected_rows(&self.inbuf[s..e]);
                    affected = if cur.is_some() { 0 } else { n };
                    sets.push_back(cur.take());
                }
                b'I' => {}
                b'E' => err = Some(db_error(&self.inbuf[s..e])),
                b'N' | b'S' | b'A' => {}
                b'Z' => break,
                // COPY started by a plain query: refuse it so the stream stays in step.
                b'G' => {
                    self.out.clear();
                    let _ = frontend::copy_fail("COPY is not supported by a query", &mut self.out);
                    self.send()?;
                }
                b'H' | b'd' | b'c' => {}
                _ => return Err(self.out_of_place(tag, s, e)),
            }
        }
        self.answered();
        if let Some(e) = err {
            sets.clear();
            return Err(e);
        }
        if cur.is_some() {
            sets.push_back(cur.take());
        }
        Ok(affected)
    }

    /// Prepare `sql` as statement `name` and learn its result columns.
    pub(crate) fn prepare(&mut self, name: &str, sql: &str) -> Result<Prepared, WireError> {
        self.out.clear();
        let encoded = frontend::parse(name, sql, std::iter::empty(), &mut self.out)
            .and_then(|()| frontend::describe(b'S', name, &mut self.out));
        if let Err(e) = encoded {
            return Err(WireError::Client(e.to_string()));
        }
        frontend::sync(&mut self.out);
        self.send()?;
        let mut prepared = Prepared {
            name: name.to_string(),
            types: Vec::new(),
            formats: Vec::new(),
            names: Arc::default(),
        };
        let mut err = None;
        loop {
            let (tag, s, e) = self.next_message_after(&mut err)?;
            match tag {
                b'1' | b't' | b'n' | b'N' | b'S' | b'A' => {}
                b'T' => {
                    let Ok(Message::RowDescription(body)) = parse_message(tag, &self.inbuf[s..e])
                    else {
                        return Err(self.fail(WireError::parse("row description")));
                    };
                    let mut names = Vec::new();
                    let mut fields = body.fields();
                    while let Ok(Some(f)) = fields.next() {
                        names.push(f.name().to_string());
                        match Type::from_oid(f.type_oid()) {
                            Some(t) => {
                                prepared.types.push(t);
                                prepared.formats.push(BINARY);
                            }
                            None => {
                                prepared.types.push(Type::TEXT);
                                prepared.formats.push(TEXT);
                            }
                        }
                    }
                    prepared.names = names.into();
                }
                b'E' => err = Some(db_error(&self.inbuf[s..e])),
                b'Z' => break,
                _ => return Err(self.out_of_place(tag, s, e)),
            }
        }
        self.answered();
        match err {
            Some(e) => Err(e),
            None => Ok(prepared),
        }
    }

    /// Execute `stmt` with `params` (text format): rows go to `out` (reset to the
    /// statement's columns when it has any). Returns the affected rows.
    pub(crate) fn execute(
        &mut self,
        stmt: &Prepared,
        params: &[Value],
        out: &mut ResultSet,
    ) -> Result<u64, WireError> {
        self.out.clear();
        let bound = frontend::bind(
            "",
            &stmt.name,
            std::iter::empty(),
            params,
            |v, buf| {
                Ok(if put_text_param(v, buf) {
                    IsNull::No
                } else {
                    IsNull::Yes
                })
            },
            stmt.formats.iter().copied(),
            &mut self.out,
        );
        if bound.is_err() {
            return Err(WireError::Client(format!(
                "cannot bind {} parameters",
                params.len()
            )));
        }
        let _ = frontend::execute("", 0, &mut self.out);
        frontend::sync(&mut self.out);
        self.send()?;
        if stmt.has_columns() {
            out.reset(&stmt.names);
        }
        let cols = (stmt.types.as_slice(), stmt.formats.as_slice());
        let mut affected = 0;
        let mut err = None;
        loop {
            let (tag, s, e) = self.next_message_after(&mut err)?;
            match tag {
                b'D' => {
                    if !stmt.has_columns() || !push_row(&self.inbuf[s..e], Some(cols), out) {
                        return Err(self.fail(WireError::parse("data row")));
                    }
                }
                b'2' => {}
                b'C' => affected = affected_rows(&self.inbuf[s..e]),
                b'Z' => break,
                b'E' => err = Some(db_error(&self.inbuf[s..e])),
                b'I' | b's' | b'N' | b'S' | b'A' => {}
                _ => return Err(self.out_of_place(tag, s, e)),
            }
        }
        self.answered();
        match err {
            Some(e) => {
                out.clear();
                Err(e)
            }
            None => Ok(affected),
        }
    }

    /// Close statement `name` on the server (errors are left to the next call).
    pub(crate) fn close_statement(&mut self, name: &str) {
        self.out.clear();
        if frontend::close(b'S', name, &mut self.out).is_err() {
            return;
        }
        frontend::sync(&mut self.out);
        if self.send().is_ok() {
            let _ = self.drain_with(WireError::unexpected());
        }
    }

    /// Run `COPY ... FROM STDIN` with the data `feed` hands to its writer in chunks;
    /// returns the rows copied.
    pub(crate) fn copy_in(&mut self, sql: &str, feed: &mut CopyFeed<'_>) -> Result<u64, WireError> {
        self.out.clear();
        if let Err(e) = frontend::query(sql, &mut self.out) {
            return Err(WireError::Client(e.to_string()));
        }
        self.send()?;
        loop {
            let (tag, s, e) = self.next_message()?;
            match tag {
                b'G' => break,
                b'E' => {
                    let err = db_error(&self.inbuf[s..e]);
                    return Err(self.drain_with(err));
                }
                b'N' | b'S' | b'A' => {}
                _ => return Err(self.out_of_place(tag, s, e)),
            }
        }
        // An error of the server arrives after CopyDone; a failed write ends the feed.
        let mut failed: Option<WireError> = None;
        feed(&mut |chunk: &[u8]| {
            if failed.is_some() {
                return false;
            }
            self.out.clear();
            match frontend::CopyData::new(chunk) {
                Ok(d) => d.write(&mut self.out),
                Err(e) => {
                    failed = Some(WireError::Client(e.to_string()));
                    return false;
                }
            }
            if let Err(e) = self.send() {
                failed = Some(e);
                return false;
            }
            true
        });
        if let Some(e) = failed {
            if !matches!(e, WireError::Client(_)) {
                return Err(e);
            }
            self.out.clear();
            let _ = frontend::copy_fail(
                &match &e {
                    WireError::Client(m) => m.clone(),
                    _ => String::new(),
                },
                &mut self.out,
            );
            self.send()?;
            return Err(self.drain_with(e));
        }
        self.out.clear();
        frontend::copy_done(&mut self.out);
        self.send()?;
        let mut rows = 0;
        let mut err = None;
        loop {
            let (tag, s, e) = self.next_message_after(&mut err)?;
            match tag {
                b'C' => rows = affected_rows(&self.inbuf[s..e]),
                b'E' => err = Some(db_error(&self.inbuf[s..e])),
                b'Z' => break,
                b'N' | b'S' | b'A' => {}
                _ => return Err(self.out_of_place(tag, s, e)),
            }
        }
        self.answered();
        match err {
            Some(e) => Err(e),
            None => Ok(rows),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affected_rows_reads_the_last_word_of_the_tag() {
        assert_eq!(affected_rows(b"INSERT 0 5\0"), 5);
        assert_eq!(affected_rows(b"UPDATE 12\0"), 12);
        assert_eq!(affected_rows(b"BEGIN\0"), 0);
        assert_eq!(affected_rows(b"SELECT 1"), 1);
    }

    #[test]
    fn text_params_spell_values_as_literals() {
        let mut b = BytesMut::new();
        assert!(!put_text_param(&Value::Null, &mut b));
        for (v, want) in [
            (Value::Int(-42), "-42"),
            (Value::Double(1.5), "1.5"),
            (Value::Double(f64::NEG_INFINITY), "-Infinity"),
            (Value::Float(f32::NAN), "NaN"),
            (Value::Text(b"it's".to_vec()), "it's"),
        ] {
            b.clear();
            assert!(put_text_param(&v, &mut b));
            assert_eq!(&b[..], want.as_bytes());
        }
    }

    #[test]
    fn data_rows_decode_binary_and_text_columns() {
        // Two columns: int4 42 (binary) and NULL; then a text column "ab".
        let mut body = vec![0, 2, 0, 0, 0, 4, 0, 0, 0, 42, 0xff, 0xff, 0xff, 0xff];
        let mut rs = ResultSet::with_nfields(2);
        let types = [Type::INT4, Type::TEXT];
        assert!(push_row(&body, Some((&types, &[BINARY, TEXT])), &mut rs));
        assert_eq!(rs.get_str(0, 0).as_deref(), Some("42"));
        assert_eq!(rs.get(0, 1), None);
        // A row cut short is refused.
        body.truncate(8);
        assert!(!push_row(&body, Some((&types, &[BINARY, TEXT])), &mut rs));
        let mut rs = ResultSet::with_nfields(1);
        assert!(push_row(&[0, 1, 0, 0, 0, 2, b'a', b'b'], None, &mut rs));
        assert_eq!(rs.get_str(0, 0).as_deref(), Some("ab"));
    }
}
