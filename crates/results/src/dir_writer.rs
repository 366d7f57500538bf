//! Writing a results directory's record files: a level folder's `level.json`,
//! `intervals.jsonl` and `result.json`, the run's `run.json` and `summary.csv`, a
//! `--results` file, and a whole directory from runs in memory (`bmk merge`). Every
//! file is replaced through [`atomic_file`], so an existing non-regular file (a symlink,
//! a device) at a target name is refused, as everywhere in bmk.
//!
//! Writers that append while a run goes (a level's intervals, the capture files) use
//! [`crate::append_file`]; the records they append are the same.

use std::io::Read;
use std::path::Path;

use bmk_engine::bounded_file;
use bmk_report::{final_text, FinalOptions, Layout};

use crate::atomic_file;
use crate::load::{Level, RunData};
use crate::results_dir::{
    self, summary_csv, LevelInfo, RunManifest, SummaryRow, INTERVALS_FILE, LEVEL_FILE, RESULT_FILE,
    RUN_FILE, SERVER_DIR, SUMMARY_FILE,
};
use crate::results_file::ResultsFile;
use crate::Error;

/// A level's results file with its interval records filled in from its lines.
pub fn level_results_file(level: &Level) -> Option<ResultsFile> {
    let mut r = level.result.clone()?;
    if r.intervals.is_empty() {
        r.intervals = level.intervals.iter().map(|l| l.record.clone()).collect();
    }
    Some(r)
}

/// The final report of a results file in the layout a run prints (1.1's; the database
/// layout when it counted queries): what `merge` and the split and ssh runs print for
/// their merged result, so that `total number of events:` reads as in a run.
pub fn final_report_text(file: &ResultsFile) -> String {
    let f = &file.final_stats;
    let opts = FinalOptions {
        layout: if f.counters.queries() > 0 {
            Layout::Db
        } else {
            Layout::Events
        },
        percentile: file.run.percentile,
        percentiles: file.run.percentiles.clone(),
        sysbench_1_0: false,
    };
    final_text::render(f, &opts)
}

/// Writes one results file (the `--results` format).
pub fn write_results_file(path: &Path, file: &ResultsFile) -> Result<(), Error> {
    atomic_file::replace_json(path, file)
}

/// Replaces the `level.json` of the level folder `dir`.
pub fn write_level_info(dir: &Path, info: &LevelInfo) -> Result<(), Error> {
    atomic_file::replace_json(&dir.join(LEVEL_FILE), info)
}

/// Replaces the `run.json` of the results directory `dir`.
pub fn write_manifest(dir: &Path, manifest: &RunManifest) -> Result<(), Error> {
    atomic_file::replace_json(&dir.join(RUN_FILE), manifest)
}

/// Replaces the `summary.csv` of the results directory `dir` with `rows`.
pub fn write_summary(dir: &Path, rows: &[SummaryRow]) -> Result<(), Error> {
    atomic_file::replace(&dir.join(SUMMARY_FILE), summary_csv(rows).as_bytes())
}

/// Writes a whole level into the folder `dir` (created when missing): its
/// `intervals.jsonl`, its `result.json` when it finished, and last its `level.json`,
/// so that the record saying how the level ended comes after what it describes.
pub fn write_level(dir: &Path, level: &Level) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut lines = String::new();
    for l in &level.intervals {
        lines.push_str(&l.to_line()?);
        lines.push('\n');
    }
    atomic_file::replace(&dir.join(INTERVALS_FILE), lines.as_bytes())?;
    if let Some(r) = level_results_file(level) {
        write_results_file(&dir.join(RESULT_FILE), &r)?;
    }
    write_level_info(dir, &level.info)
}

/// The `summary.csv` row of level `level` (its folder's name) of `users` users, repeat
/// `repeat`, from its `result.json`, the level having ended with `status` (without its
/// run's scenario and target, its rate and its probe's verdict).
pub fn result_summary_row(
    level: &str,
    users: u32,
    repeat: u32,
    result: &ResultsFile,
    status: &str,
) -> SummaryRow {
    let mut row = SummaryRow::of(level, users, repeat, &result.final_stats, status);
    row.workload = crate::workload_latency::summary_values(result);
    row
}

/// The `summary.csv` row of a finished level (without its run's scenario and target).
pub fn summary_row(level: &Level) -> Option<SummaryRow> {
    let result = level.result.as_ref()?;
    let info = &level.info;
    let mut row = result_summary_row(&level.name(), info.users, info.repeat, result, &info.status);
    row.rate = level.info.rate;
    row.probe = level
        .info
        .probe
        .as_ref()
        .map(|p| p.verdict.clone())
        .unwrap_or_default();
    Some(row)
}

/// Writes `run` as a new results directory at `dir` (absent or empty). The server
/// captures of `captures_from` (the first merged input: every process saw the same
/// server) are copied into each level.
pub fn write_results_dir(
    dir: &Path,
    run: &RunData,
    captures_from: Option<&RunData>,
) -> Result<(), Error> {
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        if entries.next().is_some() {
            return Err(Error::Incompatible(format!(
                "{} exists and is not empty: choose a new directory for the merged results",
                dir.display()
            )));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    if let Some(m) = &run.manifest {
        write_manifest(dir, m)?;
    }
    let mut rows = Vec::new();
    for (i, level) in run.levels.iter().enumerate() {
        let ldir = dir.join(results_dir::level_dir_name(level.info.index.max(1)));
        write_level(&ldir, level)?;
        if let Some(src) = captures_from
            .and_then(|c| c.levels.get(i))
            .and_then(|l| l.dir.as_ref())
        {
            copy_dir(&src.join(SERVER_DIR), &ldir.join(SERVER_DIR))?;
        }
        let mut merged = level.clone();
        merged.dir = Some(ldir);
        let manifest = run.manifest.as_ref();
        rows.extend(summary_row(&merged).map(|r| {
            r.in_run(
                manifest.and_then(|m| m.scenario.as_deref()),
                manifest.and_then(|m| m.target.as_deref()),
            )
        }));
    }
    write_summary(dir, &rows)
}

/// Copies the capture files of `from` into `to`: regular files only, each up to the
/// capture cap, as [`crate::load`] reads them; a file skipped or cut is said on stderr.
fn copy_dir(from: &Path, to: &Path) -> Result<(), Error> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    let limit = bounded_file::CAPTURE_FILE;
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let src = e.path();
        let file = match bounded_file::open_regular(&src) {
            Ok(f) => f,
            Err(err) => {
                crate::load::warn_skipped(&src, &err);
                continue;
            }
        };
        let dst = to.join(e.file_name());
        let mut out = std::fs::File::create(&dst).map_err(|err| Error::io(&dst, err))?;
        let copied = std::io::copy(&mut file.take(limit.bytes), &mut out)
            .map_err(|err| Error::io(&src, err))?;
        if copied == limit.bytes && e.metadata().is_ok_and(|m| m.len() > limit.bytes) {
            crate::load::warn_cut(&src, limit);
        }
    }
    Ok(())
}
