//! What can go wrong while reading, merging, comparing or rendering results.

use std::path::PathBuf;

/// An analysis failure, worded for the user (one line).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A results file or directory could not be read or parsed.
    #[error(transparent)]
    Report(#[from] bmk_report::Error),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A path is neither a results directory, a level folder nor a results file.
    #[error("{0}: not a results directory, level folder or results file (expected run.json, level.json or a --results JSON file)")]
    NotResults(PathBuf),
    /// Inputs that cannot be merged or compared as given.
    #[error("{0}")]
    Incompatible(String),
    /// A chart could not be drawn.
    #[error("cannot draw chart '{chart}': {message}")]
    Chart {
        /// The chart's title.
        chart: String,
        /// What plotters said.
        message: String,
    },
    /// The page template failed.
    #[error("cannot render report page: {0}")]
    Template(#[from] minijinja::Error),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
