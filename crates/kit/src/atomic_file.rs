//! Replacing a file so that a reader (or a crash) sees the old version or the new one,
//! never a mix: write a temporary file in the same directory, sync it, rename it over.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::error::KitError;

/// Replaces `path` with `bytes`.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), KitError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let io = |e| KitError::io(path, e);
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Replaces `path` with `value` as pretty JSON and a final newline.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), KitError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| KitError::io(path, std::io::Error::other(e)))?;
    text.push('\n');
    write(path, text.as_bytes())
}
