//! bmk's own MySQL connection phase, for plain sockets (no TLS, no compression): open
//! the socket, read the server's greeting, log in with `mysql_native_password`,
//! `caching_sha2_password` or MariaDB's `client_ed25519` ([`crate::mysql_ed25519`]), and
//! hand the authenticated socket to the fast path ([`crate::mysql_fast`]), which then
//! speaks every command on it.
//!
//! # Why
//! A connect through the `mysql` crate cost 1.7 to 2.5 times the client CPU of the
//! connect floor, the protocol's own round trips (BENCHMARKS.md, "connect"): a
//! non-blocking connect with `poll` and four `fcntl`s, six socket options, a `getpid`
//! and a map of connection attributes built per connect, the options cloned, pooled
//! buffers. Here a connect is `socket`, two socket timeouts, a blocking `connect`
//! bounded by them, `TCP_NODELAY`, the greeting, one response, the answer, and the
//! query timeouts.
//!
//! # The password
//! `caching_sha2_password`'s full authentication wants the password itself: it goes
//! in clear over a UNIX socket (as MySQL's clients send it), and over plain TCP only
//! encrypted with an RSA key the user vouched for ([`crate::mysql_rsa`]): the key of
//! `--mysql-server-public-key`, or the one the server sends under
//! `--mysql-get-server-public-key`. Without either the login fails, naming the ways
//! out, and nothing of the password was sent. A server asking for the password in
//! clear (`mysql_clear_password`), for `dialog` or another plugin nobody here speaks is
//! refused the same way.
//!
//! # What is left to the crate
//! MariaDB's `parsec` (11.6 and later), which this module declines with
//! [`HandshakeError::Unsupported`], is done by connecting again through the crate (the
//! caller does so, and remembers it). That connection is the crate's altogether: the
//! fast path never speaks on the crate's socket, so nothing here depends on how the
//! crate frames, buffers or negotiates.
//!
//! # Time
//! The whole connect (TCP connect, every read and write of the handshake) ends by the
//! connect timeout, blocking even on an event loop: each read and write is bounded by
//! a socket timeout (`step`, the smaller of the connect and the I/O timeouts), lowered
//! to what is left before the deadline when it would reach past it
//! ([`ReadDeadline`]), so a server that trickles its answers cannot stretch it.

use std::io::{self, ErrorKind};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use sha1::Sha1;
use sha2::{Digest, Sha256};

use crate::coop_read::read_blocking;
use crate::error::Endpoint;
use crate::mysql_ed25519::{ed25519_proof, SCRAMBLE_LEN};
use crate::mysql_rsa::ServerPublicKey;
use crate::socket_timeouts::{
    connect_tcp, set_socket_timeouts, timed_out, ConnectFailure, ReadDeadline,
};

const LONG_PASSWORD: u32 = 1;
const LONG_FLAG: u32 = 1 << 2;
const CONNECT_WITH_DB: u32 = 1 << 3;
const LOCAL_FILES: u32 = 1 << 7;
const PROTOCOL_41: u32 = 1 << 9;
const TRANSACTIONS: u32 = 1 << 13;
const SECURE_CONNECTION: u32 = 1 << 15;
const MULTI_STATEMENTS: u32 = 1 << 16;
const MULTI_RESULTS: u32 = 1 << 17;
const PS_MULTI_RESULTS: u32 = 1 << 18;
const PLUGIN_AUTH: u32 = 1 << 19;
const CONNECT_ATTRS: u32 = 1 << 20;

/// What the client asks for: the set the `mysql` crate asks for (the fast path parses
/// responses as they come under it: EOF packets after column definitions, no session
/// tracking, affected rows counting changed rows only).
const CLIENT_CAPS: u32 = PROTOCOL_41
    | SECURE_CONNECTION
    | LONG_PASSWORD
    | TRANSACTIONS
    | LOCAL_FILES
    | MULTI_STATEMENTS
    | MULTI_RESULTS
    | PS_MULTI_RESULTS
    | PLUGIN_AUTH;

/// MariaDB's extended capabilities asked for: bulk execute (table loads), metadata
/// caching (the fast path honours it) and bulk unit results.
const MARIADB_STMT_BULK_OPERATIONS: u32 = 1 << 2;
const MARIADB_CACHE_METADATA: u32 = 1 << 4;
const MARIADB_BULK_UNIT_RESULTS: u32 = 1 << 5;
const MARIADB_CAPS: u32 =
    MARIADB_STMT_BULK_OPERATIONS | MARIADB_CACHE_METADATA | MARIADB_BULK_UNIT_RESULTS;

/// `utf8mb4_general_ci`, and `utf8_general_ci` for servers older than 5.5.3.
const UTF8MB4_GENERAL_CI: u8 = 45;
const UTF8_GENERAL_CI: u8 = 33;
/// The client's packet limit: the largest the server accepts, so the client never
/// refuses what the server would take.
const MAX_PACKET: u32 = 1 << 30;

const NATIVE: &[u8] = b"mysql_native_password";
const CACHING_SHA2: &[u8] = b"caching_sha2_password";
const ED25519: &[u8] = b"client_ed25519";
/// The MariaDB plugin the crate speaks and this module does not.
const LEFT_TO_THE_CRATE: &[u8] = b"parsec";

/// MySQL's client error numbers for a login refused by the client: an authentication
/// plugin reported an error, or one cannot be used.
pub(crate) const CR_AUTH_PLUGIN_ERR: u16 = 2061;
pub(crate) const CR_AUTH_PLUGIN_CANNOT_LOAD: u16 = 2059;

/// Who logs in, and where, and which RSA key the password may be encrypted with.
pub(crate) struct Login<'a> {
    pub endpoint: &'a Endpoint,
    pub user: &'a str,
    pub password: &'a str,
    pub db: &'a str,
    /// `--mysql-server-public-key`.
    pub server_key: Option<&'a ServerPublicKey>,
    /// `--mysql-get-server-public-key`.
    pub get_server_key: bool,
}

/// The client's refusal of a login, as an error the caller reports like a server's.
pub(crate) fn refusal(code: u16, message: String) -> mysql::Error {
    mysql::Error::MySqlError(mysql::MySqlError {
        state: "HY000".into(),
        message,
        code,
    })
}

/// The refusal of full authentication over plain TCP without a trusted key.
fn full_auth_refused() -> HandshakeError {
    HandshakeError::Failed(refusal(
        CR_AUTH_PLUGIN_ERR,
        "caching_sha2_password: the server asks for the password over plain TCP, which \
         bmk sends only over TLS (--mysql-ssl=REQUIRED or stricter), encrypted with a \
         public key you trust (--mysql-server-public-key=FILE), or with the key the \
         server sends if you opt in (--mysql-get-server-public-key)"
            .into(),
    ))
}

/// The refusal of authentication plugin `name`, which bmk does not speak.
fn plugin_refused(name: &[u8]) -> HandshakeError {
    HandshakeError::Failed(plugin_refusal(name))
}

/// The refusal of authentication plugin `name` (also for the crate's login).
pub(crate) fn plugin_refusal(name: &[u8]) -> mysql::Error {
    let name = String::from_utf8_lossy(name);
    let why = match &*name {
        "mysql_clear_password" => "it sends the password in clear text",
        "dialog" => "it asks interactive questions (PAM)",
        "mysql_old_password" => "its password hash is broken",
        _ => "bmk does not speak it",
    };
    refusal(
        CR_AUTH_PLUGIN_CANNOT_LOAD,
        format!(
            "the server asks for authentication plugin '{name}', which bmk refuses: {why} \
             (bmk logs in with mysql_native_password, caching_sha2_password, \
             client_ed25519 or parsec)"
        ),
    )
}

/// Why a login did not end in an authenticated socket.
#[derive(Debug)]
pub(crate) enum HandshakeError {
    /// The server asks for something only the crate's client does (named): connect
    /// through the crate instead.
    Unsupported(String),
    /// The connect failed, as the crate would report it.
    Failed(mysql::Error),
}

impl From<mysql::Error> for HandshakeError {
    fn from(e: mysql::Error) -> Self {
        HandshakeError::Failed(e)
    }
}

fn out_of_sync() -> HandshakeError {
    HandshakeError::Failed(mysql::Error::DriverError(
        mysql::DriverError::PacketOutOfSync,
    ))
}

fn timeout() -> mysql::Error {
    mysql::Error::DriverError(mysql::DriverError::ConnectTimeout)
}

/// A read or write of the handshake that failed: one that reached its socket timeout
/// is the connect timeout.
fn io_failure(e: io::Error) -> HandshakeError {
    HandshakeError::Failed(if timed_out(&e) {
        timeout()
    } else {
        mysql::Error::IoError(e)
    })
}

/// Opens a connection to `login.endpoint` and logs in, all of it within
/// `connect_timeout`, every read and write within `step` too. Returns the socket,
/// with `io_timeout` as its read and write timeouts.
pub(crate) fn log_in(
    login: &Login<'_>,
    connect_timeout: Duration,
    step: Duration,
    io_timeout: Option<Duration>,
) -> Result<OwnedFd, HandshakeError> {
    let deadline = Instant::now() + connect_timeout;
    let fd = open(login.endpoint, connect_timeout, deadline)?;
    if step != connect_timeout {
        set_socket_timeouts(fd.as_raw_fd(), Some(step)).map_err(mysql::Error::IoError)?;
    }
    let mut wire = Wire {
        fd: fd.as_raw_fd(),
        buf: Vec::new(),
        seq: 0,
        deadline: ReadDeadline::new(deadline, Some(step)),
    };
    let unix = login.endpoint.socket.is_some();
    authenticate(&mut wire, login, unix)?;
    if io_timeout != Some(step) || wire.deadline.lowered() {
        set_socket_timeouts(fd.as_raw_fd(), io_timeout).map_err(mysql::Error::IoError)?;
    }
    Ok(fd)
}

/// The socket, connected by `deadline`, with at most `limit` as its read and write
/// timeouts.
fn open(ep: &Endpoint, limit: Duration, deadline: Instant) -> Result<OwnedFd, HandshakeError> {
    if let Some(path) = &ep.socket {
        let s = UnixStream::connect(path).map_err(mysql::Error::IoError)?;
        set_socket_timeouts(s.as_raw_fd(), Some(limit)).map_err(mysql::Error::IoError)?;
        return Ok(s.into());
    }
    let host = ep.host.as_deref().unwrap_or("localhost");
    match connect_tcp(host, ep.port.unwrap_or(3306), limit, deadline) {
        Ok(s) => Ok(s.into()),
        Err(ConnectFailure::TimedOut) => Err(HandshakeError::Failed(timeout())),
        Err(ConnectFailure::Io(e)) => Err(HandshakeError::Failed(mysql::Error::IoError(e))),
    }
}

/// Packets of the connection phase, read and written blocking.
struct Wire {
    fd: RawFd,
    buf: Vec<u8>,
    /// Sequence id of the last packet read.
    seq: u8,
    /// The end of the connect timeout.
    deadline: ReadDeadline,
}

impl Wire {
    /// The next packet's payload (the connection phase's packets are small: a payload
    /// of 16 MiB or more is refused).
    fn read(&mut self) -> Result<Vec<u8>, HandshakeError> {
        self.fill(4)?;
        let len = usize::from(self.buf[0])
            | usize::from(self.buf[1]) << 8
            | usize::from(self.buf[2]) << 16;
        if len == 0xff_ffff {
            return Err(out_of_sync());
        }
        self.seq = self.buf[3];
        self.fill(4 + len)?;
        let payload = self.buf[4..4 + len].to_vec();
        self.buf.drain(..4 + len);
        if payload.is_empty() {
            return Err(out_of_sync());
        }
        Ok(payload)
    }

    fn fill(&mut self, n: usize) -> Result<(), HandshakeError> {
        let mut chunk = [0u8; 1024];
        while self.buf.len() < n {
            self.deadline.before_recv(self.fd).map_err(io_failure)?;
            let got = read_blocking(self.fd, &mut chunk).map_err(io_failure)?;
            if got == 0 {
                return Err(io_failure(io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "server closed the connection during the handshake",
                )));
            }
            self.buf.extend_from_slice(&chunk[..got]);
        }
        Ok(())
    }

    /// Sends `payload` as the answer to the last packet read.
    fn write(&mut self, payload: &[u8]) -> Result<(), HandshakeError> {
        self.seq = self.seq.wrapping_add(1);
        let len = (payload.len() as u32).to_le_bytes();
        let mut packet = Vec::with_capacity(4 + payload.len());
        packet.extend_from_slice(&[len[0], len[1], len[2], self.seq]);
        packet.extend_from_slice(payload);
        let mut rest = &packet[..];
        while !rest.is_empty() {
            // SAFETY: `rest` is readable for its length; the kernel checks `fd`.
            let n = unsafe {
                libc::send(
                    self.fd,
                    rest.as_ptr().cast(),
                    rest.len(),
                    libc::MSG_NOSIGNAL,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                return Err(io_failure(e));
            }
            rest = &rest[n as usize..];
        }
        Ok(())
    }
}

/// A reader over one packet of the connection phase.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], HandshakeError> {
        if self.0.len() < n {
            return Err(out_of_sync());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u16(&mut self) -> Result<u32, HandshakeError> {
        let b = self.take(2)?;
        Ok(u32::from(u16::from_le_bytes([b[0], b[1]])))
    }
    fn u32(&mut self) -> Result<u32, HandshakeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// Up to the next NUL (or the end), without it.
    fn cstr(&mut self) -> &'a [u8] {
        let end = self.0.iter().position(|b| *b == 0);
        let s = &self.0[..end.unwrap_or(self.0.len())];
        self.0 = &self.0[end.map_or(self.0.len(), |e| e + 1)..];
        s
    }
}

/// What the greeting says that the login needs.
#[derive(Debug, PartialEq)]
struct Greeting {
    caps: u32,
    mariadb_caps: u32,
    mariadb: bool,
    version: (u16, u16, u16),
    nonce: Vec<u8>,
    plugin: Vec<u8>,
}

/// The leading `major.minor.patch` of a server version string.
fn parse_version(v: &[u8]) -> (u16, u16, u16) {
    let text = String::from_utf8_lossy(v);
    let mut parts = text
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

fn parse_greeting(p: &[u8]) -> Result<Greeting, HandshakeError> {
    if p[0] == 0xff {
        // The server refuses before the handshake (too many connections, blocked host).
        return Err(HandshakeError::Failed(crate::mysql_fast::server_error(p)));
    }
    if p[0] != 10 {
        return Err(HandshakeError::Failed(mysql::Error::DriverError(
            mysql::DriverError::UnsupportedProtocol(p[0]),
        )));
    }
    let mut r = Fields(&p[1..]);
    let version_text = r.cstr();
    r.take(4)?; // connection id
    let mut nonce = r.take(8)?.to_vec();
    r.take(1)?; // filler
    let mut caps = r.u16()?;
    let (mut auth_len, mut mariadb_caps) = (0usize, 0u32);
    if !r.0.is_empty() {
        r.take(3)?; // collation, status flags
        caps |= r.u16()? << 16;
        auth_len = usize::from(r.take(1)?[0]);
        r.take(6)?;
        mariadb_caps = r.u32()?;
    }
    if caps & PROTOCOL_41 == 0 {
        return Err(HandshakeError::Failed(mysql::Error::DriverError(
            mysql::DriverError::Protocol41NotSet,
        )));
    }
    if caps & SECURE_CONNECTION != 0 {
        let n = auth_len.saturating_sub(8).max(13).min(r.0.len());
        nonce.extend_from_slice(r.take(n)?);
    }
    // The nonce is 20 bytes (the part sent ends with a NUL), zero-filled if shorter.
    nonce.resize(20, 0);
    let plugin = if caps & PLUGIN_AUTH != 0 {
        r.cstr().to_vec()
    } else {
        Vec::new()
    };
    let mariadb = version_text.windows(7).any(|w| w == b"MariaDB");
    Ok(Greeting {
        caps,
        // MariaDB clears `CLIENT_LONG_PASSWORD` when it sends extended capabilities.
        mariadb_caps: if mariadb && caps & LONG_PASSWORD == 0 {
            mariadb_caps & MARIADB_CAPS
        } else {
            0
        },
        mariadb,
        version: parse_version(version_text),
        nonce,
        plugin,
    })
}

/// `mysql_native_password`: `SHA1(pw) XOR SHA1(nonce ++ SHA1(SHA1(pw)))`; nothing for
/// an empty password.
fn native_proof(password: &str, nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let pw = Sha1::digest(password.as_bytes());
    let pw2 = Sha1::digest(pw);
    let mut h = Sha1::new();
    h.update(&nonce[..nonce.len().min(20)]);
    h.update(pw2);
    pw.iter().zip(h.finalize()).map(|(a, b)| a ^ b).collect()
}

/// `caching_sha2_password`: `SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) ++ nonce)`;
/// nothing for an empty password.
fn caching_sha2_proof(password: &str, nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let pw = Sha256::digest(password.as_bytes());
    let pw2 = Sha256::digest(pw);
    let mut h = Sha256::new();
    h.update(pw2);
    h.update(nonce);
    pw.iter().zip(h.finalize()).map(|(a, b)| a ^ b).collect()
}

/// The proof for `plugin`, or `None` for a plugin this module does not speak.
fn proof(plugin: &[u8], password: &str, nonce: &[u8]) -> Option<Vec<u8>> {
    match plugin {
        NATIVE => Some(native_proof(password, nonce)),
        CACHING_SHA2 => Some(caching_sha2_proof(password, nonce)),
        _ => None,
    }
}

/// The answer to a switch to `plugin` whose request carried `data`: `None` for a
/// plugin this module does not speak. The password hashes take the nonce without its
/// terminating NUL; `client_ed25519`'s scramble comes without one, and its last byte
/// may be 0.
fn switch_answer(
    plugin: &[u8],
    password: &str,
    data: &[u8],
) -> Option<Result<Vec<u8>, HandshakeError>> {
    if plugin == ED25519 {
        return Some(match data.get(..SCRAMBLE_LEN) {
            Some(scramble) => Ok(ed25519_proof(password, scramble).to_vec()),
            None => Err(out_of_sync()),
        });
    }
    proof(plugin, password, without_nul(data)).map(Ok)
}

/// `data` without a terminating NUL.
fn without_nul(data: &[u8]) -> &[u8] {
    match data {
        [rest @ .., 0] => rest,
        _ => data,
    }
}

/// The connection attributes sent with every login (built once).
fn attributes() -> &'static [u8] {
    static ATTRS: OnceLock<Vec<u8>> = OnceLock::new();
    ATTRS.get_or_init(|| {
        let pid = std::process::id().to_string();
        let pairs = [
            ("_client_name", "bmk"),
            ("_client_version", env!("CARGO_PKG_VERSION")),
            ("_os", std::env::consts::OS),
            ("_platform", std::env::consts::ARCH),
            ("_pid", pid.as_str()),
            ("program_name", "bmk"),
        ];
        let mut body = Vec::new();
        for (k, v) in pairs {
            for s in [k, v] {
                // Every name and value is shorter than 251 bytes: a one-byte length.
                body.push(s.len() as u8);
                body.extend_from_slice(s.as_bytes());
            }
        }
        // Well under 251 bytes in all: a one-byte length.
        debug_assert!(body.len() < 251);
        let mut out = vec![body.len() as u8];
        out.extend_from_slice(&body);
        out
    })
}

/// The handshake response: what the crate sends, field for field.
fn response(g: &Greeting, login: &Login<'_>, plugin: &[u8], proof: &[u8]) -> Vec<u8> {
    let mut caps = (g.caps & (CLIENT_CAPS | LONG_FLAG)) | PLUGIN_AUTH | CONNECT_ATTRS;
    if !login.db.is_empty() {
        caps |= CONNECT_WITH_DB;
    }
    let collation = if g.version >= (5, 5, 3) {
        UTF8MB4_GENERAL_CI
    } else {
        UTF8_GENERAL_CI
    };
    let mut out = Vec::with_capacity(128 + login.user.len() + login.db.len());
    out.extend_from_slice(&caps.to_le_bytes());
    out.extend_from_slice(&MAX_PACKET.to_le_bytes());
    out.push(collation);
    out.extend_from_slice(&[0; 19]);
    out.extend_from_slice(&g.mariadb_caps.to_le_bytes());
    out.extend_from_slice(login.user.as_bytes());
    out.push(0);
    out.push(proof.len() as u8);
    out.extend_from_slice(proof);
    if !login.db.is_empty() {
        out.extend_from_slice(login.db.as_bytes());
        out.push(0);
    }
    out.extend_from_slice(plugin);
    out.push(0);
    out.extend_from_slice(attributes());
    out
}

/// The connection phase on a connected socket: greeting, response, and the answers
/// until the server's OK.
fn authenticate(wire: &mut Wire, login: &Login<'_>, unix: bool) -> Result<(), HandshakeError> {
    let greeting = parse_greeting(&wire.read()?)?;
    // As the crate: the greeting's plugin when it is caching_sha2_password, else
    // mysql_native_password (a server wanting another one switches).
    let mut plugin: &[u8] = if greeting.plugin == CACHING_SHA2 {
        CACHING_SHA2
    } else {
        NATIVE
    };
    let mut nonce = greeting.nonce.clone();
    let first = proof(plugin, login.password, &nonce).expect("a plugin spoken here");
    wire.write(&response(&greeting, login, plugin, &first))?;
    let mut switched = false;
    let mut switched_plugin;
    loop {
        let p = wire.read()?;
        match p[0] {
            0x00 => return Ok(()),
            0xff => return Err(HandshakeError::Failed(crate::mysql_fast::server_error(&p))),
            0xfe if !switched => {
                if p.len() == 1 {
                    return Err(plugin_refused(b"mysql_old_password"));
                }
                let mut r = Fields(&p[1..]);
                switched_plugin = r.cstr().to_vec();
                nonce = without_nul(r.0).to_vec();
                let Some(answer) = switch_answer(&switched_plugin, login.password, r.0) else {
                    if switched_plugin == LEFT_TO_THE_CRATE {
                        return Err(HandshakeError::Unsupported(
                            String::from_utf8_lossy(&switched_plugin).into_owned(),
                        ));
                    }
                    return Err(plugin_refused(&switched_plugin));
                };
                plugin = &switched_plugin;
                switched = true;
                wire.write(&answer?)?;
            }
            // caching_sha2_password: the server had the proof in its cache; OK follows.
            0x01 if plugin == CACHING_SHA2 && p.get(1) == Some(&0x03) => {}
            // caching_sha2_password wants the password itself: in clear over a UNIX
            // socket (as MySQL's clients send it); over TCP only encrypted with a key
            // the user trusts.
            0x01 if plugin == CACHING_SHA2 && p.get(1) == Some(&0x04) => {
                if unix {
                    let mut pw = login.password.as_bytes().to_vec();
                    pw.push(0);
                    wire.write(&pw)?;
                    pw.fill(0);
                } else {
                    let encrypted = encrypted_password(wire, login, &nonce)?;
                    wire.write(&encrypted)?;
                }
            }
            _ => {
                return Err(HandshakeError::Failed(mysql::Error::DriverError(
                    mysql::DriverError::UnexpectedPacket,
                )))
            }
        }
    }
}

/// The password for full authentication over plain TCP, encrypted with the key the
/// user gave, or with the one the server sends when the user trusts it; refused
/// otherwise, before anything is sent.
fn encrypted_password(
    wire: &mut Wire,
    login: &Login<'_>,
    nonce: &[u8],
) -> Result<Vec<u8>, HandshakeError> {
    let sent;
    let key = match login.server_key {
        Some(key) => key,
        None if login.get_server_key => {
            wire.write(&[0x02])?;
            let p = wire.read()?;
            if p[0] != 0x01 {
                return Err(HandshakeError::Failed(mysql::Error::DriverError(
                    mysql::DriverError::UnexpectedPacket,
                )));
            }
            sent = ServerPublicKey::from_pem(&p[1..]).map_err(|e| {
                HandshakeError::Failed(refusal(
                    CR_AUTH_PLUGIN_ERR,
                    format!("caching_sha2_password: the public key the server sent is {e}"),
                ))
            })?;
            &sent
        }
        None => return Err(full_auth_refused()),
    };
    key.encrypt_password(login.password, nonce).map_err(|e| {
        HandshakeError::Failed(refusal(
            CR_AUTH_PLUGIN_ERR,
            format!("caching_sha2_password: {e}"),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// Known answers computed independently (Python's hashlib) for password "secret"
    /// and the nonce bytes 1..=20.
    #[test]
    fn password_proofs_match_known_answers() {
        let nonce: Vec<u8> = (1..=20).collect();
        assert_eq!(
            hex(&native_proof("secret", &nonce)),
            "b32bb3a583e1340c0a1108d58b1be49781ad8c2f"
        );
        assert_eq!(
            hex(&caching_sha2_proof("secret", &nonce)),
            "746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9"
        );
        assert!(native_proof("", &nonce).is_empty());
        assert!(caching_sha2_proof("", &nonce).is_empty());
    }

    fn greeting(version: &str, caps: u32, mariadb_caps: u32, plugin: &str) -> Vec<u8> {
        let mut p = vec![10];
        p.extend_from_slice(version.as_bytes());
        p.push(0);
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(b"abcdefgh");
        p.push(0);
        p.extend_from_slice(&(caps as u16).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&2u16.to_le_bytes());
        p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 6]);
        p.extend_from_slice(&mariadb_caps.to_le_bytes());
        p.extend_from_slice(b"ijklmnopqrst\0");
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        p
    }

    #[test]
    fn greetings_give_nonce_plugin_and_mariadb_capabilities() {
        let caps = CLIENT_CAPS & !LONG_PASSWORD;
        let g = parse_greeting(&greeting(
            "5.5.5-10.11.6-MariaDB",
            caps,
            0x7f,
            "mysql_native_password",
        ))
        .unwrap();
        assert_eq!(g.nonce, b"abcdefghijklmnopqrst");
        assert_eq!(g.plugin, NATIVE);
        assert!(g.mariadb);
        assert_eq!(g.version, (5, 5, 5));
        assert_eq!(g.mariadb_caps, MARIADB_CAPS);
        // A MySQL server (long passwords set) sends no extended capabilities.
        let g = parse_greeting(&greeting(
            "8.0.36",
            CLIENT_CAPS,
            0x7f,
            "caching_sha2_password",
        ))
        .unwrap();
        assert_eq!(g.plugin, CACHING_SHA2);
        assert_eq!(g.mariadb_caps, 0);
        assert!(!g.mariadb);
        // Without protocol 4.1 there is nothing to log in with.
        assert!(matches!(
            parse_greeting(&greeting("4.0.0", SECURE_CONNECTION, 0, "")),
            Err(HandshakeError::Failed(_))
        ));
    }

    #[test]
    fn the_response_names_user_database_plugin_and_attributes() {
        let g = parse_greeting(&greeting(
            "8.0.36",
            CLIENT_CAPS | LONG_FLAG,
            0,
            "caching_sha2_password",
        ))
        .unwrap();
        let ep = Endpoint {
            host: None,
            port: None,
            socket: None,
            user: None,
        };
        let login = Login {
            endpoint: &ep,
            user: "sbtest",
            password: "pw",
            db: "sbtest",
            server_key: None,
            get_server_key: false,
        };
        let r = response(&g, &login, CACHING_SHA2, &[9; 32]);
        let caps = u32::from_le_bytes(r[..4].try_into().unwrap());
        assert_eq!(caps & CONNECT_WITH_DB, CONNECT_WITH_DB);
        assert_eq!(caps & LONG_FLAG, LONG_FLAG);
        assert_eq!(r[8], UTF8MB4_GENERAL_CI);
        let mut f = Fields(&r[32..]);
        assert_eq!(f.cstr(), b"sbtest");
        assert_eq!(f.take(1).unwrap(), [32]);
        assert_eq!(f.take(32).unwrap(), [9; 32]);
        assert_eq!(f.cstr(), b"sbtest");
        assert_eq!(f.cstr(), CACHING_SHA2);
        assert_eq!(usize::from(f.0[0]), f.0.len() - 1);
    }
}
