//! The kit's one error type. Every message is one line a user can act on: a bad
//! `bmk.toml` names the file, the line and the problem; a bad scenario name names the
//! token and the valid ones.

use std::path::PathBuf;

/// What can go wrong in the kit.
#[derive(Debug, thiserror::Error)]
pub enum KitError {
    /// `bmk.toml` is missing, unreadable or malformed (`line` 0: the whole file).
    #[error("{}", config_message(.file, *.line, .problem))]
    Config {
        /// The configuration file.
        file: PathBuf,
        /// 1-based line of the problem, 0 when it concerns the whole file.
        line: usize,
        /// What is wrong, and what to do.
        problem: String,
    },
    /// A scenario name that does not parse.
    #[error("{0}")]
    Scenario(String),
    /// Bad arguments to a `bmk kit` command.
    #[error("{0}")]
    Usage(String),
    /// Reading or writing a file failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A results-directory record could not be read or written.
    #[error(transparent)]
    Results(#[from] bmk_results::Error),
    /// A run the kit started could not be carried through (a process that would not
    /// start, parts that would not merge).
    #[error("{0}")]
    Failed(String),
    /// The database server could not be reached or queried.
    #[error("{0}")]
    Server(String),
}

fn config_message(file: &std::path::Path, line: usize, problem: &str) -> String {
    if line == 0 {
        format!("{}: {problem}", file.display())
    } else {
        format!("{}:{line}: {problem}", file.display())
    }
}

impl KitError {
    /// An I/O failure on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> KitError {
        KitError::Io {
            path: path.into(),
            source,
        }
    }
}
