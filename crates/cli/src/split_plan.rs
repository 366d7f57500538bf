//! `--max-users-per-process N`: whether a level runs as several processes, and with
//! which arguments each of them runs. The kit runs them and merges their results
//! (`bmk_kit::split_run`); this module only reads the run's settings.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use anyhow::{anyhow, Result};
use bmk_kit::split_gate::GATE_ENV;
use bmk_kit::split_run::{default_limit, shares, LineSettings, SplitJob, SplitPlan};
use bmk_kit::sweep::LEVEL_DIR_ENV;
use bmk_report::ReportFormat;

use crate::results_dir::create_plain_run;
use crate::run_settings::RunSettings;
use crate::user_error::user_error;
use crate::verbosity::Level as Verbosity;

/// The split this run needs, if any. A part of a split never splits again.
pub fn plan(settings: &RunSettings) -> Result<Option<SplitPlan>> {
    if std::env::var_os(GATE_ENV).is_some() {
        return Ok(None);
    }
    let opts = &settings.options;
    let given = opts.is_given("max-users-per-process");
    let limit = match opts.int("max-users-per-process", 0) {
        n if n > 0 => n as u32,
        _ => default_limit(opts.string("db-driver").as_deref()),
    };
    let users = settings.config.threads;
    if users <= limit {
        return Ok(None);
    }
    let has_dir = std::env::var_os(LEVEL_DIR_ENV).is_some()
        || opts.string("results-dir").is_some_and(|d| !d.is_empty());
    if !has_dir {
        if given {
            return Err(user_error(
                "--max-users-per-process splits a level into processes whose results are merged in a results directory: add --results-dir=DIR (or use bmk kit run)",
            ));
        }
        return Ok(None);
    }
    if settings.barrier.is_some() {
        return Err(user_error(format!(
            "{users} users are more than one process runs here (--max-users-per-process={limit}); with --barrier give each client at most {limit} users (more clients or hosts) instead"
        )));
    }
    Ok(Some(SplitPlan {
        limit,
        shares: shares(users, limit),
    }))
}

/// The arguments of part `index` (0-based) with `threads` users: the run's own, with
/// the part's share of the users, of an `--events` limit and of a `--rate`, and its
/// own seed, appended (later options win).
fn part_args(settings: &RunSettings, plan: &SplitPlan, index: usize) -> Vec<String> {
    let opts = &settings.options;
    let users: u32 = plan.shares.iter().sum();
    let share = plan.shares[index];
    let mut args: Vec<String> = settings.argv.iter().skip(1).cloned().collect();
    args.push(format!("--threads={share}"));
    let events = opts.int("events", 0);
    if events > 0 && opts.is_given("events") {
        let before: u64 = plan.shares[..index].iter().map(|&s| s as u64).sum();
        let cut = |n: u64| (events as u64 * n).div_ceil(users as u64);
        args.push(format!(
            "--events={}",
            (cut(before + share as u64) - cut(before)).max(1)
        ));
    }
    let rate = opts.double("rate", 0.0);
    if rate > 0.0 {
        args.push(format!("--rate={}", rate * share as f64 / users as f64));
    }
    if let Some(seed) = settings.seed {
        // Equal seeds would make every part draw the same keys.
        args.push(format!("--rand-seed={}", seed.wrapping_add(index as u64)));
    }
    args
}

/// Runs the level split by `plan` (through the kit); returns the exit code.
pub fn run(settings: &RunSettings, plan: &SplitPlan, interrupt: &Arc<AtomicUsize>) -> Result<i32> {
    let notice = settings.verbosity.shows(Verbosity::Notice);
    let (level_dir, plain) = match std::env::var_os(LEVEL_DIR_ENV) {
        Some(d) => (PathBuf::from(d), None),
        None => {
            let dir = settings.options.string("results-dir").unwrap_or_default();
            let plain = create_plain_run(Path::new(&dir), settings)?;
            (plain.run.level_path(1), Some(plain))
        }
    };
    let job = SplitJob {
        part_args: (0..plan.shares.len())
            .map(|i| part_args(settings, plan, i))
            .collect(),
        plan: plan.clone(),
        level_dir,
        plain,
        warmup_s: settings.config.warmup.as_secs_f64(),
        notice,
        lines: (settings.report.format == ReportFormat::Text && notice).then_some(LineSettings {
            percentile: settings.report.percentile,
            interval: settings.report.interval,
            rate_mode: settings.config.rate > 0.0,
        }),
        results: settings.report.results.clone(),
    };
    bmk_kit::split_run::run(job, interrupt).map_err(|e| anyhow!("{e}"))
}
