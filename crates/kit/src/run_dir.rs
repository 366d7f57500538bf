//! A results directory being written: its creation (a re-run never overwrites), the
//! manifest `run.json` (written at the start, replaced at the end) and `summary.csv`
//! (replaced after each level). The levels themselves are [`crate::level_writer`]'s.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use bmk_report::host::{now_rfc3339, rfc3339_utc};
use bmk_results::results_dir::{level_dir_name, RunManifest, SummaryRow};

use crate::error::KitError;
use bmk_results::dir_writer;

/// `$BMK_HOME`, or `./bmk-home` when it is not set.
pub fn bmk_home() -> PathBuf {
    std::env::var_os("BMK_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("bmk-home"))
}

/// Where new results directories go by default: `$BMK_HOME/results`.
pub fn default_parent() -> PathBuf {
    bmk_home().join("results")
}

/// `20261125T201500Z`: the UTC second of `t`, as a folder name can hold it.
pub fn folder_stamp(t: SystemTime) -> String {
    let s = rfc3339_utc(t); // 2026-11-25T20:15:00.123Z
    format!(
        "{}{}{}T{}{}{}Z",
        &s[0..4],
        &s[5..7],
        &s[8..10],
        &s[11..13],
        &s[14..16],
        &s[17..19]
    )
}

/// A name safe as one path component (a script path becomes its file name).
fn folder_safe(name: &str) -> String {
    let base = Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    base.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-@".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A results directory open for writing.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    manifest: RunManifest,
    rows: Vec<SummaryRow>,
}

impl RunDir {
    /// Creates `parent/<UTC stamp>-<name>`, or with `-2`, `-3`, ... appended when that
    /// exists, and writes the manifest.
    pub fn create_new(
        parent: &Path,
        name: &str,
        manifest: RunManifest,
    ) -> Result<RunDir, KitError> {
        std::fs::create_dir_all(parent).map_err(|e| KitError::io(parent, e))?;
        let base = format!("{}-{}", folder_stamp(SystemTime::now()), folder_safe(name));
        for n in 1.. {
            let path = if n == 1 {
                parent.join(&base)
            } else {
                parent.join(format!("{base}-{n}"))
            };
            // create_dir fails when the name exists, so two runs never share a folder.
            match std::fs::create_dir(&path) {
                Ok(()) => return RunDir::start(path, manifest),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(KitError::io(&path, e)),
            }
        }
        unreachable!("an unbounded range always yields")
    }

    /// Uses `dir` (`--results-dir`): created when missing; refused when it exists and
    /// is not an empty directory.
    pub fn create_at(dir: &Path, manifest: RunManifest) -> Result<RunDir, KitError> {
        match std::fs::read_dir(dir) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(KitError::Usage(format!(
                        "--results-dir: '{}' already exists and is not empty; results are never overwritten: name a new directory",
                        dir.display()
                    )));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir).map_err(|e| KitError::io(dir, e))?;
            }
            Err(e) => return Err(KitError::io(dir, e)),
        }
        RunDir::start(dir.to_path_buf(), manifest)
    }

    /// Opens the existing results directory `dir` to take it up again (`--resume`,
    /// `--only-level`): its `run.json` is read as it is; nothing is written yet.
    pub fn reopen(dir: &Path) -> Result<RunDir, KitError> {
        let file = dir.join(bmk_results::results_dir::RUN_FILE);
        let manifest: RunManifest = bmk_results::results_dir::read_json(&file).map_err(|e| {
            KitError::Usage(format!(
                "'{}' is not a results directory to take up: {e}",
                dir.display()
            ))
        })?;
        Ok(RunDir {
            path: dir.to_path_buf(),
            manifest,
            rows: Vec::new(),
        })
    }

    /// Rebuilds the summary from the level folders on disk, in run order (a level
    /// run again replaces its row; folders moved aside are not levels), and rewrites
    /// `summary.csv`.
    pub fn reload_summary(&mut self) -> Result<(), KitError> {
        let mut rows = Vec::new();
        for path in bmk_results::results_dir::level_dirs(&self.path)? {
            let Ok(level) = bmk_results::load::Level::read(&path) else {
                continue;
            };
            if let Some(row) = dir_writer::summary_row(&level) {
                rows.push(row.in_run(
                    self.manifest.scenario.as_deref(),
                    self.manifest.target.as_deref(),
                ));
            }
        }
        self.rows = rows;
        self.write_summary()
    }

    /// Sets the `probe` column of level `level`'s row and rewrites `summary.csv`.
    pub fn set_probe(&mut self, level: &str, verdict: &str) -> Result<(), KitError> {
        for r in self.rows.iter_mut().filter(|r| r.level == level) {
            r.probe = verdict.to_string();
        }
        self.write_summary()
    }

    fn start(path: PathBuf, mut manifest: RunManifest) -> Result<RunDir, KitError> {
        manifest.status = "running".into();
        if manifest.start_time.is_empty() {
            manifest.start_time = now_rfc3339();
        }
        let dir = RunDir {
            path,
            manifest,
            rows: Vec::new(),
        };
        dir.write_manifest()?;
        dir.write_summary()?;
        Ok(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The manifest as written so far.
    pub fn manifest(&self) -> &RunManifest {
        &self.manifest
    }

    /// Changes the manifest (e.g. the server facts once known) and rewrites it.
    pub fn update_manifest(&mut self, f: impl FnOnce(&mut RunManifest)) -> Result<(), KitError> {
        f(&mut self.manifest);
        self.write_manifest()
    }

    /// Records the server's facts (version, settings) in the manifest when the server
    /// answers; one that cannot be reached or described leaves them out, for the
    /// levels to report.
    pub fn record_server(&mut self, cfg: &bmk_sql::DriverConfig) -> Result<(), KitError> {
        let Ok(mut conn) = crate::server::connect(cfg) else {
            return Ok(());
        };
        let described = crate::server::describe(cfg, conn.as_mut());
        let written = match described {
            Ok((info, _)) => self.update_manifest(|m| m.server = Some(info)),
            Err(_) => Ok(()),
        };
        conn.disconnect();
        written
    }

    /// The folder of level `index` (1-based), not created.
    pub fn level_path(&self, index: u32) -> PathBuf {
        self.path.join(level_dir_name(index))
    }

    fn write_manifest(&self) -> Result<(), KitError> {
        Ok(dir_writer::write_manifest(&self.path, &self.manifest)?)
    }

    fn write_summary(&self) -> Result<(), KitError> {
        Ok(dir_writer::write_summary(&self.path, &self.rows)?)
    }

    /// Adds a finished level's row (named after the run's scenario and target) and
    /// rewrites `summary.csv`.
    pub fn push_summary(&mut self, row: SummaryRow) -> Result<(), KitError> {
        let row = row.in_run(
            self.manifest.scenario.as_deref(),
            self.manifest.target.as_deref(),
        );
        self.rows.push(row);
        self.write_summary()
    }

    /// The rows so far.
    pub fn summary(&self) -> &[SummaryRow] {
        &self.rows
    }

    /// Marks the run ended with `status` (`completed`, `interrupted`, `failed`).
    pub fn finish(&mut self, status: &str) -> Result<(), KitError> {
        self.finish_because(status, None)
    }

    /// Marks the run ended with `status` and, for a failure, its `reason` (recorded in
    /// `run.json`).
    pub fn finish_because(&mut self, status: &str, reason: Option<&str>) -> Result<(), KitError> {
        self.manifest.end_time = Some(now_rfc3339());
        self.manifest.status = status.to_string();
        self.manifest.reason = reason.map(str::to_string);
        self.write_manifest()
    }
}

/// The results directory of a plain run given `--results-dir`, just created, with what
/// its capture watches.
pub struct PlainRun {
    /// The directory (its `run.json` says `running`).
    pub run: RunDir,
    /// The server the sampler watches (none for a system test).
    pub driver: Option<bmk_sql::DriverConfig>,
    /// Seconds between capture samples (0: none).
    pub capture_interval: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmk_results::results_dir::{RUN_FILE, SUMMARY_FILE};

    #[test]
    fn stamps_and_names() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_294_728);
        assert_eq!(folder_stamp(t), "20261121T205848Z");
        assert_eq!(folder_safe("./scripts/my test.lua"), "my_test.lua");
    }

    #[test]
    fn a_rerun_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let a = RunDir::create_new(dir.path(), "x", RunManifest::default()).unwrap();
        let b = RunDir::create_new(dir.path(), "x", RunManifest::default()).unwrap();
        assert_ne!(a.path(), b.path());
        assert!(a.path().join(RUN_FILE).exists() && b.path().join(SUMMARY_FILE).exists());
        let e = RunDir::create_at(a.path(), RunManifest::default()).unwrap_err();
        assert!(
            e.to_string().contains("already exists and is not empty"),
            "{e}"
        );
        let fresh = dir.path().join("new/deeper");
        let mut c = RunDir::create_at(&fresh, RunManifest::default()).unwrap();
        c.finish("completed").unwrap();
        let m: RunManifest = bmk_results::results_dir::read_json(&fresh.join(RUN_FILE)).unwrap();
        assert_eq!(m.status, "completed");
        assert!(m.end_time.is_some());
    }
}
