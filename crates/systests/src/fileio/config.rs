//! What `fileio`'s options say, checked: the request pattern, how requests are issued,
//! the file set's sizes and the flush policy.

use bmk_engine::options::{OptValue, OptionSet};

use crate::build_params::BuildParams;
use crate::error::SystemTestError;

/// The I/O pattern of a `fileio` run (`--file-test-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileIoMode {
    /// Sequential write (creates missing files).
    SeqWr,
    /// Sequential rewrite of prepared files.
    SeqRewr,
    /// Sequential read.
    SeqRd,
    /// Random read.
    RndRd,
    /// Random write.
    RndWr,
    /// Random reads and writes, `--file-rw-ratio` reads per write.
    RndRw,
}

impl FileIoMode {
    /// Every mode, in the order help lists them.
    pub const ALL: [FileIoMode; 6] = [
        FileIoMode::SeqWr,
        FileIoMode::SeqRewr,
        FileIoMode::SeqRd,
        FileIoMode::RndRd,
        FileIoMode::RndWr,
        FileIoMode::RndRw,
    ];

    /// The option value (`seqwr`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FileIoMode::SeqWr => "seqwr",
            FileIoMode::SeqRewr => "seqrewr",
            FileIoMode::SeqRd => "seqrd",
            FileIoMode::RndRd => "rndrd",
            FileIoMode::RndWr => "rndwr",
            FileIoMode::RndRw => "rndrw",
        }
    }

    /// Whether the mode walks the files in order.
    pub fn is_sequential(self) -> bool {
        matches!(
            self,
            FileIoMode::SeqWr | FileIoMode::SeqRewr | FileIoMode::SeqRd
        )
    }

    /// Whether the mode writes (and therefore flushes).
    pub fn writes(self) -> bool {
        !matches!(self, FileIoMode::SeqRd | FileIoMode::RndRd)
    }

    pub(super) fn description(self) -> &'static str {
        match self {
            FileIoMode::SeqWr => "sequential write (creation)",
            FileIoMode::SeqRewr => "sequential rewrite",
            FileIoMode::SeqRd => "sequential read",
            FileIoMode::RndRd => "random read",
            FileIoMode::RndWr => "random write",
            FileIoMode::RndRw => "random r/w",
        }
    }
}

/// How requests are issued (`--file-io-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IoMode {
    Sync,
    Async,
    Mmap,
}

/// Extra `open` flags (`--file-extra-flags`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ExtraFlags {
    pub(crate) sync: bool,
    pub(crate) dsync: bool,
    pub(crate) direct: bool,
}

impl ExtraFlags {
    /// The flags as sysbench lists them: `(none)`, or each of `sync `, `dsync ` and
    /// `directio` (the first two with the space sysbench leaves after them).
    pub(super) fn describe(self) -> String {
        if !(self.sync || self.dsync || self.direct) {
            return "(none)".to_string();
        }
        let mut text = String::new();
        for (on, name) in [
            (self.sync, "sync "),
            (self.dsync, "dsync "),
            (self.direct, "directio"),
        ] {
            if on {
                text.push_str(name);
            }
        }
        text
    }
}

/// Everything the options say, checked.
#[derive(Debug, Clone)]
pub(crate) struct FileIoConfig {
    pub(crate) num: u32,
    pub(crate) block_size: u64,
    pub(crate) total_size: u64,
    /// Bytes per file: total / num, rounded down.
    pub(crate) file_size: u64,
    pub(crate) mode: Option<FileIoMode>,
    pub(crate) io: IoMode,
    pub(crate) backlog: u32,
    pub(crate) flags: ExtraFlags,
    pub(crate) fsync_freq: u64,
    pub(crate) fsync_all: bool,
    pub(crate) fsync_end: bool,
    pub(crate) fdatasync: bool,
    pub(crate) merged: u64,
    pub(crate) rw_ratio: f64,
    /// `--events`, shown in the header of random modes.
    pub(crate) events: u64,
}

impl FileIoConfig {
    pub(super) fn from_options(
        opts: &OptionSet,
        params: &BuildParams,
    ) -> Result<FileIoConfig, SystemTestError> {
        let positive = |name: &str, default: i64, min: i64| -> Result<u64, SystemTestError> {
            let v = opts.int(name, default);
            if v < min {
                return Err(SystemTestError::bad_value(
                    name,
                    v,
                    &format!("a value of at least {min}"),
                ));
            }
            Ok(v as u64)
        };
        let num = positive("file-num", 128, 1)?;
        let num = u32::try_from(num)
            .map_err(|_| SystemTestError::bad_value("file-num", num, "at most 4294967295"))?;
        let block_size = positive("file-block-size", 16384, 1)?;
        let total_size = opts.int("file-total-size", 2 << 30).max(0) as u64;
        let file_size = total_size / u64::from(num);
        if file_size < block_size {
            return Err(SystemTestError::bad_value(
                "file-total-size",
                opts.raw("file-total-size").unwrap_or_default(),
                &format!(
                    "at least --file-num x --file-block-size = {} bytes, so that \
                     every file holds a block",
                    u64::from(num) * block_size
                ),
            ));
        }
        let mode = match opts.string("file-test-mode") {
            None => None,
            Some(s) => Some(
                FileIoMode::ALL
                    .into_iter()
                    .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
                    .ok_or_else(|| {
                        SystemTestError::bad_value(
                            "file-test-mode",
                            &s,
                            "one of: seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw",
                        )
                    })?,
            ),
        };
        let io = match opts
            .string("file-io-mode")
            .unwrap_or_default()
            .to_ascii_lowercase()
            .as_str()
        {
            "async" => IoMode::Async,
            "mmap" => IoMode::Mmap,
            _ => IoMode::Sync,
        };
        let mut flags = ExtraFlags::default();
        for flag in opts.list("file-extra-flags") {
            match flag.to_ascii_lowercase().as_str() {
                "sync" => flags.sync = true,
                "dsync" => flags.dsync = true,
                "direct" => flags.direct = true,
                "" => {}
                _ => {
                    return Err(SystemTestError::bad_value(
                        "file-extra-flags",
                        opts.raw("file-extra-flags").unwrap_or_default(),
                        "a comma-separated list of: sync, dsync, direct",
                    ))
                }
            }
        }
        if flags.direct && block_size % 512 != 0 {
            return Err(SystemTestError::bad_value(
                "file-block-size",
                block_size,
                "a multiple of 512 with --file-extra-flags=direct",
            ));
        }
        let backlog = positive("file-async-backlog", 128, 1)?;
        let backlog = u32::try_from(backlog).map_err(|_| {
            SystemTestError::bad_value("file-async-backlog", backlog, "at most 65536")
        })?;
        let rw_ratio = opts.double("file-rw-ratio", 1.5);
        if !(rw_ratio >= 0.0 && rw_ratio.is_finite()) {
            return Err(SystemTestError::bad_value(
                "file-rw-ratio",
                rw_ratio,
                "a number of at least 0",
            ));
        }
        Ok(FileIoConfig {
            num,
            block_size,
            total_size,
            file_size,
            mode,
            io,
            backlog,
            flags,
            fsync_freq: positive("file-fsync-freq", 100, 0)?,
            fsync_all: opts.flag("file-fsync-all"),
            fsync_end: opts
                .get("file-fsync-end")
                .unwrap_or(OptValue::Bool(true))
                .as_bool(),
            fdatasync: opts
                .string("file-fsync-mode")
                .is_some_and(|m| m.eq_ignore_ascii_case("fdatasync")),
            merged: positive("file-merged-requests", 0, 0)?,
            rw_ratio,
            events: params.events,
        })
    }

    /// Whole blocks in one file: the unit of random offsets.
    pub(crate) fn blocks_per_file(&self) -> u64 {
        self.file_size / self.block_size
    }

    /// Blocks in one sequential request.
    pub(crate) fn blocks_per_request(&self) -> u64 {
        self.merged.max(1)
    }

    pub(super) fn flush_call(&self) -> &'static str {
        if self.fdatasync {
            "fdatasync()"
        } else {
            "fsync()"
        }
    }
}
