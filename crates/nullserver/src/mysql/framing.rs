//! MySQL packet framing: a 3-byte little-endian payload length and a 1-byte sequence
//! id before each payload, and the length-encoded integers and strings used inside
//! payloads.

/// Bytes before each payload.
pub const HEADER: usize = 4;
/// Largest payload of one packet; a request this long continues in the next packet,
/// which the null server does not take (it closes the connection).
pub const MAX_PAYLOAD: usize = 0xff_ffff;

/// The next complete packet at the start of `buf`: `(total bytes, payload length)`.
pub fn next_packet(buf: &[u8]) -> Option<(usize, usize)> {
    if buf.len() < HEADER {
        return None;
    }
    let len = usize::from(buf[0]) | usize::from(buf[1]) << 8 | usize::from(buf[2]) << 16;
    (buf.len() >= HEADER + len).then_some((HEADER + len, len))
}

/// Writes the packets of one response, numbering them from the request's id + 1.
pub struct Writer<'a> {
    out: &'a mut Vec<u8>,
    seq: u8,
}

impl<'a> Writer<'a> {
    /// A writer whose first packet gets sequence id `seq`.
    pub fn new(out: &'a mut Vec<u8>, seq: u8) -> Writer<'a> {
        Writer { out, seq }
    }

    /// Appends one packet whose payload `body` writes (at most [`MAX_PAYLOAD`] bytes:
    /// the null server's answers are far smaller).
    pub fn packet(&mut self, body: impl FnOnce(&mut Vec<u8>)) {
        let at = self.out.len();
        self.out.extend_from_slice(&[0, 0, 0, self.seq]);
        body(self.out);
        let len = (self.out.len() - at - HEADER).min(MAX_PAYLOAD);
        self.out[at..at + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        self.seq = self.seq.wrapping_add(1);
    }

    /// The sequence id the next packet gets.
    pub fn seq(&self) -> u8 {
        self.seq
    }
}

/// Appends a length-encoded integer.
pub fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => out.push(v as u8),
        251..=0xffff => {
            out.push(0xfc);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xff_ffff => {
            out.push(0xfd);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xfe);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_str(out: &mut Vec<u8>, s: &[u8]) {
    put_lenenc(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// Reads a length-encoded integer: `(value, bytes used)`.
pub fn get_lenenc(b: &[u8]) -> Option<(u64, usize)> {
    let first = *b.first()?;
    let n = match first {
        0..=250 => return Some((u64::from(first), 1)),
        0xfc => 2,
        0xfd => 3,
        0xfe => 8,
        _ => return None,
    };
    let bytes = b.get(1..1 + n)?;
    let mut v = [0u8; 8];
    v[..n].copy_from_slice(bytes);
    Some((u64::from_le_bytes(v), 1 + n))
}

/// Reads a NUL-terminated string: `(bytes, bytes used including the NUL)`; a string
/// that runs to the end of the buffer without one is taken whole.
pub fn get_cstr(b: &[u8]) -> (&[u8], usize) {
    match b.iter().position(|&c| c == 0) {
        Some(i) => (&b[..i], i + 1),
        None => (b, b.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trips_at_every_width() {
        for v in [
            0,
            250,
            251,
            0xffff,
            0x1_0000,
            0xff_ffff,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            assert_eq!(get_lenenc(&b), Some((v, b.len())));
        }
        assert_eq!(get_lenenc(&[0xfc, 1]), None);
    }

    #[test]
    fn packets_are_numbered_and_framed() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, 1);
        w.packet(|b| b.extend_from_slice(b"abc"));
        w.packet(|_| {});
        assert_eq!(out, [3, 0, 0, 1, b'a', b'b', b'c', 0, 0, 0, 2]);
        assert_eq!(next_packet(&out), Some((7, 3)));
        assert_eq!(next_packet(&out[..6]), None);
    }
}
