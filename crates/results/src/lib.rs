//! bmk's on-disk results model, end to end: the records and their versioned schemas,
//! reading them, writing them and merging them.
//!
//! This crate owns the `--results=FILE.json` document ([`results_file`],
//! `docs/results-schema.md`) and the results directory (`docs/results-dir.md`): its
//! records and file names ([`results_dir`]), the raw capture files' layout
//! ([`capture`]), the histogram encoding ([`codec`]), a workload's own per-transaction
//! latency ([`workload_latency`]), the one way a results file is replaced
//! ([`atomic_file`], which refuses a symlinked target) or appended to
//! ([`append_file`]), reading a directory, a level or a results file into memory
//! ([`load`]), merging runs that ran together ([`merge`]) and writing level folders,
//! manifests and whole directories ([`dir_writer`]). The kit that writes directories
//! while a run goes, and the analysis that reads them, both go through it.
//!
//! It must not run benchmarks, connect to servers, capture anything or decide what is
//! printed: it turns values into files and files into values. Report formats are
//! `bmk-report`'s (this crate uses its statistics and host records); it never depends
//! on the kit, the analysis or the command line.
#![deny(missing_docs)]

pub mod append_file;
pub mod atomic_file;
pub mod capture;
pub mod codec;
pub mod dir_writer;
mod error;
pub mod load;
pub mod merge;
pub mod results_dir;
pub mod results_file;
pub mod workload_latency;

/// Entry points for the fuzz targets (`fuzz/`) and the tests that replay their corpus:
/// the readers of files that `merge`, `report` and `compare` take from other machines,
/// which must turn any bytes into a value or an error, never a panic. Not an API.
#[doc(hidden)]
pub mod fuzz_entry {
    use std::path::PathBuf;

    fn scratch(kind: &str, data: &[u8]) -> Option<PathBuf> {
        let path = std::env::temp_dir().join(format!(
            "bmk-fuzz-{kind}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&path, data).ok()?;
        Some(path)
    }

    /// A `--results` file (`ResultsFile::read`, then its histogram).
    pub fn results_file(data: &[u8]) {
        if let Some(path) = scratch("results", data) {
            if let Ok(file) = crate::results_file::ResultsFile::read(&path) {
                let _ = file.histogram();
            }
            let _ = std::fs::remove_file(path);
        }
    }

    /// A results directory's `intervals.jsonl`, `run.json` and `level.json`.
    pub fn results_dir_files(data: &[u8]) {
        if let Some(path) = scratch("dir", data) {
            let _ = crate::results_dir::read_intervals(&path);
            let _ = crate::results_dir::read_json::<crate::results_dir::RunManifest>(&path);
            let _ = crate::results_dir::read_json::<crate::results_dir::LevelInfo>(&path);
            let _ = std::fs::remove_file(path);
        }
    }
}

pub use error::Error;
pub use load::{Level, RunData};
pub use merge::{merge_levels, merge_runs, MergeOptions};
pub use results_file::{ResultsFile, ResultsWriter, RunEnd, RunInfo};
