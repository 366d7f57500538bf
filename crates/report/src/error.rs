//! The report crate's one error type.

/// What can go wrong while reporting.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--report-format` got something other than text, csv or json.
    #[error("invalid value '{0}' for --report-format: use text, csv or json")]
    UnknownFormat(String),
    /// A histogram could not be encoded, decoded or merged.
    #[error("{0}")]
    Histogram(String),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file bmk would write exists and is not a regular file.
    #[error("{0} exists and is not a regular file (a symlink, device or directory): refusing to replace it")]
    NotRegularFile(std::path::PathBuf),
    /// A results file could not be serialised or parsed.
    #[error("results file {path}: {source}")]
    Json {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
}
