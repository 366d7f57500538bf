//! What can go wrong while analysing, comparing or rendering results.

/// An analysis failure, worded for the user (one line).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A results file or directory could not be read, parsed, merged or written.
    #[error(transparent)]
    Results(#[from] bmk_results::Error),
    /// Inputs that cannot be compared as given.
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
