//! A level with more users than one process should hold (`--max-users-per-process`)
//! runs as several `bmk` processes on this host, each with its share of the users,
//! started together through a local start gate ([`crate::split_gate`]) so that their
//! interval grids coincide, each writing its own part of the level; this process (the
//! one the user started, or the kit's level process) merges them with `bmk merge`'s
//! code into the level's one `result.json` and `intervals.jsonl`, and keeps the parts
//! in the level's `processes/` folder.
//!
//! A split needs a results directory (a kit run, or `--results-dir`): the parts are
//! merged from their files. Without `--max-users-per-process` the limit is what one
//! process can hold: its open-files limit (`RLIMIT_NOFILE`, the soft value) less a
//! reserve for bmk's own files, over the files one user needs (one connection; three
//! for SQLite: the database, its write-ahead log and its shared memory). The command
//! line decides whether a run splits and with which arguments each part runs
//! ([`SplitJob`]); this module runs the parts, prints their merged lines and writes
//! the level.

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bmk_report::{Layout, LineOptions, ReportStat};
use bmk_results::dir_writer;
use bmk_results::load::Level;
use bmk_results::results_dir::{IntervalLine, LevelInfo, INTERVALS_FILE, LEVEL_FILE, RESULT_FILE};
use bmk_results::MergeOptions;

use crate::error::KitError;
use crate::run_dir::PlainRun;
use crate::sampler::{Sampler, SamplerConfig};
use crate::split_gate::{self, GATE_ENV};
use crate::sweep::LEVEL_DIR_ENV;
use crate::whole_second::next_whole_second_ns;
use crate::workload_results;

/// The folder of a level that holds its processes' parts.
pub const PARTS_DIR: &str = "processes";

/// Open files kept for bmk itself (its binary's libraries, results files, the
/// sampler, the barrier connection, standard streams) before counting users.
const FD_RESERVE: u64 = 64;

/// How far ahead of the last ready process the start is set: long enough for every
/// process (polling every 2 ms) to see it first.
const START_LEAD: Duration = Duration::from_millis(300);

/// How a level is split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitPlan {
    /// The most users one process runs.
    pub limit: u32,
    /// Users of each process, in order.
    pub shares: Vec<u32>,
}

/// Users per process that this host's open-files limit allows, for a driver.
pub fn default_limit(driver: Option<&str>) -> u32 {
    // SAFETY: getrlimit fills the struct it is given.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        lim.rlim_cur as u64
    } else {
        1024
    };
    let per_user = if driver == Some("sqlite") { 3 } else { 1 };
    (soft.saturating_sub(FD_RESERVE) / per_user).clamp(1, u32::MAX as u64) as u32
}

/// `users` in `ceil(users / limit)` shares that differ by at most one.
pub fn shares(users: u32, limit: u32) -> Vec<u32> {
    let limit = limit.max(1);
    let n = users.div_ceil(limit).max(1);
    (0..n)
        .map(|i| users / n + u32::from(i < users % n))
        .collect()
}

/// One running part.
struct Part {
    index: u32,
    dir: PathBuf,
    child: Child,
    code: Option<i32>,
    tail: Tail,
}

/// Reads the whole lines a part appends to its `intervals.jsonl`.
struct Tail {
    path: PathBuf,
    offset: u64,
    pending: String,
    lines: std::collections::VecDeque<IntervalLine>,
}

impl Tail {
    fn new(path: PathBuf) -> Tail {
        Tail {
            path,
            offset: 0,
            pending: String::new(),
            lines: Default::default(),
        }
    }

    fn poll(&mut self) {
        let Ok(mut f) = std::fs::File::open(&self.path) else {
            return;
        };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return;
        }
        let mut bytes = Vec::new();
        if let Ok(n) = f.read_to_end(&mut bytes) {
            self.offset += n as u64;
            self.pending.push_str(&String::from_utf8_lossy(&bytes));
        }
        while let Some(nl) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=nl).collect();
            if let Ok(l) = serde_json::from_str::<IntervalLine>(line.trim_end()) {
                self.lines.push_back(l);
            }
        }
    }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

fn signal_all(parts: &[Part], sig: i32) {
    for p in parts.iter().filter(|p| p.code.is_none()) {
        // SAFETY: kill only sends a signal to a part process this run started.
        unsafe {
            libc::kill(p.child.id() as libc::pid_t, sig);
        }
    }
}

/// Reaps parts that ended; true when every part has.
fn reap(parts: &mut [Part]) -> Result<bool, KitError> {
    for p in parts.iter_mut().filter(|p| p.code.is_none()) {
        if let Some(status) = p.child.try_wait().map_err(|e| KitError::io(&p.dir, e))? {
            p.code = Some(exit_code(status));
        }
    }
    Ok(parts.iter().all(|p| p.code.is_some()))
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// One line per failed part: its exit code and the first line it wrote to standard
/// error (or its first `FATAL` report line), each different message once.
fn failure_lines(parts: &[Part]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in parts.iter().filter(|p| p.code.is_some_and(|c| c != 0)) {
        let errors = std::fs::read_to_string(p.dir.join("stderr.txt")).unwrap_or_default();
        let report = std::fs::read_to_string(p.dir.join("output.txt")).unwrap_or_default();
        let message = errors
            .lines()
            .chain(report.lines().filter(|l| l.starts_with("FATAL")))
            .find(|l| !l.trim().is_empty())
            .unwrap_or(NO_MESSAGE);
        let message = message
            .strip_prefix("FATAL: ")
            .unwrap_or(message)
            .to_string();
        let line = format!(
            "{} of the level ended with exit code {}: {message}",
            split_gate::part_name(p.index),
            p.code.unwrap_or(0)
        );
        if !out.iter().any(|o| o.ends_with(&message)) {
            out.push(line);
        }
    }
    // A part stopped by this process because another failed says nothing itself.
    if out.iter().any(|l| !l.ends_with(NO_MESSAGE)) {
        out.retain(|l| !l.ends_with(NO_MESSAGE));
    }
    out
}

const NO_MESSAGE: &str = "(no message)";

/// How the merged report lines are printed while the parts run (text reports).
#[derive(Debug, Clone, Copy)]
pub struct LineSettings {
    /// The percentile the lines show.
    pub percentile: f64,
    /// Seconds between report lines (`--report-interval`).
    pub interval: f64,
    /// Whether the run has a target rate (`--rate`).
    pub rate_mode: bool,
}

/// One split level, as the command line planned it.
pub struct SplitJob {
    /// The shares of the users.
    pub plan: SplitPlan,
    /// The program arguments of each part, in order.
    pub part_args: Vec<Vec<String>>,
    /// The level's folder.
    pub level_dir: PathBuf,
    /// The results directory of a plain run (`--results-dir`); none for a kit level.
    pub plain: Option<PlainRun>,
    /// Warm-up seconds before each part's measured start.
    pub warmup_s: f64,
    /// Whether notices are printed (the plan, the merged result).
    pub notice: bool,
    /// How the merged lines are printed, when they are.
    pub lines: Option<LineSettings>,
    /// Where the merged `--results` file goes, if asked for.
    pub results: Option<PathBuf>,
}

/// Runs the level split by `job`; returns the exit code.
pub fn run(job: SplitJob, interrupt: &Arc<AtomicUsize>) -> Result<i32, KitError> {
    let SplitJob {
        plan,
        part_args,
        level_dir,
        mut plain,
        warmup_s,
        notice,
        lines,
        results,
    } = job;
    let users: u32 = plan.shares.iter().sum();
    let parts_dir = level_dir.join(PARTS_DIR);
    let gate_dir = parts_dir.join("gate");
    std::fs::create_dir_all(&gate_dir).map_err(|e| KitError::io(&gate_dir, e))?;
    // The kit may have planned the level (index, repeat); kept.
    let mut info: LevelInfo = bmk_results::results_dir::read_json(&level_dir.join(LEVEL_FILE))
        .unwrap_or_else(|_| LevelInfo {
            schema: bmk_results::results_dir::LEVEL_SCHEMA_NAME.into(),
            schema_version: bmk_results::results_dir::DIR_SCHEMA_VERSION,
            index: 1,
            repeat: 1,
            ..LevelInfo::default()
        });
    info.users = users;
    info.processes = plan.shares.len() as u32;
    info.warmup_s = warmup_s;
    info.status = "starting".into();
    dir_writer::write_level_info(&level_dir, &info)?;
    if notice {
        println!(
            "{users} users run as {} processes of at most {} users (--max-users-per-process); their results are in {}",
            plan.shares.len(),
            plan.limit,
            parts_dir.display()
        );
    }
    let mut parts = start_parts(&part_args, &parts_dir, &gate_dir)?;
    let sampler = plain
        .as_ref()
        .filter(|p| p.capture_interval > 0.0)
        .map(|p| {
            Sampler::start(SamplerConfig {
                driver: p.driver.clone(),
                level_dir: level_dir.clone(),
                interval: Duration::from_secs_f64(p.capture_interval),
                client_pids: parts.iter().map(|p| p.child.id()).collect(),
            })
        });
    let watched = watch_parts(&mut parts, &gate_dir, interrupt, lines, |at| {
        info.start_unix_ns = at;
        info.status = "running".into();
        dir_writer::write_level_info(&level_dir, &info)
    })?;
    // A capture file that could not be written was said on stderr when it happened;
    // the run is recorded as failed, with the reason, below.
    let capture_failure = sampler.and_then(|s| s.stop());
    let code = watched.first_failure.unwrap_or(0);
    if watched.started.is_none() {
        // Some part could not start (or the run was interrupted before the start):
        // nothing was measured, and the parts' own messages say why.
        for line in failure_lines(&parts) {
            eprintln!("FATAL: {line}");
        }
        info.status = if interrupt.load(Ordering::Relaxed) != 0 {
            "interrupted".into()
        } else {
            "failed".into()
        };
        dir_writer::write_level_info(&level_dir, &info)?;
        if let Some(p) = plain.as_mut() {
            let _ = p.run.finish(&info.status);
        }
        return Ok(if code == 0 { 1 } else { code });
    }
    let merged = merge_parts(&parts, &level_dir, &mut info);
    for line in failure_lines(&parts) {
        eprintln!("FATAL: {line}");
    }
    let merged = match merged {
        Ok(m) => m,
        Err(e) => {
            if let Some(p) = plain.as_mut() {
                let _ = p.run.finish("failed");
            }
            eprintln!("FATAL: {e}");
            return Ok(if code == 0 { 1 } else { code });
        }
    };
    finish_level(
        &merged,
        parts.len(),
        notice,
        results.as_deref(),
        plain,
        capture_failure,
    )?;
    Ok(code)
}

/// Starts one process per entry of `part_args`, each with its folder under
/// `parts_dir` and its place at the gate in `gate_dir`.
fn start_parts(
    part_args: &[Vec<String>],
    parts_dir: &Path,
    gate_dir: &Path,
) -> Result<Vec<Part>, KitError> {
    let program = std::env::current_exe().map_err(|e| KitError::io("bmk", e))?;
    let count = part_args.len() as u32;
    let mut parts = Vec::with_capacity(part_args.len());
    for (i, args) in part_args.iter().enumerate() {
        let index = i as u32 + 1;
        let dir = parts_dir.join(split_gate::part_name(index));
        std::fs::create_dir_all(&dir).map_err(|e| KitError::io(&dir, e))?;
        let file = |name: &str| {
            let path = dir.join(name);
            std::fs::File::create(&path).map_err(|e| KitError::io(&path, e))
        };
        let mut cmd = Command::new(&program);
        cmd.args(args)
            .env(LEVEL_DIR_ENV, &dir)
            .env(GATE_ENV, format!("{}:{index}:{count}", gate_dir.display()))
            .stdin(Stdio::null())
            .stdout(file("output.txt")?)
            .stderr(file("stderr.txt")?)
            .process_group(0);
        // If this process dies, its parts stop instead of running on unattended.
        crate::child_process::stop_with_parent(&mut cmd);
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                signal_all(&parts, libc::SIGTERM);
                return Err(KitError::Failed(format!(
                    "cannot start {}: {e}",
                    program.display()
                )));
            }
        };
        parts.push(Part {
            index,
            tail: Tail::new(dir.join(INTERVALS_FILE)),
            dir,
            child,
            code: None,
        });
    }
    Ok(parts)
}

/// How the parts ran.
struct Watched {
    /// The start instant (ns since the epoch), once every part was ready.
    started: Option<u64>,
    /// The exit code of the first part that failed: the parts this run stops because
    /// of it end with SIGTERM's 143, which must not stand for the level.
    first_failure: Option<i32>,
}

/// Waits for the parts to end: opens their gate once all are ready (`on_start` is
/// told the instant), forwards an interrupt, stops them all when one fails before the
/// start, and prints the merged lines as they come.
fn watch_parts(
    parts: &mut [Part],
    gate_dir: &Path,
    interrupt: &Arc<AtomicUsize>,
    lines: Option<LineSettings>,
    mut on_start: impl FnMut(u64) -> Result<(), bmk_results::Error>,
) -> Result<Watched, KitError> {
    // Every part initialises its workers, then waits at the gate.
    let mut forwarded = false;
    let mut started: Option<u64> = None;
    let mut first_failure: Option<i32> = None;
    loop {
        let all_ended = reap(parts)?;
        if first_failure.is_none() {
            first_failure = parts.iter().filter_map(|p| p.code).find(|&c| c != 0);
        }
        if !forwarded {
            if let sig @ 1.. = interrupt.load(Ordering::Relaxed) {
                signal_all(parts, sig as i32);
                forwarded = true;
            }
        }
        if started.is_none() {
            let failed = parts.iter().any(|p| p.code.is_some());
            if failed && !forwarded {
                // One part could not start: the level cannot have its users.
                signal_all(parts, libc::SIGTERM);
                forwarded = true;
            }
            let ready = parts
                .iter()
                .all(|p| split_gate::ready_file(gate_dir, p.index).exists());
            if ready && !failed && !forwarded {
                // On a whole second, as a level of one process starts, so that the
                // intervals end on the capture's ticks.
                let at = next_whole_second_ns(now_ns() + START_LEAD.as_nanos() as u64);
                let tmp = gate_dir.join(".start.tmp");
                std::fs::write(&tmp, at.to_string()).map_err(|e| KitError::io(&tmp, e))?;
                let start = split_gate::start_file(gate_dir);
                std::fs::rename(&tmp, &start).map_err(|e| KitError::io(&start, e))?;
                started = Some(at);
                on_start(at)?;
            }
        } else if let Some(lines) = lines {
            print_merged_lines(parts, started.unwrap_or(0), lines);
        }
        if all_ended {
            break;
        }
        std::thread::sleep(Duration::from_millis(if started.is_some() {
            100
        } else {
            5
        }));
    }
    if let (Some(at), Some(lines)) = (started, lines) {
        print_merged_lines(parts, at, lines);
    }
    Ok(Watched {
        started,
        first_failure,
    })
}

/// Prints and records the merged level: the `--results` file, and for a plain run its
/// summary and the run's end.
fn finish_level(
    merged: &Level,
    processes: usize,
    notice: bool,
    results: Option<&Path>,
    plain: Option<PlainRun>,
    capture_failure: Option<String>,
) -> Result<(), KitError> {
    let result = merged
        .result
        .as_ref()
        .ok_or_else(|| KitError::Failed("the merged level has no result".into()))?;
    if notice {
        let f = &result.final_stats;
        println!(
            "\nMerged {processes} processes: {} threads over a common window of {:.3}s\n",
            f.threads, f.time_total_s
        );
        print!("{}", dir_writer::final_report_text(result));
    }
    if let Some(path) = results {
        if let Some(file) = dir_writer::level_results_file(merged) {
            dir_writer::write_results_file(path, &file)?;
        }
    }
    if let Some(mut p) = plain {
        if let Some(row) = dir_writer::summary_row(merged) {
            p.run.push_summary(row)?;
        }
        let end = match (result.status.as_str(), &capture_failure) {
            (_, Some(_)) => "failed",
            (s @ ("completed" | "interrupted"), None) => s,
            _ => "failed",
        };
        p.run.finish_because(end, capture_failure.as_deref())?;
    }
    Ok(())
}

/// Merges the parts' folders and writes the level's own files; `info` is the
/// level's record (index, repeat as planned).
fn merge_parts(parts: &[Part], level_dir: &Path, info: &mut LevelInfo) -> Result<Level, KitError> {
    let mut levels = Vec::with_capacity(parts.len());
    for p in parts {
        let level = Level::read(&p.dir).map_err(|e| {
            KitError::Failed(format!(
                "{} wrote no level ({e}); its output is in {}",
                split_gate::part_name(p.index),
                p.dir.display()
            ))
        })?;
        levels.push(with_workload_results(level, &p.dir)?);
    }
    let names: Vec<String> = parts
        .iter()
        .map(|p| split_gate::part_name(p.index))
        .collect();
    let pairs: Vec<(&str, &Level)> = names.iter().map(String::as_str).zip(&levels).collect();
    let mut merged = bmk_results::merge_levels(
        &pairs,
        MergeOptions {
            started_together: true,
            ..MergeOptions::default()
        },
    )
    .map_err(|e| KitError::Failed(format!("cannot merge the level's processes: {e}")))?;
    merged.info.index = info.index;
    merged.info.repeat = info.repeat;
    merged.info.schema = info.schema.clone();
    merged.info.schema_version = info.schema_version;
    // The kit's reading of the tables at the level's start is the level's, not a part's.
    merged.info.data = info.data.clone();
    *info = merged.info.clone();
    dir_writer::write_level(level_dir, &merged)?;
    merged.dir = Some(level_dir.to_path_buf());
    Ok(merged)
}

/// A part's level with the workload's own results it printed (TPC-C's counts, tpmC
/// and latency histograms), written into its `result.json` as a sweep does for a level:
/// the merge then adds them up over the parts.
fn with_workload_results(mut level: Level, part_dir: &Path) -> Result<Level, KitError> {
    let output = std::fs::read_to_string(part_dir.join("output.txt")).unwrap_or_default();
    let workload = workload_results::parse(&output);
    if let Some(result) = level.result.as_mut().filter(|_| !workload.is_empty()) {
        result.workload = workload.values;
        result.workload_latency = workload.latency;
        dir_writer::write_results_file(&part_dir.join(RESULT_FILE), result)?;
    }
    Ok(level)
}

/// Prints the report line of every interval all parts have written.
fn print_merged_lines(parts: &mut [Part], start_ns: u64, settings: LineSettings) {
    for p in parts.iter_mut() {
        p.tail.poll();
    }
    let mut out = std::io::stdout().lock();
    while parts.iter().all(|p| !p.tail.lines.is_empty()) {
        let lines: Vec<IntervalLine> = parts
            .iter_mut()
            .filter_map(|p| p.tail.lines.pop_front())
            .collect();
        let refs: Vec<&IntervalLine> = lines.iter().collect();
        let Ok(Some(m)) = bmk_results::merge::merge_interval_lines(&refs, start_ns) else {
            continue;
        };
        let r = &m.record;
        // The parts count time from the instant they agreed on: their own stamps are
        // the grid (a loaded host may write a line late).
        let time_total = lines.iter().map(|l| l.record.time_s).fold(0.0, f64::max);
        let pct = settings.percentile;
        let stat = ReportStat {
            threads_running: r.threads,
            time_total,
            time_interval: r.interval_s,
            events: r.events,
            reads: r.reads,
            writes: r.writes,
            other: r.other,
            errors: r.errors,
            reconnects: r.reconnects,
            bytes_read: r.bytes_read,
            bytes_written: r.bytes_written,
            latency_pct: r
                .latency
                .percentiles
                .iter()
                .find(|p| (p.percentile - pct).abs() < 1e-9)
                .map_or(0.0, |p| p.ms / 1e3),
            queue_length: r.queue_length.unwrap_or(0),
            concurrency: r.concurrency.unwrap_or(0),
            ..ReportStat::default()
        };
        let layout = if r.reads + r.writes + r.other > 0 {
            Layout::Db
        } else {
            Layout::Events
        };
        let opts = LineOptions::new(layout, pct, settings.interval, settings.rate_mode);
        let _ = out.write_all(bmk_report::text::intermediate(&stat, &opts).as_bytes());
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_shared_evenly_over_the_fewest_processes() {
        assert_eq!(shares(3000, 1000), [1000, 1000, 1000]);
        assert_eq!(shares(3001, 1000), [751, 750, 750, 750]);
        assert_eq!(shares(5, 2), [2, 2, 1]);
        assert_eq!(shares(1, 0), [1]);
    }

    #[test]
    fn the_default_limit_counts_files_per_user() {
        let mysql = default_limit(Some("mysql"));
        let sqlite = default_limit(Some("sqlite"));
        assert!(mysql >= 1 && sqlite >= 1);
        assert!(sqlite <= mysql / 3 + 1);
    }
}
