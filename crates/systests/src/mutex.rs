//! `mutex`: each thread runs exactly one event, a long series of busy loops each
//! followed by locking and unlocking a randomly chosen mutex.
//!
//! There are `--mutex-num` mutexes guarding counters. One event does `--mutex-locks`
//! rounds of: an empty loop of `--mutex-loops` iterations (kept by `black_box`), then
//! lock a uniformly random mutex, bump its counter, unlock. Then the worker stops.

use std::hint::black_box;
use std::sync::{Arc, Mutex};

use bmk_engine::options::{OptKind, OptSpec, OptionSet};
use bmk_engine::{EventFlow, Worker, WorkerContext, WorkerError, Workload};

use crate::SystemTestError;

pub(crate) fn options() -> Vec<OptSpec> {
    vec![
        OptSpec::new(
            "mutex-num",
            OptKind::Int,
            Some("4096"),
            "number of mutexes the threads pick from",
        )
        .with_range(1.0, i32::MAX as f64),
        OptSpec::new(
            "mutex-locks",
            OptKind::Int,
            Some("50000"),
            "mutex lock/unlock rounds each thread does",
        )
        .with_range(0.0, i64::MAX as f64),
        OptSpec::new(
            "mutex-loops",
            OptKind::Int,
            Some("10000"),
            "iterations of the empty loop before each lock",
        )
        .with_range(0.0, i64::MAX as f64),
    ]
}

/// The configured test.
pub(crate) struct MutexTest {
    locks: u64,
    loops: u64,
    mutexes: Arc<[Mutex<u64>]>,
}

impl MutexTest {
    pub(crate) fn from_options(opts: &OptionSet) -> Result<MutexTest, SystemTestError> {
        let num = opts.int("mutex-num", 4096);
        if !(1..=i64::from(i32::MAX)).contains(&num) {
            return Err(SystemTestError::bad_value(
                "mutex-num",
                num,
                "a value from 1 to 2147483647",
            ));
        }
        let non_negative = |name: &str, default: i64| -> Result<u64, SystemTestError> {
            let v = opts.int(name, default);
            u64::try_from(v)
                .map_err(|_| SystemTestError::bad_value(name, v, "a value of at least 0"))
        };
        Ok(MutexTest {
            locks: non_negative("mutex-locks", 50000)?,
            loops: non_negative("mutex-loops", 10000)?,
            mutexes: (0..num).map(|_| Mutex::new(0)).collect(),
        })
    }
}

impl Workload for MutexTest {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        Ok(Box::new(MutexWorker {
            locks: self.locks,
            loops: self.loops,
            mutexes: self.mutexes.clone(),
        }))
    }
}

struct MutexWorker {
    locks: u64,
    loops: u64,
    mutexes: Arc<[Mutex<u64>]>,
}

impl Worker for MutexWorker {
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        let last = self.mutexes.len() as u32 - 1;
        for _ in 0..self.locks {
            for i in 0..self.loops {
                black_box(i);
            }
            let j = bmk_engine::rand::uniform(0, last) as usize;
            let mut counter = self.mutexes[j].lock().unwrap_or_else(|p| p.into_inner());
            *counter += 1;
        }
        Ok(EventFlow::StopWorker)
    }
}
