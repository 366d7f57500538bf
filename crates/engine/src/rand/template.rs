//! Random strings from sysbench templates: every `#` a digit, every `@` a lowercase
//! letter, other bytes kept.
//!
//! Loading a table is mostly this (180 random characters a row), so characters are not
//! drawn one generator call each:
//! * a run of up to [`DIGITS_PER_DRAW`] `#` is one number below 10^run, taken from one
//!   64-bit draw (its high part times 10^run, bias below 10^-7) and written out in
//!   decimal four digits at a time from a table;
//! * letters share draws: a 64-bit draw is a fraction in [0, 1), and multiplying it by
//!   26 takes the next letter from the integer part and leaves the rest as the next
//!   fraction. A draw serves at most [`LETTER_BITS`] bits worth of letters, so every
//!   letter still comes from at least 24 unused random bits (bias below 10^-6).
//!
//! [`fill_template`] reads the template as it goes; a [`Template`] finds the runs once
//! for the many rows of a load. Both make the same characters from the same generator
//! state, so a seeded run repeats whichever path a workload takes.

use rand_core::Rng as _;

use super::{with, ThreadRand};

/// Writes `template` into `out` with every `#` a random digit and every `@` a random
/// lowercase letter; other bytes are copied. Only `min(template, out)` bytes are
/// written.
pub fn fill_template(template: &[u8], out: &mut [u8]) {
    let len = template.len().min(out.len());
    let (template, out) = (&template[..len], &mut out[..len]);
    with(|r| {
        let mut letters = Letters::default();
        for piece in pieces(template) {
            piece.write(r, &mut letters, out);
        }
    })
}

/// A template read once, for filling many values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    len: usize,
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// `run` digits (1..=DIGITS_PER_DRAW) from one draw, starting at `at`.
    Digits {
        at: usize,
        run: usize,
    },
    Letter {
        at: usize,
    },
    Literal {
        at: usize,
        byte: u8,
    },
}

impl Template {
    /// Reads `template` (`#` a digit, `@` a letter, anything else itself).
    pub fn new(template: &[u8]) -> Template {
        Template {
            len: template.len(),
            pieces: pieces(template).collect(),
        }
    }

    /// Length of the strings it makes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it makes empty strings.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes a random string into `out`: the characters [`fill_template`] would write
    /// from the same generator state.
    ///
    /// # Panics
    /// If `out` is not [`Template::len`] bytes long.
    pub fn fill(&self, out: &mut [u8]) {
        assert_eq!(out.len(), self.len, "template output of the wrong length");
        with(|r| {
            let mut letters = Letters::default();
            for piece in &self.pieces {
                piece.write(r, &mut letters, out);
            }
        })
    }
}

/// The pieces of `template` in order: runs of up to [`DIGITS_PER_DRAW`] `#`, single
/// `@` and literal bytes.
fn pieces(template: &[u8]) -> impl Iterator<Item = Piece> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let piece = match *template.get(at)? {
            b'#' => Piece::Digits {
                at,
                run: leading_hashes(&template[at..]),
            },
            b'@' => Piece::Letter { at },
            byte => Piece::Literal { at, byte },
        };
        at += match piece {
            Piece::Digits { run, .. } => run,
            _ => 1,
        };
        Some(piece)
    })
}

impl Piece {
    /// Writes this piece's characters into `out` (the whole value's buffer). Always
    /// inlined: left to the compiler, `Template::fill` called it and took 25% longer.
    #[inline(always)]
    fn write(self, r: &mut ThreadRand, letters: &mut Letters, out: &mut [u8]) {
        match self {
            Piece::Digits { at, run } => put_digits(r, &mut out[at..at + run]),
            Piece::Letter { at } => out[at] = letters.next(r),
            Piece::Literal { at, byte } => out[at] = byte,
        }
    }
}

/// Most digits taken from one 64-bit draw: 10^12 of 2^64 values.
const DIGITS_PER_DRAW: usize = 12;

/// Bits of one 64-bit draw spent on letters (5 a letter), keeping 24 in reserve.
const LETTER_BITS: u32 = 40;

const LETTERS: &[u8; 26] = b"abcdefghijklmnopqrstuvwxyz";

const POW10: [u64; DIGITS_PER_DRAW + 1] = {
    let mut p = [1u64; DIGITS_PER_DRAW + 1];
    let mut k = 1;
    while k <= DIGITS_PER_DRAW {
        p[k] = p[k - 1] * 10;
        k += 1;
    }
    p
};

/// The four ASCII digits of every number below 10 000 (zero-padded), first digit in
/// the lowest byte. 40 KB, built at compile time: a lookup replaces the three
/// multiplications per digit pair that computing them costs.
static QUADS: [u32; 10_000] = {
    let mut t = [0u32; 10_000];
    let mut n = 0;
    while n < 10_000 {
        let d = [n / 1000, n / 100 % 10, n / 10 % 10, n % 10];
        t[n] = (b'0' as u32 + d[0] as u32)
            | (b'0' as u32 + d[1] as u32) << 8
            | (b'0' as u32 + d[2] as u32) << 16
            | (b'0' as u32 + d[3] as u32) << 24;
        n += 1;
    }
    t
};

/// How many `#` `t` starts with, at most [`DIGITS_PER_DRAW`].
#[inline]
fn leading_hashes(t: &[u8]) -> usize {
    // Comparing 16 bytes at once: a byte-by-byte scan with its unpredictable end cost
    // more than drawing the digits.
    if let Some(head) = t.first_chunk::<16>() {
        let others = u128::from_le_bytes(*head) ^ u128::from_le_bytes([b'#'; 16]);
        ((others.trailing_zeros() / 8) as usize).min(DIGITS_PER_DRAW)
    } else {
        t.iter()
            .take(DIGITS_PER_DRAW)
            .take_while(|&&b| b == b'#')
            .count()
    }
}

/// `n` (below 10^12) as 12 ASCII digits, zero-padded, first digit in the lowest byte.
#[inline]
fn twelve_digits(n: u64) -> u128 {
    let high = n / 100_000_000;
    let low = (n - high * 100_000_000) as u32;
    let (middle, low) = (low / 10_000, low % 10_000);
    QUADS[high as usize] as u128
        | (QUADS[middle as usize] as u128) << 32
        | (QUADS[low as usize] as u128) << 64
}

/// Fills `out` (1 to [`DIGITS_PER_DRAW`] bytes) with random digits from one draw.
#[inline]
fn put_digits(r: &mut ThreadRand, out: &mut [u8]) {
    let run = out.len();
    let n = ((r.rng.next_u64() as u128 * POW10[run] as u128) >> 64) as u64;
    let digits = twelve_digits(n) >> ((DIGITS_PER_DRAW - run) * 8);
    // Two overlapping fixed-size stores instead of a copy of variable length (a call
    // to memcpy per run).
    if run >= 8 {
        out[..8].copy_from_slice(&(digits as u64).to_le_bytes());
        out[run - 8..].copy_from_slice(&((digits >> ((run - 8) * 8)) as u64).to_le_bytes());
    } else if run >= 4 {
        out[..4].copy_from_slice(&(digits as u32).to_le_bytes());
        out[run - 4..].copy_from_slice(&((digits >> ((run - 4) * 8)) as u32).to_le_bytes());
    } else {
        for (k, b) in out.iter_mut().enumerate() {
            *b = (digits >> (8 * k)) as u8;
        }
    }
}

/// Letters drawn as successive fractions of one 64-bit draw.
#[derive(Default)]
struct Letters {
    fraction: u64,
    budget: u32,
}

impl Letters {
    fn next(&mut self, r: &mut ThreadRand) -> u8 {
        if self.budget < 5 {
            self.fraction = r.rng.next_u64();
            self.budget = LETTER_BITS;
        }
        self.budget -= 5;
        let wide = self.fraction as u128 * 26;
        self.fraction = wide as u64;
        LETTERS[(wide >> 64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rand::seed_thread;

    #[test]
    fn template_characters_are_uniform_at_every_position() {
        // Per position of a template with runs of 11 and 14 digits and of letters, every digit
        // and letter within 10% of its expected count.
        let template = "###########-##############@@@@@@@@@@".repeat(2);
        let mut counts = vec![[0u32; 26]; template.len()];
        let mut out = vec![0u8; template.len()];
        let n = 52_000;
        for _ in 0..n {
            fill_template(template.as_bytes(), &mut out);
            for (i, &b) in out.iter().enumerate() {
                if b == b'-' {
                    continue;
                }
                let v = if b.is_ascii_digit() {
                    b - b'0'
                } else {
                    b - b'a'
                };
                counts[i][v as usize] += 1;
            }
        }
        for (i, c) in counts.iter().enumerate() {
            let radix = match template.as_bytes()[i] {
                b'#' => 10,
                b'@' => 26,
                _ => continue,
            };
            let expected = n as f64 / radix as f64;
            for &k in &c[..radix] {
                assert!(
                    (k as f64 - expected).abs() < expected * 0.1,
                    "position {i}: {c:?}"
                );
            }
        }
    }

    #[test]
    fn adjacent_digits_are_independent() {
        // Pairs of neighbours inside one draw's run, across two draws' runs and across
        // a separator: each of the 100 pairs within 10% of its expected count.
        let template = b"##############-#";
        let mut out = [0u8; 16];
        let mut counts = [[0u32; 100]; 3];
        let n = 200_000;
        for _ in 0..n {
            fill_template(template, &mut out);
            let d = |i: usize| (out[i] - b'0') as usize;
            counts[0][d(4) * 10 + d(5)] += 1;
            counts[1][d(11) * 10 + d(12)] += 1;
            counts[2][d(13) * 10 + d(15)] += 1;
        }
        for (which, c) in counts.iter().enumerate() {
            for &k in c {
                let expected = n as f64 / 100.0;
                assert!(
                    (k as f64 - expected).abs() < expected * 0.1,
                    "pair {which}: {c:?}"
                );
            }
        }
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        // Every value of each four-digit part, then numbers spread over the range.
        let text = |n: u64| twelve_digits(n).to_le_bytes()[..12].to_vec();
        for part in 0..10_000u64 {
            for n in [part * 100_000_000, part * 10_000, part] {
                assert_eq!(text(n), format!("{n:012}").as_bytes(), "{n}");
            }
        }
        let mut x = 1u64;
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let n = x % POW10[DIGITS_PER_DRAW];
            assert_eq!(text(n), format!("{n:012}").as_bytes(), "{n}");
        }
    }

    #[test]
    fn a_read_template_makes_what_fill_template_makes() {
        let templates: [&[u8]; 8] = [
            b"###########-###########-###########-###########-###########",
            b"#",
            b"##-###-#####-#######-#########",
            b"#########################",
            b"@@@-##@#@@@@@@@@@@@@-#",
            b"no placeholders",
            b"",
            b"ends in a short run ###",
        ];
        for t in templates {
            let pair = std::thread::spawn(move || {
                seed_thread(9);
                let mut streamed = t.to_vec();
                let mut read = vec![0u8; t.len()];
                let template = Template::new(t);
                for _ in 0..3 {
                    fill_template(t, &mut streamed);
                }
                seed_thread(9);
                for _ in 0..3 {
                    template.fill(&mut read);
                }
                (streamed, read)
            })
            .join()
            .unwrap();
            assert_eq!(pair.0, pair.1, "{}", String::from_utf8_lossy(t));
            for (&out, &tb) in pair.0.iter().zip(t) {
                match tb {
                    b'#' => assert!(out.is_ascii_digit()),
                    b'@' => assert!(out.is_ascii_lowercase()),
                    other => assert_eq!(out, other),
                }
            }
        }
    }

    #[test]
    fn only_as_much_as_both_hold_is_written() {
        let mut out = *b"xxxxxxxx";
        fill_template(b"####", &mut out);
        assert!(out[..4].iter().all(u8::is_ascii_digit));
        assert_eq!(&out[4..], b"xxxx");
        let mut short = [0u8; 3];
        fill_template(b"#####-@@", &mut short);
        assert!(short.iter().all(u8::is_ascii_digit));
    }
}
