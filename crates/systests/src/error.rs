//! The one error type of the system tests, worded for the user.
//!
//! Every message is a single line that says what is wrong and, where there is
//! something to do, what to do. The CLI prints it after `FATAL: ` and exits 1.

use std::io;
use std::path::PathBuf;

use bmk_engine::options::OptionError;

/// Why a system test could not be built, prepared, started or cleaned up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SystemTestError {
    /// An option value is outside what the test accepts.
    #[error(transparent)]
    Option(#[from] OptionError),
    /// A required option was not given.
    #[error("Missing required argument: --{0}")]
    MissingOption(&'static str),
    /// The test has no such command.
    #[error("'{test}' test does not implement the '{command}' command.")]
    NoCommand {
        /// The test's name.
        test: &'static str,
        /// The command asked for.
        command: String,
    },
    /// A `fileio` test file is missing or smaller than the options say.
    #[error(
        "test file {path} {problem}; run 'fileio prepare' with the same --file-num and \
         --file-total-size first"
    )]
    NotPrepared {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// The file's size when it is a file too small for the options: (found,
        /// needed) bytes; `None` when it is missing or no regular file.
        short: Option<(u64, u64)>,
    },
    /// The memory buffer could not be allocated.
    #[error("cannot allocate {bytes} bytes{from}: {source}{hint}")]
    Allocation {
        /// Bytes asked for.
        bytes: usize,
        /// Where from (" from the HugeTLB pool" or empty).
        from: &'static str,
        /// Why.
        source: io::Error,
        /// What to do about it (starts with "; " or is empty).
        hint: &'static str,
    },
    /// A file operation failed.
    #[error("{action} {path}: {source}")]
    File {
        /// What was being done ("cannot create", "cannot remove", ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: io::Error,
    },
    /// Writing progress output failed.
    #[error("cannot write output: {0}")]
    Output(#[source] io::Error),
}

impl SystemTestError {
    /// A bad option value: `option` (without dashes), the value as given, and what is
    /// allowed.
    pub(crate) fn bad_value(option: &str, value: impl ToString, allowed: &str) -> Self {
        SystemTestError::Option(OptionError::BadValue {
            option: option.to_string(),
            value: value.to_string(),
            allowed: allowed.to_string(),
        })
    }

    pub(crate) fn file(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        SystemTestError::File {
            action,
            path: path.into(),
            source,
        }
    }
}

impl From<io::Error> for SystemTestError {
    fn from(e: io::Error) -> Self {
        SystemTestError::Output(e)
    }
}
