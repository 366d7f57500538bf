//! The run's time: nanoseconds since the run's epoch, read on the per-event path, and
//! the timed waits of the controller, the workers and the rate scheduler.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// Where a run reads the time and how its threads wait for a moment.
pub(crate) struct RunClock {
    epoch: Instant,
}

impl RunClock {
    /// The system's monotonic clock, starting now.
    pub(crate) fn system() -> RunClock {
        RunClock {
            epoch: Instant::now(),
        }
    }

    /// Nanoseconds since the run's epoch.
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Sleeps until `deadline_ns`.
    pub(crate) fn sleep_until(&self, deadline_ns: u64) {
        let now = self.now_ns();
        if deadline_ns > now {
            thread::sleep(Duration::from_nanos(deadline_ns - now));
        }
    }

    /// Waits on `changed` (whose mutex is `_mutex`, held as `guard`) until it is
    /// notified or `deadline_ns` passes, whichever comes first; may return early.
    pub(crate) fn wait<'a, T>(
        &self,
        changed: &Condvar,
        _mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
        deadline_ns: u64,
    ) -> MutexGuard<'a, T> {
        let timeout = Duration::from_nanos(deadline_ns.saturating_sub(self.now_ns()).max(1));
        changed
            .wait_timeout(guard, timeout)
            .unwrap_or_else(|p| p.into_inner())
            .0
    }
}
