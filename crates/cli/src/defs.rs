//! The general options every test understands (sysbench's) and bmk's extensions, as
//! one table: it drives validation, `--help`, and the typed run settings.

use bmk_engine::options::{OptKind, OptSpec};

/// A group of options printed under one heading in `--help`.
pub struct OptionGroup {
    /// Heading printed above the group.
    pub title: &'static str,
    /// The options.
    pub specs: Vec<OptSpec>,
}

/// The most worker threads a run may ask for. Each worker is a thread (or a coroutine
/// with a stack of its own) and, for scripts, a LuaJIT state: far beyond this a run
/// exhausts memory or the system's thread limit before it starts.
pub const MAX_THREADS: f64 = 100_000.0;

/// The longest time option, in seconds (about 31 years): any time limit a run can
/// mean, and far below where a deadline computed from it overflows a clock.
pub const MAX_SECONDS: f64 = 1e9;

/// The highest `--rate`: the largest value sysbench takes (a C `int`). Beyond one
/// arrival per nanosecond no worker keeps up, so such a rate ends the run with
/// sysbench's "event queue is full" failure rather than being refused up front.
pub const MAX_RATE: f64 = i32::MAX as f64;

/// The shortest `--report-interval` besides 0: a millisecond, the precision of the
/// report's time prefix. Shorter intervals only print the same `[ 0s ]` line over
/// and over.
pub const MIN_REPORT_INTERVAL: f64 = 0.001;

fn o(name: &str, kind: OptKind, default: Option<&str>, help: &str) -> OptSpec {
    OptSpec::new(name, kind, default, help)
}

/// Every general option, grouped as `--help` shows them.
pub fn general_groups() -> Vec<OptionGroup> {
    use OptKind::*;
    vec![
        OptionGroup {
            title: "General options:",
            specs: vec![
                o("threads", Int, Some("1"), "number of worker threads").with_range(1.0, MAX_THREADS),
                o("events", Int, Some("0"), "stop after this many events in total (0 = no limit)")
                    .with_range(0.0, 9.2e18),
                o("time", Int, Some("10"), "stop after this many seconds (0 = no limit)")
                    .with_range(0.0, MAX_SECONDS),
                o("warmup-time", Int, Some("0"), "seconds to run with statistics off before the measured --time")
                    .with_range(0.0, MAX_SECONDS),
                o("forced-shutdown", String, Some("off"), "seconds (or N% of --time) to wait after --time before forcing the exit; 'off' waits for workers"),
                o("thread-stack-size", Size, Some("64K"), "stack size of each worker thread")
                    .with_range(16384.0, (1u64 << 30) as f64),
                o("thread-init-timeout", Int, Some("30"), "seconds allowed for all workers to initialize (0 = no limit)")
                    .with_range(0.0, MAX_SECONDS),
                o("rate", Double, Some("0"), "open-loop mode: average event arrivals per second (0 = closed loop)")
                    .with_range(0.0, MAX_RATE),
                o("report-interval", Double, Some("0"), "print an intermediate report every N seconds, fractions allowed (0 = off)")
                    .with_range_or_zero(MIN_REPORT_INTERVAL, MAX_SECONDS),
                o("report-checkpoints", List, Some(""), "seconds after the start at which to print a full cumulative report and reset counters"),
                o("debug", Bool, Some("off"), "print debugging output"),
                o("validate", Bool, Some("off"), "run validation checks where the test supports them"),
                o("help", Bool, Some("off"), "print this help and exit"),
                o("version", Bool, Some("off"), "print the version and exit"),
                o("config-file", File, None, "read options from a file of name=value lines"),
                o("luajit-cmd", String, None, "LuaJIT control command, as `luajit -j` takes it"),
                o("tx-rate", Double, Some("0"), "old name of --rate").with_range(0.0, MAX_RATE),
                o("max-requests", Int, Some("0"), "old name of --events").with_range(0.0, 9.2e18),
                o("max-time", Int, Some("0"), "old name of --time").with_range(0.0, MAX_SECONDS),
                o("num-threads", Int, Some("1"), "old name of --threads").with_range(1.0, MAX_THREADS),
            ],
        },
        OptionGroup {
            title: "Pseudo-Random Numbers Generator options:",
            specs: vec![
                o("rand-type", String, Some("uniform"), "distribution of random numbers")
                    .with_choices(&["uniform", "gaussian", "special", "pareto", "zipfian"]),
                o("rand-seed", Int, Some("0"), "random generator seed; 0 seeds from the clock")
                    .with_range(0.0, 1.8e19),
                o("rand-spec-iter", Int, Some("12"), "special distribution: uniform draws summed per number")
                    .with_range(1.0, 1e6),
                o("rand-spec-pct", Double, Some("1"), "special distribution: percentage of the range that is hot")
                    .with_range(0.0, 100.0),
                o("rand-spec-res", Double, Some("75"), "special distribution: percentage of draws that land in the hot part")
                    .with_range(0.0, 100.0),
                o("rand-pareto-h", Double, Some("0.2"), "pareto distribution: shape parameter h")
                    .with_range(0.0001, 0.9999),
                o("rand-zipfian-exp", Double, Some("0.8"), "zipfian distribution: exponent (theta)")
                    .with_range(0.0, 100.0),
            ],
        },
        OptionGroup {
            title: "Log options:",
            specs: vec![
                o("verbosity", Int, Some("3"), "how much to print, from 0 (critical only) to 5 (debug)")
                    .with_range(0.0, 5.0),
                o("percentile", Double, Some("95"), "latency percentile shown in reports (1-100; 0 turns it off)")
                    .with_range_or_zero(1.0, 100.0),
                o("histogram", Bool, Some("off"), "print the latency histogram before the final report"),
            ],
        },
        OptionGroup {
            title: "bmk extensions:",
            specs: vec![
                o("percentiles", List, Some(""), "several latency percentiles for the final report, e.g. 50,95,99,99.9"),
                o("report-format", String, Some("text"), "format of intermediate and final reports")
                    .with_choices(&["text", "csv", "json"]),
                o("results", File, None, "write the whole run (options, host, intervals, final statistics, histogram) to this JSON file"),
                o("sysbench-compat", String, None, "sysbench release to reproduce, 1.1 or 1.0 (default: $BMK_SYSBENCH_COMPAT, else 1.1)"),
                o("barrier", String, None, "start together with other bmk processes: the name of a start barrier in the target database (MySQL/MariaDB, PostgreSQL); see --clients"),
                o("clients", Int, Some("1"), "with --barrier: how many bmk processes start together")
                    .with_range(1.0, 1e6),
                o("barrier-timeout", Int, Some("300"), "with --barrier: seconds to wait for the other clients before giving up")
                    .with_range(1.0, MAX_SECONDS),
                o("results-dir", File, None, "write a results directory (run.json, the level's intervals with histograms, result.json, summary.csv, captured server and OS status) to this new directory"),
                o("max-users-per-process", Int, Some("0"), "run a level with more users than this as several bmk processes started together and merged (needs --results-dir; 0 = what the open-files limit allows)")
                    .with_range(0.0, 1e9),
                o("capture-interval", Double, Some("1"), "seconds between status samples written to --results-dir (0 = no capture); samples fall on multiples of it")
                    .with_range(0.0, 86400.0),
                o("metrics-addr", String, None, "serve live metrics for Prometheus at http://ADDR/metrics (OpenMetrics text, updated every report interval or second): PORT listens on 127.0.0.1, HOST:PORT where given; see docs/metrics.md"),
                o("metrics-push", String, None, "push live metrics to the Prometheus Pushgateway at this http:// URL after every interval and once at the end"),
                o("target", String, None, "connect as the named target of bmk.toml (plain options still override it)"),
                o("config", File, None, "the bmk.toml holding targets (default: $BMK_HOME/bmk.toml, else ./bmk.toml)"),
                o("native-oltp", Bool, Some("on"), "run the built-in OLTP workloads' events on native workers when every option given is one they implement (else in Lua); off: always Lua (default: $BMK_NATIVE_OLTP, else on)"),
                o("event-loops", String, Some("auto"), "threads that run the workers as coroutines (Lua scripts and built-in OLTP on MySQL or PostgreSQL over bmk's own protocol paths, Lua scripts on SQLite; never with --rate): auto = one per CPU or one per 64 workers, whichever is more; off = a thread per worker, for scripts that block outside bmk's API"),
            ],
        },
        OptionGroup {
            title: "General database options:",
            specs: vec![
                o("db-driver", String, Some("mysql"), "database driver to use ('help' lists them)"),
                o("db-ps-mode", String, Some("auto"), "prepared statements: auto uses server-side ones, disable substitutes values on the client")
                    .with_choices(&["auto", "disable"]),
                o("db-debug", Bool, Some("off"), "print every database call"),
            ],
        },
    ]
}

/// Every general option in one list.
pub fn general_specs() -> Vec<OptSpec> {
    general_groups().into_iter().flat_map(|g| g.specs).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_parses_as_its_own_type() {
        for spec in general_specs() {
            if let Some(d) = &spec.default {
                if spec.choices.is_none() || !d.is_empty() {
                    spec.parse(d)
                        .unwrap_or_else(|e| panic!("default of --{}: {e}", spec.name));
                }
            }
        }
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<String> = general_specs().iter().map(|s| s.key()).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n);
    }
}
