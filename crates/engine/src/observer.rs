//! What a front end hears while a run goes: the [`Observer`] callbacks, made on the
//! controlling thread (the caller of [`run`](crate::run)) as each thing falls due.

use crate::stats::{CumulativeStats, IntervalStats};

/// Receives the run's progress on the controlling thread.
pub trait Observer {
    /// All workers initialised; called just before they are released.
    fn threads_started(&mut self) {}
    /// Warm-up is over; measuring starts now.
    fn warmup_finished(&mut self) {}
    /// An intermediate report is due.
    fn interval(&mut self, _stats: &IntervalStats) {}
    /// A checkpoint is due `at` seconds after the measured start; counters restart
    /// after it (`stats` covers the span since the previous checkpoint).
    fn checkpoint(&mut self, _at: f64, _stats: &CumulativeStats) {}
    /// The time limit has passed; workers are being stopped.
    fn time_limit_reached(&mut self) {}
}
