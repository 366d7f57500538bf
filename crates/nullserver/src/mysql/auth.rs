//! MySQL connection phase: the server's greeting (protocol 10 handshake), the client's
//! handshake response, and the answers that let any user in with any password.
//!
//! Passwords are not checked, so no hashing is done: `mysql_native_password` is
//! answered with OK; `caching_sha2_password` with its "fast authentication succeeded"
//! packet (`0x01 0x03`) and OK, as a server with the password in its cache does (an
//! empty password gets OK straight away, as from a real server); a client that answers
//! with another plugin is switched to `mysql_native_password` first.

use super::framing::{get_cstr, get_lenenc, Writer};

/// `CLIENT_LONG_PASSWORD`.
pub const LONG_PASSWORD: u32 = 1;
/// `CLIENT_FOUND_ROWS`.
pub const FOUND_ROWS: u32 = 1 << 1;
/// `CLIENT_LONG_FLAG`.
pub const LONG_FLAG: u32 = 1 << 2;
/// `CLIENT_CONNECT_WITH_DB`.
pub const CONNECT_WITH_DB: u32 = 1 << 3;
/// `CLIENT_IGNORE_SPACE`.
pub const IGNORE_SPACE: u32 = 1 << 8;
/// `CLIENT_PROTOCOL_41`.
pub const PROTOCOL_41: u32 = 1 << 9;
/// `CLIENT_INTERACTIVE`.
pub const INTERACTIVE: u32 = 1 << 10;
/// `CLIENT_SSL` (never offered: a client requiring TLS gets its own error).
pub const SSL: u32 = 1 << 11;
/// `CLIENT_TRANSACTIONS`.
pub const TRANSACTIONS: u32 = 1 << 13;
/// `CLIENT_SECURE_CONNECTION`.
pub const SECURE_CONNECTION: u32 = 1 << 15;
/// `CLIENT_MULTI_STATEMENTS`.
pub const MULTI_STATEMENTS: u32 = 1 << 16;
/// `CLIENT_MULTI_RESULTS`.
pub const MULTI_RESULTS: u32 = 1 << 17;
/// `CLIENT_PS_MULTI_RESULTS`.
pub const PS_MULTI_RESULTS: u32 = 1 << 18;
/// `CLIENT_PLUGIN_AUTH`.
pub const PLUGIN_AUTH: u32 = 1 << 19;
/// `CLIENT_CONNECT_ATTRS`.
pub const CONNECT_ATTRS: u32 = 1 << 20;
/// `CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA`.
pub const PLUGIN_AUTH_LENENC: u32 = 1 << 21;

/// What the server offers. Not offered: TLS, compression, `CLIENT_DEPRECATE_EOF` (so
/// every client reads EOF packets after column definitions), session tracking, and
/// MariaDB's extended capabilities (`CLIENT_LONG_PASSWORD` set marks a MySQL server).
pub const SERVER_CAPS: u32 = LONG_PASSWORD
    | FOUND_ROWS
    | LONG_FLAG
    | CONNECT_WITH_DB
    | IGNORE_SPACE
    | PROTOCOL_41
    | INTERACTIVE
    | TRANSACTIONS
    | SECURE_CONNECTION
    | MULTI_STATEMENTS
    | MULTI_RESULTS
    | PS_MULTI_RESULTS
    | PLUGIN_AUTH
    | CONNECT_ATTRS
    | PLUGIN_AUTH_LENENC;

/// `utf8mb4_general_ci`.
pub const CHARSET_UTF8MB4: u8 = 45;
/// `SERVER_STATUS_AUTOCOMMIT`.
pub const STATUS_AUTOCOMMIT: u16 = 0x0002;

/// The authentication plugin the greeting names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plugin {
    /// `mysql_native_password` (MariaDB's and MySQL 5.7's default).
    Native,
    /// `caching_sha2_password` (MySQL 8's default).
    CachingSha2,
}

impl Plugin {
    /// The plugin's protocol name.
    pub fn name(self) -> &'static str {
        match self {
            Plugin::Native => "mysql_native_password",
            Plugin::CachingSha2 => "caching_sha2_password",
        }
    }
}

/// Appends the greeting (sequence id 0).
pub fn greeting(
    out: &mut Vec<u8>,
    version: &str,
    connection_id: u32,
    scramble: &[u8; 20],
    plugin: Plugin,
) {
    Writer::new(out, 0).packet(|b| {
        b.push(10);
        b.extend_from_slice(version.as_bytes());
        b.push(0);
        b.extend_from_slice(&connection_id.to_le_bytes());
        b.extend_from_slice(&scramble[..8]);
        b.push(0);
        b.extend_from_slice(&(SERVER_CAPS as u16).to_le_bytes());
        b.push(CHARSET_UTF8MB4);
        b.extend_from_slice(&STATUS_AUTOCOMMIT.to_le_bytes());
        b.extend_from_slice(&((SERVER_CAPS >> 16) as u16).to_le_bytes());
        b.push(21);
        b.extend_from_slice(&[0; 10]);
        b.extend_from_slice(&scramble[8..]);
        b.push(0);
        b.extend_from_slice(plugin.name().as_bytes());
        b.push(0);
    });
}

/// What the client's handshake response says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Capabilities both sides have.
    pub caps: u32,
    /// The user name.
    pub user: String,
    /// The database, or empty.
    pub database: String,
    /// The authentication plugin the client answered with, if it named one.
    pub plugin: Option<String>,
    /// Length of the authentication data (0 for an empty password).
    pub auth_len: usize,
}

/// Why a handshake response cannot be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// A response shorter than its fixed part, or a field running past its end.
    #[error("truncated handshake response")]
    Truncated,
    /// An SSL request: TLS was not offered.
    #[error("TLS requested but not offered")]
    TlsRequested,
    /// A pre-4.1 client.
    #[error("client does not speak protocol 4.1")]
    OldProtocol,
}

/// Parses a handshake response payload.
pub fn parse_response(p: &[u8]) -> Result<Response, AuthError> {
    if p.len() < 32 {
        return Err(AuthError::Truncated);
    }
    let client = u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
    if client & PROTOCOL_41 == 0 {
        return Err(AuthError::OldProtocol);
    }
    if client & SSL != 0 {
        return Err(AuthError::TlsRequested);
    }
    let caps = client & SERVER_CAPS;
    let mut at = 32;
    let (user, n) = get_cstr(&p[at..]);
    at += n;
    let rest = p.get(at..).unwrap_or_default();
    let (auth_len, used) = if caps & PLUGIN_AUTH_LENENC != 0 {
        let (len, n) = get_lenenc(rest).ok_or(AuthError::Truncated)?;
        (len as usize, n)
    } else if caps & SECURE_CONNECTION != 0 {
        (usize::from(*rest.first().ok_or(AuthError::Truncated)?), 1)
    } else {
        let (s, n) = get_cstr(rest);
        (s.len(), n - s.len())
    };
    at += used + auth_len;
    if at > p.len() {
        return Err(AuthError::Truncated);
    }
    let mut database = &[][..];
    if caps & CONNECT_WITH_DB != 0 && at < p.len() {
        let (d, n) = get_cstr(&p[at..]);
        database = d;
        at += n;
    }
    let plugin = (caps & PLUGIN_AUTH != 0 && at < p.len()).then(|| {
        let (name, _) = get_cstr(&p[at..]);
        String::from_utf8_lossy(name).into_owned()
    });
    Ok(Response {
        caps,
        user: String::from_utf8_lossy(user).into_owned(),
        database: String::from_utf8_lossy(database).into_owned(),
        plugin,
        auth_len,
    })
}

/// What follows a handshake response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Logged in: the OK packet is written.
    LoggedIn,
    /// An auth switch request is written: the client's answer comes next.
    Switched,
}

/// Answers a handshake response (its sequence id was `seq`): writes what lets the
/// client in, or the switch to `mysql_native_password`.
pub fn accept(
    out: &mut Vec<u8>,
    seq: u8,
    r: &Response,
    greeted: Plugin,
    scramble: &[u8; 20],
) -> Next {
    let mut w = Writer::new(out, seq.wrapping_add(1));
    let plugin = r.plugin.as_deref().unwrap_or(greeted.name());
    match plugin {
        "caching_sha2_password" => {
            if r.auth_len > 0 {
                w.packet(|b| b.extend_from_slice(&[0x01, 0x03]));
            }
            super::results::ok(&mut w, 0, STATUS_AUTOCOMMIT);
            Next::LoggedIn
        }
        "mysql_native_password" | "" => {
            super::results::ok(&mut w, 0, STATUS_AUTOCOMMIT);
            Next::LoggedIn
        }
        _ => {
            w.packet(|b| {
                b.push(0xfe);
                b.extend_from_slice(b"mysql_native_password\0");
                b.extend_from_slice(scramble);
                b.push(0);
            });
            Next::Switched
        }
    }
}

/// Answers the client's reply to an auth switch (sequence id `seq`): OK.
pub fn accept_switched(out: &mut Vec<u8>, seq: u8) {
    let mut w = Writer::new(out, seq.wrapping_add(1));
    super::results::ok(&mut w, 0, STATUS_AUTOCOMMIT);
}

/// A scramble of 20 printable, non-NUL bytes, different per connection (passwords are
/// not checked, so it only has to look like one).
pub fn scramble(seed: u32) -> [u8; 20] {
    let mut x = u64::from(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut s = [0u8; 20];
    for b in &mut s {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = b'!' + (x % 90) as u8;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(caps: u32, auth: &[u8], db: &str, plugin: &str) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(16u32 << 20).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        p.extend_from_slice(b"sbtest\0");
        p.push(auth.len() as u8);
        p.extend_from_slice(auth);
        if caps & CONNECT_WITH_DB != 0 {
            p.extend_from_slice(db.as_bytes());
            p.push(0);
        }
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        p
    }

    #[test]
    fn a_response_with_database_and_plugin_is_read() {
        let caps = PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH | CONNECT_WITH_DB;
        let r =
            parse_response(&response(caps, &[7; 20], "sbtest", "caching_sha2_password")).unwrap();
        assert_eq!(r.user, "sbtest");
        assert_eq!(r.database, "sbtest");
        assert_eq!(r.auth_len, 20);
        assert_eq!(r.plugin.as_deref(), Some("caching_sha2_password"));
        let mut out = Vec::new();
        assert_eq!(
            accept(&mut out, 1, &r, Plugin::Native, &scramble(1)),
            Next::LoggedIn
        );
        // fast-auth success (seq 2), then OK (seq 3)
        assert_eq!(&out[..6], &[2, 0, 0, 2, 1, 3]);
        assert_eq!(out[9], 3);
        assert_eq!(out[10], 0);
    }

    #[test]
    fn other_plugins_are_switched_and_tls_refused() {
        let caps = PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH;
        let r = parse_response(&response(caps, &[], "", "client_ed25519")).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            accept(&mut out, 1, &r, Plugin::Native, &scramble(2)),
            Next::Switched
        );
        assert_eq!(out[4], 0xfe);
        let ssl = response(caps | SSL, &[], "", "");
        assert_eq!(parse_response(&ssl[..32]), Err(AuthError::TlsRequested));
        assert_eq!(parse_response(&ssl[..31]), Err(AuthError::Truncated));
        assert_eq!(parse_response(&ssl), Err(AuthError::TlsRequested));
        assert!(scramble(9).iter().all(|&b| b > b' ' && b < 0x7f));
    }
}
