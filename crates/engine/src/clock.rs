//! The run's time: nanoseconds since the run's epoch, read on the per-event path, and
//! the timed waits of the controller, the workers and the rate scheduler.
//!
//! By default a run reads the system's monotonic clock and waits on condition
//! variables. A caller may inject a [`Clock`] instead
//! ([`run_with_clock`](crate::run_with_clock)), such as a test's virtual clock that
//! moves only when every thread of the run waits for it, so that a whole run takes
//! milliseconds and repeats exactly. The choice is an enum rather than a trait object
//! so that the system clock costs the per-event path no indirect call.

use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// A source of time for a run other than the system's clock.
///
/// Every thread of a run started on such a clock is started through
/// [`Clock::spawn`], and every wait of those threads goes through the clock: timed
/// waits as [`Clock::sleep_until`] or [`Clock::wait_until`], and joining another
/// thread inside [`Clock::block_on`]. A virtual clock can therefore tell when all of
/// them wait for it, and only then move on.
pub trait Clock: Send + Sync {
    /// Nanoseconds since the clock started; never goes back.
    fn now_ns(&self) -> u64;

    /// Blocks the calling thread until `now_ns() >= deadline_ns`.
    fn sleep_until(&self, deadline_ns: u64);

    /// Blocks the calling thread until `deadline_ns` or until [`Clock::notify`] is
    /// called, whichever comes first; may return earlier (the caller checks what it
    /// waits for again). The default sleeps until the deadline.
    fn wait_until(&self, deadline_ns: u64) {
        self.sleep_until(deadline_ns);
    }

    /// Something a thread may be waiting for in [`Clock::wait_until`] has changed.
    fn notify(&self) {}

    /// Starts `body` on a thread made by `builder`. The default just spawns it.
    fn spawn(
        &self,
        builder: thread::Builder,
        body: Box<dyn FnOnce() + Send>,
    ) -> io::Result<JoinHandle<()>> {
        builder.spawn(body)
    }

    /// Runs `blocking`, which waits for another thread of the run without the clock
    /// (joins it). The default just runs it.
    fn block_on(&self, blocking: &mut dyn FnMut()) {
        blocking();
    }
}

/// Where a run reads the time and how its threads wait for a moment.
pub(crate) enum RunClock {
    /// The system's monotonic clock (`CLOCK_MONOTONIC`), from this epoch in
    /// nanoseconds.
    System(u64),
    /// A clock the caller injected.
    Injected(Arc<dyn Clock>),
}

impl RunClock {
    /// The system's monotonic clock, starting now.
    pub(crate) fn system() -> RunClock {
        RunClock::System(monotonic_ns())
    }

    /// Nanoseconds since the run's epoch.
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        match self {
            RunClock::System(epoch) => monotonic_ns().wrapping_sub(*epoch),
            RunClock::Injected(clock) => clock.now_ns(),
        }
    }

    /// Whether the clock is the system's (event loops wait for sockets, which only the
    /// system's clock can wait beside).
    pub(crate) fn is_system(&self) -> bool {
        matches!(self, RunClock::System(_))
    }

    /// Sleeps until `deadline_ns`.
    pub(crate) fn sleep_until(&self, deadline_ns: u64) {
        match self {
            RunClock::System(_) => {
                let now = self.now_ns();
                if deadline_ns > now {
                    thread::sleep(Duration::from_nanos(deadline_ns - now));
                }
            }
            RunClock::Injected(clock) => clock.sleep_until(deadline_ns),
        }
    }

    /// Waits on `changed` (whose mutex is `mutex`, held as `guard`) until it is
    /// notified — which must be followed by [`RunClock::notify`] — or `deadline_ns`
    /// passes, whichever comes first; may return early.
    pub(crate) fn wait<'a, T>(
        &self,
        changed: &Condvar,
        mutex: &'a Mutex<T>,
        guard: MutexGuard<'a, T>,
        deadline_ns: u64,
    ) -> MutexGuard<'a, T> {
        match self {
            RunClock::System(_) => {
                let timeout =
                    Duration::from_nanos(deadline_ns.saturating_sub(self.now_ns()).max(1));
                changed
                    .wait_timeout(guard, timeout)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
            RunClock::Injected(clock) => {
                drop(guard);
                clock.wait_until(deadline_ns);
                mutex.lock().unwrap_or_else(|p| p.into_inner())
            }
        }
    }

    /// Tells an injected clock that a condition variable was notified.
    #[inline]
    pub(crate) fn notify(&self) {
        if let RunClock::Injected(clock) = self {
            clock.notify();
        }
    }

    /// Starts `body` on a thread made by `builder`.
    pub(crate) fn spawn<F>(&self, builder: thread::Builder, body: F) -> io::Result<JoinHandle<()>>
    where
        F: FnOnce() + Send + 'static,
    {
        match self {
            RunClock::System(_) => builder.spawn(body),
            RunClock::Injected(clock) => clock.spawn(builder, Box::new(body)),
        }
    }

    /// Waits for the thread of `handle` to end.
    pub(crate) fn join(&self, handle: JoinHandle<()>) {
        match self {
            RunClock::System(_) => {
                let _ = handle.join();
            }
            RunClock::Injected(clock) => {
                let mut handle = Some(handle);
                clock.block_on(&mut || {
                    if let Some(h) = handle.take() {
                        let _ = h.join();
                    }
                });
            }
        }
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock `Instant` reads, without the checked
/// `Duration` arithmetic of `Instant::elapsed` (a few instructions on every event's
/// start and end).
#[inline]
fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Clock `id` (a monotonic one: `CLOCK_MONOTONIC`, `CLOCK_MONOTONIC_COARSE`) in
/// nanoseconds.
#[inline]
pub(crate) fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; the monotonic clocks always exist on
    // Linux.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
