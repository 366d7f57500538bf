//! A start that waits for something outside the run: once every worker is initialised
//! (connections open), the controller asks a [`StartGate`] when measuring may begin,
//! and releases the workers at that instant rather than at once.
//!
//! Several processes (or hosts) that start one run together use it: the gate waits for
//! the others and names an instant they all agreed on, and the run's epoch — the zero
//! of its reports and the origin of its interval grid — is that instant, not the
//! moment this process happened to wake up, so that the intervals of all of them fall
//! on one grid.

use std::sync::atomic::AtomicUsize;
use std::time::Instant;

/// When the workers of a run may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartAt {
    /// Right away.
    Now,
    /// At this instant of the monotonic clock: the controller sleeps until then and
    /// counts the run's time from it (an instant already past starts at once, with the
    /// epoch still at that instant).
    At(Instant),
}

/// Decides when a run whose workers are all initialised may start.
pub trait StartGate {
    /// Blocks until the run may start and says when, or returns why it must not
    /// (one line for the user). `interrupt` holds a signal number once the user asks
    /// the run to stop; a gate that waits long should give up when it is not 0 (the
    /// run then ends as interrupted, whatever the gate returns).
    fn open(&mut self, interrupt: &AtomicUsize) -> Result<StartAt, String>;
}
