//! Loading many rows into one table: the [`RowSource`] a caller generates them with,
//! and the way that works on every driver, prepared multi-row INSERTs.
//!
//! Drivers override [`Connection::insert_rows`] with their server's cheapest path
//! (MariaDB's bulk execute, PostgreSQL's COPY); this module is their fallback.

use crate::{Connection, ResultSet, SqlError, StatementId, Value};

/// Rows for [`Connection::insert_rows`], produced one at a time.
pub trait RowSource {
    /// Writes the next row into `row` (one value per column) and returns `true`, or
    /// returns `false` when there are no more rows. `row` holds what the previous call
    /// left there (`Value::Null` at first), so text buffers can be reused.
    fn next_row(&mut self, row: &mut [Value]) -> bool;
}

/// Rows of a multi-row INSERT: enough that the statement overhead vanishes, few enough
/// that the statement stays far below packet limits for rows of a few hundred bytes.
const ROWS_PER_INSERT: usize = 1000;
/// Bind values per statement: below MySQL's and PostgreSQL's 65 535 and SQLite's 32 766.
const MAX_BIND_VALUES: usize = 32_000;

/// `INSERT INTO table (c1, ..) VALUES (?, ..), .. ` for `rows` rows.
pub(crate) fn insert_sql(table: &str, columns: &[&str], rows: usize) -> String {
    let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
    let tuple = format!("({})", vec!["?"; columns.len()].join(","));
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        sql.push_str(&tuple);
    }
    sql
}

/// Inserts every row of `rows` with prepared multi-row INSERTs; returns the number of
/// rows inserted.
pub(crate) fn multi_row<C: Connection + ?Sized>(
    con: &mut C,
    table: &str,
    columns: &[&str],
    rows: &mut dyn RowSource,
) -> Result<u64, SqlError> {
    let ncols = columns.len().max(1);
    let per_insert = (MAX_BIND_VALUES / ncols).clamp(1, ROWS_PER_INSERT);
    let mut values = vec![Value::Null; per_insert * ncols];
    let mut out = ResultSet::default();
    let mut full: Option<StatementId> = None;
    let mut total = 0u64;
    let result = loop {
        let mut n = 0;
        while n < per_insert && rows.next_row(&mut values[n * ncols..(n + 1) * ncols]) {
            n += 1;
        }
        if n == 0 {
            break Ok(total);
        }
        let stmt = match (n == per_insert, full) {
            (true, Some(s)) => s,
            (true, None) => {
                let s = con.prepare(&insert_sql(table, columns, n))?;
                full = Some(s);
                s
            }
            (false, _) => con.prepare(&insert_sql(table, columns, n))?,
        };
        let done = con.execute_into(stmt, &values[..n * ncols], &mut out);
        if Some(stmt) != full {
            con.close_statement(stmt);
        }
        if let Err(e) = done {
            break Err(e);
        }
        total += n as u64;
        if n < per_insert {
            break Ok(total);
        }
    };
    if let Some(s) = full {
        con.close_statement(s);
    }
    result
}

/// A [`RowSource`] that replays `first` and then continues with `rest`: for a driver
/// whose fast path turned out to be refused after it had taken rows from the source.
pub(crate) struct Replay<'a> {
    pub first: std::vec::IntoIter<Vec<Value>>,
    pub rest: &'a mut dyn RowSource,
}

impl RowSource for Replay<'_> {
    fn next_row(&mut self, row: &mut [Value]) -> bool {
        match self.first.next() {
            Some(r) => {
                for (dst, src) in row.iter_mut().zip(r) {
                    *dst = src;
                }
                true
            }
            None => self.rest.next_row(row),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_sql_has_one_tuple_per_row() {
        assert_eq!(
            insert_sql("t", &["id", "k"], 3),
            "INSERT INTO t (id, k) VALUES (?,?),(?,?),(?,?)"
        );
    }

    struct Count(i64);

    impl RowSource for Count {
        fn next_row(&mut self, row: &mut [Value]) -> bool {
            self.0 -= 1;
            row[0] = Value::Int(self.0);
            self.0 > 0
        }
    }

    #[test]
    fn replay_gives_the_taken_rows_then_the_rest() {
        let mut rest = Count(3);
        let mut replay = Replay {
            first: vec![vec![Value::Int(10)], vec![Value::Int(11)]].into_iter(),
            rest: &mut rest,
        };
        let mut row = [Value::Null];
        let mut seen = Vec::new();
        while replay.next_row(&mut row) {
            seen.push(row[0].clone());
        }
        let ints: Vec<Value> = [10, 11, 2, 1].into_iter().map(Value::Int).collect();
        assert_eq!(seen, ints);
    }
}
