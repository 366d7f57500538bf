//! Replacing a file so that a reader (or a crash) sees the old version or the new one,
//! never a mix (`bmk_report::atomic_file` does it), with the kit's errors.

use std::path::Path;

use serde::Serialize;

use crate::error::KitError;

/// Replaces `path` with `bytes` (`bmk_report::atomic_file::write`).
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), KitError> {
    bmk_report::atomic_file::write(path, bytes).map_err(|e| KitError::io(path, e))
}

/// Replaces `path` with `value` as pretty JSON and a final newline.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), KitError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| KitError::io(path, std::io::Error::other(e)))?;
    text.push('\n');
    write(path, text.as_bytes())
}
