//! The CLI's side of a results directory: a plain run given `--results-dir=DIR`
//! writes a whole directory of one level (with live capture), and a level of a kit
//! sweep (the environment names its folder) writes only its level's files. Either
//! way the level's intervals come from the engine's observer as the run goes, and its
//! `result.json` is the `--results` document.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use bmk_engine::{CumulativeStats, IntervalStats, RunOutcome};
use bmk_kit::level_writer::LevelWriter;
use bmk_kit::run_dir::{PlainRun, RunDir};
use bmk_kit::sampler::{Sampler, SamplerConfig};
use bmk_kit::server;
use bmk_kit::sweep::LEVEL_DIR_ENV;
use bmk_report::ReportConfig;
use bmk_results::dir_writer;
use bmk_results::results_dir::{RunManifest, RunStart};
use bmk_results::results_file::{ResultsFile, RunInfo, StartRecord};

use crate::banner;
use crate::results::ResultsSink;
use crate::run_settings::RunSettings;

/// A level being written.
pub struct LevelSink {
    level: LevelWriter,
    results: ResultsSink,
    /// The whole directory, for a plain run (a sweep's level leaves it to the sweep).
    run: Option<RunDir>,
    sampler: Option<Sampler>,
    /// The first write error; later writes are skipped and `finish` reports it.
    failed: Option<String>,
    /// The wall-clock instant (ns) the run released its workers at, once a start gate
    /// that names one has opened (0 before).
    release: Option<Arc<AtomicU64>>,
    /// Warm-up before the measured start.
    warmup: Duration,
}

/// The options of the run as (name, value), as the results file records them.
fn option_pairs(settings: &RunSettings) -> Vec<(String, String)> {
    settings
        .options
        .specs()
        .filter_map(|s| settings.options.raw(&s.name).map(|v| (s.key(), v)))
        .collect()
}

/// Creates the results directory `dir` of a plain run (new or empty) with the run's
/// manifest and the server's facts.
pub fn create_plain_run(dir: &Path, settings: &RunSettings) -> Result<PlainRun> {
    let system_test = bmk_systests::SystemTestKind::by_name(&settings.test_name).is_some();
    let driver = if system_test {
        None
    } else {
        let opts = &settings.options;
        Some(server::driver_config(&|k| opts.raw(k)).map_err(|e| anyhow::anyhow!("{e}"))?)
    };
    let interval = settings
        .options
        .double("capture-interval", bmk_kit::sampler::DEFAULT_INTERVAL_S)
        .max(0.0);
    let manifest = RunManifest::starting(RunStart {
        version: banner::bmk_version().into(),
        scenario: None,
        target: settings.options.string("target").filter(|t| !t.is_empty()),
        test: settings.test_name.clone(),
        argv: settings.argv.clone(),
        options: option_pairs(settings),
        sweep: None,
        capture_interval_s: interval,
    });
    let mut run = RunDir::create_at(dir, manifest).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(time) = settings.config.time.filter(|t| !t.is_zero()) {
        let every = Duration::from_secs_f64(interval);
        if let Some(w) = bmk_kit::sweep::short_level_warning(time.as_secs_f64(), every) {
            eprintln!("{w}");
        }
    }
    if let Some(cfg) = driver.as_ref() {
        run.record_server(cfg).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(PlainRun {
        run,
        driver,
        capture_interval: interval,
    })
}

impl LevelSink {
    /// The sink this run needs, if any.
    pub fn create(settings: &RunSettings, report: &ReportConfig) -> Result<Option<LevelSink>> {
        let level_env = std::env::var_os(LEVEL_DIR_ENV).map(PathBuf::from);
        let dir = settings
            .options
            .string("results-dir")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from);
        let percentiles = RunInfo::default()
            .with_percentiles(report.percentile, &report.percentiles)
            .stored_percentiles();
        let users = settings.config.threads;
        let warmup = settings.config.warmup.as_secs_f64();
        if let Some(level_dir) = level_env {
            return Ok(Some(LevelSink::open(
                &level_dir,
                users,
                warmup,
                percentiles,
                settings,
                report,
                None,
                None,
            )?));
        }
        let Some(dir) = dir else { return Ok(None) };
        let PlainRun {
            run,
            driver,
            capture_interval: interval,
        } = create_plain_run(&dir, settings)?;
        let level_dir = run.level_path(1);
        let sampler = (interval > 0.0).then(|| {
            Sampler::start(SamplerConfig {
                driver: driver.clone(),
                level_dir: level_dir.clone(),
                interval: Duration::from_secs_f64(interval),
                client_pids: vec![std::process::id()],
            })
        });
        Ok(Some(LevelSink::open(
            &level_dir,
            users,
            warmup,
            percentiles,
            settings,
            report,
            Some(run),
            sampler,
        )?))
    }

    #[allow(clippy::too_many_arguments)]
    fn open(
        dir: &Path,
        users: u32,
        warmup: f64,
        percentiles: Vec<f64>,
        settings: &RunSettings,
        report: &ReportConfig,
        run: Option<RunDir>,
        sampler: Option<Sampler>,
    ) -> Result<LevelSink> {
        let mut level = LevelWriter::open(dir, users, warmup, percentiles)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("cannot write the level folder '{}'", dir.display()))?;
        let results = ResultsSink::create(&level.result_path(), settings, report)?.quiet();
        level.set_run_id(results.run_id());
        Ok(LevelSink {
            level,
            results,
            run,
            sampler,
            failed: None,
            release: None,
            warmup: Duration::from_secs_f64(warmup.max(0.0)),
        })
    }

    fn note(&mut self, r: Result<(), bmk_kit::KitError>) {
        if let Err(e) = r {
            self.fail(e.to_string());
        }
    }

    /// Keeps the first write failure and says it on stderr at once (the run goes on;
    /// the level will be recorded as failed).
    fn fail(&mut self, reason: String) {
        if self.failed.is_none() {
            eprintln!("WARNING: results directory not fully written: {reason}");
            self.failed = Some(reason);
        }
    }

    /// Takes up a failure of the results file.
    fn note_results(&mut self) {
        if let Some(e) = self.results.failure() {
            let reason = format!("results file not written: {e}");
            self.fail(reason);
        }
    }

    /// The run's workers are released at the instant `release` will hold (set by its
    /// start gate before the release): the measured start is that instant plus the
    /// warm-up, and the intervals are stamped on its grid.
    pub fn release_from(&mut self, release: Arc<AtomicU64>) {
        self.release = Some(release);
    }

    /// The measured part starts.
    pub fn measuring(&mut self) {
        let planned = self
            .release
            .as_ref()
            .map(|r| r.load(Ordering::SeqCst))
            .filter(|&ns| ns > 0);
        let r = match planned {
            Some(ns) => self.level.measuring_at(ns + self.warmup.as_nanos() as u64),
            None => self.level.measuring(),
        };
        self.note(r);
    }

    /// One report interval.
    pub fn interval(&mut self, stats: &IntervalStats) {
        if self.failed.is_none() {
            let r = self.level.interval(stats);
            self.note(r);
        }
        self.results.interval(stats);
        self.note_results();
    }

    /// A checkpoint.
    pub fn checkpoint(&mut self, at: f64, stats: &CumulativeStats) {
        self.results.checkpoint(at, stats);
        self.note_results();
    }

    /// The run ended: `result.json`, the level's end, and for a plain run the summary
    /// and the manifest's end. A results file that could not be written whole (here or
    /// earlier, a capture file included) ends the level and the run as `failed`, the
    /// reason recorded in `level.json` and `run.json`.
    /// `start`: how the run started, when it passed a start barrier.
    pub fn finish(self, outcome: &RunOutcome, start: Option<StartRecord>) -> Result<()> {
        let LevelSink {
            mut level,
            results,
            run,
            sampler,
            mut failed,
            ..
        } = self;
        if let Some(reason) = sampler.and_then(Sampler::stop) {
            // Already said on stderr by the sampler when it happened.
            failed.get_or_insert(reason);
        }
        let status = crate::results::status_name(&outcome.status);
        let written = results.finish(outcome, start);
        if let Err(e) = &written {
            if failed.is_none() {
                let reason = format!("{e:#}");
                eprintln!("WARNING: results directory not fully written: {reason}");
                failed = Some(reason);
            }
        }
        let mut late = None;
        let level_status = if failed.is_some() { "failed" } else { status };
        if let Err(e) = level.finish(level_status, failed.as_deref()) {
            late = Some(e.to_string());
        }
        if let Some(mut run) = run {
            if failed.is_none() {
                if let Ok(result) = ResultsFile::read(level.result_path()) {
                    let name = level
                        .dir()
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let info = level.info();
                    let row = dir_writer::result_summary_row(
                        &name,
                        info.users,
                        info.repeat,
                        &result,
                        &result.status,
                    );
                    if let Err(e) = run.push_summary(row) {
                        late.get_or_insert(e.to_string());
                    }
                }
            }
            let end = match (status, &failed) {
                (_, Some(_)) => "failed",
                ("completed" | "interrupted", None) => status,
                _ => "failed",
            };
            if let Err(e) = run.finish_because(end, failed.as_deref()) {
                late.get_or_insert(e.to_string());
            }
        }
        written?;
        match failed.or(late) {
            Some(e) => anyhow::bail!("results directory not fully written: {e}"),
            None => Ok(()),
        }
    }
}
