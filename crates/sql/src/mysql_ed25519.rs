//! MariaDB's `client_ed25519` authentication: the answer to the server's 32-byte
//! scramble is an Ed25519 signature of it.
//!
//! MariaDB derives the key pair from the password alone: the 64 bytes of
//! SHA-512(password) stand where RFC 8032 has SHA-512 of the private key's seed (the
//! first half, clamped, is the secret scalar; the second half prefixes the message in
//! the nonce's hash). The server stores the public key (`PASSWORD()` of an ed25519
//! account is its base64) and verifies the signature with it, so the password never
//! leaves the client.

use ed25519_dalek::hazmat::{raw_sign, ExpandedSecretKey};
use ed25519_dalek::VerifyingKey;
use sha2::{Digest, Sha512};

/// The length of the server's scramble.
pub(crate) const SCRAMBLE_LEN: usize = 32;

/// The signature of `scramble` with the key MariaDB derives from `password` (an empty
/// password too: the server checks it against the key of the empty string).
pub(crate) fn ed25519_proof(password: &str, scramble: &[u8]) -> [u8; 64] {
    let mut hash: [u8; 64] = Sha512::digest(password.as_bytes()).into();
    // The expanded key is exactly the SHA-512 output RFC 8032 signs with, so the
    // library's signing is the standard one, its key only derived otherwise.
    let key = ExpandedSecretKey::from_bytes(&hash);
    hash.fill(0);
    let public = VerifyingKey::from(&key);
    raw_sign::<Sha512>(&key, scramble, &public).to_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// A signature this implementation computed for a scramble, pinned after the same
    /// implementation logged in to MariaDB 10.11 as an ed25519 account (the server
    /// verified its signatures: `ed25519_accounts_log_in_over_tcp_and_the_socket` in
    /// `tests/mysql.rs`).
    #[test]
    fn the_signature_matches_a_known_answer() {
        let scramble: Vec<u8> = (1..=32).collect();
        assert_eq!(hex(&ed25519_proof("secret", &scramble)), KNOWN);
        // Another password or scramble signs differently.
        assert_ne!(hex(&ed25519_proof("secreT", &scramble)), KNOWN);
        assert_ne!(hex(&ed25519_proof("secret", &scramble[1..])), KNOWN);
    }

    const KNOWN: &str = "60a0f4f8bcb6396043e44b2a25521af16f0815ff6369cc541c281e2c4455c823\
                         2b79b21ee5bb933507725db2f2919ea09e676f6abee19c5c7b98b40a627a9707";

    /// The public key MariaDB 10.11 stored for password "secret" (an ed25519 account's
    /// `authentication_string` in `mysql.global_priv`, base64 without padding, here in
    /// hex) is the one derived here, and the signature verifies with it.
    #[test]
    fn the_public_key_is_the_one_mariadb_stores() {
        let hash: [u8; 64] = Sha512::digest(b"secret").into();
        let public = VerifyingKey::from(&ExpandedSecretKey::from_bytes(&hash));
        assert_eq!(hex(public.as_bytes()), KNOWN_PUBLIC);
        let scramble = [7u8; SCRAMBLE_LEN];
        let sig = ed25519_dalek::Signature::from_bytes(&ed25519_proof("secret", &scramble));
        assert!(public.verify_strict(&scramble, &sig).is_ok());
    }

    const KNOWN_PUBLIC: &str = "648814444520e4f56043a2ec9215e63be7992d2d270bc6dee873e36164786096";
}
