//! Typed settings derived from validated options: the engine's [`RunConfig`], the
//! random generator's [`RandConfig`], and how reports are printed.

use std::path::PathBuf;
use std::time::Duration;

use bmk_engine::options::OptionSet;
use bmk_engine::rand::{Distribution, RandConfig};
use bmk_engine::RunConfig;
use bmk_report::ReportFormat;
use thiserror::Error;

use crate::defs::{MAX_SECONDS, MAX_THREADS};

/// A combination of option values that is not allowed.
#[derive(Debug, Error, PartialEq)]
#[error("{0}")]
pub struct SettingsError(pub String);

/// How reports look.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// `--percentile` (0 = off).
    pub percentile: f64,
    /// `--percentiles` for the final report.
    pub percentiles: Vec<f64>,
    /// `--histogram`.
    pub histogram: bool,
    /// `--report-format`.
    pub format: ReportFormat,
    /// `--results` file.
    pub results: Option<PathBuf>,
    /// `--report-interval` in seconds (0 = off); decides the time prefix precision.
    pub interval: f64,
}

fn seconds(v: f64) -> Duration {
    Duration::from_secs_f64(v.max(0.0))
}

/// The engine settings.
pub fn run_config(opts: &OptionSet, strict: bool) -> Result<RunConfig, SettingsError> {
    let time = opts.int("time", 10);
    let forced = opts
        .string("forced-shutdown")
        .unwrap_or_else(|| "off".into());
    let forced_shutdown = parse_forced_shutdown(&forced, time)?;
    let interval = opts.double("report-interval", 0.0);
    let mut checkpoints = Vec::new();
    for item in opts.list("report-checkpoints") {
        let secs: f64 = item
            .parse()
            .ok()
            .filter(|v: &f64| *v > 0.0 && *v <= MAX_SECONDS)
            .ok_or_else(|| {
                SettingsError(format!(
                    "invalid value '{item}' in --report-checkpoints: expected positive numbers of seconds up to {MAX_SECONDS}"
                ))
            })?;
        checkpoints.push(seconds(secs));
    }
    let stack = opts
        .get("thread-stack-size")
        .and_then(|v| v.as_i64())
        .unwrap_or(64 * 1024) as usize;
    Ok(RunConfig {
        threads: opts.int("threads", 1) as u32,
        events: opts.int("events", 0) as u64,
        time: (time > 0).then(|| Duration::from_secs(time as u64)),
        warmup: Duration::from_secs(opts.int("warmup-time", 0) as u64),
        // sysbench's accounting when invoked as sysbench; bmk's own measures exactly
        // the events begun after the warm-up.
        warmup_stragglers_count: strict,
        forced_shutdown,
        thread_stack_size: stack,
        // 0 means no limit (sync-file runs wait for an operator); a century is as good.
        thread_init_timeout: match opts.int("thread-init-timeout", 30) {
            0 => Duration::from_secs(100 * 365 * 24 * 3600),
            secs => Duration::from_secs(secs as u64),
        },
        rate: opts.double("rate", 0.0),
        strict_queue_limit: strict,
        report_interval: (interval > 0.0).then(|| seconds(interval)),
        checkpoints,
        event_loops: parse_event_loops(&opts.string("event-loops").unwrap_or_default())?,
        ..RunConfig::default()
    })
}

fn parse_event_loops(raw: &str) -> Result<Option<u32>, SettingsError> {
    match raw.trim() {
        "" | "auto" => Ok(None),
        "off" => Ok(Some(0)),
        n => n
            .parse::<u32>()
            .ok()
            .filter(|n| f64::from(*n) <= MAX_THREADS)
            .map(Some)
            .ok_or_else(|| {
                SettingsError(format!(
                    "invalid value '{raw}' for option --event-loops: expected auto, off or a number of threads up to {MAX_THREADS}"
                ))
            }),
    }
}

/// `--forced-shutdown`: `off`, seconds, or a percentage of `--time`; the delay it
/// comes to must be a number of seconds from 0 to [`MAX_SECONDS`] (`nan`, `inf` and
/// huge values are errors, not a delay of 0 or a panic).
fn parse_forced_shutdown(raw: &str, time: i64) -> Result<Option<Duration>, SettingsError> {
    let bad = || {
        SettingsError(format!(
            "invalid value '{raw}' for option --forced-shutdown: expected 'off', seconds from 0 to {MAX_SECONDS}, or a percentage of --time such as 5%"
        ))
    };
    let raw_trim = raw.trim();
    if raw_trim.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let secs = match raw_trim.strip_suffix('%') {
        Some(pct) => {
            let p: f64 = pct.trim().parse().map_err(|_| bad())?;
            time as f64 * p / 100.0
        }
        None => raw_trim.parse().map_err(|_| bad())?,
    };
    // Written so that NaN fails too.
    if !(0.0..=MAX_SECONDS).contains(&secs) {
        return Err(bad());
    }
    Ok(Some(seconds(secs)))
}

/// The random generator settings.
pub fn rand_config(opts: &OptionSet) -> RandConfig {
    RandConfig {
        seed: opts
            .get("rand-seed")
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0) as u64,
        default: opts
            .string("rand-type")
            .and_then(|s| Distribution::parse(&s))
            .unwrap_or(Distribution::Uniform),
        pareto_h: opts.double("rand-pareto-h", 0.2),
        zipfian_exp: opts.double("rand-zipfian-exp", 0.8),
        special_iter: opts.int("rand-spec-iter", 12) as u32,
        special_pct: opts.double("rand-spec-pct", 1.0),
        special_res: opts.double("rand-spec-res", 75.0),
    }
}

/// The file option `name`, `None` when not given; given empty, it is an error rather
/// than silently no file.
pub fn non_empty_path(opts: &OptionSet, name: &str) -> Result<Option<PathBuf>, SettingsError> {
    match opts.string(name) {
        Some(s) if s.is_empty() => Err(SettingsError(format!(
            "invalid value '' for option --{name}: expected a file name"
        ))),
        other => Ok(other.map(PathBuf::from)),
    }
}

/// Report settings.
pub fn report_options(opts: &OptionSet) -> Result<ReportOptions, SettingsError> {
    let percentile = opts.double("percentile", 95.0);
    let histogram = opts.flag("histogram");
    if histogram && percentile == 0.0 {
        return Err(SettingsError(
            "--histogram cannot be used with --percentile=0: give a percentile from 1 to 100"
                .into(),
        ));
    }
    let mut percentiles = Vec::new();
    for item in opts.list("percentiles") {
        let p: f64 = item
            .parse()
            .ok()
            .filter(|p: &f64| *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| {
                SettingsError(format!(
                    "invalid value '{item}' in --percentiles: expected numbers above 0 and up to 100"
                ))
            })?;
        percentiles.push(p);
    }
    let format = opts
        .string("report-format")
        .and_then(|f| f.parse().ok())
        .unwrap_or_default();
    Ok(ReportOptions {
        percentile,
        percentiles,
        histogram,
        format,
        results: non_empty_path(opts, "results")?,
        interval: opts.double("report-interval", 0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_shutdown_spellings() {
        assert_eq!(parse_forced_shutdown("off", 10).unwrap(), None);
        assert_eq!(
            parse_forced_shutdown("5", 10).unwrap(),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            parse_forced_shutdown("50%", 10).unwrap(),
            Some(Duration::from_secs(5))
        );
        assert!(parse_forced_shutdown("soon", 10).is_err());
        for bad in [
            "inf",
            "nan",
            "-1",
            "1e308",
            "99999999999999999999999",
            "1e300%",
        ] {
            assert!(parse_forced_shutdown(bad, 10).is_err(), "{bad}");
        }
    }
}
