//! The results crate's one error type.

use std::path::PathBuf;

/// What can go wrong while reading, writing or merging results.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A histogram could not be encoded, decoded or merged.
    #[error("{0}")]
    Histogram(String),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file bmk would write exists and is not a regular file.
    #[error("{0} exists and is not a regular file (a symlink, device or directory): refusing to replace it")]
    NotRegularFile(PathBuf),
    /// A results file could not be serialised or parsed.
    #[error("results file {path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// A path is neither a results directory, a level folder nor a results file.
    #[error("{0}: not a results directory, level folder or results file (expected run.json, level.json or a --results JSON file)")]
    NotResults(PathBuf),
    /// Inputs that cannot be merged as given, or a directory that cannot take them.
    #[error("{0}")]
    Incompatible(String),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
