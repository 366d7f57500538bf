//! A minimal script runner for this crate's tests and micro benchmarks: loads a script
//! through the [`bmk_lua`] API and runs it with `bmk_engine::run`, like the `bmk` CLI
//! does, but with a tiny option parser and a plain, parse-friendly output:
//!
//! ```text
//! bmk-lua-host [--name=value]... <script.lua | -> [command]
//! ```
//!
//! `run` prints `interval: time=.. events=.. p99_ms=.. max_ms=.. queue=..` per
//! `--report-interval` (unless the script has a report hook) and a final
//! `total: events=.. time=.. eps=.. reads=.. writes=.. other=.. errors=.. reconnects=..
//! max_ms=..` line (unless it has a cumulative hook; also after a worker failed, before
//! the failure). It is not the real CLI.

use std::process::ExitCode;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use bmk_engine::options::{OptKind, OptSpec, OptionSet};
use bmk_engine::rand::{Distribution, RandConfig};
use bmk_engine::{Counter, CumulativeStats, IntervalStats, Observer, RunConfig, RunStatus};
use bmk_lua::{HostConfig, NoModules, ScriptHost, ScriptSource};

fn general_options() -> Vec<OptSpec> {
    vec![
        OptSpec::new("threads", OptKind::Int, Some("1"), "worker threads"),
        OptSpec::new("events", OptKind::Int, Some("0"), "event limit"),
        OptSpec::new("time", OptKind::Double, Some("10"), "time limit"),
        OptSpec::new("rate", OptKind::Double, Some("0"), "arrival rate"),
        OptSpec::new(
            "event-loops",
            OptKind::String,
            Some("auto"),
            "event-loop threads: auto, off or a number",
        ),
        OptSpec::new(
            "report-interval",
            OptKind::Double,
            Some("0"),
            "report interval",
        ),
        OptSpec::new("rand-seed", OptKind::Int, Some("0"), "seed"),
        OptSpec::new(
            "rand-type",
            OptKind::String,
            Some("uniform"),
            "distribution",
        ),
        OptSpec::new("percentile", OptKind::Double, Some("95"), "percentile"),
        OptSpec::new("verbosity", OptKind::Int, Some("3"), "verbosity"),
        OptSpec::new(
            "luajit-cmd",
            OptKind::String,
            None,
            "LuaJIT control command",
        ),
    ]
}

/// The database options of `bmk-sql`, with `sqlite` as the default driver.
fn sql_options() -> Vec<OptSpec> {
    bmk_sql::option_specs()
        .into_iter()
        .map(|mut o| {
            if o.name == "db-driver" {
                o.default = Some("sqlite".into());
            }
            o
        })
        .collect()
}

struct Printer<'a> {
    host: &'a mut ScriptHost,
    failed: Option<String>,
}

impl Observer for Printer<'_> {
    fn interval(&mut self, s: &IntervalStats) {
        if self.host.has_report_hook(true) {
            if let Err(e) = self.host.report_intermediate(s) {
                self.failed.get_or_insert(e.message);
            }
            return;
        }
        let max = if s.histogram.is_empty() {
            0
        } else {
            s.histogram.max()
        };
        println!(
            "interval: time={:.2} events={} p99_ms={:.3} max_ms={:.3} queue={} concurrency={}",
            s.time_total,
            s.events,
            s.percentile_ms(99.0),
            max as f64 / 1e6,
            s.queue_length,
            s.concurrency
        );
    }
}

fn print_total(s: &CumulativeStats) {
    // The repeats of the last logged message, held back until a different line, are
    // told first, as bmk tells them before its final report; without this the count of
    // a message the workers logged last depended on their order.
    bmk_lua::end_repeats();
    println!(
        "total: events={} time={:.3} eps={:.1} reads={} writes={} other={} errors={} reconnects={} max_ms={:.3}",
        s.events,
        s.time_total,
        s.per_sec(s.events),
        s.counters.get(Counter::Read),
        s.counters.get(Counter::Write),
        s.counters.get(Counter::Other),
        s.counters.get(Counter::Error),
        s.counters.get(Counter::Reconnect),
        s.max_ns as f64 / 1e6
    );
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{msg}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<(), String> {
    let argv: Vec<String> = std::env::args().collect();
    let mut options = OptionSet::new();
    options.declare(general_options());
    options.declare(sql_options());
    let mut positional = Vec::new();
    for arg in &argv[1..] {
        match arg.strip_prefix("--") {
            Some(opt) => {
                let (name, value) = opt.split_once('=').unwrap_or((opt, "on"));
                options.set(name, value).map_err(|e| e.to_string())?;
            }
            None => positional.push(arg.clone()),
        }
    }
    let script = positional.first().cloned().unwrap_or_else(|| "-".into());
    let command = positional.get(1).cloned().unwrap_or_else(|| "run".into());

    bmk_engine::rand::configure(RandConfig {
        seed: options.int("rand-seed", 0) as u64,
        default: Distribution::parse(&options.string("rand-type").unwrap_or_default())
            .unwrap_or(Distribution::Uniform),
        ..RandConfig::default()
    });

    let src = ScriptSource::resolve(&script, &NoModules).map_err(|e| e.message)?;
    let mut cfg = HostConfig::new(argv.clone(), &command, Arc::new(NoModules));
    cfg.options = options.clone();
    cfg.threads = options.int("threads", 1) as u32;
    let mut host = ScriptHost::load(src, cfg).map_err(|e| e.message)?;
    options.declare(host.declared_options());
    if let Some(bad) = options.undeclared_given().first() {
        return Err(format!("invalid option: --{bad}"));
    }
    options.validate().map_err(|e| e.to_string())?;
    host.set_options(options.clone()).map_err(|e| e.message)?;

    if host.has_command(&command) {
        return match host.run_command(&command).map_err(|e| e.message)? {
            bmk_lua::CommandOutcome::Done => Ok(()),
            bmk_lua::CommandOutcome::ReturnedFalse => Err(format!("{command} failed")),
            bmk_lua::CommandOutcome::ThreadsFailed(errors) => Err(errors
                .iter()
                .map(|e| e.message.as_str())
                .collect::<Vec<_>>()
                .join("\n")),
        };
    }
    match command.as_str() {
        "help" => {
            if host.script_help().map_err(|e| e.message)?.is_none() {
                print!("{}", host.options_help());
            }
            Ok(())
        }
        "run" => run(&mut host, &options),
        other => Err(format!("Unknown command: {other}")),
    }
}

fn run(host: &mut ScriptHost, options: &OptionSet) -> Result<(), String> {
    let secs = |name: &str| {
        let v = options.double(name, 0.0);
        (v > 0.0).then(|| Duration::from_secs_f64(v))
    };
    let config = RunConfig {
        threads: options.int("threads", 1).max(1) as u32,
        events: options.int("events", 0).max(0) as u64,
        time: secs("time"),
        rate: options.double("rate", 0.0),
        report_interval: secs("report-interval"),
        event_loops: match options.string("event-loops").as_deref() {
            None | Some("auto") => None,
            Some("off") => Some(0),
            Some(n) => Some(
                n.parse()
                    .map_err(|_| format!("invalid --event-loops value '{n}'"))?,
            ),
        },
        ..RunConfig::default()
    };
    host.init().map_err(|e| e.message)?;
    let test = host.workload();
    let mut printer = Printer { host, failed: None };
    let outcome = bmk_engine::run(config, test, &mut printer, &AtomicUsize::new(0));
    if let Some(msg) = printer.failed {
        return Err(msg);
    }
    host.close_reports();
    if let RunStatus::InitFailed(messages) = &outcome.status {
        return Err(messages.join("\n"));
    }
    if let RunStatus::Fatal(messages) = &outcome.status {
        // As bmk does: what was measured up to the failure, then the failure.
        print_total(&outcome.stats);
        return Err(messages.join("\n"));
    }
    if host.has_report_hook(false) {
        host.report_cumulative(&outcome.stats)
            .map_err(|e| e.message)?;
    } else {
        print_total(&outcome.stats);
    }
    host.done().map_err(|e| e.message)
}
