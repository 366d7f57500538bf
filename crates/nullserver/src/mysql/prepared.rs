//! Server-side prepared statements of one MySQL connection: the statements a client
//! prepared (`COM_STMT_PREPARE`), the parameter types it last bound, and the decoding of
//! a `COM_STMT_EXECUTE` request's parameter values (only integers are kept: they are
//! what decides the rows of a range).

use std::collections::HashMap;
use std::sync::Arc;

use super::framing::get_lenenc;
use crate::statements::Statement;

/// Most parameters whose values are kept for the row count (the OLTP statements have at
/// most four).
pub const KEPT: usize = 8;

/// One prepared statement.
#[derive(Debug)]
pub struct Prepared {
    /// Its analysis.
    pub stmt: Arc<Statement>,
    /// Parameter types of the last execute that sent them (type byte, unsigned flag).
    pub types: Vec<(u8, bool)>,
}

/// The prepared statements of a connection, by id.
#[derive(Debug, Default)]
pub struct Registry {
    stmts: HashMap<u32, Prepared>,
    next_id: u32,
}

impl Registry {
    /// Registers a statement; returns its id.
    pub fn add(&mut self, stmt: Arc<Statement>) -> u32 {
        self.next_id = self.next_id.wrapping_add(1).max(1);
        let types = vec![(0xfd, false); stmt.params];
        self.stmts.insert(self.next_id, Prepared { stmt, types });
        self.next_id
    }

    /// The statement with id `id`.
    pub fn get_mut(&mut self, id: u32) -> Option<&mut Prepared> {
        self.stmts.get_mut(&id)
    }

    /// Forgets statement `id`.
    pub fn remove(&mut self, id: u32) {
        self.stmts.remove(&id);
    }

    /// Forgets every statement (`COM_RESET_CONNECTION`).
    pub fn clear(&mut self) {
        self.stmts.clear();
    }
}

/// Integer values of the first [`KEPT`] parameters of an execute (`None` for NULL or
/// a non-integer).
pub type Values = [Option<i64>; KEPT];

/// Why an execute request cannot be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ExecuteError {
    /// The request ends before its parameters do.
    #[error("malformed COM_STMT_EXECUTE packet")]
    Truncated,
}

/// Decodes the parameters of a `COM_STMT_EXECUTE` payload after its first 10 bytes
/// (command, statement id, flags, iteration count), updating `p.types` when the
/// client bound new types.
pub fn decode_params(p: &mut Prepared, rest: &[u8]) -> Result<Values, ExecuteError> {
    let mut values = [None; KEPT];
    let n = p.stmt.params;
    if n == 0 {
        return Ok(values);
    }
    let bitmap_len = n.div_ceil(8);
    let bitmap = rest.get(..bitmap_len).ok_or(ExecuteError::Truncated)?;
    let mut at = bitmap_len;
    let bound = *rest.get(at).ok_or(ExecuteError::Truncated)?;
    at += 1;
    if bound == 1 {
        let types = rest.get(at..at + 2 * n).ok_or(ExecuteError::Truncated)?;
        for (i, t) in types.chunks_exact(2).enumerate() {
            p.types[i] = (t[0], t[1] & 0x80 != 0);
        }
        at += 2 * n;
    }
    for (i, &(ty, unsigned)) in p.types.iter().enumerate() {
        if bitmap[i / 8] & (1 << (i % 8)) != 0 {
            continue;
        }
        let b = rest.get(at..).ok_or(ExecuteError::Truncated)?;
        let fixed = |len: usize| b.get(..len).ok_or(ExecuteError::Truncated);
        let (value, used) = match ty {
            1 => {
                let v = fixed(1)?[0];
                (
                    Some(if unsigned {
                        i64::from(v)
                    } else {
                        i64::from(v as i8)
                    }),
                    1,
                )
            }
            2 | 13 => {
                let v = u16::from_le_bytes(fixed(2)?.try_into().expect("2 bytes"));
                (
                    Some(if unsigned {
                        i64::from(v)
                    } else {
                        i64::from(v as i16)
                    }),
                    2,
                )
            }
            3 | 9 => {
                let v = u32::from_le_bytes(fixed(4)?.try_into().expect("4 bytes"));
                (
                    Some(if unsigned {
                        i64::from(v)
                    } else {
                        i64::from(v as i32)
                    }),
                    4,
                )
            }
            8 => (
                Some(i64::from_le_bytes(fixed(8)?.try_into().expect("8 bytes"))),
                8,
            ),
            4 => {
                let v = f32::from_le_bytes(fixed(4)?.try_into().expect("4 bytes"));
                (Some(v as i64), 4)
            }
            5 => {
                let v = f64::from_le_bytes(fixed(8)?.try_into().expect("8 bytes"));
                (Some(v as i64), 8)
            }
            6 => (None, 0),
            7 | 10 | 11 | 12 => (None, 1 + usize::from(fixed(1)?[0])),
            _ => {
                let (len, n) = get_lenenc(b).ok_or(ExecuteError::Truncated)?;
                let s = b.get(n..n + len as usize).ok_or(ExecuteError::Truncated)?;
                let v = std::str::from_utf8(s)
                    .ok()
                    .and_then(|s| s.trim().parse().ok());
                (v, n + len as usize)
            }
        };
        if at + used > rest.len() {
            return Err(ExecuteError::Truncated);
        }
        at += used;
        if i < KEPT {
            values[i] = value;
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statements::{analyse, Context, Dialect};

    fn prepared(sql: &str) -> Prepared {
        let s = Context {
            version: "",
            database: "",
            user: "",
            connection_id: 1,
            dialect: Dialect::Mysql,
        };
        let stmt = Arc::new(analyse(sql, &s));
        let types = vec![(0xfd, false); stmt.params];
        Prepared { stmt, types }
    }

    #[test]
    fn values_of_bound_types_are_decoded_and_types_kept() {
        let mut p = prepared("SELECT c FROM t WHERE id BETWEEN ? AND ?");
        // bitmap, new-params-bound, LONG, LONGLONG unsigned, 10, 109
        let mut req = vec![0, 1, 3, 0, 8, 0x80];
        req.extend_from_slice(&10i32.to_le_bytes());
        req.extend_from_slice(&109i64.to_le_bytes());
        let v = decode_params(&mut p, &req).unwrap();
        assert_eq!(&v[..2], &[Some(10), Some(109)]);
        // Next execute: types not sent again.
        let mut again = vec![0, 0];
        again.extend_from_slice(&7i32.to_le_bytes());
        again.extend_from_slice(&8i64.to_le_bytes());
        assert_eq!(
            &decode_params(&mut p, &again).unwrap()[..2],
            &[Some(7), Some(8)]
        );
        assert_eq!(
            decode_params(&mut p, &again[..5]),
            Err(ExecuteError::Truncated)
        );
    }

    #[test]
    fn strings_nulls_and_dates_are_skipped_in_step() {
        let mut p = prepared("INSERT INTO t (id, k, c, pad) VALUES (?, ?, ?, ?)");
        // id NULL (bit 0), k as string "42", c string, pad DATE (4 bytes)
        let mut req = vec![0b0001, 1, 3, 0, 0xfd, 0, 0xfe, 0, 10, 0];
        req.extend_from_slice(&[2, b'4', b'2', 3, b'a', b'b', b'c', 4, 0xe8, 7, 1, 1]);
        let v = decode_params(&mut p, &req).unwrap();
        assert_eq!(&v[..4], &[None, Some(42), None, None]);
    }
}
