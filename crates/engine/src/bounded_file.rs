//! Reading files bmk did not write itself, with a bound: option files, password files,
//! `bmk.toml`, scripts, and the results directories people mail around (`bmk report`,
//! `compare`, `merge`). Such a path may name a FIFO (whose open blocks until a writer
//! comes), a device (`/dev/zero` never ends) or a regular file far larger than any
//! honest one, so every reader goes through here:
//!
//! * the file is opened with `O_NONBLOCK` (so a FIFO cannot hold the open) and its type
//!   is checked on the open descriptor (`fstat`, so no rename between a check and the
//!   open can swap it): anything but a regular file is refused with one line saying
//!   what it is;
//! * at most a stated number of bytes is read ([`Limit`]): the caller either refuses a
//!   larger file ([`read_to_string`]) or keeps its first part and says so
//!   ([`read_capped`]).
//!
//! The limits are the ones `docs/results-dir.md` and `docs/options.md` state; each is
//! far above what bmk writes or a person types, and low enough that a hostile file
//! costs at most that much memory.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// A cap on the bytes read from one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The most bytes read.
    pub bytes: u64,
    /// What the file is, with its article, for messages (`an option file`).
    pub what: &'static str,
}

/// `--config-file`: option files are a few hundred bytes.
pub const CONFIG_FILE: Limit = Limit {
    bytes: 1 << 20,
    what: "an option file",
};
/// `bmk.toml`: the same cap as an option file.
pub const TARGETS_FILE: Limit = Limit {
    bytes: 1 << 20,
    what: "a targets file",
};
/// A password file (`--mysql-password-file`, `password_file`): one line.
pub const PASSWORD_FILE: Limit = Limit {
    bytes: 64 << 10,
    what: "a password file",
};
/// A Lua script given on the command line.
pub const SCRIPT_FILE: Limit = Limit {
    bytes: 16 << 20,
    what: "a script",
};
/// `run.json` and `level.json`: a few KiB (the server's variables included).
pub const RECORD_FILE: Limit = Limit {
    bytes: 16 << 20,
    what: "a results record",
};
/// A `--results` document (`result.json`), its intervals included: a day of 1 s
/// intervals is about 50 MB.
pub const RESULTS_FILE: Limit = Limit {
    bytes: 256 << 20,
    what: "a results file",
};
/// `intervals.jsonl`: a day of 1 s intervals with their histograms is a few hundred MB.
pub const INTERVALS_FILE: Limit = Limit {
    bytes: 1 << 30,
    what: "an interval file",
};
/// One line of `intervals.jsonl` (an interval with its histogram: a few KiB).
pub const INTERVAL_LINE: Limit = Limit {
    bytes: 16 << 20,
    what: "an interval line",
};
/// One capture file under `server/` or `os/`: an hour of 5 s samples of a busy
/// server's process list is about 150 MB.
pub const CAPTURE_FILE: Limit = Limit {
    bytes: 256 << 20,
    what: "a capture file",
};

impl Limit {
    /// The cap as people read it: `1 MiB`, `64 KiB`, `1 GiB`.
    pub fn shown(&self) -> String {
        show_bytes(self.bytes)
    }
}

/// `n` bytes in the largest binary unit that divides it: `64 KiB`, `16 MiB`.
pub fn show_bytes(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

/// What a non-regular file is, for the message that refuses it.
fn kind_of(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading if it is a regular file (after following links); a FIFO,
/// device, socket or directory is refused (`InvalidInput`: `a FIFO, not a regular
/// file`), without blocking.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let t = file.metadata()?.file_type();
    if !t.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}, not a regular file", kind_of(t)),
        ));
    }
    // Back to blocking reads: O_NONBLOCK means nothing for a regular file on Linux,
    // but a reader must not depend on that.
    // SAFETY: fcntl on a descriptor this function owns; no memory is passed.
    unsafe {
        let fd = file.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

/// The first bytes of a file, at most a [`Limit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// What was read.
    pub bytes: Vec<u8>,
    /// Whether the file goes on past the limit (only `bytes` were read).
    pub cut: bool,
}

/// Reads at most `limit` bytes of the regular file `path`; [`Capped::cut`] says
/// whether there was more.
pub fn read_capped(path: &Path, limit: Limit) -> io::Result<Capped> {
    let file = open_regular(path)?;
    read_capped_from(file, limit)
}

/// [`read_capped`] on a file already opened by [`open_regular`].
pub fn read_capped_from(file: File, limit: Limit) -> io::Result<Capped> {
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(size.min(limit.bytes) as usize);
    // One byte more than the cap tells a file of exactly the cap from a longer one.
    file.take(limit.bytes + 1).read_to_end(&mut bytes)?;
    let cut = bytes.len() as u64 > limit.bytes;
    bytes.truncate(limit.bytes as usize);
    Ok(Capped { bytes, cut })
}

/// The whole regular file `path` as bytes; a file longer than `limit` is refused
/// (`FileTooLarge`: `larger than 1 MiB, too large for an option file`).
pub fn read(path: &Path, limit: Limit) -> io::Result<Vec<u8>> {
    let c = read_capped(path, limit)?;
    if c.cut {
        return Err(too_large(limit));
    }
    Ok(c.bytes)
}

/// The whole regular file `path` as UTF-8 text, at most `limit` bytes (else refused).
pub fn read_to_string(path: &Path, limit: Limit) -> io::Result<String> {
    String::from_utf8(read(path, limit)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// The error of a file longer than `limit`.
pub fn too_large(limit: Limit) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "larger than {}, too large for {}",
            limit.shown(),
            limit.what
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const TINY: Limit = Limit {
        bytes: 8,
        what: "a test file",
    };

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("bmk-bounded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; creates a FIFO nobody writes to.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t = Instant::now();
        let e = read(&fifo, TINY).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(2));
        assert_eq!(e.to_string(), "a FIFO, not a regular file");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn devices_and_directories_are_refused_and_links_to_them_too() {
        let e = read(Path::new("/dev/zero"), TINY).unwrap_err();
        assert_eq!(e.to_string(), "a character device, not a regular file");
        let e = read(Path::new("/"), TINY).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        let dir = std::env::temp_dir().join(format!("bmk-bounded-l-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("zero");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = read_capped(&link, TINY).unwrap_err();
        assert_eq!(e.to_string(), "a character device, not a regular file");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reading_stops_at_the_limit() {
        let dir = std::env::temp_dir().join(format!("bmk-bounded-c-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exact = dir.join("exact");
        std::fs::write(&exact, b"12345678").unwrap();
        assert_eq!(read(&exact, TINY).unwrap(), b"12345678");
        let long = dir.join("long");
        std::fs::write(&long, b"123456789").unwrap();
        let c = read_capped(&long, TINY).unwrap();
        assert_eq!((c.bytes.as_slice(), c.cut), (&b"12345678"[..], true));
        let e = read_to_string(&long, TINY).unwrap_err();
        assert_eq!(
            e.to_string(),
            "larger than 8 bytes, too large for a test file"
        );
        assert_eq!(
            too_large(CONFIG_FILE).to_string(),
            "larger than 1 MiB, too large for an option file"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sizes_are_shown_in_binary_units() {
        assert_eq!(CONFIG_FILE.shown(), "1 MiB");
        assert_eq!(PASSWORD_FILE.shown(), "64 KiB");
        assert_eq!(INTERVALS_FILE.shown(), "1 GiB");
        assert_eq!(show_bytes(1000), "1000 bytes");
    }
}
