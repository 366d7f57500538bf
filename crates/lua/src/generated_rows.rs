//! Rows generated in Rust for `con:insert_generated()` (a bmk extension of
//! `sysbench.sql`): a script describes each column once and the rows are drawn from the
//! worker's random generator as the driver sends them, so a table's load costs no Lua
//! per row.
//!
//! The description is text, one column per line: `name<TAB>kind<TAB>argument`, with
//! `\\` and `\n` escaped in the argument. Kinds: `seq` (integers counting up from the
//! argument), `rand` (`rand.default(1, argument)`), `template` (`rand.string(argument)`:
//! `#` a digit, `@` a letter) and `text` (the argument itself).

use bmk_engine::rand;
use bmk_sql::{RowSource, Value};

/// How one column's values are made.
#[derive(Debug, Clone, PartialEq)]
enum Column {
    Seq(i64),
    Rand(u32),
    Template(rand::Template),
    Text(Vec<u8>),
}

/// The rows of one `insert_generated` call.
#[derive(Debug)]
pub(crate) struct GeneratedRows {
    names: Vec<String>,
    columns: Vec<Column>,
    left: u64,
}

impl GeneratedRows {
    /// Parses a column description for `rows` rows.
    pub(crate) fn parse(spec: &[u8], rows: u64) -> Result<GeneratedRows, String> {
        let mut names = Vec::new();
        let mut columns = Vec::new();
        for line in spec.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let mut parts = line.splitn(3, |b| *b == b'\t');
            let (Some(name), Some(kind), Some(arg)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(format!(
                    "insert_generated: column description '{}' is not name, kind, argument",
                    String::from_utf8_lossy(line)
                ));
            };
            let name = String::from_utf8_lossy(name).into_owned();
            let arg = unescape(arg);
            let number = || {
                std::str::from_utf8(&arg)
                    .ok()
                    .and_then(|s| s.trim().parse::<i64>().ok())
                    .ok_or_else(|| {
                        format!(
                            "insert_generated: column '{name}': '{}' is not an integer",
                            String::from_utf8_lossy(&arg)
                        )
                    })
            };
            let column = match kind {
                b"seq" => Column::Seq(number()?),
                b"rand" => Column::Rand(number()?.clamp(1, u32::MAX as i64) as u32),
                b"template" => Column::Template(rand::Template::new(&arg)),
                b"text" => Column::Text(arg),
                other => {
                    return Err(format!(
                        "insert_generated: column '{name}': unknown kind '{}' (seq, rand, \
                         template or text)",
                        String::from_utf8_lossy(other)
                    ))
                }
            };
            names.push(name);
            columns.push(column);
        }
        if columns.is_empty() {
            return Err("insert_generated: no columns described".into());
        }
        Ok(GeneratedRows {
            names,
            columns,
            left: rows,
        })
    }

    /// The column names, in order.
    pub(crate) fn names(&self) -> Vec<&str> {
        self.names.iter().map(String::as_str).collect()
    }
}

fn unescape(arg: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(arg.len());
    let mut bytes = arg.iter();
    while let Some(&b) = bytes.next() {
        if b == b'\\' {
            match bytes.next() {
                Some(b'n') => out.push(b'\n'),
                Some(&other) => out.push(other),
                None => out.push(b'\\'),
            }
        } else {
            out.push(b);
        }
    }
    out
}

/// `value` as a text buffer of `len` bytes, reusing its allocation.
fn text_buffer(value: &mut Value, len: usize) -> &mut Vec<u8> {
    if !matches!(value, Value::Text(_)) {
        *value = Value::Text(Vec::new());
    }
    let Value::Text(buf) = value else {
        unreachable!("made text above")
    };
    buf.resize(len, 0);
    buf
}

impl RowSource for GeneratedRows {
    fn next_row(&mut self, row: &mut [Value]) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        for (column, value) in self.columns.iter_mut().zip(row.iter_mut()) {
            match column {
                Column::Seq(next) => {
                    *value = Value::Int(*next);
                    *next += 1;
                }
                Column::Rand(max) => *value = Value::Int(rand::default(1, *max) as i64),
                Column::Template(t) => t.fill(text_buffer(value, t.len())),
                Column::Text(t) => text_buffer(value, t.len()).copy_from_slice(t),
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn description_parses_and_rows_follow_it() {
        let spec = b"id\tseq\t41\nk\trand\t10\nc\ttemplate\t##-@@\nd\ttext\ta\\\\b\\nc\n";
        let mut rows = GeneratedRows::parse(spec, 3).unwrap();
        assert_eq!(rows.names(), ["id", "k", "c", "d"]);
        let mut row = vec![Value::Null; 4];
        for id in 41..44 {
            assert!(rows.next_row(&mut row));
            assert_eq!(row[0], Value::Int(id));
            assert!(matches!(row[1], Value::Int(k) if (1..=10).contains(&k)));
            let Value::Text(c) = &row[2] else { panic!() };
            assert!(c[..2].iter().all(u8::is_ascii_digit) && c[2] == b'-');
            assert!(c[3..].iter().all(u8::is_ascii_lowercase));
            assert_eq!(row[3], Value::Text(b"a\\b\nc".to_vec()));
        }
        assert!(!rows.next_row(&mut row));
    }

    #[test]
    fn bad_descriptions_say_what_is_wrong() {
        for (spec, says) in [
            (&b""[..], "no columns"),
            (b"id\tseq", "is not name, kind, argument"),
            (b"id\tseq\tx", "'x' is not an integer"),
            (b"id\tuuid\t1", "unknown kind 'uuid'"),
        ] {
            let e = GeneratedRows::parse(spec, 1).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
    }
}
