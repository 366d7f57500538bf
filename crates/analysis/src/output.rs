//! Writing analysis results to disk: a merged `--results` file, a merged results
//! directory, a report page. Every file is written to a temporary name in its
//! directory and renamed into place, and an existing non-regular file (a symlink, a
//! device) at the target name is refused, as bmk's other writers do.

use std::io::Write;
use std::path::Path;

use bmk_report::results_dir::{
    self, summary_csv, SummaryRow, INTERVALS_FILE, LEVEL_FILE, RESULT_FILE, RUN_FILE, SERVER_DIR,
    SUMMARY_FILE,
};
use bmk_report::ResultsFile;

use crate::load::{Level, RunData};
use crate::Error;

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_file() {
            return Err(Error::Incompatible(format!(
                "{} exists and is not a regular file (a symlink, device or directory): refusing to replace it",
                path.display()
            )));
        }
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| Error::io(path, e))?;
    tmp.write_all(bytes).map_err(|e| Error::io(path, e))?;
    tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

fn json<T: serde::Serialize>(path: &Path, value: &T) -> Result<Vec<u8>, Error> {
    let mut text = serde_json::to_string_pretty(value).map_err(|source| {
        Error::Report(bmk_report::Error::Json {
            path: path.to_path_buf(),
            source,
        })
    })?;
    text.push('\n');
    Ok(text.into_bytes())
}

/// A level's results file with its interval records filled in from its lines.
pub fn level_results_file(level: &Level) -> Option<ResultsFile> {
    let mut r = level.result.clone()?;
    if r.intervals.is_empty() {
        r.intervals = level.intervals.iter().map(|l| l.record.clone()).collect();
    }
    Some(r)
}

/// Writes one results file (the `--results` format).
pub fn write_results_file(path: &Path, file: &ResultsFile) -> Result<(), Error> {
    write_atomic(path, &json(path, file)?)
}

/// The `summary.csv` row of a finished level.
pub fn summary_row(level: &Level) -> Option<SummaryRow> {
    let f = &level.result.as_ref()?.final_stats;
    Some(SummaryRow::of(
        &level.name(),
        level.info.users,
        level.info.repeat,
        f,
        &level.info.status,
    ))
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
        write_atomic(&dir.join(RUN_FILE), &json(&dir.join(RUN_FILE), m)?)?;
    }
    let mut rows = Vec::new();
    for (i, level) in run.levels.iter().enumerate() {
        let name = results_dir::level_dir_name(level.info.index.max(1));
        let ldir = dir.join(&name);
        std::fs::create_dir_all(&ldir).map_err(|e| Error::io(&ldir, e))?;
        write_atomic(
            &ldir.join(LEVEL_FILE),
            &json(&ldir.join(LEVEL_FILE), &level.info)?,
        )?;
        let mut lines = String::new();
        for l in &level.intervals {
            lines.push_str(&l.to_line()?);
            lines.push('\n');
        }
        write_atomic(&ldir.join(INTERVALS_FILE), lines.as_bytes())?;
        if let Some(r) = level_results_file(level) {
            write_results_file(&ldir.join(RESULT_FILE), &r)?;
        }
        if let Some(src) = captures_from
            .and_then(|c| c.levels.get(i))
            .and_then(|l| l.dir.as_ref())
        {
            copy_dir(&src.join(SERVER_DIR), &ldir.join(SERVER_DIR))?;
        }
        let mut merged = level.clone();
        merged.dir = Some(ldir);
        rows.extend(summary_row(&merged));
    }
    write_atomic(&dir.join(SUMMARY_FILE), summary_csv(&rows).as_bytes())
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), Error> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    for e in entries.flatten() {
        if e.file_type().map(|t| t.is_file()).unwrap_or(false) {
            std::fs::copy(e.path(), to.join(e.file_name()))
                .map_err(|err| Error::io(e.path(), err))?;
        }
    }
    Ok(())
}
