//! `fileio`: block I/O on a set of prepared files.
//!
//! `prepare` writes `test_file.0 .. test_file.N-1` (each `--file-total-size / --file-num`
//! bytes), `run` does one block request per event, `cleanup` removes exactly those
//! files. The files live in the current directory unless the caller chose another
//! with [`crate::BuildParams::file_dir`].
//!
//! Sequential modes share one position among all threads: each event takes the next
//! block (or the next run of `--file-merged-requests` blocks, never crossing a file's
//! end) of the whole set, file after file, and starts over at the first file after the
//! last — so a run is limited by `--time` or `--events`, as in the reference. Random
//! modes pick a file and a block uniformly; `rndrw` reads with probability
//! `ratio / (1 + ratio)`.
//!
//! Flushes belong to the event that triggers them and count as "other" operations:
//! after every write to its file with `--file-fsync-all`, otherwise of every file after
//! every `--file-fsync-freq` requests of a thread, and of every file when a thread
//! finishes with `--file-fsync-end`. Read-only modes never flush.

mod aio;
mod config;
mod files;
mod ownership;
mod worker;

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use bmk_engine::options::{OptKind, OptSpec, OptionSet};
use bmk_engine::{Worker, WorkerError, Workload};

use crate::build_params::BuildParams;
use crate::error::SystemTestError;
use crate::sizes;
pub use config::FileIoMode;
use config::{FileIoConfig, IoMode};
use files::{FileSet, OpenFiles};

pub(crate) fn options() -> Vec<OptSpec> {
    let int = |name: &str, default: &str, min: f64, help: &str| {
        OptSpec::new(name, OptKind::Int, Some(default), help).with_range(min, i32::MAX as f64)
    };
    vec![
        int("file-num", "128", 1.0, "number of test files"),
        int(
            "file-block-size",
            "16384",
            1.0,
            "bytes in one I/O request (all modes)",
        ),
        OptSpec::new(
            "file-total-size",
            OptKind::Size,
            Some("2G"),
            "combined size of the test files",
        ),
        OptSpec::new(
            "file-test-mode",
            OptKind::String,
            None,
            "I/O pattern of the run (required by run)",
        )
        .with_choices(&FileIoMode::ALL.map(FileIoMode::name)),
        OptSpec::new(
            "file-io-mode",
            OptKind::String,
            Some("sync"),
            "issue requests with blocking calls, native asynchronous I/O, or copies to and from memory maps",
        )
        .with_choices(&["sync", "async", "mmap"]),
        int(
            "file-async-backlog",
            "128",
            1.0,
            "asynchronous requests each thread keeps in flight",
        ),
        OptSpec::new(
            "file-extra-flags",
            OptKind::List,
            Some(""),
            "extra flags for opening the files (O_SYNC, O_DSYNC, O_DIRECT)",
        )
        .with_choices(&["sync", "dsync", "direct"]),
        int(
            "file-fsync-freq",
            "100",
            0.0,
            "flush every file after this many requests of a thread (0 = never)",
        ),
        OptSpec::new(
            "file-fsync-all",
            OptKind::Bool,
            Some("off"),
            "flush a file after every write to it",
        ),
        OptSpec::new(
            "file-fsync-end",
            OptKind::Bool,
            Some("on"),
            "flush every file when a thread finishes",
        ),
        OptSpec::new(
            "file-fsync-mode",
            OptKind::String,
            Some("fsync"),
            "system call that flushes a file",
        )
        .with_choices(&["fsync", "fdatasync"]),
        int(
            "file-merged-requests",
            "0",
            0.0,
            "join up to this many adjacent blocks into one sequential request (0 = never)",
        ),
        OptSpec::new(
            "file-rw-ratio",
            OptKind::Double,
            Some("1.5"),
            "reads per write in the combined random test",
        )
        .with_range(0.0, 1e9),
    ]
}

/// The configured `fileio` test.
pub(crate) struct FileIoTest {
    config: Arc<FileIoConfig>,
    set: FileSet,
    /// The files opened for a run, by the first worker that needs them.
    open: Mutex<Option<Arc<OpenFiles>>>,
    /// Next request number of the shared sequential walk.
    position: Arc<AtomicU64>,
}

impl FileIoTest {
    pub(crate) fn from_options(
        opts: &OptionSet,
        params: &BuildParams,
    ) -> Result<FileIoTest, SystemTestError> {
        let config = FileIoConfig::from_options(opts, params)?;
        let dir = params
            .file_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        Ok(FileIoTest {
            set: FileSet::in_dir(dir, config.num, config.file_size),
            config: Arc::new(config),
            open: Mutex::new(None),
            position: Arc::new(AtomicU64::new(0)),
        })
    }

    pub(crate) fn mode(&self) -> Option<FileIoMode> {
        self.config.mode
    }

    pub(crate) fn header_lines(&self) -> Vec<String> {
        let c = &self.config;
        let mut lines = vec![
            format!("Extra file open flags: {}", c.flags.describe()),
            format!("{} files, {} each", c.num, sizes::human(c.file_size)),
            format!("{} total file size", sizes::human(c.total_size)),
            format!("Block size {}", sizes::human(c.block_size)),
        ];
        if c.merged > 0 {
            lines.push(format!(
                "Merging requests up to {} for sequential IO.",
                sizes::human(c.merged * c.block_size)
            ));
        }
        if c.mode.is_some_and(|m| !m.is_sequential()) {
            lines.push(format!("Number of IO requests: {}", c.events));
            lines.push(format!(
                "Read/Write ratio for combined random IO test: {:.2}",
                c.rw_ratio
            ));
        }
        if c.fsync_all {
            lines.push(format!(
                "Calling {} after each write operation.",
                c.flush_call()
            ));
        } else if c.fsync_freq > 0 {
            lines.push(format!(
                "Periodic FSYNC enabled, calling {} each {} requests.",
                c.flush_call(),
                c.fsync_freq
            ));
        }
        if c.fsync_end {
            lines.push(format!(
                "Calling {} at the end of test, Enabled.",
                c.flush_call()
            ));
        }
        lines.push(
            match c.io {
                IoMode::Sync => "Using synchronous I/O mode",
                IoMode::Async => "Using asynchronous I/O mode",
                IoMode::Mmap => "Using fast mmaped I/O mode",
            }
            .to_string(),
        );
        if let Some(mode) = c.mode {
            lines.push(format!("Doing {} test", mode.description()));
        }
        lines
    }

    pub(crate) fn prepare(&self, out: &mut dyn Write) -> Result<(), SystemTestError> {
        let c = &self.config;
        // sysbench's line: sizes in whole KiB and MiB, rounded down.
        writeln!(
            out,
            "{} files, {}Kb each, {}Mb total",
            c.num,
            c.file_size / 1024,
            c.file_size * u64::from(c.num) / (1024 * 1024)
        )?;
        writeln!(out, "Creating files for the test...")?;
        writeln!(out, "Extra file open flags: {}", c.flags.describe())?;
        let report = self.set.create(c, out)?;
        if report.bytes == 0 {
            writeln!(out, "No bytes written.")?;
            return Ok(());
        }
        writeln!(
            out,
            "{} bytes written in {:.2} seconds ({:.2} MiB/sec).",
            report.bytes,
            report.seconds,
            if report.seconds > 0.0 {
                report.bytes as f64 / (1024.0 * 1024.0) / report.seconds
            } else {
                0.0
            }
        )?;
        Ok(())
    }

    pub(crate) fn cleanup(&self, out: &mut dyn Write) -> Result<(), SystemTestError> {
        writeln!(out, "Removing test files...")?;
        out.flush()?;
        for name in self.set.remove()? {
            writeln!(
                out,
                "WARNING: {name} was not made by 'fileio prepare' here: left in place"
            )?;
        }
        Ok(())
    }

    /// What `run` needs before it starts: a test mode and prepared files.
    pub(crate) fn check_ready(&self) -> Result<(), SystemTestError> {
        let mode = self
            .config
            .mode
            .ok_or(SystemTestError::MissingOption("file-test-mode"))?;
        // Sequential write creates what is missing; every other mode needs the files.
        if mode != FileIoMode::SeqWr {
            self.set.check()?;
        }
        Ok(())
    }

    fn open_files(&self) -> Result<Arc<OpenFiles>, WorkerError> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(files) = &*open {
            return Ok(files.clone());
        }
        let files = Arc::new(
            self.set
                .open(&self.config)
                .map_err(|e| WorkerError::new(e.to_string()))?,
        );
        *open = Some(files.clone());
        Ok(files)
    }
}

impl Workload for FileIoTest {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        let mode = self
            .config
            .mode
            .ok_or_else(|| WorkerError::new("Missing required argument: --file-test-mode"))?;
        let files = self.open_files()?;
        Ok(Box::new(worker::FileWorker::new(
            self.config.clone(),
            mode,
            files,
            self.position.clone(),
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::config::ExtraFlags;
    use super::*;

    fn config(args: &[(&str, &str)]) -> Result<FileIoConfig, SystemTestError> {
        let mut opts = OptionSet::new();
        opts.declare(options());
        for (k, v) in args {
            opts.set(k, v)?;
        }
        FileIoConfig::from_options(&opts, &BuildParams::default())
    }

    #[test]
    fn defaults_match_the_reference() {
        let c = config(&[]).unwrap();
        assert_eq!(c.num, 128);
        assert_eq!(c.block_size, 16384);
        assert_eq!(c.total_size, 2 << 30);
        assert_eq!(c.file_size, 16 << 20);
        assert_eq!(c.mode, None);
        assert_eq!(c.io, IoMode::Sync);
        assert_eq!(c.backlog, 128);
        assert_eq!(c.flags, ExtraFlags::default());
        assert_eq!(c.fsync_freq, 100);
        assert!(!c.fsync_all && c.fsync_end && !c.fdatasync);
        assert_eq!(c.merged, 0);
        assert_eq!(c.rw_ratio, 1.5);
    }

    #[test]
    fn bad_combinations_name_the_option() {
        let err = config(&[("file-extra-flags", "direct"), ("file-block-size", "1000")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "invalid value '1000' for option --file-block-size: expected a multiple of 512 \
             with --file-extra-flags=direct"
        );
        let err = config(&[("file-num", "4"), ("file-total-size", "32K")])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("invalid value '32K' for option --file-total-size"),
            "{err}"
        );
        let err = config(&[("file-extra-flags", "sync,odd")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--file-extra-flags"), "{err}");
    }

    #[test]
    fn header_follows_the_reference_wording() {
        let mut opts = OptionSet::new();
        opts.declare(options());
        opts.set("file-num", "3").unwrap();
        opts.set("file-total-size", "5M").unwrap();
        opts.set("file-test-mode", "rndrw").unwrap();
        let test = FileIoTest::from_options(&opts, &BuildParams::default()).unwrap();
        assert_eq!(
            test.header_lines(),
            [
                "Extra file open flags: (none)",
                "3 files, 1.6667MiB each",
                "5MiB total file size",
                "Block size 16KiB",
                "Number of IO requests: 0",
                "Read/Write ratio for combined random IO test: 1.50",
                "Periodic FSYNC enabled, calling fsync() each 100 requests.",
                "Calling fsync() at the end of test, Enabled.",
                "Using synchronous I/O mode",
                "Doing random r/w test",
            ]
        );
    }
}
