//! Which test files bmk made: the record `.bmk-fileio` in the test directory.
//!
//! `cleanup` must remove only files that `prepare` (or a `seqwr` run, which creates what
//! is missing) made, never a same-named file someone else put there — with
//! `--file-num=8` after a `prepare` of 4, `test_file.7` is not bmk's. A file's name says
//! nothing about who made it, so each file bmk creates is recorded by name, device and
//! inode number; a file whose name is in the record but whose identity differs (it was
//! replaced) is not bmk's either. The record is one line per file, `NAME DEV INODE`,
//! replaced atomically (a temporary file in the same directory, then a rename).
//!
//! This module only keeps the record; opening and removing files is `files.rs`'s job.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The record's file name in the test directory (hidden from `ls`).
pub(crate) const RECORD_NAME: &str = ".bmk-fileio";

/// A file's identity on its filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The identity of what is at `path` itself (a symlink is not followed).
    pub(crate) fn of(path: &Path) -> io::Result<FileId> {
        let m = fs::symlink_metadata(path)?;
        Ok(FileId {
            dev: m.dev(),
            ino: m.ino(),
        })
    }

    /// The identity of an open file.
    pub(crate) fn of_open(file: &fs::File) -> io::Result<FileId> {
        let m = file.metadata()?;
        Ok(FileId {
            dev: m.dev(),
            ino: m.ino(),
        })
    }
}

/// The files bmk made in one directory.
#[derive(Debug, Default)]
pub(crate) struct OwnedFiles {
    dir: PathBuf,
    files: BTreeMap<String, FileId>,
}

impl OwnedFiles {
    /// Reads the record of `dir` (empty when there is none or it does not parse).
    pub(crate) fn load(dir: &Path) -> OwnedFiles {
        let text = fs::read_to_string(dir.join(RECORD_NAME)).unwrap_or_default();
        let files = text
            .lines()
            .filter_map(|l| {
                let mut f = l.split(' ');
                let name = f.next()?.to_string();
                let dev = f.next()?.parse().ok()?;
                let ino = f.next()?.parse().ok()?;
                Some((name, FileId { dev, ino }))
            })
            .collect();
        OwnedFiles {
            dir: dir.to_path_buf(),
            files,
        }
    }

    /// Notes that bmk made `name`, now identified by `id`.
    pub(crate) fn add(&mut self, name: &str, id: FileId) {
        self.files.insert(name.to_string(), id);
    }

    /// Forgets `name`.
    pub(crate) fn forget(&mut self, name: &str) {
        self.files.remove(name);
    }

    /// Whether what is at `dir/name` now is the file bmk made under that name.
    pub(crate) fn owns(&self, name: &str) -> bool {
        match (self.files.get(name), FileId::of(&self.dir.join(name))) {
            (Some(recorded), Ok(now)) => *recorded == now,
            _ => false,
        }
    }

    /// Writes the record back (or removes it when no file is left in it).
    pub(crate) fn save(&self) -> io::Result<()> {
        let path = self.dir.join(RECORD_NAME);
        if self.files.is_empty() {
            return match fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        }
        let mut tmp = tempfile::Builder::new()
            .prefix(".bmk-fileio.")
            .tempfile_in(&self.dir)?;
        for (name, id) in &self.files {
            writeln!(tmp, "{name} {} {}", id.dev, id.ino)?;
        }
        tmp.as_file().sync_all()?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_file_is_owned_until_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("test_file.0");
        fs::write(&a, b"x").unwrap();
        let mut owned = OwnedFiles::load(dir.path());
        owned.add("test_file.0", FileId::of(&a).unwrap());
        owned.save().unwrap();

        let owned = OwnedFiles::load(dir.path());
        assert!(owned.owns("test_file.0"));
        assert!(!owned.owns("test_file.1"));

        // Replaced by another file of the same name: no longer bmk's.
        let keep = fs::File::open(&a).unwrap(); // keeps the old inode from being reused
        fs::remove_file(&a).unwrap();
        fs::write(&a, b"someone else's").unwrap();
        assert!(!owned.owns("test_file.0"));
        drop(keep);

        let mut owned = owned;
        owned.forget("test_file.0");
        owned.save().unwrap();
        assert!(!dir.path().join(RECORD_NAME).exists());
    }
}
