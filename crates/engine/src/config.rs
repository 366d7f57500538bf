//! How a run is limited and reported: the general options (`--threads`, `--time`,
//! `--events`, `--warmup-time`, `--rate`, `--report-interval`, ...) as the engine takes
//! them, already parsed and checked by the front end.

use std::time::Duration;

/// The default [`RunConfig::stop_grace`]: an event in flight at the time limit has
/// this long to end. Events of a benchmark take milliseconds; one still running after
/// this is waiting for a server that will not answer.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// The default [`RunConfig::interrupt_grace`]: after Ctrl-C the report comes within this
/// long, whatever the workers are doing.
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(3);

/// How a run is limited and reported.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Worker threads.
    pub threads: u32,
    /// Total events after warm-up (0 = no limit).
    pub events: u64,
    /// Measured duration (None = no limit).
    pub time: Option<Duration>,
    /// Warm-up before measuring.
    pub warmup: Duration,
    /// Whether an event begun during the warm-up and ended after it is measured, as
    /// sysbench measures it (its statistics reset at the end of the warm-up, and an
    /// event counts when it ends). Otherwise only events begun after the warm-up
    /// count, so that a run with an event limit measures exactly that many.
    pub warmup_stragglers_count: bool,
    /// Grace after the time limit before giving up on workers.
    pub forced_shutdown: Option<Duration>,
    /// Worker stack size in bytes.
    pub thread_stack_size: usize,
    /// How long workers may take to initialise.
    pub thread_init_timeout: Duration,
    /// Open-loop arrival rate per second (0 = closed loop).
    pub rate: f64,
    /// Abort when the arrival queue reaches
    /// [`STRICT_QUEUE_LIMIT`](crate::STRICT_QUEUE_LIMIT) (sysbench behaviour).
    pub strict_queue_limit: bool,
    /// The most `--rate` arrivals that wait for a worker; more are dropped and counted
    /// ([`ARRIVAL_QUEUE_CAP`](crate::ARRIVAL_QUEUE_CAP) by default).
    pub arrival_queue_cap: usize,
    /// With `forced_shutdown` off: how long after the time limit the run waits for
    /// workers still in an event (stuck in I/O to a server that stopped answering)
    /// before it gives up on them and reports what was measured.
    pub stop_grace: Duration,
    /// How long after a stop signal the run waits for its workers before it reports
    /// without them.
    pub interrupt_grace: Duration,
    /// Intermediate report period.
    pub report_interval: Option<Duration>,
    /// Seconds (after the measured start) at which to report cumulatively and reset.
    pub checkpoints: Vec<Duration>,
    /// Event-loop threads for a [`cooperative`](crate::Workload::cooperative) test: `None`
    /// = one per CPU, `Some(0)` = a thread per worker (see [`crate::coop`]).
    pub event_loops: Option<u32>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            threads: 1,
            events: 0,
            time: Some(Duration::from_secs(10)),
            warmup: Duration::ZERO,
            warmup_stragglers_count: false,
            forced_shutdown: None,
            thread_stack_size: 64 * 1024,
            thread_init_timeout: Duration::from_secs(30),
            rate: 0.0,
            strict_queue_limit: false,
            arrival_queue_cap: crate::arrivals::ARRIVAL_QUEUE_CAP,
            stop_grace: STOP_GRACE,
            interrupt_grace: INTERRUPT_GRACE,
            report_interval: None,
            checkpoints: Vec::new(),
            event_loops: None,
        }
    }
}
