//! Batching of `bulk_insert_next` tuples into multi-row `INSERT`s of at most
//! [`BULK_MAX_BYTES`] per statement.

use crate::driver_kind::DriverKind;
use crate::error::{SqlError, SqlOp};

/// The error for `bulk_insert_next` without `bulk_insert_init`.
fn not_started(driver: DriverKind) -> SqlError {
    SqlError::new(
        driver,
        SqlOp::Query,
        0,
        "",
        "bulk_insert_next() called before bulk_insert_init()",
    )
}

/// Maximum size of one multi-row INSERT statement built by the bulk insert API.
pub const BULK_MAX_BYTES: usize = 512 * 1024;

/// Accumulates `prefix tuple,tuple,...` and hands out full statements.
#[derive(Debug, Default)]
pub struct BulkBuffer {
    prefix: String,
    buf: String,
    rows: usize,
    active: bool,
}

impl BulkBuffer {
    /// Start a new bulk insert with e.g. `INSERT INTO t (a,b) VALUES`.
    pub fn init(&mut self, prefix: &str) {
        self.prefix.clear();
        self.prefix.push_str(prefix.trim_end());
        self.buf.clear();
        self.rows = 0;
        self.active = true;
    }

    /// True between `init` and `done`.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// `bulk_insert_next` of `driver`: [`push`](Self::push) once `init` has started a
    /// bulk insert, an error before.
    pub(crate) fn next(
        &mut self,
        driver: DriverKind,
        tuple: &str,
    ) -> Result<Option<String>, SqlError> {
        if !self.active {
            return Err(not_started(driver));
        }
        Ok(self.push(tuple))
    }

    /// Add one tuple. When adding it would make the statement exceed
    /// [`BULK_MAX_BYTES`], the pending statement is returned first (to be executed by
    /// the caller) and the tuple starts the next one.
    pub fn push(&mut self, tuple: &str) -> Option<String> {
        let mut flushed = None;
        if self.rows > 0 && self.buf.len() + 1 + tuple.len() > BULK_MAX_BYTES {
            flushed = self.take();
        }
        if self.rows == 0 {
            self.buf
                .reserve(BULK_MAX_BYTES.min(self.prefix.len() + tuple.len() + 64 * 1024));
            self.buf.push_str(&self.prefix);
            self.buf.push(' ');
        } else {
            self.buf.push(',');
        }
        self.buf.push_str(tuple);
        self.rows += 1;
        flushed
    }

    /// The pending statement, if any rows are buffered.
    pub fn take(&mut self) -> Option<String> {
        if self.rows == 0 {
            return None;
        }
        self.rows = 0;
        Some(std::mem::take(&mut self.buf))
    }

    /// Finish: the last pending statement, if any; the buffer becomes inactive.
    pub fn done(&mut self) -> Option<String> {
        self.active = false;
        self.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_under_limit() {
        let mut b = BulkBuffer::default();
        b.init("INSERT INTO t VALUES");
        let tuple = format!("({})", "1".repeat(1000));
        let mut stmts = Vec::new();
        for _ in 0..2000 {
            if let Some(s) = b.push(&tuple) {
                stmts.push(s);
            }
        }
        stmts.extend(b.done());
        assert!(stmts.len() >= 4);
        let mut rows = 0;
        for s in &stmts {
            assert!(s.len() <= BULK_MAX_BYTES);
            assert!(s.starts_with("INSERT INTO t VALUES ("));
            rows += s.matches('(').count();
        }
        assert_eq!(rows, 2000);
        assert!(b.done().is_none());
    }

    #[test]
    fn next_needs_init() {
        let mut b = BulkBuffer::default();
        let e = b.next(DriverKind::Sqlite, "(1)").unwrap_err();
        assert!(e.to_string().contains("before bulk_insert_init()"), "{e}");
        b.init("INSERT INTO t VALUES");
        assert_eq!(b.next(DriverKind::Sqlite, "(1)").unwrap(), None);
        assert_eq!(b.done().as_deref(), Some("INSERT INTO t VALUES (1)"));
        assert!(b.next(DriverKind::Sqlite, "(2)").is_err());
    }
}
