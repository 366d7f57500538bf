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
    /// Printed on stdout rather than stderr: sysbench logs its `FATAL:` lines there,
    /// after its banner, and wrappers read them from the same stream.
    pub on_stdout: bool,
}

/// A [`UserError`] with exit code 1.
pub fn user_error(message: impl Into<String>) -> anyhow::Error {
    UserError {
        message: message.into(),
        code: 1,
        on_stdout: false,
    }
    .into()
}

/// `err` printed on stdout when it is a [`UserError`] (other failures stay on stderr).
pub fn on_stdout(mut err: anyhow::Error) -> anyhow::Error {
    if let Some(user) = err.downcast_mut::<UserError>() {
        user.on_stdout = true;
    }
    err
}
