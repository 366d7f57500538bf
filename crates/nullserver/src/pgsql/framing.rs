//! PostgreSQL message framing (protocol 3.0): the untyped start-up packet (a 4-byte
//! length, itself included, then the body), typed messages (a tag byte, then the same
//! length), and a reader for the integers and C strings inside them.

use crate::flow::ProtocolError;

/// Largest message the null server takes.
pub const MAX_MESSAGE: usize = 64 << 20;

/// Bytes of the next complete untyped (start-up) packet, if one is there.
pub fn next_startup(buf: &[u8]) -> Result<Option<usize>, ProtocolError> {
    let Some(len) = buf.get(..4) else {
        return Ok(None);
    };
    let len = i32::from_be_bytes(len.try_into().expect("4 bytes"));
    if !(8..=10_000).contains(&len) {
        return Err(ProtocolError::Malformed("invalid start-up packet length"));
    }
    Ok((buf.len() >= len as usize).then_some(len as usize))
}

/// Bytes of the next complete typed message, if one is there.
pub fn next_message(buf: &[u8]) -> Result<Option<usize>, ProtocolError> {
    let Some(len) = buf.get(1..5) else {
        return Ok(None);
    };
    let len = i32::from_be_bytes(len.try_into().expect("4 bytes"));
    if len < 4 {
        return Err(ProtocolError::Malformed("invalid message length"));
    }
    if len as usize > MAX_MESSAGE {
        return Err(ProtocolError::TooLarge);
    }
    Ok((buf.len() > len as usize).then_some(1 + len as usize))
}

/// Appends one typed message whose body `body` writes.
pub fn message(out: &mut Vec<u8>, tag: u8, body: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.extend_from_slice(&[tag, 0, 0, 0, 0]);
    body(out);
    let len = (out.len() - at - 1) as u32;
    out[at + 1..at + 5].copy_from_slice(&len.to_be_bytes());
}

/// Appends a NUL-terminated string.
pub fn put_cstr(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

/// Reads the fields of a message body in order; every read fails past the end.
pub struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader of `b`.
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b, at: 0 }
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    /// A big-endian 16-bit integer.
    pub fn i16(&mut self) -> Option<i16> {
        Some(i16::from_be_bytes(self.bytes(2)?.try_into().ok()?))
    }

    /// A big-endian 32-bit integer.
    pub fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.bytes(4)?.try_into().ok()?))
    }

    /// A NUL-terminated string (without its NUL).
    pub fn cstr(&mut self) -> Option<&'a [u8]> {
        let rest = self.b.get(self.at..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        self.at += end + 1;
        Some(&rest[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_framed_and_split() {
        let mut out = Vec::new();
        message(&mut out, b'Z', |b| b.push(b'I'));
        assert_eq!(out, [b'Z', 0, 0, 0, 5, b'I']);
        assert_eq!(next_message(&out), Ok(Some(6)));
        assert_eq!(next_message(&out[..5]), Ok(None));
        assert!(next_message(&[b'Q', 0, 0, 0, 1]).is_err());
        assert_eq!(next_startup(&[0, 0, 0, 8, 4, 210, 22, 47]), Ok(Some(8)));
        let mut r = Reader::new(b"ab\0\x00\x02");
        assert_eq!(r.cstr(), Some(&b"ab"[..]));
        assert_eq!(r.i16(), Some(2));
        assert_eq!(r.i16(), None);
    }
}
