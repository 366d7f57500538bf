//! End-to-end tests of the `bmk` binary against spec 1 (`shared/spec/01-cli-and-reports.md`)
//! and the "How it is checked" list of issue 2.
//!
//! Every test runs the real binary in its own temporary directory (see [`util::Dir`]);
//! strict sysbench mode is reached through a `sysbench` symlink in that directory.
//! Runs are kept short (`--events=N` or `--time=1`) so the whole suite stays fast.

mod barrier;
mod errors;
mod fileio;
mod help_goldens;
mod legacy;
mod limits;
mod options;
mod output;
mod rate;
mod reports;
mod results;
mod signals;
mod util;
mod verbosity;
