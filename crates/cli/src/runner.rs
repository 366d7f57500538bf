//! The `run` command: print the header, drive the engine, print what it measured.
//!
//! Whatever the benchmark (a built-in system test or a Lua script), the sequence is the
//! same; each kind implements [`Benchmark`] to fit it. Reports go through `bmk-report`
//! unless the benchmark replaces them (Lua report hooks).

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use anyhow::Result;
use bmk_engine::{CumulativeStats, IntervalStats, Observer, StartGate};
use bmk_report::{ReportConfig, Reporter};

use crate::benchmark::Benchmark;
use crate::metrics_sink::{self, MetricsSink};
use crate::results::ResultsSink;
use crate::results_dir::LevelSink;
use crate::run_settings::RunSettings;
use crate::run_verdict::{self, VerdictContext};
use crate::script_failure::failure_text;
use crate::verbosity::{Level, Verbosity};
use bmk_kit::start_barrier::DatabaseGate;

struct PrintingObserver<'a, 'm> {
    bench: &'a mut dyn Benchmark,
    reporter: Reporter,
    results: Option<&'a mut ResultsSink>,
    level: Option<&'a mut LevelSink>,
    warmup_time: std::time::Duration,
    /// A report hook raised (the run goes on, as in sysbench).
    hook_failed: bool,
    as_sysbench: bool,
    verbosity: Verbosity,
    threads: u32,
    time_limit_reached: bool,
    /// When the workers were released (the system's clock).
    released: Option<std::time::SystemTime>,
    /// The live metrics, updated here on the controlling thread.
    metrics: Option<&'m MetricsSink>,
    /// Whether intervals are the user's (printed and recorded) or only fall due for
    /// the live metrics.
    reports_intervals: bool,
}

impl PrintingObserver<'_, '_> {
    fn out(&mut self) -> std::io::StdoutLock<'static> {
        std::io::stdout().lock()
    }
}

impl Observer for PrintingObserver<'_, '_> {
    fn threads_started(&mut self) {
        // Every worker has run its thread_init now: a script's layout is known.
        let layout = self.bench.layout();
        self.reporter.set_layout(layout);
        self.released = Some(std::time::SystemTime::now());
        if let Some(metrics) = self.metrics {
            metrics.threads_started(self.threads);
            if self.warmup_time.is_zero() {
                metrics.measuring();
            }
        }
        let mut out = self.out();
        if self.verbosity.shows(Level::Debug) {
            for tid in 0..self.threads {
                let _ = writeln!(out, "DEBUG: Worker thread (#{tid}) started");
                let _ = writeln!(out, "DEBUG: Worker thread (#{tid}) initialized");
            }
        }
        if self.verbosity.shows(Level::Notice) {
            let _ = writeln!(out, "Threads started!\n");
            if !self.warmup_time.is_zero() {
                let _ = writeln!(
                    out,
                    "Warming up for {} seconds...\n",
                    self.warmup_time.as_secs()
                );
            }
        }
        let _ = out.flush();
        if self.warmup_time.is_zero() {
            if let Some(level) = self.level.as_deref_mut() {
                level.measuring();
            }
        }
    }

    fn warmup_finished(&mut self) {
        if let Some(metrics) = self.metrics {
            metrics.measuring();
        }
        if let Some(level) = self.level.as_deref_mut() {
            level.measuring();
        }
    }

    fn time_limit_reached(&mut self) {
        self.time_limit_reached = true;
        if self.verbosity.shows(Level::Info) {
            let mut out = self.out();
            let _ = writeln!(out, "Time limit exceeded, exiting...");
            let _ = out.flush();
        }
    }

    fn interval(&mut self, stats: &IntervalStats) {
        if let Some(metrics) = self.metrics {
            metrics.interval(stats);
        }
        if !self.reports_intervals {
            return;
        }
        // A script may make its first driver in event(): sysbench decides the layout
        // at each report.
        let layout = self.bench.layout();
        self.reporter.set_layout(layout);
        if let Some(results) = self.results.as_deref_mut() {
            results.interval(stats);
        }
        if let Some(level) = self.level.as_deref_mut() {
            level.interval(stats);
        }
        match self.bench.report_interval(stats) {
            Ok(true) => {}
            Ok(false) if !self.verbosity.shows(Level::Notice) => {}
            Ok(false) => {
                let mut out = self.out();
                let _ = self.reporter.interval(&mut out, stats);
                let _ = out.flush();
            }
            Err(e) => {
                self.hook_failed = true;
                log_hook_failure(&e, self.as_sysbench);
            }
        }
    }

    fn checkpoint(&mut self, at: f64, stats: &CumulativeStats) {
        let layout = self.bench.layout();
        self.reporter.set_layout(layout);
        if let Some(results) = self.results.as_deref_mut() {
            results.checkpoint(at, stats);
        }
        if let Some(level) = self.level.as_deref_mut() {
            level.checkpoint(at, stats);
        }
        if !self.verbosity.shows(Level::Notice) {
            return;
        }
        let mut out = self.out();
        let _ = self.reporter.checkpoint(&mut out, at, stats);
        let _ = out.flush();
    }
}

/// The workers' failure messages, on stdout beside the run's other `FATAL:` lines, as
/// sysbench prints them. Threads that failed alike print one message followed by
/// sysbench's "(last message repeated N times)": a thousand tracebacks say no more
/// than one.
fn print_failures(
    out: &mut impl Write,
    messages: &[String],
    as_sysbench: bool,
) -> std::io::Result<()> {
    // Counted by text in first-seen order; a map keeps ten thousand distinct failures
    // (one per connection) from being compared with each other.
    let mut distinct: Vec<(&str, usize)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for m in messages
        .iter()
        .map(|m| failure_text(m, as_sysbench).trim_end())
        .filter(|m| !m.is_empty())
    {
        match index.get(m) {
            Some(&i) => distinct[i].1 += 1,
            None => {
                index.insert(m, distinct.len());
                distinct.push((m, 1));
            }
        }
    }
    for (message, count) in distinct {
        print_fatal(out, message)?;
        if count > 1 {
            writeln!(out, "(last message repeated {} times)", count - 1)?;
        }
    }
    Ok(())
}

/// One failure, with sysbench's `FATAL: ` in front unless it has one already.
fn print_fatal(out: &mut impl Write, message: &str) -> std::io::Result<()> {
    if message.starts_with("FATAL:") {
        writeln!(out, "{message}")
    } else {
        writeln!(out, "FATAL: {message}")
    }
}

/// A report hook that raised: ``FATAL: `report_cumulative' function failed: ...`` on
/// stdout through sysbench's log, so that a hook failing at every report is told once
/// with its repeats counted.
fn log_hook_failure(error: &anyhow::Error, as_sysbench: bool) {
    let _ = std::io::stdout().flush();
    let text = format!("{error:#}");
    let text = failure_text(&text, as_sysbench).trim_end();
    if text.starts_with("FATAL:") {
        bmk_lua::log_fatal(text);
    } else {
        bmk_lua::log_fatal(&format!("FATAL: {text}"));
    }
}

/// A failure of the script's `init()` or `done()`, on stdout like the workers'.
fn print_fatal_now(error: &anyhow::Error, as_sysbench: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    print_fatal(&mut out, failure_text(&format!("{error:#}"), as_sysbench))?;
    out.flush()
}

/// Prints the run header, runs, prints the final report; returns the exit code.
pub fn run(
    bench: &mut dyn Benchmark,
    mut settings: RunSettings,
    interrupt: &Arc<AtomicUsize>,
) -> Result<i32> {
    // A level with more users than one process holds runs as several processes.
    if let Some(plan) = crate::split_plan::plan(&settings)? {
        return crate::split_plan::run(&settings, &plan, interrupt);
    }
    // A part of a split level: its parent writes the level's results.
    let mut part_gate =
        bmk_kit::split_gate::SplitGate::from_env().map_err(crate::user_error::user_error)?;
    if part_gate.is_some() {
        settings.report.results = None;
    }
    let mut metrics = MetricsSink::start(&settings, part_gate.as_ref().map(|g| g.index()))?;
    // Live metrics are updated at each interval: a run without intermediate reports
    // gets intervals of its own, which update the metrics only.
    let reports_intervals = settings.config.report_interval.is_some();
    if metrics.is_some() && !reports_intervals {
        settings.config.report_interval = Some(metrics_sink::DEFAULT_UPDATE);
    }
    apply_event_limit(&*bench, &mut settings);
    // sysbench calls the script's init() before it prints the header, so what init()
    // prints comes first and a failing init() leaves no header behind.
    if let Err(e) = bench.before_run() {
        print_fatal_now(&e, settings.as_sysbench)?;
        return Ok(1);
    }
    let verbosity = settings.verbosity;
    if verbosity.shows(Level::Notice) {
        print_header(&*bench, &settings);
    }

    let report_config = report_config(&*bench, &settings);
    let mut results = match &settings.report.results {
        Some(path) => Some(ResultsSink::create(path, &settings, &report_config)?),
        None => None,
    };
    let mut level = LevelSink::create(&settings, &report_config)?;
    let gate_free = settings.barrier.is_none() && part_gate.is_none();
    let mut second_gate = whole_second_gate(level.as_mut().filter(|_| gate_free));
    let test = bench.workload();
    let mut observer = PrintingObserver {
        bench,
        reporter: reporter(&report_config, &settings),
        results: results.as_mut(),
        level: level.as_mut(),
        warmup_time: settings.config.warmup,
        hook_failed: false,
        as_sysbench: settings.as_sysbench,
        verbosity,
        threads: settings.config.threads,
        time_limit_reached: false,
        released: None,
        metrics: metrics.as_ref(),
        reports_intervals,
    };
    if verbosity.shows(Level::Notice) {
        println!("Initializing worker threads...\n");
    }
    let mut gate = settings
        .barrier
        .clone()
        .map(|b| DatabaseGate::new(b, verbosity.shows(Level::Notice)));
    // One gate at most: the barrier's, else a split part's, else the whole second.
    let start_gate: Option<&mut dyn StartGate> = match gate.as_mut() {
        Some(g) => Some(g),
        None => match part_gate.as_mut() {
            Some(g) => Some(g),
            None => second_gate.as_mut().map(|g| g as &mut dyn StartGate),
        },
    };
    let config = settings.config.clone();
    let outcome = match start_gate {
        Some(g) => bmk_engine::run_gated(config, test, &mut observer, interrupt, g),
        None => bmk_engine::run(config, test, &mut observer, interrupt),
    };
    let PrintingObserver {
        bench,
        mut reporter,
        hook_failed,
        time_limit_reached,
        released,
        ..
    } = observer;
    // The barrier hears that this client is done as soon as its workers are.
    let start = gate
        .as_ref()
        .and_then(|g| g.start_record(released))
        .or_else(|| part_gate.as_ref().and_then(|g| g.start_record(released)));
    let barrier_error = gate.as_mut().and_then(|g| g.finish().err());
    if let Some(metrics) = metrics.as_mut() {
        metrics.finish(&outcome);
    }

    let verdict = run_verdict::verdict(&outcome, &verdict_context(&settings, time_limit_reached));
    let mut code = verdict.code;
    let mut out = std::io::stdout().lock();
    print_failures(&mut out, verdict.failures, settings.as_sysbench)?;
    for line in &verdict.lines {
        writeln!(out, "{line}")?;
    }
    if verdict.ends_now {
        out.flush()?;
        if let Some(e) = &verdict.error {
            eprintln!("{e}");
        }
        return finish_sinks(None, level, &outcome, None).map(|()| code);
    }
    // A hook that failed fails the run as bmk; sysbench's exit code stays 0.
    if hook_failed && !settings.as_sysbench {
        code = 1;
    }
    if let Some(e) = barrier_error {
        // The run itself went well; only the other clients' view of it is affected.
        eprintln!("WARNING: could not mark this client done at the barrier: {e}");
    }
    let mut final_report = FinalReport {
        bench,
        reporter: &mut reporter,
        outcome: &outcome,
        settings: &settings,
        failed_without_report: verdict.no_report,
    };
    final_report.print(&mut out, &mut code)?;
    drop(out);
    final_report.after_run(&mut code)?;
    finish_sinks(results, level, &outcome, start)?;
    Ok(code)
}

/// Completes the run's results file and level folder (a run that ends without a
/// report writes no results file).
fn finish_sinks(
    results: Option<ResultsSink>,
    level: Option<LevelSink>,
    outcome: &bmk_engine::RunOutcome,
    start: Option<bmk_results::results_file::StartRecord>,
) -> Result<()> {
    if let Some(results) = results {
        results.finish(outcome, start.clone())?;
    }
    if let Some(level) = level {
        level.finish(outcome, start)?;
    }
    Ok(())
}

/// The event limit the run obeys: invoked as `sysbench`, the memory test's own limit
/// replaces --events; otherwise bmk stops at whichever comes first.
fn apply_event_limit(bench: &dyn Benchmark, settings: &mut RunSettings) {
    if settings.as_sysbench && bench.ignores_event_option() {
        settings.config.events = bench.implied_event_limit().unwrap_or(0);
    } else if let Some(limit) = bench.implied_event_limit() {
        settings.config.events = match settings.config.events {
            0 => limit,
            given => given.min(limit),
        };
    }
}

/// A level written to a results directory starts on a whole second, so that its
/// intervals end on the capture's ticks (the other gates name their own instant).
fn whole_second_gate(
    level: Option<&mut LevelSink>,
) -> Option<bmk_kit::whole_second::WholeSecondGate> {
    let level = level?;
    let gate = bmk_kit::whole_second::WholeSecondGate::default();
    level.release_from(gate.release.clone());
    Some(gate)
}

/// What the reports of this run look like.
fn report_config(bench: &dyn Benchmark, settings: &RunSettings) -> ReportConfig {
    ReportConfig {
        format: settings.report.format,
        layout: bench.layout(),
        percentile: settings.report.percentile,
        percentiles: settings.report.percentiles.clone(),
        report_interval: stamp_step(settings.report.interval, &settings.config.checkpoints),
        rate_mode: settings.config.rate > 0.0,
    }
}

/// The reporter, worded as the compatibility level and the invocation ask.
fn reporter(config: &ReportConfig, settings: &RunSettings) -> Reporter {
    let mut reporter = Reporter::new(config);
    reporter.set_sysbench_1_0(settings.compat.is_1_0());
    if settings.as_sysbench {
        reporter.hide_schedule_lag();
    }
    reporter
}

/// What the verdict on a run's outcome depends on besides the outcome.
fn verdict_context(settings: &RunSettings, time_limit_reached: bool) -> VerdictContext {
    VerdictContext {
        info: settings.verbosity.shows(Level::Info),
        time_limit_reached,
        as_sysbench: settings.as_sysbench,
        forced_shutdown: settings.config.forced_shutdown.is_some(),
        stop_grace_s: settings.config.stop_grace.as_secs(),
        sysbench_1_0: settings.compat.is_1_0(),
        init_timeout_s: settings.config.thread_init_timeout.as_secs(),
    }
}

/// The end of a run that reports: the histogram, the final report (or the script's
/// `report_cumulative` hook in its place), then the script's `done()`.
struct FinalReport<'a> {
    bench: &'a mut dyn Benchmark,
    reporter: &'a mut Reporter,
    outcome: &'a bmk_engine::RunOutcome,
    settings: &'a RunSettings,
    failed_without_report: bool,
}

impl FinalReport<'_> {
    /// Prints the histogram and the final report; a failing report hook sets `code`.
    fn print(&mut self, out: &mut impl Write, code: &mut i32) -> Result<()> {
        let as_sysbench = self.settings.as_sysbench;
        let notice = self.settings.verbosity.shows(Level::Notice) && !self.failed_without_report;
        if self.settings.report.histogram && notice {
            self.reporter
                .histogram(out, &self.outcome.stats.histogram)?;
        }
        let replaced = if self.failed_without_report {
            true
        } else {
            match self.bench.report_cumulative(&self.outcome.stats) {
                Ok(replaced) => replaced,
                // The hook replaced the default report even though it failed.
                Err(e) => {
                    log_hook_failure(&e, as_sysbench);
                    if !as_sysbench {
                        *code = 1;
                    }
                    true
                }
            }
        };
        if !replaced && notice {
            bmk_lua::end_repeats();
            self.reporter.set_layout(self.bench.layout());
            self.reporter.final_report(out, &self.outcome.stats)?;
        }
        out.flush()?;
        Ok(())
    }

    /// sysbench calls the script's done() after printing the final report; not while
    /// abandoned workers may still use what done() tears down.
    fn after_run(&mut self, code: &mut i32) -> Result<()> {
        if *code != 2 && self.outcome.abandoned == 0 {
            if let Err(e) = self.bench.after_run() {
                print_fatal_now(&e, self.settings.as_sysbench)?;
                *code = 1;
            }
        }
        Ok(())
    }
}

fn print_header(bench: &dyn Benchmark, settings: &RunSettings) {
    let c = &settings.config;
    let mut h = String::from("Running the test with following options:\n");
    h.push_str(&format!("Number of threads: {}\n", c.threads));
    if c.rate > 0.0 {
        h.push_str(&format!(
            "Target transaction rate: {}/sec\n",
            trim_num(c.rate)
        ));
    }
    if settings.report.interval > 0.0 {
        h.push_str(&format!(
            "Report intermediate results every {} second(s)\n",
            trim_num(settings.report.interval)
        ));
    }
    if !c.checkpoints.is_empty() {
        let list: Vec<String> = c
            .checkpoints
            .iter()
            .map(|d| trim_num(d.as_secs_f64()))
            .collect();
        h.push_str(&format!(
            "Report checkpoint(s) at {} seconds\n",
            list.join(", ")
        ));
    }
    if !c.warmup.is_zero() {
        h.push_str(&format!("Warmup time: {}s\n", c.warmup.as_secs()));
    }
    if settings.options.flag("debug") {
        h.push_str("Debug mode enabled.\n\n");
    }
    if settings.options.flag("validate") {
        h.push_str("Validation checks: on.\n\n");
    }
    match settings.seed {
        Some(seed) => h.push_str(&format!(
            "Initializing random number generator from seed ({seed}).\n"
        )),
        None => h.push_str("Initializing random number generator from current time\n"),
    }
    h.push('\n');
    // The moment the run is cut short, in whole seconds after the start (sysbench
    // keeps both figures as unsigned integers); only a run with a time limit has one.
    if let (Some(time), Some(grace)) = (c.time, c.forced_shutdown) {
        h.push_str(&format!(
            "Forcing shutdown in {} seconds\n",
            time.as_secs() + grace.as_secs()
        ));
    }
    h.push('\n');
    let info = if settings.verbosity.shows(Level::Info) {
        bench.info_lines()
    } else {
        Vec::new()
    };
    // Tests end their own lines with a blank one where they want it.
    for l in info.into_iter().chain(bench.header_lines()) {
        h.push_str(&l);
        h.push('\n');
    }
    print!("{h}");
}

/// The step whose decimals the `[ Ns ]` stamps need: the report interval, or a
/// fractional `--report-checkpoints` value when that needs more decimals (`[ 0.5s ]
/// Checkpoint report:` rather than `[ 1s ]`).
fn stamp_step(interval: f64, checkpoints: &[std::time::Duration]) -> f64 {
    let decimals = bmk_report::printf::time_decimals;
    checkpoints
        .iter()
        .map(|c| c.as_secs_f64())
        .fold(interval, |step, c| {
            if decimals(c) > decimals(step) {
                c
            } else {
                step
            }
        })
}

/// `5` for 5.0, `0.25` for 0.25.
fn trim_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}
