//! The test file set on disk: `test_file.0 .. test_file.N-1` in one directory.
//!
//! Creates them (`prepare`), checks them (before `run`), opens and maps them for a
//! run, and removes them (`cleanup`). It touches no other name: cleanup removes
//! at most the `N` files the options describe, never by pattern, and of those only the
//! ones bmk made (`ownership.rs`). No path is followed through a symlink: a test file
//! that is a symlink is refused, so a run can never write to a file elsewhere.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::config::{FileIoConfig, FileIoMode, IoMode};
use super::ownership::{FileId, OwnedFiles};
use crate::aligned::AlignedBuf;
use crate::SystemTestError;

/// Where the files are, how many, and how big each must be.
pub(crate) struct FileSet {
    dir: PathBuf,
    num: u32,
    file_size: u64,
}

/// What `prepare` wrote.
pub(crate) struct PrepareReport {
    pub(crate) bytes: u64,
    pub(crate) seconds: f64,
}

impl FileSet {
    pub(crate) fn in_dir(dir: PathBuf, num: u32, file_size: u64) -> FileSet {
        FileSet {
            dir,
            num,
            file_size,
        }
    }

    /// The name the user sees (`test_file.3`), relative to the directory.
    fn name(i: u32) -> String {
        format!("test_file.{i}")
    }

    fn path(&self, i: u32) -> PathBuf {
        self.dir.join(Self::name(i))
    }

    /// Writes every file from scratch to its full size, one block per write.
    pub(crate) fn create(
        &self,
        config: &FileIoConfig,
        out: &mut dyn Write,
    ) -> Result<PrepareReport, SystemTestError> {
        let mut buf = AlignedBuf::zeroed(config.block_size as usize)
            .map_err(|e| SystemTestError::file("cannot allocate a buffer for", &self.dir, e))?;
        fill_pattern(buf.bytes_mut());
        let started = Instant::now();
        let mut bytes = 0;
        let mut owned = OwnedFiles::load(&self.dir);
        for i in 0..self.num {
            let path = self.path(i);
            // As sysbench: a file already big enough is reused, a shorter one is
            // extended, whole blocks at a time from where it ends.
            let existing = match fs::symlink_metadata(&path) {
                Ok(m) if m.is_file() => m.len(),
                _ => 0,
            };
            let verb = if existing >= self.file_size {
                "Reusing existing"
            } else if existing > 0 {
                "Extending existing"
            } else {
                "Creating"
            };
            writeln!(out, "{verb} file {}", Self::name(i))?;
            out.flush()?;
            if existing >= self.file_size {
                continue;
            }
            // O_DIRECT is left out here: the last write of a file may be partial, and
            // the run is what measures direct I/O.
            let mut options = OpenOptions::new();
            options
                .write(true)
                .create(true)
                .custom_flags(sync_flags(config) | libc::O_NOFOLLOW);
            let file = options
                .open(&path)
                .map_err(|e| SystemTestError::file("cannot create", &path, nofollow(e)))?;
            let id = FileId::of_open(&file)
                .map_err(|e| SystemTestError::file("cannot examine", &path, e))?;
            // A file bmk extends is one it may remove; one it only reuses is not
            // claimed.
            owned.add(&Self::name(i), id);
            owned
                .save()
                .map_err(|e| SystemTestError::file("cannot record", &self.dir, e))?;
            let mut offset = existing;
            while offset < self.file_size {
                let len = (self.file_size - offset).min(buf.len() as u64) as usize;
                file.write_all_at(&buf.bytes()[..len], offset)
                    .map_err(|e| SystemTestError::file("cannot write", &path, e))?;
                offset += len as u64;
            }
            file.sync_all()
                .map_err(|e| SystemTestError::file("cannot flush", &path, e))?;
            bytes += self.file_size - existing;
        }
        Ok(PrepareReport {
            bytes,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Removes the files bmk made; a file that is already gone is not an error. Returns
    /// the names it left in place because bmk did not make them.
    pub(crate) fn remove(&self) -> Result<Vec<String>, SystemTestError> {
        let mut owned = OwnedFiles::load(&self.dir);
        let mut kept = Vec::new();
        for i in 0..self.num {
            let name = Self::name(i);
            let path = self.path(i);
            if !owned.owns(&name) {
                if fs::symlink_metadata(&path).is_ok() {
                    kept.push(name);
                }
                continue;
            }
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(SystemTestError::file("cannot remove", &path, e)),
            }
            owned.forget(&name);
        }
        owned
            .save()
            .map_err(|e| SystemTestError::file("cannot record", &self.dir, e))?;
        Ok(kept)
    }

    /// Checks that every file exists and is at least as big as the options say.
    pub(crate) fn check(&self) -> Result<(), SystemTestError> {
        for i in 0..self.num {
            let path = self.path(i);
            let mut short = None;
            let problem = match fs::symlink_metadata(&path) {
                Ok(m) if !m.is_file() => "is not a regular file".to_string(),
                Ok(m) if m.len() < self.file_size => {
                    short = Some((m.len(), self.file_size));
                    format!(
                        "has {} bytes, but the options need {} per file",
                        m.len(),
                        self.file_size
                    )
                }
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => "does not exist".to_string(),
                Err(e) => format!("cannot be examined ({e})"),
            };
            return Err(SystemTestError::NotPrepared {
                path: display_path(&path),
                problem,
                short,
            });
        }
        Ok(())
    }

    /// Opens (and in mmap mode maps) every file for a run.
    pub(crate) fn open(&self, config: &FileIoConfig) -> Result<OpenFiles, SystemTestError> {
        let create = config.mode == Some(FileIoMode::SeqWr);
        let mut flags = sync_flags(config);
        if config.flags.direct && config.io != IoMode::Mmap {
            flags |= libc::O_DIRECT;
        }
        let mut files = Vec::with_capacity(self.num as usize);
        let mut maps = Vec::new();
        let mut owned = OwnedFiles::load(&self.dir);
        for i in 0..self.num {
            let path = self.path(i);
            let existed = fs::symlink_metadata(&path).is_ok();
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(create)
                .truncate(false)
                .custom_flags(flags | libc::O_NOFOLLOW)
                .open(&path)
                .map_err(|e| {
                    SystemTestError::file("cannot open", display_path(&path), nofollow(e))
                })?;
            if !existed {
                // A sequential-write run made it: it is bmk's to clean up.
                let id = FileId::of_open(&file)
                    .map_err(|e| SystemTestError::file("cannot examine", &path, e))?;
                owned.add(&Self::name(i), id);
                owned
                    .save()
                    .map_err(|e| SystemTestError::file("cannot record", &self.dir, e))?;
            }
            if config.io == IoMode::Mmap {
                if create && file.metadata().map(|m| m.len()).unwrap_or(0) < self.file_size {
                    file.set_len(self.file_size)
                        .map_err(|e| SystemTestError::file("cannot extend", &path, e))?;
                }
                maps.push(
                    Mapping::new(&file, self.file_size as usize)
                        .map_err(|e| SystemTestError::file("cannot map", &path, e))?,
                );
            }
            files.push(file);
        }
        Ok(OpenFiles { files, maps })
    }
}

/// `O_NOFOLLOW` on a symlink fails with `ELOOP` ("too many levels of symbolic links"),
/// which does not say what is wrong here.
fn nofollow(e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        io::Error::other("it is a symbolic link, and test files are never followed through one")
    } else {
        e
    }
}

/// The path as the user named the directory: `test_file.3` for the current one.
fn display_path(path: &Path) -> PathBuf {
    path.strip_prefix(".")
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

fn sync_flags(config: &FileIoConfig) -> i32 {
    let mut flags = 0;
    if config.flags.sync {
        flags |= libc::O_SYNC;
    }
    if config.flags.dsync {
        flags |= libc::O_DSYNC;
    }
    flags
}

/// Fills `buf` with a fixed non-repeating byte pattern, so that compressing or
/// deduplicating storage cannot make written data vanish.
pub(crate) fn fill_pattern(buf: &mut [u8]) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let bytes = x.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

/// The files of a run, shared by its workers.
pub(crate) struct OpenFiles {
    pub(crate) files: Vec<File>,
    /// One shared read-write mapping per file, in mmap mode.
    pub(crate) maps: Vec<Mapping>,
}

/// A shared read-write mapping of a whole file.
pub(crate) struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain shared memory valid until `drop`; workers copy blocks
// in and out of it through raw pointers, as separate processes sharing the file would.
unsafe impl Send for Mapping {}
// SAFETY: see `Send`.
unsafe impl Sync for Mapping {}

impl Mapping {
    fn new(file: &File, len: usize) -> io::Result<Mapping> {
        use std::os::fd::AsRawFd;
        // SAFETY: maps `len` bytes of an open file, checked for failure; unmapped with
        // the same length in `drop`.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: ptr.cast(),
            len,
        })
    }

    /// Copies `dst.len()` bytes at `offset` out of the file.
    pub(crate) fn read(&self, offset: u64, dst: &mut [u8]) {
        let offset = offset as usize;
        assert!(offset + dst.len() <= self.len, "read past the mapping");
        // SAFETY: in bounds (checked above); `dst` is a distinct heap buffer.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(offset), dst.as_mut_ptr(), dst.len()) }
    }

    /// Copies `src` into the file at `offset`.
    pub(crate) fn write(&self, offset: u64, src: &[u8]) {
        let offset = offset as usize;
        assert!(offset + src.len() <= self.len, "write past the mapping");
        // SAFETY: in bounds (checked above); `src` is a distinct heap buffer.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(offset), src.len()) }
    }

    /// Writes the mapping's dirty pages back to the file and waits for them.
    pub(crate) fn sync(&self) -> io::Result<()> {
        // SAFETY: the whole mapping, which is valid until drop.
        let rc = unsafe { libc::msync(self.ptr.cast(), self.len, libc::MS_SYNC) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: mapped in `new` with this length.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}
