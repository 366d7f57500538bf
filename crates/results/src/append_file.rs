//! Appending records (an interval line, a capture sample) to a results file so that the
//! file always parses: each record goes in one `write` of the whole record, and when
//! that fails part-way (a full disk, a file-size limit) the file is cut back to where
//! the record began, so no torn record is left behind. The one implementation behind
//! every results file bmk appends to (`intervals.jsonl`, the capture files).
//!
//! The file is opened with `O_NOFOLLOW` (a symbolic link at the name is refused, not
//! written through: a results directory is no place for links to elsewhere) and
//! `O_NONBLOCK` (a FIFO at the name cannot hold the open), and is refused unless it is
//! a regular file. New files get mode 0666 less the umask, as `File::create` gives.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A results file open for appending whole records.
#[derive(Debug)]
pub struct AppendFile {
    file: File,
    path: PathBuf,
    /// The length of the file after the last whole record.
    good_len: u64,
}

impl AppendFile {
    /// Opens `path` for appending, creating it when missing. A symbolic link, FIFO,
    /// device or directory at `path` is refused.
    pub fn open(path: &Path) -> io::Result<AppendFile> {
        let file = File::options()
            .create(true)
            .append(true)
            .mode(0o666)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| match e.raw_os_error() {
                // What O_NOFOLLOW says of a link at the name.
                Some(libc::ELOOP) => io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a symbolic link: refusing to write through it",
                ),
                _ => e,
            })?;
        let meta = file.metadata()?;
        if !meta.file_type().is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file: refusing to write to it",
            ));
        }
        Ok(AppendFile {
            file,
            path: path.to_path_buf(),
            good_len: meta.len(),
        })
    }

    /// The file's name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `record` whole, or not at all: on a failed or short write the file is cut
    /// back to its length before, and the error returned.
    pub fn append(&mut self, record: &[u8]) -> io::Result<()> {
        match self.file.write_all(record) {
            Ok(()) => {
                self.good_len += record.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Best effort: if even this fails, the reader still skips a torn last
                // line (it has no newline), which is the best left to do.
                let _ = self.file.set_len(self.good_len);
                Err(e)
            }
        }
    }

    /// Flushes the file to stable storage.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_all()
    }
}

/// Appends `record` to `path` whole or not at all ([`AppendFile`]), opening and closing
/// the file around it.
pub fn append_once(path: &Path, record: &[u8]) -> io::Result<()> {
    AppendFile::open(path)?.append(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbolic_link_or_fifo_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "x\n").unwrap();
        let link = dir.path().join("intervals.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = AppendFile::open(&link).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a symbolic link: refusing to write through it"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "x\n");

        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; makes a FIFO nobody reads.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No reader: the non-blocking open fails at once instead of waiting for one.
        assert!(AppendFile::open(&fifo).is_err());
    }

    #[test]
    fn records_are_appended_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        let mut f = AppendFile::open(&path).unwrap();
        f.append(b"{\"a\":1}\n").unwrap();
        f.append(b"{\"a\":2}\n").unwrap();
        append_once(&path, b"{\"a\":3}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n"
        );
    }
}
