//! Shared helpers: build a system test from `name=value` pairs and run it through the
//! engine with an event limit and no time limit.

#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::AtomicUsize;

use bmk_engine::options::OptionSet;
use bmk_engine::{run, Counter, CumulativeStats, Observer, RunConfig, RunStatus};
use bmk_systests::{build, BuildParams, ConfiguredSystemTest, SystemTestError, SystemTestKind};

struct Quiet;
impl Observer for Quiet {}

/// Builds `test` with `args` (option, value) for `threads` threads and `events` events.
pub fn try_bench(
    test: &str,
    args: &[(&str, &str)],
    threads: u32,
    events: u64,
    dir: Option<&Path>,
) -> Result<ConfiguredSystemTest, SystemTestError> {
    let test = SystemTestKind::by_name(test).expect("known test");
    let mut opts = OptionSet::new();
    opts.declare(test.options());
    for (k, v) in args {
        opts.set(k, v)?;
    }
    build(
        test,
        &opts,
        &BuildParams {
            threads,
            events,
            file_dir: dir.map(Path::to_path_buf),
            ..BuildParams::default()
        },
    )
}

/// Like [`try_bench`], panicking on errors.
pub fn bench(
    test: &str,
    args: &[(&str, &str)],
    threads: u32,
    events: u64,
    dir: Option<&Path>,
) -> ConfiguredSystemTest {
    try_bench(test, args, threads, events, dir).unwrap_or_else(|e| panic!("build failed: {e}"))
}

/// Runs `bench` on `threads` threads until `events` events (0 = until the workers stop).
pub fn run_events(bench: &ConfiguredSystemTest, threads: u32, events: u64) -> CumulativeStats {
    let config = RunConfig {
        threads,
        events,
        time: None,
        ..RunConfig::default()
    };
    let test = bench
        .workload()
        .unwrap_or_else(|e| panic!("not runnable: {e}"));
    let outcome = run(config, test, &mut Quiet, &AtomicUsize::new(0));
    assert_eq!(outcome.status, RunStatus::Completed, "run failed");
    outcome.stats
}

/// Runs and returns how the run ended (for failure tests).
pub fn run_status(bench: &ConfiguredSystemTest, threads: u32, events: u64) -> RunStatus {
    let config = RunConfig {
        threads,
        events,
        time: None,
        ..RunConfig::default()
    };
    let test = bench
        .workload()
        .unwrap_or_else(|e| panic!("not runnable: {e}"));
    run(config, test, &mut Quiet, &AtomicUsize::new(0)).status
}

/// One counter of a run.
pub fn counter(stats: &CumulativeStats, c: Counter) -> u64 {
    stats.counters.get(c)
}
