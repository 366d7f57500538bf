//! Reading what a run left on disk into memory: a results directory with its levels, a
//! single level folder, or a plain `--results` file.
//!
//! Readers are tolerant the way the format allows: a level without `result.json` (a
//! crash) still has its intervals, a torn last interval line is skipped, a missing
//! capture file is simply absent. Nothing here computes or renders.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bmk_engine::bounded_file;

use crate::results_dir::{
    self, IntervalLine, LevelInfo, RunManifest, INTERVALS_FILE, LEVEL_FILE, OS_DIR, RESULT_FILE,
    RUN_FILE, SERVER_DIR,
};
use crate::results_file::ResultsFile;

use crate::Error;

/// One load level (and repeat) of a run.
#[derive(Debug, Clone)]
pub struct Level {
    /// Its folder (absent for a level read from a plain results file).
    pub dir: Option<PathBuf>,
    /// `level.json` (for a plain results file: made up from the file).
    pub info: LevelInfo,
    /// `intervals.jsonl`, in order.
    pub intervals: Vec<IntervalLine>,
    /// `result.json`, when the level finished.
    pub result: Option<ResultsFile>,
}

impl Level {
    /// Reads a level folder.
    ///
    /// `level.json` must be there. `intervals.jsonl` and `result.json` may be missing
    /// (a crash); one that is not a regular file, or larger than its cap
    /// ([`bounded_file`]), is skipped with a warning on stderr, as if missing.
    pub fn read(dir: &Path) -> Result<Level, Error> {
        let info: LevelInfo = results_dir::read_json(&dir.join(LEVEL_FILE))?;
        let intervals_path = dir.join(INTERVALS_FILE);
        let intervals = if present(&intervals_path) {
            match results_dir::read_intervals_capped(&intervals_path) {
                Ok(read) => {
                    if read.cut {
                        warn_cut(&intervals_path, bounded_file::INTERVALS_FILE);
                    }
                    read.lines
                }
                Err(Error::Io { source, .. }) => {
                    warn_skipped(&intervals_path, &source);
                    Vec::new()
                }
                Err(e) => return Err(e),
            }
        } else {
            Vec::new()
        };
        let result_path = dir.join(RESULT_FILE);
        let result = if present(&result_path) {
            match ResultsFile::read(&result_path) {
                Ok(r) => Some(r),
                Err(Error::Io { source, .. }) => {
                    warn_skipped(&result_path, &source);
                    None
                }
                Err(e) => return Err(e),
            }
        } else {
            None
        };
        Ok(Level {
            dir: Some(dir.to_path_buf()),
            info,
            intervals,
            result,
        })
    }

    /// A level made from a plain `--results` file: its measured window is taken as
    /// ending at the file's `end_time` and lasting the final statistics' time.
    pub fn from_results_file(file: ResultsFile) -> Level {
        let end_ns = parse_rfc3339_ns(&file.end_time).unwrap_or(0);
        let span_ns = (file.final_stats.time_total_s * 1e9) as u64;
        let start_ns = end_ns.saturating_sub(span_ns);
        let intervals = file
            .intervals
            .iter()
            .map(|r| IntervalLine {
                record: r.clone(),
                end_unix_ns: start_ns + (r.time_s * 1e9).round() as u64,
                histogram: String::new(),
                query_counts: Default::default(),
            })
            .collect();
        Level {
            dir: None,
            info: LevelInfo {
                schema: results_dir::LEVEL_SCHEMA_NAME.to_string(),
                schema_version: results_dir::DIR_SCHEMA_VERSION,
                index: 1,
                users: file.final_stats.threads,
                repeat: 1,
                processes: 1,
                warmup_s: 0.0,
                start_unix_ns: start_ns,
                end_unix_ns: Some(end_ns),
                status: file.status.clone(),
                reason: None,
                run_id: file.run.run_id.clone(),
                data: None,
                cpu: None,
                rate: None,
                probe: None,
            },
            intervals,
            result: Some(file),
        }
    }

    /// The level's folder name (`level-0001`), or `level-NNNN` from its index.
    pub fn name(&self) -> String {
        self.dir
            .as_ref()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| results_dir::level_dir_name(self.info.index))
    }

    /// The text of capture file `name` under `server/`, if it was taken.
    pub fn server_capture(&self, name: &str) -> Option<String> {
        self.capture(SERVER_DIR, name)
    }

    /// The text of capture file `name` under `os/`, if it was taken.
    pub fn os_capture(&self, name: &str) -> Option<String> {
        self.capture(OS_DIR, name)
    }

    /// A capture file's text: at most [`bounded_file::CAPTURE_FILE`] of it (cut back to
    /// its last whole sample, with a warning), none when it is missing, and none with a
    /// warning when it is not a regular file (a FIFO, a link to a device).
    fn capture(&self, sub: &str, name: &str) -> Option<String> {
        let path = self.dir.as_ref()?.join(sub).join(name);
        let limit = bounded_file::CAPTURE_FILE;
        match bounded_file::read_capped(&path, limit) {
            Ok(read) => {
                let mut text = String::from_utf8(read.bytes)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                if read.cut {
                    warn_cut(&path, limit);
                    text.truncate(last_whole_sample_end(&text));
                }
                Some(text)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                warn_skipped(&path, &e);
                None
            }
        }
    }

    /// The measured window's end: `level.json`'s, else the last interval's.
    pub fn end_unix_ns(&self) -> u64 {
        self.info
            .end_unix_ns
            .or_else(|| self.intervals.last().map(|i| i.end_unix_ns))
            .unwrap_or(self.info.start_unix_ns)
    }

    /// The level's final status: its results file's, else `level.json`'s.
    pub fn status(&self) -> &str {
        match &self.result {
            Some(r) => &r.status,
            None => &self.info.status,
        }
    }

    /// Whether the level's numbers describe the load it was asked to run: it finished
    /// (`result.json` exists) and completed. A fatal, failed, interrupted or killed
    /// level is listed with its status but left off the scalability curves and out of
    /// comparisons: its throughput measures how soon it stopped.
    pub fn usable(&self) -> bool {
        self.result.is_some() && self.status() == "completed"
    }

    /// Measured seconds: the final statistics' time, else the window's length.
    pub fn seconds(&self) -> f64 {
        match &self.result {
            Some(r) => r.final_stats.time_total_s,
            None => (self.end_unix_ns().saturating_sub(self.info.start_unix_ns)) as f64 / 1e9,
        }
    }
}

/// A results directory (or one level folder, or one results file) in memory.
#[derive(Debug, Clone)]
pub struct RunData {
    /// Where it was read from.
    pub path: PathBuf,
    /// `run.json`, when the input had one.
    pub manifest: Option<RunManifest>,
    /// The levels in run order.
    pub levels: Vec<Level>,
}

impl RunData {
    /// Reads `path`: a results directory (with `run.json` or `level-*` folders), a level
    /// folder (with `level.json`) or a `--results` JSON file.
    pub fn read(path: &Path) -> Result<RunData, Error> {
        if !path.is_dir() && present(path) {
            // A results file, or something that is not one (a FIFO, a device): the
            // reader opens regular files only and says what it found.
            let file = ResultsFile::read(path)?;
            return Ok(RunData {
                path: path.to_path_buf(),
                manifest: None,
                levels: vec![Level::from_results_file(file)],
            });
        }
        if !path.is_dir() {
            return Err(Error::io(
                path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
            ));
        }
        if present(&path.join(LEVEL_FILE)) {
            return Ok(RunData {
                path: path.to_path_buf(),
                manifest: None,
                levels: vec![Level::read(path)?],
            });
        }
        let run_path = path.join(RUN_FILE);
        let manifest = if present(&run_path) {
            Some(results_dir::read_json::<RunManifest>(&run_path)?)
        } else {
            None
        };
        let levels = results_dir::level_dirs(path)?
            .iter()
            .filter(|d| present(&d.join(LEVEL_FILE)))
            .map(|d| Level::read(d))
            .collect::<Result<Vec<_>, _>>()?;
        if manifest.is_none() && levels.is_empty() {
            return Err(Error::NotResults(path.to_path_buf()));
        }
        Ok(RunData {
            path: path.to_path_buf(),
            manifest,
            levels,
        })
    }

    /// The input's short name: its last path component.
    pub fn label(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string())
    }

    /// The test every level ran.
    pub fn test(&self) -> String {
        match &self.manifest {
            Some(m) => m.test.clone(),
            None => self
                .levels
                .iter()
                .find_map(|l| l.result.as_ref().map(|r| r.run.test.clone()))
                .unwrap_or_default(),
        }
    }

    /// The workload options, `threads` excluded: `run.json`'s, else the first level's
    /// results file's.
    pub fn options(&self) -> std::collections::BTreeMap<String, String> {
        let mut opts = match &self.manifest {
            Some(m) => m.options.clone(),
            None => self
                .levels
                .iter()
                .find_map(|l| l.result.as_ref().map(|r| r.run.options.clone()))
                .unwrap_or_default(),
        };
        opts.remove("threads");
        opts
    }
}

/// Whether something is at `path` (a link counts, even a dangling one): such a file is
/// read, and refused with a message if it is not a regular file, rather than taken
/// for missing in silence.
fn present(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Says once per file on stderr that `path` was skipped and why. A results directory
/// comes from anywhere; what of it was not read must not go unsaid, and the captures
/// are read by several checks, so once is enough.
pub(crate) fn warn_skipped(path: &Path, why: &std::io::Error) {
    warn_once(path, format!("WARNING: skipping {}: {why}", path.display()));
}

/// Says once per file on stderr that only the first `limit` of `path` was read.
pub(crate) fn warn_cut(path: &Path, limit: bounded_file::Limit) {
    warn_once(
        path,
        format!(
            "WARNING: {} is larger than {}: only its first {} was read",
            path.display(),
            limit.shown(),
            limit.shown()
        ),
    );
}

fn warn_once(path: &Path, line: String) {
    static SAID: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if said.insert(path.to_path_buf()) {
        eprintln!("{line}");
    }
}

/// Where the last whole sample of capture text cut short ends: the start of its last
/// timestamp line (the sample after it may be missing lines), or 0 when there is none.
fn last_whole_sample_end(text: &str) -> usize {
    let mut end = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if crate::capture::parse_header(line.trim_end_matches(['\n', '\r'])).is_some() {
            end = offset;
        }
        offset += line.len();
    }
    end
}

/// Nanoseconds since the Unix epoch of an RFC 3339 timestamp as bmk writes them
/// (`2026-11-25T20:00:05.123Z`); none for one before the epoch or not RFC 3339.
pub fn parse_rfc3339_ns(text: &str) -> Option<u64> {
    let t = chrono::DateTime::parse_from_rfc3339(text).ok()?;
    u64::try_from(t.timestamp_nanos_opt()?).ok()
}

/// `1 user`, `4 users`: a users count as headings and verdicts say it.
pub fn users(n: u32) -> String {
    if n == 1 {
        "1 user".to_string()
    } else {
        format!("{n} users")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_with_the_writer() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::new(1_795_650_956, 444_000_000);
        let text = bmk_report::host::rfc3339_utc(t);
        assert_eq!(parse_rfc3339_ns(&text), Some(1_795_650_956_444_000_000));
        assert_eq!(parse_rfc3339_ns("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339_ns("2000-02-29T12:00:00.5Z"),
            Some(951_825_600_500_000_000)
        );
        assert_eq!(parse_rfc3339_ns("garbage"), None);
    }
}
