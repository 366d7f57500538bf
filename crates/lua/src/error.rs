//! The crate's error type: what went wrong in a script, worded for the user.
//!
//! Messages are complete as they stand (file and line for syntax errors, message and
//! traceback for runtime errors); the CLI prints them verbatim and exits 1.

/// What kind of failure a [`LuaError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LuaErrorKind {
    /// The script (or a module) does not compile.
    Syntax,
    /// A Lua error raised while running script code (message plus traceback).
    Runtime,
    /// The script or a module could not be found (the message says where we looked).
    NotFound,
    /// A script option declaration or value is invalid.
    Option,
    /// An entry of `sysbench.cmdline.options` is not `name = {description, default,
    /// ...}` (a name that is no string, a declaration that is no table, ...).
    Declaration,
    /// A command the script does not define.
    UnknownCommand,
    /// The Lua runtime itself failed (out of memory, a broken state).
    Internal,
}

/// An error from the Lua runtime. `Display` is the exact text to print.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LuaError {
    /// The kind of failure.
    pub kind: LuaErrorKind,
    /// The complete message.
    pub message: String,
}

impl LuaError {
    /// A new error.
    pub fn new(kind: LuaErrorKind, message: impl Into<String>) -> LuaError {
        LuaError {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn runtime(message: impl Into<String>) -> LuaError {
        LuaError::new(LuaErrorKind::Runtime, message)
    }

    /// Names the script function a located error came from, in sysbench's words
    /// ("`thread_init' function failed: x.lua:3: ..."), which people grep logs for.
    /// Messages for the user (raised without a position) stay as they are.
    pub(crate) fn in_function(mut self, name: &str) -> LuaError {
        if self.kind == LuaErrorKind::Runtime && self.is_located() {
            self.message = format!("`{name}' function failed: {}", self.message);
        }
        self
    }

    /// Whether the message carries the traceback that locates a runtime error (as
    /// opposed to a message worded for the user).
    pub fn is_located(&self) -> bool {
        self.message.contains("\nstack traceback:\n")
    }
}

impl From<mlua::Error> for LuaError {
    fn from(e: mlua::Error) -> LuaError {
        match e {
            mlua::Error::SyntaxError { message, .. } => {
                LuaError::new(LuaErrorKind::Syntax, message)
            }
            mlua::Error::RuntimeError(m) => LuaError::new(LuaErrorKind::Runtime, m),
            mlua::Error::CallbackError { traceback, cause } => LuaError::new(
                LuaErrorKind::Runtime,
                format!("{}\n{traceback}", LuaError::from((*cause).clone())),
            ),
            other => LuaError::new(LuaErrorKind::Internal, other.to_string()),
        }
    }
}
