//! Runs one built-in test through the engine without the CLI, for quick speed checks:
//! `cargo run --release -p bmk-systests --example systest -- cpu 2 5 cpu-max-prime=20000`
//! (test, threads, seconds, then option=value pairs). Prints events/s and counters.

use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use bmk_engine::options::OptionSet;
use bmk_engine::{run, Counter, Observer, RunConfig};
use bmk_systests::{build, BuildParams, SystemTestKind};

struct Quiet;
impl Observer for Quiet {}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let test = SystemTestKind::by_name(&args[0]).expect("test name");
    let threads: u32 = args[1].parse().expect("threads");
    let seconds: u64 = args[2].parse().expect("seconds");
    let mut opts = OptionSet::new();
    opts.declare(test.options());
    for pair in &args[3..] {
        let (k, v) = pair.split_once('=').expect("option=value");
        opts.set(k, v).unwrap_or_else(|e| panic!("{e}"));
    }
    let params = BuildParams {
        threads,
        ..BuildParams::default()
    };
    let bench = build(test, &opts, &params).unwrap_or_else(|e| panic!("{e}"));
    for line in bench.header_lines() {
        println!("{line}");
    }
    let config = RunConfig {
        threads,
        events: bench.event_limit().unwrap_or(0),
        time: (seconds > 0).then(|| Duration::from_secs(seconds)),
        ..RunConfig::default()
    };
    let test = bench.workload().unwrap_or_else(|e| panic!("{e}"));
    let stats = run(config, test, &mut Quiet, &AtomicUsize::new(0)).stats;
    let t = stats.time_total;
    println!(
        "time {t:.4}s events {} eps {:.2}",
        stats.events,
        stats.per_sec(stats.events)
    );
    if let Some(block) = bench.memory_block_size() {
        let mib = (stats.events * block) as f64 / 1048576.0;
        println!("{mib:.2} MiB transferred ({:.2} MiB/sec)", mib / t);
    }
    let c = &stats.counters;
    println!(
        "reads/s {:.2} writes/s {:.2} fsyncs/s {:.2} read MiB/s {:.2} written MiB/s {:.2}",
        stats.per_sec(c.get(Counter::Read)),
        stats.per_sec(c.get(Counter::Write)),
        stats.per_sec(c.get(Counter::Other)),
        stats.per_sec(c.get(Counter::BytesRead)) / 1048576.0,
        stats.per_sec(c.get(Counter::BytesWritten)) / 1048576.0,
    );
    println!("avg latency {:.4} ms", stats.avg_ms());
}
