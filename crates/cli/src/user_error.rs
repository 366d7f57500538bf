//! A failure already worded for the user, which the binary's edge prints as it is.
//!
//! Apart from `app` so that the command modules `app` dispatches to can raise it too.

/// A failure already worded for the user; the edge prints it and exits with `code`.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct UserError {
    /// What to print (one line).
    pub message: String,
    /// Exit code.
    pub code: i32,
}

/// A [`UserError`] with exit code 1.
pub fn user_error(message: impl Into<String>) -> anyhow::Error {
    UserError {
        message: message.into(),
        code: 1,
    }
    .into()
}
