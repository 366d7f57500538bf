//! Test support shared by every crate's integration tests: the one rule for a test
//! whose server or tool is missing, and names that do not collide.
//!
//! Owns: the skip-or-fail gate ([`unavailable`], [`require!`], [`ci`]) and
//! [`unique_name`]. A test that cannot run prints one `NOTE: skipping test:` line on
//! standard error, so a reader of the test log sees it; under `CI=true` (which `.ci/run`
//! sets) it fails instead, so CI never passes by skipping.
//!
//! Must not: depend on any bmk crate (the crates under test take it as a
//! dev-dependency, and a dependency back on them would link a second copy of the crate
//! under test), or hold fixtures of one crate's tests.

#![deny(missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};

/// True under CI (`CI=true`): a missing server or tool is a failure, not a skip.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The gate for a test whose `what` (a server, a program) is missing for reason `why`:
/// panics under CI, else prints the skip line and returns `None`, which the test turns
/// into an early return with [`require!`].
pub fn unavailable<T>(what: &str, why: &str) -> Option<T> {
    if ci() {
        panic!("{what} is required under CI=true but unavailable: {why}");
    }
    eprintln!("NOTE: skipping test: {what} unavailable: {why}");
    None
}

/// Unwraps an `Option` from a gated constructor, or returns from the test (a skip that
/// [`unavailable`] has already announced).
#[macro_export]
macro_rules! require {
    ($e:expr) => {
        match $e {
            Some(v) => v,
            None => return,
        }
    };
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A name `<prefix>_<pid>_<n>`, unique on this machine while the process lives: tests of
/// several processes (nextest runs each test in its own) share the servers, so database,
/// user and table names must not collide. `prefix` says which tests made it, so a
/// leftover is traceable.
pub fn unique_name(prefix: &str) -> String {
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_carry_the_prefix() {
        let a = unique_name("bmk_t");
        let b = unique_name("bmk_t");
        assert_ne!(a, b);
        assert!(
            a.starts_with(&format!("bmk_t_{}_", std::process::id())),
            "{a}"
        );
    }

    #[test]
    fn a_missing_server_is_a_skip_outside_ci_and_a_failure_in_ci() {
        // One test for both cases: the environment is process-wide.
        std::env::set_var("CI", "false");
        assert_eq!(unavailable::<u8>("a server", "refused"), None);
        std::env::set_var("CI", "true");
        let failed = std::panic::catch_unwind(|| unavailable::<u8>("a server", "refused"));
        std::env::remove_var("CI");
        assert!(failed.is_err());
    }
}
