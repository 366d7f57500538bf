//! How a run ended and what it measured: the value [`run`](crate::run) returns.

use crate::stats::CumulativeStats;

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    /// Limits reached or every worker finished.
    Completed,
    /// Stopped by a signal (its number).
    Interrupted(i32),
    /// A worker failed; its messages.
    Fatal(Vec<String>),
    /// A worker could not be created (`thread_init` failed, no connection): its
    /// messages. No worker was released, nothing was measured.
    InitFailed(Vec<String>),
    /// Every worker was initialised, but the [`StartGate`](crate::StartGate) refused
    /// the start: its message. No worker was released, nothing was measured.
    StartRefused(String),
    /// Workers did not stop within `--forced-shutdown` (by default
    /// [`RunConfig::stop_grace`](crate::RunConfig::stop_grace)) after the time limit.
    ForcedShutdown,
    /// Workers did not initialise within `--thread-init-timeout`.
    InitTimeout,
    /// Rate mode fell [`STRICT_QUEUE_LIMIT`](crate::STRICT_QUEUE_LIMIT) arrivals behind
    /// in strict mode.
    QueueFull,
}

/// The result of [`run`](crate::run).
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// How it ended.
    pub status: RunStatus,
    /// What was measured since the start (or the last checkpoint).
    pub stats: CumulativeStats,
    /// Whether the whole `--events` budget was handed out (the event limit ended the
    /// run, unless something else ended it first).
    pub event_limit_reached: bool,
    /// Workers still in an event when the run stopped waiting for them (a forced
    /// shutdown, or the grace after a stop ran out); their threads are left to the
    /// process exit.
    pub abandoned: u32,
}
