//! The start of a level written to a results directory: on the next whole second of
//! the wall clock. The capture samples fall on whole multiples of its interval (whole
//! seconds), and the report intervals are counted from the measured start, so with
//! the start on a whole second every interval ends on a capture tick: the level's
//! throughput and the server's counters line up without interpolation.
//!
//! The workers wait less than a second, after their connections are open, and the
//! wait is not measured. A plain run without `--results-dir` starts at once, as
//! sysbench does.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bmk_engine::{StartAt, StartGate};

/// The first whole second of the wall clock at or after `unix_ns`, in nanoseconds.
pub fn next_whole_second_ns(unix_ns: u64) -> u64 {
    unix_ns.div_ceil(1_000_000_000) * 1_000_000_000
}

/// Releases the workers on the next whole second, and tells `release` (nanoseconds
/// since the Unix epoch) which second it was: the run's epoch, from which the level's
/// writer stamps its intervals.
#[derive(Debug, Default)]
pub struct WholeSecondGate {
    /// The chosen second, 0 until the gate opened.
    pub release: Arc<AtomicU64>,
}

impl StartGate for WholeSecondGate {
    fn open(&mut self, _interrupt: &AtomicUsize) -> Result<StartAt, String> {
        // Both clocks read together: the wall-clock second becomes a monotonic instant.
        let (mono, wall) = (Instant::now(), SystemTime::now());
        let now_ns = wall
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let second = next_whole_second_ns(now_ns);
        self.release.store(second, Ordering::SeqCst);
        Ok(StartAt::At(mono + Duration::from_nanos(second - now_ns)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_fall_on_whole_seconds() {
        assert_eq!(
            next_whole_second_ns(1_700_000_000_250_000_000),
            1_700_000_001_000_000_000
        );
        assert_eq!(
            next_whole_second_ns(1_700_000_001_000_000_000),
            1_700_000_001_000_000_000
        );
        let mut gate = WholeSecondGate::default();
        let at = match gate.open(&AtomicUsize::new(0)).unwrap() {
            StartAt::At(at) => at,
            StartAt::Now => panic!("a whole-second start is an instant"),
        };
        assert!(at.duration_since(Instant::now()) <= Duration::from_secs(1));
        assert_eq!(gate.release.load(Ordering::SeqCst) % 1_000_000_000, 0);
    }
}
