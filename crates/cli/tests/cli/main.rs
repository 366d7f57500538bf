//! End-to-end tests of the `bmk` binary: its command line, limits, reports and errors as
//! sysbench users expect them.
//!
//! Every test runs the real binary in its own temporary directory (see [`util::Dir`]);
//! strict sysbench mode is reached through a `sysbench` symlink in that directory.
//! Runs are kept short (`--events=N` or `--time=1`) so the whole suite stays fast.

mod analysis;
mod barrier;
mod cold_cache;
mod compat;
mod errors;
mod execution;
mod fault_proxy;
mod fileio;
mod fresh_postgres;
mod full_disk;
mod help_goldens;
mod kit;
mod kit_search;
mod kit_ssh;
mod legacy;
mod limits;
mod live_page;
mod metrics;
mod netns;
mod network_faults;
mod options;
mod output;
mod range_checks;
mod rate;
mod report_charts;
mod reports;
mod results;
mod script_commands;
mod server_db;
mod signals;
mod split;
mod sql_api;
mod sysbench_edges;
mod sysbench_env;
mod sysbench_words;
mod test_network;
mod tpcc_latency;
mod trust;
mod untrusted_results;
mod util;
mod verbosity;
