//! The report crate's one error type.

/// What can go wrong while reporting.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--report-format` got something other than text, csv or json.
    #[error("invalid value '{0}' for --report-format: use text, csv or json")]
    UnknownFormat(String),
}
