//! Micro benchmark of the Lua event loop: events per second of a no-op script
//! (`function event() end`) at 1 and 2 threads, through the same API the CLI uses.
//! When Debian's `sysbench` is on the PATH, runs it on the same script for a ratio.
//!
//! `cargo bench -p bmk-lua --bench noop_events` (set `BMK_BENCH_SECS` to change the
//! 5-second duration). The whole-tool comparison lives in the repository's `bench/`.

use std::io::Write;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use bmk_engine::options::{OptKind, OptSpec, OptionSet};
use bmk_engine::rand::RandConfig;
use bmk_engine::{Observer, RunConfig};
use bmk_lua::{HostConfig, NoModules, ScriptHost, ScriptSource};

const SCRIPT: &str = "function event() end\n";

struct Quiet;
impl Observer for Quiet {}

fn bmk_eps(threads: u32, secs: u64) -> f64 {
    bmk_engine::rand::configure(RandConfig::default());
    let mut options = OptionSet::new();
    options.declare([OptSpec::new("threads", OptKind::Int, Some("1"), "")]);
    options.set("threads", &threads.to_string()).unwrap();
    let mut cfg = HostConfig::new(vec!["bench".into()], "run", Arc::new(NoModules));
    cfg.options = options.clone();
    cfg.threads = threads;
    let mut host = ScriptHost::load(ScriptSource::from_text("noop.lua", SCRIPT), cfg).unwrap();
    host.set_options(options).unwrap();
    host.init().unwrap();
    let config = RunConfig {
        threads,
        time: Some(Duration::from_secs(secs)),
        ..RunConfig::default()
    };
    let outcome = bmk_engine::run(config, host.workload(), &mut Quiet, &AtomicUsize::new(0));
    host.done().unwrap();
    outcome.stats.events as f64 / outcome.stats.time_total
}

fn sysbench_eps(threads: u32, secs: u64) -> Option<f64> {
    let dir = std::env::temp_dir().join(format!("bmk-lua-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let script = dir.join("noop.lua");
    std::fs::File::create(&script)
        .ok()?
        .write_all(SCRIPT.as_bytes())
        .ok()?;
    let out = std::process::Command::new("sysbench")
        .current_dir(&dir)
        .args([
            "--rand-type=uniform".to_string(),
            format!("--threads={threads}"),
            format!("--time={secs}"),
            "noop.lua".to_string(),
            "run".to_string(),
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let events: f64 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("total number of events:"))?
        .trim()
        .parse()
        .ok()?;
    let time: f64 = text
        .lines()
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("total time:")
                .or_else(|| l.strip_prefix("time elapsed:"))
        })?
        .trim()
        .trim_end_matches('s')
        .parse()
        .ok()?;
    let _ = std::fs::remove_dir_all(&dir);
    Some(events / time)
}

fn main() {
    let secs = std::env::var("BMK_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    for threads in [1, 2] {
        let bmk = bmk_eps(threads, secs);
        print!(
            "no-op Lua events, {threads} thread(s): bmk {:.0}/s ({:.0}/s per thread)",
            bmk,
            bmk / threads as f64
        );
        match sysbench_eps(threads, secs) {
            Some(sb) => println!(", sysbench {:.0}/s, ratio {:.2}", sb, bmk / sb),
            None => println!(", sysbench not available"),
        }
    }
}
