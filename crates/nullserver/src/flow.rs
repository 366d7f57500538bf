//! What a protocol session tells the event loop about its connection: keep serving it
//! or close it after an answer ([`Flow`]), or drop it because its input cannot be framed
//! ([`ProtocolError`]).
//!
//! Each protocol (`mysql`, `pgsql`) returns these, and [`crate::session`] dispatches to
//! the protocols, so they live apart from both.

/// What the connection does after an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep serving it.
    Continue,
    /// Close it once what is written so far has been sent.
    Close,
}

/// Input that cannot be framed: the connection is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// A request larger than the null server takes.
    #[error("request too large")]
    TooLarge,
    /// Framing that no client sends.
    #[error("{0}")]
    Malformed(&'static str),
}
