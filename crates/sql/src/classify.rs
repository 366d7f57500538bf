//! Read/write/other classification of SQL statements (the `reads`, `writes` and
//! `other` counters of the reports).
//!
//! Two rules live here. [`counted_as`] is how a statement that ran is counted: by what
//! the server answered, as sysbench's drivers count it. [`classify`] reads a
//! statement's text before it runs (the SQLite driver's transaction tracking); it
//! looks only at the first keyword and never allocates.

/// What kind of statement a query is, for the read/write/other counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QueryKind {
    /// `SELECT`, `WITH`, `SHOW`, `DESCRIBE`/`DESC`, `EXPLAIN`, `VALUES`, `TABLE`.
    Read,
    /// `INSERT`, `UPDATE`, `DELETE`, `REPLACE`.
    Write,
    /// Everything else (`BEGIN`, `COMMIT`, DDL, `SET`, ...).
    Other,
}

/// The counter a statement that ran adds to, from what the server answered: a result
/// set (even an empty one) is a read; no result set but rows affected is a write;
/// anything else (`BEGIN`, DDL, `SET`, and a DML statement that changed nothing: an
/// `UPDATE`/`DELETE` matching no row, an `INSERT IGNORE` that hit a duplicate, an
/// `UPDATE` writing the values a row already has) is `other`. sysbench 1.1 and 1.0.20
/// count this way on both MySQL and PostgreSQL, for text queries and prepared
/// statements alike, so a statement's text does not decide its counter.
#[inline]
pub fn counted_as(has_result_set: bool, affected_rows: u64) -> QueryKind {
    if has_result_set {
        QueryKind::Read
    } else if affected_rows > 0 {
        QueryKind::Write
    } else {
        QueryKind::Other
    }
}

/// Classify `sql` by its first keyword, skipping leading whitespace, `-- ` / `#` line
/// comments and `/* */` block comments, and opening parentheses (`(SELECT ...)`).
/// Case-insensitive.
pub fn classify(sql: &str) -> QueryKind {
    let word = first_keyword(sql.as_bytes());
    let mut buf = [0u8; 8];
    if word.len() > buf.len() {
        return QueryKind::Other;
    }
    for (dst, src) in buf.iter_mut().zip(word) {
        *dst = src.to_ascii_uppercase();
    }
    match &buf[..word.len()] {
        b"SELECT" | b"WITH" | b"SHOW" | b"DESCRIBE" | b"DESC" | b"EXPLAIN" | b"VALUES"
        | b"TABLE" => QueryKind::Read,
        b"INSERT" | b"UPDATE" | b"DELETE" | b"REPLACE" => QueryKind::Write,
        _ => QueryKind::Other,
    }
}

/// The first keyword (ASCII letters) after whitespace, comments and `(`.
fn first_keyword(s: &[u8]) -> &[u8] {
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_whitespace() || c == b'(' {
            i += 1;
        } else if c == b'#' || (c == b'-' && s.get(i + 1) == Some(&b'-')) {
            while i < s.len() && s[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && s.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < s.len() && !(s[i] == b'*' && s.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(s.len());
        } else {
            break;
        }
    }
    let start = i;
    while i < s.len() && s[i].is_ascii_alphabetic() {
        i += 1;
    }
    &s[start..i]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_the_answer() {
        assert_eq!(counted_as(true, 0), QueryKind::Read);
        assert_eq!(counted_as(true, 3), QueryKind::Read);
        assert_eq!(counted_as(false, 1), QueryKind::Write);
        assert_eq!(counted_as(false, 0), QueryKind::Other);
    }

    #[test]
    fn classifies_first_keyword() {
        assert_eq!(classify("SELECT 1"), QueryKind::Read);
        assert_eq!(classify("  select c from t"), QueryKind::Read);
        assert_eq!(classify("/* x */ -- y\n SELECT 1"), QueryKind::Read);
        assert_eq!(classify("# c\nselect 1"), QueryKind::Read);
        assert_eq!(classify("(SELECT 1) UNION (SELECT 2)"), QueryKind::Read);
        assert_eq!(
            classify("WITH a AS (SELECT 1) SELECT * FROM a"),
            QueryKind::Read
        );
        assert_eq!(classify("show tables"), QueryKind::Read);
        assert_eq!(classify("INSERT INTO t VALUES (1)"), QueryKind::Write);
        assert_eq!(classify("update t set a=1"), QueryKind::Write);
        assert_eq!(classify("Delete from t"), QueryKind::Write);
        assert_eq!(classify("REPLACE INTO t VALUES (1)"), QueryKind::Write);
        assert_eq!(classify("BEGIN"), QueryKind::Other);
        assert_eq!(classify("COMMIT"), QueryKind::Other);
        assert_eq!(classify("CREATE TABLE t (a int)"), QueryKind::Other);
        assert_eq!(classify(""), QueryKind::Other);
        assert_eq!(classify("/* unterminated"), QueryKind::Other);
        assert_eq!(classify("SELECTED"), QueryKind::Other);
        assert_eq!(classify("INSERTX"), QueryKind::Other);
    }
}
