//! Sweeps: one scenario at a list of load levels (the BMK `for users in ...` loop),
//! each level a `bmk` process of its own running the scenario's plain command line,
//! with the results directory, the sampler and the progress line around it.
//!
//! A level's process writes its own `level.json`, `intervals.jsonl` and `result.json`
//! into the folder named by the environment variable [`LEVEL_DIR_ENV`]; the sweep
//! writes `run.json`, `summary.csv` and the capture files. The level process gets its
//! own process group, so Ctrl-C reaches the sweep only, which passes one SIGINT on:
//! the level stops and writes what it measured, and the sweep ends there, keeping
//! every finished level. If the sweep itself is killed, the level process is sent
//! SIGTERM by the kernel (`PR_SET_PDEATHSIG`) and stops the same way.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bmk_results::results_dir::{
    LevelInfo, SweepPlan, DIR_SCHEMA_VERSION, LEVEL_FILE, LEVEL_SCHEMA_NAME, OUTPUT_FILE,
    RESULT_FILE,
};
use bmk_results::results_file::ResultsFile;
use bmk_sql::DriverConfig;

use crate::data_size::{self, DataClaim};
use crate::error::KitError;
use crate::progress::{Position, Screen};
use crate::run_dir::RunDir;
use crate::sampler::{Sampler, SamplerConfig};
use crate::workload_results;
use bmk_results::dir_writer;

/// The environment variable that tells a `bmk` run to write its level into a folder.
pub const LEVEL_DIR_ENV: &str = "BMK_LEVEL_DIR";

/// Parses `--users 1,2,4,8`.
pub fn parse_users(text: &str) -> Result<Vec<u32>, KitError> {
    let users: Vec<u32> = text
        .split(',')
        .map(|u| u.trim())
        .filter(|u| !u.is_empty())
        .map(|u| {
            u.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                KitError::Usage(format!(
                    "--users: '{u}' is not a positive number of users (e.g. --users=1,2,4,8)"
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    if users.is_empty() {
        return Err(KitError::Usage(
            "--users needs at least one level (e.g. --users=1,2,4,8)".into(),
        ));
    }
    Ok(users)
}

/// One level of the plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    /// 1-based run order.
    pub index: u32,
    /// Users.
    pub users: u32,
    /// 1-based repeat.
    pub repeat: u32,
    /// Arrivals per second offered (`--rate`), for an open-loop level.
    pub rate: Option<f64>,
}

/// The levels of `plan` in run order: the whole list of users once per repeat.
pub fn levels(plan: &SweepPlan) -> Vec<Level> {
    let mut out = Vec::new();
    for repeat in 1..=plan.repeat.max(1) {
        for &users in &plan.users {
            out.push(Level {
                index: out.len() as u32 + 1,
                users,
                repeat,
                rate: None,
            });
        }
    }
    out
}

/// Everything a sweep needs besides its results directory.
pub struct SweepJob<'a> {
    /// The `bmk` binary that runs each level.
    pub program: &'a Path,
    /// The plan.
    pub plan: SweepPlan,
    /// The arguments of one level (after the program name).
    pub level_args: &'a dyn Fn(&Level) -> Vec<String>,
    /// The server to sample, if any.
    pub driver: Option<DriverConfig>,
    /// The benchmark's server and the tables its options claim, read before each
    /// level into its `level.json` (OLTP workloads only).
    pub data: Option<(DriverConfig, DataClaim)>,
    /// Seconds between capture samples; zero: no capture.
    pub capture_interval: Duration,
    /// Set to a signal number by the signal handlers.
    pub interrupt: Arc<AtomicUsize>,
    /// Show the live progress bar (on a terminal).
    pub live: bool,
}

/// How the sweep ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepEnd {
    /// Every level ran.
    Completed,
    /// A signal stopped it (the signal number).
    Interrupted(i32),
    /// A level failed (its exit code).
    Failed(i32),
}

impl SweepEnd {
    /// The `run.json` status.
    pub fn status(self) -> &'static str {
        match self {
            SweepEnd::Completed => "completed",
            SweepEnd::Interrupted(_) => "interrupted",
            SweepEnd::Failed(_) => "failed",
        }
    }
}

fn left(plan: &SweepPlan, levels_after: usize, in_level: Duration) -> Duration {
    let per = Duration::from_secs_f64(plan.time_s + plan.warmup_s);
    let pause = Duration::from_secs_f64(plan.pause_s);
    in_level + (per + pause) * levels_after as u32
}

/// Runs the sweep into `dir`.
pub fn run(job: &SweepJob, dir: &mut RunDir) -> Result<SweepEnd, KitError> {
    let all = levels(&job.plan);
    run_levels(job, dir, &all, all.len(), false)
}

/// Runs `todo` (levels of a plan of `total`, in order) into `dir`; with
/// `pause_first`, the plan's pause comes before the first of them too (a level that
/// follows others run earlier).
pub fn run_levels(
    job: &SweepJob,
    dir: &mut RunDir,
    todo: &[Level],
    total: usize,
    pause_first: bool,
) -> Result<SweepEnd, KitError> {
    let plan = &job.plan;
    let screen = Screen::new(job.live);
    let per_level = Duration::from_secs_f64(plan.time_s + plan.warmup_s);
    if !pause_first {
        if let Some(w) = short_level_warning(plan.time_s, job.capture_interval) {
            screen.eprintln(&w);
        }
    }
    let mut end = SweepEnd::Completed;
    for (i, level) in todo.iter().enumerate() {
        let number = level.index as usize;
        let pos = |left_now: Duration, pausing: bool| Position {
            level: number,
            levels: total,
            users: level.users,
            repeat: level.repeat,
            rate: level.rate,
            left: left(plan, todo.len() - i - 1, left_now),
            pausing,
        };
        if (i > 0 || pause_first) && plan.pause_s > 0.0 {
            let pause = Duration::from_secs_f64(plan.pause_s);
            let started = Instant::now();
            screen.begin(&pos(per_level + pause, true));
            while started.elapsed() < pause {
                if let Some(sig) = interrupted(&job.interrupt) {
                    end = SweepEnd::Interrupted(sig);
                    break;
                }
                screen.update(&pos(
                    per_level + pause.saturating_sub(started.elapsed()),
                    true,
                ));
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        if let Some(sig) = interrupted(&job.interrupt) {
            end = SweepEnd::Interrupted(sig);
        }
        if end != SweepEnd::Completed {
            break;
        }
        let code = run_level(job, dir, level, &screen, &|elapsed| {
            pos(per_level.saturating_sub(elapsed), false)
        })?;
        if let Some(sig) = interrupted(&job.interrupt) {
            end = SweepEnd::Interrupted(sig);
            break;
        }
        if code != 0 {
            end = SweepEnd::Failed(code);
            break;
        }
    }
    screen.finish();
    Ok(end)
}

fn interrupted(flag: &AtomicUsize) -> Option<i32> {
    match flag.load(Ordering::Relaxed) {
        0 => None,
        sig => Some(sig as i32),
    }
}

/// Runs one level; returns the level process's exit code (128 + signal if killed).
fn run_level(
    job: &SweepJob,
    dir: &mut RunDir,
    level: &Level,
    screen: &Screen,
    pos: &dyn Fn(Duration) -> Position,
) -> Result<i32, KitError> {
    let path = dir.level_path(level.index);
    std::fs::create_dir_all(&path).map_err(|e| KitError::io(&path, e))?;
    let planned = LevelInfo {
        rate: level.rate,
        schema: LEVEL_SCHEMA_NAME.into(),
        schema_version: DIR_SCHEMA_VERSION,
        index: level.index,
        users: level.users,
        repeat: level.repeat,
        processes: 1,
        warmup_s: job.plan.warmup_s,
        start_unix_ns: 0,
        end_unix_ns: None,
        status: "starting".into(),
        data: job
            .data
            .as_ref()
            .map(|(cfg, claim)| data_size::read(cfg, claim)),
        ..LevelInfo::default()
    };
    dir_writer::write_level_info(&path, &planned)?;
    screen.begin(&pos(Duration::ZERO));
    let args = (job.level_args)(level);
    let mut cmd = Command::new(job.program);
    cmd.args(&args)
        .env(LEVEL_DIR_ENV, &path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    crate::child_process::stop_with_parent(&mut cmd);
    let output_path = path.join(OUTPUT_FILE);
    let output = File::create(&output_path).map_err(|e| KitError::io(&output_path, e))?;
    let output = Mutex::new(output);
    let mut child = cmd.spawn().map_err(|e| KitError::io(job.program, e))?;
    let sampler = (!job.capture_interval.is_zero()).then(|| {
        Sampler::start(SamplerConfig {
            driver: job.driver.clone(),
            level_dir: path.clone(),
            interval: job.capture_interval,
            client_pids: vec![child.id()],
        })
    });
    let started = Instant::now();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let code = std::thread::scope(|scope| -> Result<i32, KitError> {
        // Both streams go to the terminal as before and, line by line in the order
        // they arrive, into output.txt: what a person saw, kept whatever the outcome.
        if let Some(out) = stdout {
            let output = &output;
            scope.spawn(move || tee(out, output, &|l| screen.println(l)));
        }
        if let Some(err) = stderr {
            let output = &output;
            scope.spawn(move || tee(err, output, &|l| screen.eprintln(l)));
        }
        let mut forwarded = false;
        loop {
            if let Some(status) = child.try_wait().map_err(|e| KitError::io(job.program, e))? {
                use std::os::unix::process::ExitStatusExt;
                return Ok(status
                    .code()
                    .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)));
            }
            if !forwarded {
                if let Some(sig) = interrupted(&job.interrupt) {
                    // SAFETY: kill only sends a signal to the level process we started.
                    unsafe {
                        libc::kill(child.id() as libc::pid_t, sig);
                    }
                    forwarded = true;
                }
            }
            screen.update(&pos(started.elapsed()));
            std::thread::sleep(Duration::from_millis(50));
        }
    })?;
    // A capture file that could not be written was said on stderr when it happened.
    let capture_failure = sampler.and_then(|s| s.stop());
    if let Some(reason) = capture_failure {
        // The level's process wrote its level.json; the capture is the sweep's, so
        // the sweep records that the level's files are not whole, and stops.
        let mut info: LevelInfo = bmk_results::results_dir::read_json(&path.join(LEVEL_FILE))
            .unwrap_or_else(|_| planned.clone());
        info.status = "failed".into();
        info.reason = Some(reason);
        dir_writer::write_level_info(&path, &info)?;
        return Ok(if code == 0 { 1 } else { code });
    }
    if let Ok(f) = output.into_inner() {
        let _ = f.sync_all();
    }
    let result_path = path.join(RESULT_FILE);
    if let Ok(mut result) = ResultsFile::read(&result_path) {
        let workload = std::fs::read_to_string(&output_path)
            .map(|text| workload_results::parse(&text))
            .unwrap_or_default();
        if !workload.is_empty() {
            result.workload = workload.values;
            result.workload_latency = workload.latency;
            dir_writer::write_results_file(&result_path, &result)?;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut row = dir_writer::result_summary_row(
            &name,
            level.users,
            level.repeat,
            &result,
            &result.status,
        );
        row.rate = level.rate;
        dir.push_summary(row)?;
    }
    Ok(code)
}

/// Copies the lines of `from` into `file` as they come (each line whole, so that the
/// lines of two streams do not mix) and shows each with `show`.
fn tee(from: impl Read, file: &Mutex<File>, show: &dyn Fn(&str)) {
    let mut reader = BufReader::new(from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Ok(mut f) = file.lock() {
            let _ = f.write_all(&line);
            if !line.ends_with(b"\n") {
                let _ = f.write_all(b"\n");
            }
        }
        let text = String::from_utf8_lossy(&line);
        show(text.trim_end_matches(['\n', '\r']));
    }
}

/// Levels shorter than this many capture intervals get a warning before the sweep:
/// their server rates rest on too few samples to show a trend.
pub const MIN_CAPTURE_SAMPLES: f64 = 3.0;

/// The warning for a plan whose levels are shorter than [`MIN_CAPTURE_SAMPLES`]
/// capture intervals, if it is one.
pub fn short_level_warning(time_s: f64, capture_interval: Duration) -> Option<String> {
    let every = capture_interval.as_secs_f64();
    (every > 0.0 && time_s > 0.0 && time_s < MIN_CAPTURE_SAMPLES * every).then(|| {
        format!(
            "WARNING: each level runs {time_s:.0} s but the server is sampled every {every} s: fewer than {MIN_CAPTURE_SAMPLES:.0} samples per level give its server rates no shape; run longer levels or lower --capture-interval"
        )
    })
}

/// The sweep plan of a single `kit run`.
pub fn single(users: u32, seconds: u64) -> SweepPlan {
    SweepPlan {
        users: vec![users],
        time_s: seconds as f64,
        warmup_s: 0.0,
        pause_s: 0.0,
        repeat: 1,
        max_users_per_process: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_lists() {
        assert_eq!(parse_users("1,2, 4,8").unwrap(), [1, 2, 4, 8]);
        assert!(parse_users("1,x")
            .unwrap_err()
            .to_string()
            .contains("'x' is not a positive number"));
        assert!(parse_users("0").is_err());
        assert!(parse_users("").is_err());
    }

    #[test]
    fn levels_shorter_than_three_samples_are_warned_about() {
        let w = short_level_warning(10.0, Duration::from_secs(5)).unwrap();
        assert!(
            w.contains("each level runs 10 s") && w.contains("every 5 s"),
            "{w}"
        );
        assert!(short_level_warning(15.0, Duration::from_secs(5)).is_none());
        assert!(short_level_warning(3.0, Duration::from_secs(1)).is_none());
        assert!(short_level_warning(10.0, Duration::ZERO).is_none());
    }

    #[test]
    fn tee_keeps_every_line_of_both_streams() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(OUTPUT_FILE);
        let file = Mutex::new(File::create(&path).unwrap());
        let shown = Mutex::new(Vec::new());
        tee(
            &b"Threads started!\nFATAL: no such table\nlast"[..],
            &file,
            &|l| shown.lock().unwrap().push(l.to_string()),
        );
        drop(file);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "Threads started!\nFATAL: no such table\nlast\n"
        );
        assert_eq!(shown.into_inner().unwrap().len(), 3);
    }

    #[test]
    fn repeats_run_the_whole_list_again() {
        let plan = SweepPlan {
            users: vec![1, 4],
            repeat: 2,
            ..SweepPlan::default()
        };
        let l: Vec<(u32, u32, u32)> = levels(&plan)
            .iter()
            .map(|l| (l.index, l.users, l.repeat))
            .collect();
        assert_eq!(l, [(1, 1, 1), (2, 4, 1), (3, 1, 2), (4, 4, 2)]);
    }
}
