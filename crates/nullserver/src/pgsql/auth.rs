//! PostgreSQL start-up: the start-up packet (and the SSL, GSS and cancel requests that
//! can come instead), the authentication exchange and the parameters a server reports
//! when a session starts. Any user and password are accepted: `trust` asks for none,
//! `password` and `md5` ask for one and take whatever comes.

use super::framing::{message, put_cstr, Reader};

/// `SSLRequest` code.
pub const SSL_REQUEST: i32 = 80_877_103;
/// `GSSENCRequest` code.
pub const GSSENC_REQUEST: i32 = 80_877_104;
/// `CancelRequest` code.
pub const CANCEL_REQUEST: i32 = 80_877_102;
/// Protocol 3.0.
pub const PROTOCOL_3: i32 = 196_608;

/// How clients are asked to authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    /// No password asked.
    Trust,
    /// A cleartext password asked (`AuthenticationCleartextPassword`).
    Password,
    /// An MD5-hashed password asked (`AuthenticationMD5Password`).
    Md5,
}

/// What a start-up packet asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Startup {
    /// TLS: answered 'N' (not offered), the client goes on in plain text.
    Ssl,
    /// GSSAPI encryption: answered 'N' likewise.
    Gss,
    /// Cancel a query: nothing runs long enough to cancel; the connection is closed.
    Cancel,
    /// A session for this user and database, with the client's other parameters.
    Start {
        /// `user`.
        user: String,
        /// `database` (the user name when absent).
        database: String,
        /// `application_name`, or empty.
        application: String,
    },
    /// A protocol version other than 3.
    Unsupported(i32),
}

/// Parses a start-up packet's body (after its length).
pub fn parse_startup(body: &[u8]) -> Startup {
    let mut r = Reader::new(body);
    let code = r.i32().unwrap_or(0);
    match code {
        SSL_REQUEST => return Startup::Ssl,
        GSSENC_REQUEST => return Startup::Gss,
        CANCEL_REQUEST => return Startup::Cancel,
        PROTOCOL_3 => {}
        v => return Startup::Unsupported(v),
    }
    let (mut user, mut database, mut application) = (String::new(), None, String::new());
    while let Some(key) = r.cstr() {
        if key.is_empty() {
            break;
        }
        let value = String::from_utf8_lossy(r.cstr().unwrap_or_default()).into_owned();
        match key {
            b"user" => user = value,
            b"database" => database = Some(value),
            b"application_name" => application = value,
            _ => {}
        }
    }
    Startup::Start {
        database: database.unwrap_or_else(|| user.clone()),
        user,
        application,
    }
}

/// Appends the password request of `method`; false for `trust` (nothing written).
pub fn challenge(out: &mut Vec<u8>, method: AuthMethod, salt: [u8; 4]) -> bool {
    match method {
        AuthMethod::Trust => false,
        AuthMethod::Password => {
            message(out, b'R', |b| b.extend_from_slice(&3i32.to_be_bytes()));
            true
        }
        AuthMethod::Md5 => {
            message(out, b'R', |b| {
                b.extend_from_slice(&5i32.to_be_bytes());
                b.extend_from_slice(&salt);
            });
            true
        }
    }
}

/// What the session reports once the client is in.
pub struct Welcome<'a> {
    /// `server_version`.
    pub version: &'a str,
    /// `session_authorization`.
    pub user: &'a str,
    /// `application_name`.
    pub application: &'a str,
    /// Backend process id and secret key (`BackendKeyData`).
    pub pid: u32,
}

/// Appends `AuthenticationOk`, the parameter statuses, `BackendKeyData` and
/// `ReadyForQuery`.
pub fn welcome(out: &mut Vec<u8>, w: &Welcome<'_>) {
    message(out, b'R', |b| b.extend_from_slice(&0i32.to_be_bytes()));
    let params: [(&str, &str); 11] = [
        ("application_name", w.application),
        ("client_encoding", "UTF8"),
        ("DateStyle", "ISO, MDY"),
        ("integer_datetimes", "on"),
        ("IntervalStyle", "postgres"),
        ("is_superuser", "on"),
        ("server_encoding", "UTF8"),
        ("server_version", w.version),
        ("session_authorization", w.user),
        ("standard_conforming_strings", "on"),
        ("TimeZone", "UTC"),
    ];
    for (k, v) in params {
        message(out, b'S', |b| {
            put_cstr(b, k.as_bytes());
            put_cstr(b, v.as_bytes());
        });
    }
    message(out, b'K', |b| {
        b.extend_from_slice(&w.pid.to_be_bytes());
        b.extend_from_slice(&w.pid.wrapping_mul(2_654_435_761).to_be_bytes());
    });
    message(out, b'Z', |b| b.push(b'I'));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_parameters_are_read() {
        let mut b = PROTOCOL_3.to_be_bytes().to_vec();
        for s in ["user", "sbtest", "application_name", "bmk", ""] {
            b.extend_from_slice(s.as_bytes());
            b.push(0);
        }
        assert_eq!(
            parse_startup(&b),
            Startup::Start {
                user: "sbtest".into(),
                database: "sbtest".into(),
                application: "bmk".into()
            }
        );
        assert_eq!(parse_startup(&SSL_REQUEST.to_be_bytes()), Startup::Ssl);
        assert_eq!(
            parse_startup(&131072i32.to_be_bytes()),
            Startup::Unsupported(131072)
        );
    }

    #[test]
    fn md5_asks_with_its_salt() {
        let mut out = Vec::new();
        assert!(challenge(&mut out, AuthMethod::Md5, [1, 2, 3, 4]));
        assert_eq!(out, [b'R', 0, 0, 0, 12, 0, 0, 0, 5, 1, 2, 3, 4]);
        assert!(!challenge(&mut Vec::new(), AuthMethod::Trust, [0; 4]));
    }
}
