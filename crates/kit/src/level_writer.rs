//! One level of a results directory as it runs: `level.json` (rewritten atomically
//! when the measured part starts and when it ends) and `intervals.jsonl` (one whole line
//! per report interval, in one write, cut back when a write fails part-way, so the
//! file always parses). The level's `result.json` is the `--results` document, written
//! by the caller to [`LevelWriter::result_path`].
//!
//! A full disk must not leave `level.json` saying `running` or `completed`: the folder
//! holds a small reserve file ([`RESERVE_FILE`], [`RESERVE_BYTES`]) from the start,
//! which [`LevelWriter::finish`] deletes before it records a failure, so the last
//! rewrite of `level.json` (and the run's `run.json`) has room.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use bmk_engine::IntervalStats;
use bmk_results::results_dir::{
    self, IntervalLine, LevelInfo, DIR_SCHEMA_VERSION, INTERVALS_FILE, LEVEL_FILE,
    LEVEL_SCHEMA_NAME, RESULT_FILE,
};

use bmk_results::append_file::AppendFile;

use crate::error::KitError;
use crate::host_cpu::CpuSnapshot;
use bmk_results::dir_writer;

/// The reserve file of a level folder: room kept for recording a failure.
pub const RESERVE_FILE: &str = ".bmk-reserve";

/// The reserve's size: room for `level.json`, `run.json` (with the server's settings)
/// and `summary.csv` next to their old versions while they are replaced.
pub const RESERVE_BYTES: usize = 1 << 20;

/// Nanoseconds since the Unix epoch, now.
pub fn unix_ns_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The 1-based index in a folder name `level-0007`.
fn index_of(dir: &Path) -> u32 {
    dir.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("level-"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// An open level folder.
#[derive(Debug)]
pub struct LevelWriter {
    dir: PathBuf,
    info: LevelInfo,
    intervals: AppendFile,
    percentiles: Vec<f64>,
    /// The CPU clocks at the measured start, for `level.json`'s `cpu`.
    cpu_start: Option<CpuSnapshot>,
    /// Whether the measured start is the run's planned instant (see
    /// [`LevelWriter::measuring_at`]), so interval ends are stamped on its grid.
    planned: bool,
}

impl LevelWriter {
    /// Opens `dir` for a level of `users` (created if missing). When the kit has
    /// already put a `level.json` there (index, repeat, processes), that is kept;
    /// otherwise the index comes from the folder name. `percentiles` are those each
    /// interval line stores.
    pub fn open(
        dir: &Path,
        users: u32,
        warmup_s: f64,
        percentiles: Vec<f64>,
    ) -> Result<LevelWriter, KitError> {
        std::fs::create_dir_all(dir).map_err(|e| KitError::io(dir, e))?;
        let level_file = dir.join(LEVEL_FILE);
        let mut info = match results_dir::read_json::<LevelInfo>(&level_file) {
            Ok(info) => info,
            Err(_) => LevelInfo {
                schema: LEVEL_SCHEMA_NAME.to_string(),
                schema_version: DIR_SCHEMA_VERSION,
                index: index_of(dir),
                repeat: 1,
                processes: 1,
                ..LevelInfo::default()
            },
        };
        info.users = users;
        info.warmup_s = warmup_s;
        info.status = "starting".into();
        make_reserve(dir);
        let path = dir.join(INTERVALS_FILE);
        let intervals = AppendFile::open(&path).map_err(|e| KitError::io(&path, e))?;
        let writer = LevelWriter {
            dir: dir.to_path_buf(),
            info,
            intervals,
            percentiles,
            cpu_start: None,
            planned: false,
        };
        writer.write_info()?;
        Ok(writer)
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the level's `--results` document goes.
    pub fn result_path(&self) -> PathBuf {
        self.dir.join(RESULT_FILE)
    }

    /// The level's record as written so far.
    pub fn info(&self) -> &LevelInfo {
        &self.info
    }

    fn write_info(&self) -> Result<(), KitError> {
        Ok(dir_writer::write_level_info(&self.dir, &self.info)?)
    }

    /// The measured part starts now.
    pub fn measuring(&mut self) -> Result<(), KitError> {
        // The instant first: the CPU reading walks /proc, which takes a few ms.
        self.info.start_unix_ns = unix_ns_now();
        self.planned = false;
        self.start_cpu_and_write()
    }

    /// The measured part starts at `start_unix_ns`, the instant the run released its
    /// workers at (plus the warm-up): the engine counts its intervals from it, so each
    /// interval's end is stamped `start + its time` rather than when this process got
    /// round to writing it (late by however long a loaded host takes to wake it).
    pub fn measuring_at(&mut self, start_unix_ns: u64) -> Result<(), KitError> {
        self.info.start_unix_ns = start_unix_ns;
        self.planned = true;
        self.start_cpu_and_write()
    }

    fn start_cpu_and_write(&mut self) -> Result<(), KitError> {
        self.cpu_start = Some(CpuSnapshot::take(false));
        self.info.status = "running".into();
        self.write_info()
    }

    /// Appends one report interval, ended now (on the planned grid after
    /// [`LevelWriter::measuring_at`]).
    pub fn interval(&mut self, stats: &IntervalStats) -> Result<(), KitError> {
        let end = if self.planned {
            self.info.start_unix_ns + (stats.time_total * 1e9).round() as u64
        } else {
            unix_ns_now()
        };
        let line = IntervalLine::from_interval(stats, &self.percentiles, end)?;
        let mut text = line.to_line()?;
        text.push('\n');
        // One write of the whole line, cut back if it fails part-way.
        self.intervals
            .append(text.as_bytes())
            .map_err(|e| KitError::io(self.intervals.path(), e))
    }

    /// Records the run identity of the process writing the level.
    pub fn set_run_id(&mut self, run_id: Option<String>) {
        self.info.run_id = run_id;
    }

    /// The level ended with `status` (`completed`, `interrupted`, ...), or, with a
    /// `reason`, `failed`: the reserve is given up first, so that a full disk still
    /// has room for this last `level.json`.
    pub fn finish(&mut self, status: &str, reason: Option<&str>) -> Result<(), KitError> {
        if self.info.start_unix_ns == 0 {
            self.info.start_unix_ns = unix_ns_now();
        }
        self.info.end_unix_ns = Some(unix_ns_now());
        self.info.cpu = self
            .cpu_start
            .as_ref()
            .map(|start| start.until(&CpuSnapshot::take(false)));
        self.info.status = status.to_string();
        self.info.reason = reason.map(str::to_string);
        let _ = self.intervals.sync();
        let _ = std::fs::remove_file(self.dir.join(RESERVE_FILE));
        self.write_info()
    }
}

/// Writes the level's reserve file. Best effort: without it a full disk may leave the
/// last `level.json` unwritten (the earlier one still parses).
fn make_reserve(dir: &Path) {
    let path = dir.join(RESERVE_FILE);
    if let Ok(mut f) = AppendFile::open(&path) {
        if std::fs::metadata(&path).map_or(0, |m| m.len()) < RESERVE_BYTES as u64 {
            let _ = f.append(&vec![0u8; RESERVE_BYTES]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_keeps_what_the_kit_put_there() {
        let dir = tempfile::tempdir().unwrap();
        let level = dir.path().join("level-0003");
        std::fs::create_dir(&level).unwrap();
        let planned = LevelInfo {
            schema: LEVEL_SCHEMA_NAME.into(),
            schema_version: DIR_SCHEMA_VERSION,
            index: 3,
            users: 8,
            repeat: 2,
            processes: 1,
            status: "starting".into(),
            ..LevelInfo::default()
        };
        dir_writer::write_level_info(&level, &planned).unwrap();
        let mut w = LevelWriter::open(&level, 8, 0.0, vec![95.0]).unwrap();
        w.measuring().unwrap();
        let stats = IntervalStats {
            time_total: 1.0,
            time_interval: 1.0,
            threads_running: 8,
            events: 10,
            counters: Default::default(),
            histogram: bmk_engine::latency::new_histogram(),
            queue_length: 0,
            concurrency: 0,
            rate_mode: false,
        };
        w.interval(&stats).unwrap();
        w.interval(&stats).unwrap();
        w.finish("completed", None).unwrap();
        assert!(!level.join(RESERVE_FILE).exists());
        let info: LevelInfo = results_dir::read_json(&level.join(LEVEL_FILE)).unwrap();
        assert_eq!((info.index, info.repeat, info.users), (3, 2, 8));
        assert_eq!(info.status, "completed");
        assert!(info.end_unix_ns.unwrap() >= info.start_unix_ns);
        let cpu = info.cpu.expect("the level's CPU is recorded");
        assert!(cpu.host_cpus >= 1 && cpu.wall_s >= 0.0, "{cpu:?}");
        let lines = results_dir::read_intervals(&level.join(INTERVALS_FILE)).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].record.events, 10);
        assert!(lines[0].end_unix_ns >= info.start_unix_ns);
    }

    #[test]
    fn a_planned_start_puts_interval_ends_on_its_grid() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = LevelWriter::open(dir.path(), 2, 0.0, vec![95.0]).unwrap();
        let start = 1_800_000_000_000_000_000;
        w.measuring_at(start).unwrap();
        let stats = IntervalStats {
            time_total: 2.0,
            time_interval: 1.0,
            threads_running: 2,
            events: 3,
            counters: Default::default(),
            histogram: bmk_engine::latency::new_histogram(),
            queue_length: 0,
            concurrency: 0,
            rate_mode: false,
        };
        w.interval(&stats).unwrap();
        let lines = results_dir::read_intervals(&dir.path().join(INTERVALS_FILE)).unwrap();
        assert_eq!(lines[0].end_unix_ns, start + 2_000_000_000);
        let info: LevelInfo = results_dir::read_json(&dir.path().join(LEVEL_FILE)).unwrap();
        assert_eq!(
            (info.start_unix_ns, info.status.as_str()),
            (start, "running")
        );
    }
}
