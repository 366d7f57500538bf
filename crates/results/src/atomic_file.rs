//! Replacing a file so that a reader (or a crash) sees the old version or the new one,
//! never a mix: the new bytes go to a temporary file beside it (`.NAME.XXXXXX.tmp`,
//! created exclusively, so no symlink or earlier file is followed or reused), which is
//! synced and renamed over the name. The one implementation behind every file bmk
//! replaces (results files, results directories, report pages): every writer goes
//! through [`replace`] or [`replace_json`], so a symlinked target is refused everywhere.
//!
//! The temporary file is created with mode 0666 less the umask, the mode a plain
//! `File::create` gives: a results directory on a shared volume stays readable by the
//! people and tools that read it (a temporary file's usual 0600 would survive the
//! rename and lock them out).

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use tempfile::NamedTempFile;

use crate::error::Error;

/// The mode of a new file before the umask, as `File::create` uses.
const NEW_FILE_MODE: u32 = 0o666;

/// A new temporary file in `path`'s directory, named after it, to be renamed over it.
pub fn temp_beside(path: &Path) -> std::io::Result<NamedTempFile> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(NEW_FILE_MODE))
        .tempfile_in(dir)
}

/// Fails when `path` exists and is not a regular file: a symbolic link (the rename
/// would replace the link, but what a results file's name links to is not bmk's to
/// decide), a device or a directory.
pub fn refuse_non_regular(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "exists and is not a regular file (a symlink, device or directory): refusing to replace it",
        )),
        _ => Ok(()),
    }
}

/// Replaces `path` with `bytes`; a symbolic link (or any non-regular file) at `path`
/// is refused.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    refuse_non_regular(path)?;
    let mut tmp = temp_beside(path)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Replaces `path` with `bytes` ([`write`]), the failure naming the file.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write(path, bytes).map_err(|e| Error::io(path, e))
}

/// Replaces `path` with `value` as pretty JSON and a final newline.
pub fn replace_json<T: Serialize>(path: &Path, value: &T) -> Result<(), Error> {
    replace(path, &pretty_json(path, value)?)
}

/// `value` as pretty JSON and a final newline, as every record file holds it.
fn pretty_json<T: Serialize>(path: &Path, value: &T) -> Result<Vec<u8>, Error> {
    let mut text = serde_json::to_string_pretty(value).map_err(|source| Error::Json {
        path: path.to_path_buf(),
        source,
    })?;
    text.push('\n');
    Ok(text.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_symlinked_target_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "theirs\n").unwrap();
        let path = dir.path().join("level.json");
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        let e = write(&path, b"ours\n").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "theirs\n");
    }

    #[test]
    fn a_replaced_file_has_a_plain_files_mode_and_no_temporary_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        write(&path, b"old\n").unwrap();
        write(&path, b"new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        let plain = dir.path().join("plain");
        std::fs::File::create(&plain).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode(&path),
            mode(&plain),
            "the umask applies as to File::create"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
