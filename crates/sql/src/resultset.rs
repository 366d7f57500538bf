//! Result sets: rows of text values (SQL `NULL` = `None`) in one compact buffer.

use std::sync::Arc;

/// Marker length for a NULL cell.
const NULL_LEN: u32 = u32::MAX;

/// One result set. Values are the text form the server would print (`"42"`,
/// `"2020-01-02"`); `NULL` is `None`. All cells live in one byte buffer so a result set
/// costs two allocations regardless of its size — and none when a caller reuses it with
/// [`Connection::execute_into`](crate::Connection::execute_into), which keeps its buffers
/// (see [`clear`](ResultSet::clear)). Column names are shared ([`Arc`]) with the
/// prepared statement that produced them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResultSet {
    /// Number of columns.
    pub nfields: usize,
    /// Column names.
    pub columns: Arc<[String]>,
    data: Vec<u8>,
    /// (offset, len) per cell, row-major; len == NULL_LEN for NULL.
    cells: Vec<(u32, u32)>,
}

impl ResultSet {
    /// An empty result set with these columns.
    pub fn new(columns: Vec<String>) -> ResultSet {
        ResultSet {
            nfields: columns.len(),
            columns: columns.into(),
            data: Vec::new(),
            cells: Vec::new(),
        }
    }

    /// An empty result set with `nfields` unnamed columns.
    pub fn with_nfields(nfields: usize) -> ResultSet {
        ResultSet {
            nfields,
            ..Default::default()
        }
    }

    /// An empty result set sharing these column names.
    pub fn with_columns(columns: Arc<[String]>) -> ResultSet {
        ResultSet {
            nfields: columns.len(),
            columns,
            data: Vec::new(),
            cells: Vec::new(),
        }
    }

    /// Empty the rows and set the columns, keeping the allocated buffers for reuse.
    pub fn reset(&mut self, columns: &Arc<[String]>) {
        self.nfields = columns.len();
        if !Arc::ptr_eq(&self.columns, columns) {
            self.columns = columns.clone();
        }
        self.data.clear();
        self.cells.clear();
    }

    /// Empty the result set (no columns, no rows), keeping the allocated buffers.
    pub fn clear(&mut self) {
        self.nfields = 0;
        if !self.columns.is_empty() {
            self.columns = Arc::default();
        }
        self.data.clear();
        self.cells.clear();
    }

    /// The cell buffer, for drivers that write cells in place with
    /// [`end_cell`](ResultSet::end_cell).
    pub(crate) fn data_mut(&mut self) -> &mut Vec<u8> {
        &mut self.data
    }

    /// Close a cell whose bytes were appended to [`data_mut`](ResultSet::data_mut) since
    /// offset `start`.
    pub(crate) fn end_cell(&mut self, start: usize) {
        self.cells
            .push((start as u32, (self.data.len() - start) as u32));
    }

    /// Append a NULL cell.
    pub(crate) fn push_null(&mut self) {
        self.cells.push((0, NULL_LEN));
    }

    /// Replace this result set by `other`, reusing this one's buffers.
    pub fn assign_from(&mut self, other: &ResultSet) {
        self.reset(&other.columns);
        self.data.extend_from_slice(&other.data);
        self.cells.extend_from_slice(&other.cells);
    }

    /// Append one cell to the row being built (rows are complete after `nfields` cells).
    pub fn push_cell(&mut self, value: Option<&[u8]>) {
        match value {
            None => self.cells.push((0, NULL_LEN)),
            Some(v) => {
                let off = self.data.len() as u32;
                self.data.extend_from_slice(v);
                self.cells.push((off, v.len() as u32));
            }
        }
    }

    /// Append one cell whose text is written by `f` into the buffer.
    pub fn push_cell_with(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        let off = self.data.len();
        f(&mut self.data);
        self.cells
            .push((off as u32, (self.data.len() - off) as u32));
    }

    /// Append a whole row.
    pub fn push_row<'a>(&mut self, row: impl IntoIterator<Item = Option<&'a [u8]>>) {
        for v in row {
            self.push_cell(v);
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.cells.len().checked_div(self.nfields).unwrap_or(0)
    }

    /// The value at (`row`, `col`): `None` for NULL or out of range.
    pub fn get(&self, row: usize, col: usize) -> Option<&[u8]> {
        if col >= self.nfields {
            return None;
        }
        let (off, len) = *self.cells.get(row * self.nfields + col)?;
        if len == NULL_LEN {
            None
        } else {
            Some(&self.data[off as usize..(off + len) as usize])
        }
    }

    /// The value at (`row`, `col`) as UTF-8 text (lossy), `None` for NULL.
    pub fn get_str(&self, row: usize, col: usize) -> Option<String> {
        self.get(row, col)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// Row `row` as a vector of cells (`None` = NULL); `None` past the last row.
    pub fn row(&self, row: usize) -> Option<Vec<Option<&[u8]>>> {
        (row < self.nrows()).then(|| (0..self.nfields).map(|c| self.get(row, c)).collect())
    }

    /// Iterate over rows.
    pub fn rows(&self) -> impl Iterator<Item = Vec<Option<&[u8]>>> + '_ {
        (0..self.nrows()).filter_map(move |r| self.row(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_rows() {
        let mut rs = ResultSet::new(vec!["a".into(), "b".into()]);
        rs.push_row([Some(&b"1"[..]), None]);
        rs.push_row([Some(&b""[..]), Some(&b"xyz"[..])]);
        assert_eq!(rs.nrows(), 2);
        assert_eq!(rs.get(0, 0), Some(&b"1"[..]));
        assert_eq!(rs.get(0, 1), None);
        assert_eq!(rs.get(1, 0), Some(&b""[..]));
        assert_eq!(rs.get_str(1, 1).as_deref(), Some("xyz"));
        assert_eq!(rs.get(2, 0), None);
        assert!(rs.row(2).is_none());
        assert_eq!(rs.rows().count(), 2);
        assert_eq!(ResultSet::with_nfields(0).nrows(), 0);
    }
}
