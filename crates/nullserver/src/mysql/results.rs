//! MySQL response packets: OK, ERR, EOF, column definitions, and result-set rows in
//! the text protocol (`COM_QUERY`) and the binary protocol (`COM_STMT_EXECUTE`).

use super::framing::{put_lenenc, put_lenenc_str, Writer};
use crate::statements::{put_decimal, Cell, ColType, Column, Extent};

/// `SERVER_MORE_RESULTS_EXISTS`: another result of the same query follows.
pub const STATUS_MORE_RESULTS: u16 = 0x0008;
/// `SERVER_STATUS_IN_TRANS`.
pub const STATUS_IN_TRANS: u16 = 0x0001;

/// Column types (`enum_field_types`).
const T_LONG: u8 = 3;
const T_LONGLONG: u8 = 8;
const T_NEWDECIMAL: u8 = 246;
const T_VAR_STRING: u8 = 253;
const T_STRING: u8 = 254;
/// Column flags.
const NOT_NULL: u16 = 1;
const BINARY_FLAG: u16 = 128;
const NUM_FLAG: u16 = 32768;
/// Character sets: `binary` for numbers, `utf8mb4_general_ci` for text.
const CHARSET_BINARY: u16 = 63;
const CHARSET_TEXT: u16 = 45;

/// Appends an OK packet.
pub fn ok(w: &mut Writer<'_>, affected: u64, status: u16) {
    w.packet(|b| {
        b.push(0);
        put_lenenc(b, affected);
        put_lenenc(b, 0);
        b.extend_from_slice(&status.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
    });
}

/// Appends an ERR packet.
pub fn err(w: &mut Writer<'_>, code: u16, state: &str, message: &str) {
    w.packet(|b| {
        b.push(0xff);
        b.extend_from_slice(&code.to_le_bytes());
        b.push(b'#');
        b.extend_from_slice(&state.as_bytes()[..5]);
        b.extend_from_slice(message.as_bytes());
    });
}

/// Appends an EOF packet.
pub fn eof(w: &mut Writer<'_>, status: u16) {
    w.packet(|b| {
        b.push(0xfe);
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&status.to_le_bytes());
    });
}

/// The wire type, display length, flags and character set of a column type.
fn describe(ty: ColType) -> (u8, u32, u16, u16) {
    match ty {
        ColType::Int => (
            T_LONG,
            11,
            NOT_NULL | NUM_FLAG | BINARY_FLAG,
            CHARSET_BINARY,
        ),
        ColType::BigInt => (
            T_LONGLONG,
            21,
            NOT_NULL | NUM_FLAG | BINARY_FLAG,
            CHARSET_BINARY,
        ),
        ColType::Sum => (T_NEWDECIMAL, 32, NUM_FLAG | BINARY_FLAG, CHARSET_BINARY),
        ColType::Char(n) => (T_STRING, n * 4, NOT_NULL, CHARSET_TEXT),
        ColType::Text => (T_VAR_STRING, 1024, 0, CHARSET_TEXT),
    }
}

/// Appends a column definition (protocol 4.1).
pub fn column_def(w: &mut Writer<'_>, col: &Column) {
    let (ty, len, flags, charset) = describe(col.ty);
    w.packet(|b| {
        put_lenenc_str(b, b"def");
        put_lenenc_str(b, b"");
        put_lenenc_str(b, b"");
        put_lenenc_str(b, b"");
        put_lenenc_str(b, col.name.as_bytes());
        put_lenenc_str(b, col.name.as_bytes());
        b.push(0x0c);
        b.extend_from_slice(&charset.to_le_bytes());
        b.extend_from_slice(&len.to_le_bytes());
        b.push(ty);
        b.extend_from_slice(&flags.to_le_bytes());
        b.push(0);
        b.extend_from_slice(&[0, 0]);
    });
}

/// The definition of a statement parameter, as the prepare response lists them.
pub fn param_def(w: &mut Writer<'_>) {
    column_def(
        w,
        &Column {
            name: "?".into(),
            ty: ColType::Text,
            cell: Cell::Null,
        },
    );
}

/// Appends the column count, the column definitions and their EOF.
fn header(w: &mut Writer<'_>, cols: &[Column], status: u16) {
    w.packet(|b| put_lenenc(b, cols.len() as u64));
    for c in cols {
        column_def(w, c);
    }
    eof(w, status);
}

/// Appends a whole text-protocol result set.
pub fn text_result(w: &mut Writer<'_>, cols: &[Column], e: &Extent, status: u16) {
    header(w, cols, status);
    for i in 0..e.rows {
        w.packet(|b| {
            for c in cols {
                match (&c.cell, c.cell.int_at(i, e)) {
                    (_, Some(v)) => {
                        let at = b.len();
                        b.push(0);
                        put_decimal(b, v);
                        b[at] = (b.len() - at - 1) as u8;
                    }
                    (Cell::Text(t), None) => put_lenenc_str(b, t.as_bytes()),
                    _ => b.push(0xfb),
                }
            }
        });
    }
    eof(w, status);
}

/// Appends a whole binary-protocol result set.
pub fn binary_result(w: &mut Writer<'_>, cols: &[Column], e: &Extent, status: u16) {
    header(w, cols, status);
    let bitmap = (cols.len() + 7 + 2) / 8;
    for i in 0..e.rows {
        w.packet(|b| {
            b.push(0);
            let at = b.len();
            b.resize(at + bitmap, 0);
            for (n, c) in cols.iter().enumerate() {
                match (c.ty, c.cell.int_at(i, e), &c.cell) {
                    (ColType::Int, Some(v), _) => b.extend_from_slice(&(v as i32).to_le_bytes()),
                    (ColType::BigInt, Some(v), _) => b.extend_from_slice(&v.to_le_bytes()),
                    (_, Some(v), _) => {
                        let len_at = b.len();
                        b.push(0);
                        put_decimal(b, v);
                        b[len_at] = (b.len() - len_at - 1) as u8;
                    }
                    (_, None, Cell::Text(t)) => put_lenenc_str(b, t.as_bytes()),
                    _ => b[at + (n + 2) / 8] |= 1 << ((n + 2) % 8),
                }
            }
        });
    }
    eof(w, status);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_rows_carry_typed_values_and_null_bits() {
        let cols = vec![
            Column {
                name: "id".into(),
                ty: ColType::Int,
                cell: Cell::RowId,
            },
            Column {
                name: "s".into(),
                ty: ColType::Sum,
                cell: Cell::SumOfIds,
            },
            Column {
                name: "n".into(),
                ty: ColType::Text,
                cell: Cell::Null,
            },
        ];
        let e = Extent {
            rows: 1,
            first_id: 5,
            ids: 3,
        };
        let mut out = Vec::new();
        binary_result(&mut Writer::new(&mut out, 1), &cols, &e, 2);
        // count, 3 defs, EOF, row, EOF: the row is the 6th packet.
        let mut at = 0;
        for _ in 0..5 {
            at += 4 + usize::from(out[at]);
        }
        let row = &out[at + 4..at + 4 + usize::from(out[at])];
        // header, bitmap (NULL is column 2: bit 4), int 5, decimal "18"
        assert_eq!(row, &[0, 0b1_0000, 5, 0, 0, 0, 2, b'1', b'8']);
    }
}
