//! `threads`: every event locks a mutex, yields the CPU and unlocks, many times over.
//!
//! There are `--thread-locks` mutexes; thread `t` always uses mutex `t % locks`, so
//! threads that share a mutex contend for it while the scheduler switches between
//! them on every yield.
//!
//! Each mutex sits on its own cache lines: packed together, the few-byte mutexes of
//! different threads would share a line, and every uncontended lock and unlock would
//! still drag that line between cores — a cost the test does not mean to measure.

use std::sync::{Arc, Mutex};

use bmk_engine::options::{OptKind, OptSpec, OptionSet};
use bmk_engine::{EventFlow, Worker, WorkerContext, WorkerError, Workload};

use crate::SystemTestError;

pub(crate) fn options() -> Vec<OptSpec> {
    vec![
        OptSpec::new(
            "thread-yields",
            OptKind::Int,
            Some("1000"),
            "lock-yield-unlock rounds in every event",
        )
        .with_range(0.0, i32::MAX as f64),
        OptSpec::new(
            "thread-locks",
            OptKind::Int,
            Some("8"),
            "number of mutexes the threads share",
        )
        .with_range(1.0, i32::MAX as f64),
    ]
}

/// A mutex alone on its cache lines. 128 bytes rather than 64 because the spatial
/// prefetchers of many x86 cores fetch lines in adjacent pairs.
#[repr(align(128))]
struct PaddedMutex(Mutex<()>);

/// The configured test.
pub(crate) struct ThreadsTest {
    yields: u64,
    locks: Arc<[PaddedMutex]>,
}

impl ThreadsTest {
    pub(crate) fn from_options(opts: &OptionSet) -> Result<ThreadsTest, SystemTestError> {
        let yields = opts.int("thread-yields", 1000);
        if yields < 0 {
            return Err(SystemTestError::bad_value(
                "thread-yields",
                yields,
                "a value of at least 0",
            ));
        }
        let locks = opts.int("thread-locks", 8);
        if locks < 1 {
            return Err(SystemTestError::bad_value(
                "thread-locks",
                locks,
                "a value of at least 1",
            ));
        }
        Ok(ThreadsTest {
            yields: yields as u64,
            locks: (0..locks).map(|_| PaddedMutex(Mutex::new(()))).collect(),
        })
    }
}

impl ThreadsTest {
    /// `Thread yields per test: 1000 Locks used: 8`, an info line of the header.
    pub(crate) fn settings_line(&self) -> String {
        format!(
            "Thread yields per test: {} Locks used: {}",
            self.yields,
            self.locks.len()
        )
    }
}

impl Workload for ThreadsTest {
    fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        Ok(Box::new(ThreadsWorker {
            yields: self.yields,
            index: tid as usize % self.locks.len(),
            locks: self.locks.clone(),
        }))
    }
}

struct ThreadsWorker {
    yields: u64,
    index: usize,
    locks: Arc<[PaddedMutex]>,
}

impl Worker for ThreadsWorker {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        let lock = &self.locks[self.index].0;
        for _ in 0..self.yields {
            let guard = lock.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: sched_yield has no preconditions.
            unsafe { libc::sched_yield() };
            drop(guard);
        }
        Ok(EventFlow::Continue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutexes_do_not_share_cache_lines() {
        let locks: Vec<PaddedMutex> = (0..3).map(|_| PaddedMutex(Mutex::new(()))).collect();
        let gap =
            (&locks[1] as *const PaddedMutex as usize) - (&locks[0] as *const PaddedMutex as usize);
        assert!(gap >= 128);
        assert_eq!(&locks[0] as *const PaddedMutex as usize % 128, 0);
    }
}
