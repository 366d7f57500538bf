//! The floor client's per-interval report, shared by its request and connect loops.

use std::io;
use std::time::{Duration, Instant};

use mio::{Events, Poll};

/// Calls the report callback at each report interval with the events per second of
/// the interval just ended.
pub(super) struct Ticker {
    start: Instant,
    interval: Option<Duration>,
    /// When the next report is due, and the event count at the last one.
    next: Option<(Instant, u64)>,
}

impl Ticker {
    pub(super) fn new(start: Instant, interval: Option<Duration>) -> Ticker {
        Ticker {
            start,
            interval,
            next: interval.map(|i| (start + i, 0)),
        }
    }

    /// Reports if an interval has ended by `now`.
    fn tick(&mut self, now: Instant, events: u64, report: &mut dyn FnMut(f64, f64)) {
        if let (Some((at, before)), Some(interval)) = (self.next.as_mut(), self.interval) {
            if now >= *at {
                report(
                    at.duration_since(self.start).as_secs_f64(),
                    (events - *before) as f64 / interval.as_secs_f64(),
                );
                *at += interval;
                *before = events;
            }
        }
    }

    /// When the event loop must wake at the latest: the next report or `deadline`.
    fn wake(&self, deadline: Instant) -> Instant {
        self.next.map_or(deadline, |(at, _)| at.min(deadline))
    }

    /// One turn of a floor loop: reports what is due, then waits for socket events
    /// until the next report or `deadline`. False once `deadline` has passed.
    pub(super) fn wait(
        &mut self,
        poll: &mut Poll,
        evs: &mut Events,
        deadline: Instant,
        events: u64,
        report: &mut dyn FnMut(f64, f64),
    ) -> io::Result<bool> {
        let now = Instant::now();
        self.tick(now, events, report);
        if now >= deadline {
            return Ok(false);
        }
        poll.poll(
            evs,
            Some(self.wake(deadline).saturating_duration_since(now)),
        )?;
        Ok(true)
    }
}
