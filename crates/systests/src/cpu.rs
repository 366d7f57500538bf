//! `cpu`: every event counts the primes up to `--cpu-max-prime` by trial division.
//!
//! The algorithm is the reference's: each number from 3 to the limit is divided by
//! every candidate from 2 up to its square root, stopping at the first divisor. Nothing
//! is remembered between events, so each one does the whole job again.

use std::hint::black_box;

use bmk_engine::options::{OptKind, OptSpec, OptionSet};
use bmk_engine::{EventFlow, Worker, WorkerContext, WorkerError, Workload};

use crate::SystemTestError;

pub(crate) fn options() -> Vec<OptSpec> {
    vec![OptSpec::new(
        "cpu-max-prime",
        OptKind::Int,
        Some("10000"),
        "count the primes up to this number in every event",
    )
    .with_range(1.0, u32::MAX as f64)]
}

/// The configured test.
pub(crate) struct CpuTest {
    max_prime: u32,
}

impl CpuTest {
    pub(crate) fn from_options(opts: &OptionSet) -> Result<CpuTest, SystemTestError> {
        let max = opts.int("cpu-max-prime", 10000);
        let max_prime = u32::try_from(max).ok().filter(|&m| m >= 1).ok_or_else(|| {
            SystemTestError::bad_value("cpu-max-prime", max, "a value from 1 to 4294967295")
        })?;
        Ok(CpuTest { max_prime })
    }

    pub(crate) fn header_lines(&self) -> Vec<String> {
        vec![
            format!("Prime numbers limit: {}", self.max_prime),
            String::new(),
        ]
    }
}

impl Workload for CpuTest {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        Ok(Box::new(CpuWorker {
            max_prime: self.max_prime,
        }))
    }
}

struct CpuWorker {
    max_prime: u32,
}

impl Worker for CpuWorker {
    #[inline]
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        black_box(count_primes(black_box(self.max_prime)));
        Ok(EventFlow::Continue)
    }
}

/// The number of primes in `[2, max]`, found by trial division of every odd and even
/// number from 3 on (2 is counted without testing, as the reference never tests it).
pub(crate) fn count_primes(max: u32) -> u32 {
    let mut count = u32::from(max >= 2);
    // `root` tracks floor(sqrt(c)) as c grows, so no square root per number.
    let mut root: u32 = 1;
    let mut c: u32 = 3;
    while c <= max {
        while u64::from(root + 1) * u64::from(root + 1) <= u64::from(c) {
            root += 1;
        }
        let mut divisor = 2;
        while divisor <= root && c % divisor != 0 {
            divisor += 1;
        }
        count += u32::from(divisor > root);
        if c == u32::MAX {
            break;
        }
        c += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_prime_totals() {
        assert_eq!(count_primes(1), 0);
        assert_eq!(count_primes(2), 1);
        assert_eq!(count_primes(3), 2);
        assert_eq!(count_primes(4), 2);
        assert_eq!(count_primes(25), 9);
        assert_eq!(count_primes(100), 25);
        assert_eq!(count_primes(10_000), 1229);
        assert_eq!(count_primes(100_000), 9592);
    }
}
