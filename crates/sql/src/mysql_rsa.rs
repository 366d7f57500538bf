//! The RSA half of `caching_sha2_password`'s full authentication over plain TCP: the
//! server wants the password itself, and without TLS the client sends it encrypted
//! with the server's RSA public key (RSA-OAEP with SHA-1, the password and its NUL
//! XORed with the login's nonce first, as MySQL 8's clients do).
//!
//! Whoever answers at the address can send a key of their own, so bmk encrypts only
//! with a key the user vouched for: one read from `--mysql-server-public-key`, or the
//! one the server sends when `--mysql-get-server-public-key` says to trust it. A key
//! that does not parse is an error, never a panic. The `rsa` crate does the
//! cryptography (only public-key encryption: the timing weakness of its private-key
//! operations does not apply).

use std::fmt;
use std::io::Read as _;
use std::path::Path;

use rsa::pkcs1::DecodeRsaPublicKey as _;
use rsa::pkcs8::DecodePublicKey as _;
use rsa::traits::PublicKeyParts as _;
use rsa::{Oaep, RsaPublicKey};
use sha1::Sha1;

/// A key file larger than this is no PEM public key (an 8192-bit key is under 2 KiB).
const KEY_FILE_LIMIT: u64 = 64 * 1024;

/// An RSA public key the password may be encrypted with.
#[derive(Clone, PartialEq)]
pub struct ServerPublicKey(RsaPublicKey);

impl fmt::Debug for ServerPublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ServerPublicKey({} bits)", self.0.size() * 8)
    }
}

impl ServerPublicKey {
    /// Parses a PEM public key: `BEGIN PUBLIC KEY` (what MySQL servers write and send)
    /// or `BEGIN RSA PUBLIC KEY`. Trailing NULs and white space are ignored.
    pub fn from_pem(pem: &[u8]) -> Result<ServerPublicKey, String> {
        let text = std::str::from_utf8(pem).map_err(|_| "not PEM text".to_string())?;
        let text = text
            .trim_end_matches(['\0', ' ', '\t', '\r', '\n'])
            .trim_start();
        if text.contains("-----BEGIN RSA PUBLIC KEY-----") {
            RsaPublicKey::from_pkcs1_pem(text).map_err(|e| format!("not an RSA public key ({e})"))
        } else {
            RsaPublicKey::from_public_key_pem(text)
                .map_err(|e| format!("not a PEM RSA public key ({e})"))
        }
        .map(ServerPublicKey)
    }

    /// Reads and parses the key file at `path` (at most 64 KiB read). Messages name
    /// the file and the problem.
    pub fn from_file(path: &Path) -> Result<ServerPublicKey, String> {
        let shown = path.display();
        let file = std::fs::File::open(path).map_err(|e| format!("cannot read '{shown}': {e}"))?;
        let mut bytes = Vec::new();
        file.take(KEY_FILE_LIMIT + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read '{shown}': {e}"))?;
        if bytes.len() as u64 > KEY_FILE_LIMIT {
            return Err(format!(
                "'{shown}' is larger than {} KiB; a public key file holds one PEM key",
                KEY_FILE_LIMIT / 1024
            ));
        }
        ServerPublicKey::from_pem(&bytes).map_err(|e| format!("'{shown}': {e}"))
    }

    /// The answer to the server's request for the password: `password` and a NUL,
    /// XORed with `nonce` (repeated), encrypted with RSA-OAEP (SHA-1).
    pub(crate) fn encrypt_password(&self, password: &str, nonce: &[u8]) -> Result<Vec<u8>, String> {
        let mut plain = password.as_bytes().to_vec();
        plain.push(0);
        if !nonce.is_empty() {
            for (i, b) in plain.iter_mut().enumerate() {
                *b ^= nonce[i % nonce.len()];
            }
        }
        let out = self
            .0
            .encrypt(&mut rand_core::OsRng, Oaep::new::<Sha1>(), &plain)
            .map_err(|e| format!("cannot encrypt the password with the server's public key ({e})"));
        plain.fill(0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_keys_are_errors() {
        for bad in [
            &b""[..],
            b"\xff\xfe",
            b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
            b"-----BEGIN RSA PUBLIC KEY-----\nMAA=\n-----END RSA PUBLIC KEY-----\n",
            b"-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n",
        ] {
            assert!(ServerPublicKey::from_pem(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_large_key_file_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.pem");
        std::fs::write(&path, vec![b'A'; 70 * 1024]).unwrap();
        let e = ServerPublicKey::from_file(&path).unwrap_err();
        assert!(e.contains("larger than 64 KiB"), "{e}");
    }
}
