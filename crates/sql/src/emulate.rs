//! Client-side placeholder handling: splitting a statement at its `?` placeholders
//! (outside quotes and comments), rendering bound values as correctly quoted SQL
//! literals (`--db-ps-mode=disable`), and renumbering `?` to `$1..` for PostgreSQL.

use std::fmt::Write as _;

use crate::config::PsMode;
use crate::trace::trace_if;
use crate::value::Value;

/// The start of an execute on the drivers that emulate by `--db-ps-mode` alone and
/// quote the standard way (PostgreSQL, SQLite): under `--db-ps-mode=disable` the text
/// query the statement runs as (`template` with `params` quoted in); else `None`, the
/// execute traced first when `debug` (as `driver`'s). (MySQL decides at prepare time
/// instead, as it also emulates the statements its server cannot prepare.)
pub(crate) fn emulated_execute(
    mode: PsMode,
    template: &Template,
    params: &[Value],
    debug: bool,
    driver: &str,
) -> Option<String> {
    if mode == PsMode::Disable {
        return Some(template.render(params, Dialect::Standard));
    }
    trace_if(debug, driver, "execute", || {
        template.render(params, Dialect::Standard)
    });
    None
}

/// Literal quoting rules of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// MySQL/MariaDB: backslash escapes inside `'...'` (as `mysql_real_escape_string`).
    Mysql,
    /// Standard SQL (PostgreSQL with `standard_conforming_strings`, SQLite): `''` doubling.
    Standard,
}

/// A statement split at its placeholders: `pieces.len() == nparams + 1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<String>,
}

impl Template {
    /// Split `sql` at every `?` that is not inside a string, quoted identifier or
    /// comment.
    pub fn parse(sql: &str) -> Template {
        let b = sql.as_bytes();
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                q @ (b'\'' | b'"' | b'`') => {
                    i += 1;
                    while i < b.len() {
                        if b[i] == b'\\' && q != b'`' {
                            i += 2;
                            continue;
                        }
                        if b[i] == q {
                            // A doubled quote stays inside the literal.
                            if b.get(i + 1) == Some(&q) {
                                i += 2;
                                continue;
                            }
                            break;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                b'-' if b.get(i + 1) == Some(&b'-') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'#' => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    i += 2;
                    while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                        i += 1;
                    }
                    i += 2;
                }
                b'?' => {
                    pieces.push(sql[start..i].to_string());
                    i += 1;
                    start = i;
                }
                _ => i += 1,
            }
        }
        pieces.push(sql[start.min(sql.len())..].to_string());
        Template { pieces }
    }

    /// Number of placeholders.
    pub fn nparams(&self) -> usize {
        self.pieces.len() - 1
    }

    /// The statement with placeholders renumbered `$1, $2, ...` (PostgreSQL).
    pub fn numbered(&self) -> String {
        let mut out = String::new();
        for (i, p) in self.pieces.iter().enumerate() {
            if i > 0 {
                let _ = write!(out, "${i}");
            }
            out.push_str(p);
        }
        out
    }

    /// The statement with every placeholder replaced by the literal of its value.
    /// Missing values render as `NULL`. Text that is not UTF-8 is rendered lossily
    /// (the connection protocols here send queries as UTF-8 strings).
    pub fn render(&self, params: &[Value], dialect: Dialect) -> String {
        let mut out = String::with_capacity(
            self.pieces.iter().map(String::len).sum::<usize>() + 16 * params.len(),
        );
        for (i, p) in self.pieces.iter().enumerate() {
            if i > 0 {
                push_literal(&mut out, params.get(i - 1).unwrap_or(&Value::Null), dialect);
            }
            out.push_str(p);
        }
        out
    }
}

/// Append the SQL literal for `v`.
pub fn push_literal(out: &mut String, v: &Value, dialect: Dialect) {
    match v {
        Value::Null => out.push_str("NULL"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) if f.is_finite() => {
            let _ = write!(out, "{f:?}");
        }
        Value::Double(d) if d.is_finite() => {
            let _ = write!(out, "{d:?}");
        }
        Value::Float(_) | Value::Double(_) => out.push_str("NULL"),
        Value::Text(t) => push_quoted(out, &String::from_utf8_lossy(t), dialect),
    }
}

/// Append `s` as a quoted string literal.
pub fn push_quoted(out: &mut String, s: &str, dialect: Dialect) {
    out.push('\'');
    for c in s.chars() {
        match (dialect, c) {
            (Dialect::Mysql, '\\') => out.push_str("\\\\"),
            (Dialect::Mysql, '\'') => out.push_str("\\'"),
            (Dialect::Mysql, '"') => out.push_str("\\\""),
            (Dialect::Mysql, '\0') => out.push_str("\\0"),
            (Dialect::Mysql, '\n') => out.push_str("\\n"),
            (Dialect::Mysql, '\r') => out.push_str("\\r"),
            (Dialect::Mysql, '\x1a') => out.push_str("\\Z"),
            (Dialect::Standard, '\'') => out.push_str("''"),
            (_, c) => out.push(c),
        }
    }
    out.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_quotes_and_comments() {
        let t =
            Template::parse("SELECT '?', \"a?\", `b?` FROM t WHERE a=? /* ? */ AND b = ? -- ?\n");
        assert_eq!(t.nparams(), 2);
        let t = Template::parse("SELECT 'it''s ?' , 'x\\'?' , ?");
        assert_eq!(t.nparams(), 1);
        assert_eq!(Template::parse("SELECT 1").nparams(), 0);
    }

    #[test]
    fn numbered_for_pg() {
        let t = Template::parse("UPDATE t SET a=? WHERE id=?");
        assert_eq!(t.numbered(), "UPDATE t SET a=$1 WHERE id=$2");
    }

    #[test]
    fn renders_literals() {
        let t = Template::parse("INSERT INTO t VALUES (?,?,?,?)");
        let params = [
            Value::Int(-5),
            Value::Text(b"it's a \\ \"x\"\n".to_vec()),
            Value::Null,
            Value::Double(1.5),
        ];
        assert_eq!(
            t.render(&params, Dialect::Mysql),
            "INSERT INTO t VALUES (-5,'it\\'s a \\\\ \\\"x\\\"\\n',NULL,1.5)"
        );
        assert_eq!(
            t.render(&params, Dialect::Standard),
            "INSERT INTO t VALUES (-5,'it''s a \\ \"x\"\n',NULL,1.5)"
        );
    }
}
