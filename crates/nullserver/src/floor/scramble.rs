//! The password proofs a client must compute to log in, for the connect floor: the
//! null server checks none of them, but a real client cannot know that, so the floor
//! pays for the hashing a real log-in costs. Hashes that depend only on the password
//! are computed once per run ([`Secrets`]); per connection only the hash mixed with
//! the server's nonce is left, as in a client that caches them.

use md5::Md5;
use sha1::Sha1;
use sha2::Sha256;

/// The password-only hashes, computed once.
#[derive(Debug, Clone)]
pub struct Secrets {
    empty: bool,
    sha1: [u8; 20],
    sha1_sha1: [u8; 20],
    sha256: [u8; 32],
    sha256_sha256: [u8; 32],
    /// Hex of `md5(password ++ user)`, PostgreSQL's stored form.
    md5_hex: [u8; 32],
}

fn hex(digest: &[u8], out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in digest.iter().enumerate() {
        out[2 * i] = DIGITS[usize::from(b >> 4)];
        out[2 * i + 1] = DIGITS[usize::from(b & 15)];
    }
}

impl Secrets {
    /// The hashes of `password` (and `user`, which PostgreSQL's MD5 salts with).
    pub fn new(user: &str, password: &str) -> Secrets {
        use sha1::Digest as _;
        let sha1: [u8; 20] = Sha1::digest(password.as_bytes()).into();
        let sha1_sha1: [u8; 20] = Sha1::digest(sha1).into();
        let sha256: [u8; 32] = Sha256::digest(password.as_bytes()).into();
        let sha256_sha256: [u8; 32] = Sha256::digest(sha256).into();
        let mut md5_hex = [0u8; 32];
        {
            use md5::Digest as _;
            let mut h = Md5::new();
            h.update(password.as_bytes());
            h.update(user.as_bytes());
            hex(&h.finalize(), &mut md5_hex);
        }
        Secrets {
            empty: password.is_empty(),
            sha1,
            sha1_sha1,
            sha256,
            sha256_sha256,
            md5_hex,
        }
    }

    /// Appends the `mysql_native_password` proof for `nonce`:
    /// `SHA1(pw) XOR SHA1(nonce ++ SHA1(SHA1(pw)))` (nothing for an empty password).
    pub fn mysql_native(&self, nonce: &[u8], out: &mut Vec<u8>) {
        use sha1::Digest as _;
        if self.empty {
            return;
        }
        let mut h = Sha1::new();
        h.update(nonce);
        h.update(self.sha1_sha1);
        let mix: [u8; 20] = h.finalize().into();
        out.extend(self.sha1.iter().zip(mix).map(|(a, b)| a ^ b));
    }

    /// Appends the `caching_sha2_password` proof for `nonce`:
    /// `SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) ++ nonce)` (nothing for an empty
    /// password).
    pub fn mysql_caching_sha2(&self, nonce: &[u8], out: &mut Vec<u8>) {
        use sha2::Digest as _;
        if self.empty {
            return;
        }
        let mut h = Sha256::new();
        h.update(self.sha256_sha256);
        h.update(nonce);
        let mix: [u8; 32] = h.finalize().into();
        out.extend(self.sha256.iter().zip(mix).map(|(a, b)| a ^ b));
    }

    /// Appends PostgreSQL's MD5 answer for `salt`: `"md5"` and the hex of
    /// `md5(hex(md5(password ++ user)) ++ salt)`.
    pub fn pgsql_md5(&self, salt: &[u8], out: &mut Vec<u8>) {
        use md5::Digest as _;
        let mut h = Md5::new();
        h.update(self.md5_hex);
        h.update(salt);
        let mut text = [0u8; 32];
        hex(&h.finalize(), &mut text);
        out.extend_from_slice(b"md5");
        out.extend_from_slice(&text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_proof_unmasks_to_the_password_hash() {
        // What a server does: XOR the proof with SHA1(nonce ++ stored) and check that
        // SHA1 of the result is the stored SHA1(SHA1(pw)).
        use sha1::Digest as _;
        let s = Secrets::new("sbtest", "sbtest");
        let nonce = [7u8; 20];
        let mut proof = Vec::new();
        s.mysql_native(&nonce, &mut proof);
        let mut h = Sha1::new();
        h.update(nonce);
        h.update(s.sha1_sha1);
        let mix: [u8; 20] = h.finalize().into();
        let unmasked: Vec<u8> = proof.iter().zip(mix).map(|(a, b)| a ^ b).collect();
        assert_eq!(<[u8; 20]>::from(Sha1::digest(&unmasked)), s.sha1_sha1);
    }

    #[test]
    fn pgsql_md5_matches_a_known_answer() {
        // Computed independently (Python's hashlib) for password and user "sbtest",
        // salt 01 02 03 04.
        let s = Secrets::new("sbtest", "sbtest");
        let mut out = Vec::new();
        s.pgsql_md5(&[1, 2, 3, 4], &mut out);
        assert_eq!(out, b"md57105f79313eb74a711e2b47ca603b50b");
    }

    #[test]
    fn empty_password_sends_no_proof() {
        let s = Secrets::new("u", "");
        let mut out = Vec::new();
        s.mysql_native(&[0; 20], &mut out);
        s.mysql_caching_sha2(&[0; 20], &mut out);
        assert!(out.is_empty());
    }
}
