//! PostgreSQL answer messages: row and parameter descriptions, data rows in text or
//! binary format, command tags, errors and `ReadyForQuery`.

use super::framing::{message, put_cstr};
use crate::statements::{put_decimal, Cell, ColType, Column, Extent, Statement, Verb};

/// Type oids.
pub const INT4: u32 = 23;
/// `int8`.
pub const INT8: u32 = 20;
/// `text`.
pub const TEXT: u32 = 25;
/// `bpchar`.
pub const BPCHAR: u32 = 1042;

/// The oid, size and type modifier of a column type.
fn describe(ty: ColType) -> (u32, i16, i32) {
    match ty {
        ColType::Int => (INT4, 4, -1),
        ColType::BigInt | ColType::Sum => (INT8, 8, -1),
        ColType::Char(n) => (BPCHAR, -1, n as i32 + 4),
        ColType::Text => (TEXT, -1, -1),
    }
}

/// The format (0 text, 1 binary) of column `i` under Bind's result format codes.
pub fn format(codes: &[i16], i: usize) -> i16 {
    match codes {
        [] => 0,
        [one] => *one,
        many => many.get(i).copied().unwrap_or(0),
    }
}

/// Appends a `RowDescription`.
pub fn row_description(out: &mut Vec<u8>, cols: &[Column], codes: &[i16]) {
    message(out, b'T', |b| {
        b.extend_from_slice(&(cols.len() as i16).to_be_bytes());
        for (i, c) in cols.iter().enumerate() {
            let (oid, size, modifier) = describe(c.ty);
            put_cstr(b, c.name.as_bytes());
            b.extend_from_slice(&0u32.to_be_bytes());
            b.extend_from_slice(&0i16.to_be_bytes());
            b.extend_from_slice(&oid.to_be_bytes());
            b.extend_from_slice(&size.to_be_bytes());
            b.extend_from_slice(&modifier.to_be_bytes());
            b.extend_from_slice(&format(codes, i).to_be_bytes());
        }
    });
}

/// Appends a `ParameterDescription`: the types the client declared, else `bpchar` for
/// parameters compared with text columns and `int4` for the others.
pub fn parameter_description(out: &mut Vec<u8>, stmt: &Statement, declared: &[u32]) {
    message(out, b't', |b| {
        b.extend_from_slice(&(stmt.params as i16).to_be_bytes());
        for i in 0..stmt.params {
            let oid = match declared.get(i) {
                Some(&oid) if oid != 0 => oid,
                _ if stmt.text_params[i] => BPCHAR,
                _ => INT4,
            };
            b.extend_from_slice(&oid.to_be_bytes());
        }
    });
}

/// Appends the `DataRow`s of one execution.
pub fn data_rows(out: &mut Vec<u8>, cols: &[Column], e: &Extent, codes: &[i16]) {
    for i in 0..e.rows {
        message(out, b'D', |b| {
            b.extend_from_slice(&(cols.len() as i16).to_be_bytes());
            for (n, c) in cols.iter().enumerate() {
                let binary = format(codes, n) == 1;
                match (c.cell.int_at(i, e), &c.cell) {
                    (Some(v), _) if binary => {
                        if c.ty == ColType::Int {
                            b.extend_from_slice(&4i32.to_be_bytes());
                            b.extend_from_slice(&(v as i32).to_be_bytes());
                        } else {
                            b.extend_from_slice(&8i32.to_be_bytes());
                            b.extend_from_slice(&v.to_be_bytes());
                        }
                    }
                    (Some(v), _) => {
                        let at = b.len();
                        b.extend_from_slice(&[0; 4]);
                        put_decimal(b, v);
                        let len = (b.len() - at - 4) as i32;
                        b[at..at + 4].copy_from_slice(&len.to_be_bytes());
                    }
                    (None, Cell::Text(t)) => {
                        b.extend_from_slice(&(t.len() as i32).to_be_bytes());
                        b.extend_from_slice(t.as_bytes());
                    }
                    _ => b.extend_from_slice(&(-1i32).to_be_bytes()),
                }
            }
        });
    }
}

/// Appends the `CommandComplete` of one execution.
pub fn command_complete(out: &mut Vec<u8>, stmt: &Statement, e: &Extent) {
    message(out, b'C', |b| {
        match stmt.verb {
            Verb::Select if stmt.tag.as_ref() == "SELECT" => {
                b.extend_from_slice(b"SELECT ");
                put_decimal(b, e.rows as i64);
            }
            Verb::Insert => {
                b.extend_from_slice(b"INSERT 0 ");
                put_decimal(b, e.rows as i64);
            }
            Verb::Update => {
                b.extend_from_slice(b"UPDATE ");
                put_decimal(b, e.rows as i64);
            }
            Verb::Delete => {
                b.extend_from_slice(b"DELETE ");
                put_decimal(b, e.rows as i64);
            }
            _ => b.extend_from_slice(stmt.tag.as_bytes()),
        }
        b.push(0);
    });
}

/// Appends an `ErrorResponse`.
pub fn error(out: &mut Vec<u8>, severity: &str, state: &str, text: &str) {
    message(out, b'E', |b| {
        for (field, value) in [
            (b'S', severity),
            (b'V', severity),
            (b'C', state),
            (b'M', text),
        ] {
            b.push(field);
            put_cstr(b, value.as_bytes());
        }
        b.push(0);
    });
}

/// Appends `ReadyForQuery` with transaction status `status` (`I`, `T` or `E`).
pub fn ready(out: &mut Vec<u8>, status: u8) {
    message(out, b'Z', |b| b.push(status));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statements::{analyse, Context, Dialect};

    #[test]
    fn binary_and_text_rows_and_tags() {
        let ctx = Context {
            version: "15.0",
            database: "d",
            user: "u",
            connection_id: 1,
            dialect: Dialect::Pgsql,
        };
        let s = analyse("SELECT id, c FROM t WHERE id BETWEEN $1 AND $2", &ctx);
        let e = Extent {
            rows: 2,
            first_id: 9,
            ids: 2,
        };
        let mut out = Vec::new();
        data_rows(&mut out, &s.columns, &e, &[1, 0]);
        // first row: 2 columns, int4 9 in binary, c in text
        assert_eq!(&out[5..15], &[0, 2, 0, 0, 0, 4, 0, 0, 0, 9]);
        assert!(out.iter().filter(|&&b| b == b'D').count() >= 2);
        let mut text = Vec::new();
        data_rows(
            &mut text,
            &s.columns[..1],
            &Extent {
                rows: 1,
                first_id: 10,
                ids: 1,
            },
            &[],
        );
        assert_eq!(&text[7..13], &[0, 0, 0, 2, b'1', b'0']);
        let mut tag = Vec::new();
        command_complete(&mut tag, &s, &e);
        assert_eq!(&tag[5..], b"SELECT 2\0");
    }
}
