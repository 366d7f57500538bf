//! Result sanity checks: what a careful benchmarker looks for before believing a
//! sweep. Each check reads the levels and their raw captures and returns findings
//! worded for the user; none of them changes a number.
//!
//! * a level measured for less time than its warm-up;
//! * a level whose throughput breaks the trend of its neighbours in the sweep;
//! * stalls (intervals far below the level's median throughput);
//! * a "fake" IO-bound result: throughput up while disk reads fall;
//! * one of the benchmark's table groups getting a far larger or smaller share of the
//!   row reads and writes than the others (per-table server counters);
//! * read-only QPS that counts BEGIN/COMMIT;
//! * a saturated client (bmk's own CPU near what its cores or its threads can give);
//! * a host busy with other work, or whose virtual CPUs were stolen;
//! * a server that restarted during a level;
//! * a level that did not finish (no `result.json`: its process was killed or failed);
//! * a sampler that could not reach the server (its server rates are missing);
//! * a level that never reached a steady state (see [`crate::steady`]).
//! * errors above a share of the attempts;
//! * a level that finished fatal, failed or interrupted (left off the curves);
//! * a run that did not complete;
//! * OLTP reads that found no row (ids beyond the data);
//! * fewer or smaller tables on the server than the options claim.
//!
//! Each finding carries a severity (`fail`: do not use these numbers; `warn`: look
//! again) and, where a number tripped it, that number and the limit it crossed: the
//! machine-readable verdicts of [`crate::verdicts`].

use std::collections::BTreeMap;

use bmk_results::capture::{self, Table};

use crate::expected_rows;
use crate::rates;
use crate::series::LevelSeries;
use crate::steady::{self, SteadyVerdict};
use bmk_results::load::{Level, RunData};

/// Which check a finding comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckKind {
    /// A level shorter than its warm-up.
    ShortLevel,
    /// Throughput that breaks the sweep's trend.
    TrendBreak,
    /// Intervals far below the median throughput.
    Stall,
    /// Throughput up while disk reads fall.
    FakeIoBound,
    /// One of the benchmark's table groups getting a far larger or smaller share of
    /// the load than the others.
    UnfairTableGroups,
    /// Read-only QPS that counts BEGIN/COMMIT.
    ReadOnlyCountsTransactions,
    /// The client's CPU was the limit.
    SaturatedClient,
    /// The host was busy with other work (or its CPUs stolen) during the level.
    BusyHost,
    /// The server restarted during a level.
    ServerRestart,
    /// A level without its final result.
    UnfinishedLevel,
    /// The sampler lost or never had its server connection.
    CaptureFailed,
    /// A level whose throughput never settled.
    NeverSteady,
    /// Errors (ignored or not) above a share of the attempts.
    Errors,
    /// A level that stopped on an error, failed or was interrupted.
    UnusableLevel,
    /// A run that did not complete (failed, interrupted, or still marked running).
    RunNotCompleted,
    /// Read statements that returned no row where the workload expects rows.
    EmptyReads,
    /// Fewer or smaller tables on the server than the options claim.
    DataSmallerThanClaimed,
    /// Reads that returned fewer rows per event than the workload's options make a
    /// complete data set return.
    ShortReads,
}

impl CheckKind {
    /// A short name for the page and the text summary.
    pub fn title(self) -> &'static str {
        match self {
            CheckKind::ShortLevel => "level shorter than warm-up",
            CheckKind::TrendBreak => "breaks the trend",
            CheckKind::Stall => "stalls",
            CheckKind::FakeIoBound => "fake IO-bound",
            CheckKind::UnfairTableGroups => "unfair table groups",
            CheckKind::ReadOnlyCountsTransactions => "read-only QPS counts BEGIN/COMMIT",
            CheckKind::SaturatedClient => "saturated client",
            CheckKind::BusyHost => "busy host",
            CheckKind::ServerRestart => "server restart",
            CheckKind::UnfinishedLevel => "level did not finish",
            CheckKind::CaptureFailed => "capture failed",
            CheckKind::NeverSteady => "never reached steady state",
            CheckKind::Errors => "errors",
            CheckKind::UnusableLevel => "level not usable",
            CheckKind::RunNotCompleted => "run not completed",
            CheckKind::EmptyReads => "reads found no rows",
            CheckKind::DataSmallerThanClaimed => "data smaller than the options claim",
            CheckKind::ShortReads => "reads returned fewer rows than expected",
        }
    }
}

impl CheckKind {
    /// The check's stable machine-readable name (`checks.json`'s `check`): snake_case,
    /// never changed once released, so scripts can match on it.
    pub fn id(self) -> &'static str {
        match self {
            CheckKind::ShortLevel => "short_level",
            CheckKind::TrendBreak => "trend_break",
            CheckKind::Stall => "stall",
            CheckKind::FakeIoBound => "fake_io_bound",
            CheckKind::UnfairTableGroups => "unfair_table_groups",
            CheckKind::ReadOnlyCountsTransactions => "read_only_counts_transactions",
            CheckKind::SaturatedClient => "saturated_client",
            CheckKind::ServerRestart => "server_restart",
            CheckKind::UnfinishedLevel => "unfinished_level",
            CheckKind::CaptureFailed => "capture_failed",
            CheckKind::Errors => "errors",
            CheckKind::UnusableLevel => "unusable_level",
            CheckKind::RunNotCompleted => "run_not_completed",
            CheckKind::EmptyReads => "empty_reads",
            CheckKind::DataSmallerThanClaimed => "data_smaller_than_claimed",
            CheckKind::ShortReads => "short_reads",
            CheckKind::NeverSteady => "never_steady",
            CheckKind::BusyHost => "busy_host",
        }
    }

    /// How bad a finding of this check is unless the check says otherwise: `Fail`
    /// when the numbers cannot be used as they are, `Warn` when they can but need a
    /// second look.
    pub fn default_severity(self) -> Severity {
        match self {
            CheckKind::ServerRestart
            | CheckKind::UnfinishedLevel
            | CheckKind::Errors
            | CheckKind::UnusableLevel
            | CheckKind::EmptyReads
            | CheckKind::DataSmallerThanClaimed
            | CheckKind::ShortReads => Severity::Fail,
            _ => Severity::Warn,
        }
    }
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The numbers need a second look before they are believed.
    Warn,
    /// The numbers do not measure what the run claims: do not use them.
    Fail,
}

impl Severity {
    /// `warn` or `fail`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Warn => "warn",
            Severity::Fail => "fail",
        }
    }
}

/// One thing a check noticed.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The check.
    pub kind: CheckKind,
    /// The level it concerns (`level-0003 (64 users)`), if one.
    pub level: Option<String>,
    /// The 1-based run-order index of that level (`level.json`'s `index`).
    pub level_index: Option<u32>,
    /// What was seen and what it may mean, one sentence or two.
    pub message: String,
    /// How bad it is.
    pub severity: Severity,
    /// The number that tripped the check, when there is one.
    pub value: Option<f64>,
    /// The limit it crossed.
    pub threshold: Option<f64>,
}

impl Finding {
    /// This finding with the number that tripped it and the limit it crossed.
    pub fn tripped(mut self, value: f64, threshold: f64) -> Finding {
        self.value = Some(value);
        self.threshold = Some(threshold);
        self
    }

    /// This finding with another severity.
    pub fn with_severity(mut self, severity: Severity) -> Finding {
        self.severity = severity;
        self
    }

    /// The line the report and the terminal show: `check: level: message`.
    pub fn line(&self) -> String {
        match &self.level {
            Some(l) => format!("{}: {l}: {}", self.kind.title(), self.message),
            None => format!("{}: {}", self.kind.title(), self.message),
        }
    }
}

/// Thresholds of the checks.
pub mod limits {
    /// A level below this fraction of both neighbours' TPS breaks the trend...
    pub const TREND_DIP: f64 = 0.8;
    /// ... and so does one above this multiple of both.
    pub const TREND_SPIKE: f64 = 1.25;
    /// Throughput must rise by more than this fraction for the fake IO-bound check...
    pub const FAKE_IO_TPS_RISE: f64 = 0.05;
    /// ... while disk reads fall by more than this fraction.
    pub const FAKE_IO_READS_FALL: f64 = 0.10;
    /// A table group with this many times the mean rows of the others is favoured,
    /// and one with less than the mean divided by it is starved.
    pub const UNFAIR_RATIO: f64 = 2.0;
    /// Errors above this % of the attempts (events + errors) fail a level...
    pub const ERRORS_FAIL_PCT: f64 = 1.0;
    /// ... and above this % warn.
    pub const ERRORS_WARN_PCT: f64 = 0.1;
    /// Reads that returned no row above this % of the reads fail an OLTP level...
    pub const EMPTY_READS_FAIL_PCT: f64 = 1.0;
    /// ... and above this % warn.
    pub const EMPTY_READS_WARN_PCT: f64 = 0.1;
    /// Rows read per event below this % of what the options make a complete data set
    /// return fail an OLTP level...
    pub const SHORT_READS_FAIL_PCT: f64 = 50.0;
    /// ... and below this % warn. Real runs come within a percent or two: only a read
    /// between an autocommit DELETE and its INSERT, or a skewed draw of range starts
    /// near the last id, reads less than a complete data set.
    pub const SHORT_READS_WARN_PCT: f64 = 90.0;
    /// Table groups with fewer rows read and written than this on average are not
    /// compared: a few transactions more or less would decide.
    pub const UNFAIR_MIN_ROWS: f64 = 10_000.0;
    /// bmk using more than this fraction of the cores it can use (the host's, or its
    /// users' when they are fewer) is a saturated client.
    pub const CLIENT_CPU_SHARE: f64 = 0.9;
    /// Other work above this % of all the host's CPUs makes a busy host.
    pub const HOST_OTHER_PCT: f64 = 25.0;
    /// Steal time above this % of all the host's CPUs makes a busy host.
    pub const STEAL_PCT: f64 = 5.0;
}

/// `level-0003 (64 users)`.
pub fn level_label(level: &Level) -> String {
    format!(
        "{} ({})",
        level.name(),
        bmk_results::load::users(level.info.users)
    )
}

/// Every check on every level of `run`, in check order.
pub fn run_checks(run: &RunData) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(short_levels(run));
    out.extend(trend_breaks(run));
    out.extend(stalls(run));
    out.extend(fake_io_bound(run));
    out.extend(unfair_table_groups(run));
    out.extend(read_only_counts_transactions(run));
    out.extend(saturated_client(run));
    out.extend(busy_host(run));
    out.extend(server_restarts(run));
    out.extend(unfinished_levels(run));
    out.extend(capture_failures(run));
    out.extend(never_steady(run));
    out.extend(errors(run));
    out.extend(unusable_levels(run));
    out.extend(run_not_completed(run));
    out.extend(empty_reads(run));
    out.extend(data_smaller_than_claimed(run));
    out.extend(short_reads(run));
    out
}

fn finding(kind: CheckKind, level: Option<&Level>, message: String) -> Finding {
    Finding {
        kind,
        level: level.map(level_label),
        level_index: level.map(|l| l.info.index),
        message,
        severity: kind.default_severity(),
        value: None,
        threshold: None,
    }
}

/// Levels measured for less time than their warm-up.
pub fn short_levels(run: &RunData) -> Vec<Finding> {
    run.levels
        .iter()
        .filter(|l| l.info.warmup_s > 0.0 && l.seconds() < l.info.warmup_s)
        .map(|l| {
            finding(
                CheckKind::ShortLevel,
                Some(l),
                format!(
                    "measured {:.1} s, less than its {:.1} s warm-up: the server had not settled; run each level longer than its warm-up",
                    l.seconds(),
                    l.info.warmup_s
                ),
            )
        })
        .collect()
}

/// Mean TPS per users count, ascending users (repeats averaged); usable levels only
/// (a fatal or interrupted level's TPS is no point of the curve).
pub fn tps_by_users(run: &RunData) -> Vec<(u32, f64, Vec<&Level>)> {
    let mut by: BTreeMap<u32, Vec<&Level>> = BTreeMap::new();
    for l in run.levels.iter().filter(|l| l.usable()) {
        by.entry(l.info.users).or_default().push(l);
    }
    by.into_iter()
        .map(|(u, ls)| {
            let tps = ls
                .iter()
                .filter_map(|l| l.result.as_ref())
                .map(|r| r.final_stats.events_per_sec)
                .sum::<f64>()
                / ls.len() as f64;
            (u, tps, ls)
        })
        .collect()
}

/// Levels whose TPS falls below (or jumps above) both neighbours' in users order. A
/// level next to a dip is not called a spike for standing above it.
pub fn trend_breaks(run: &RunData) -> Vec<Finding> {
    let pts = tps_by_users(run);
    let dip = |i: usize| {
        i > 0 && i + 1 < pts.len() && pts[i].1 < limits::TREND_DIP * pts[i - 1].1.min(pts[i + 1].1)
    };
    let mut out = Vec::new();
    for (i, w) in pts.windows(3).enumerate() {
        let (prev, cur, next) = (w[0].1, w[1].1, w[2].1);
        let hi = prev.max(next);
        let what = if dip(i + 1) {
            "dips below"
        } else if cur > limits::TREND_SPIKE * hi && !dip(i) && !dip(i + 2) {
            "jumps above"
        } else {
            continue;
        };
        out.push(finding(
            CheckKind::TrendBreak,
            w[1].2.first().copied(),
            format!(
                "{:.2} TPS {what} both neighbours ({} users: {:.2}, {} users: {:.2}): a stall, a checkpoint or a change on the host during this level; repeat it before trusting the curve",
                cur, w[0].0, prev, w[2].0, next
            ),
        ));
    }
    out
}

/// Levels with stalled intervals.
pub fn stalls(run: &RunData) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &run.levels {
        let s = LevelSeries::of(l);
        if s.stalls.is_empty() {
            continue;
        }
        let shown: Vec<String> = s
            .stalls
            .iter()
            .take(5)
            .map(|&i| format!("{:.0} s ({:.1} TPS)", s.time_s[i], s.tps[i]))
            .collect();
        let more = if s.stalls.len() > 5 {
            format!(" and {} more", s.stalls.len() - 5)
        } else {
            String::new()
        };
        let threshold = crate::series::STALL_FRACTION * s.baseline_tps;
        out.push(
            finding(
                CheckKind::Stall,
                Some(l),
                format!(
                    "{} stalled interval(s), below {:.0} % of the level's usual {:.1} TPS (the 75th percentile of its intervals): at {}{more}",
                    s.stalls.len(),
                    crate::series::STALL_FRACTION * 100.0,
                    s.baseline_tps,
                    shown.join(", ")
                ),
            )
            .tripped(s.stalls.iter().map(|&i| s.tps[i]).fold(f64::INFINITY, f64::min), threshold),
        );
    }
    out
}

/// Consecutive users counts where TPS rises while disk reads fall.
pub fn fake_io_bound(run: &RunData) -> Vec<Finding> {
    let pts: Vec<(u32, f64, &Level, (String, f64))> = tps_by_users(run)
        .into_iter()
        .filter_map(|(u, tps, ls)| {
            let l = *ls.first()?;
            let reads = rates::mean_disk_reads(l)?;
            Some((u, tps, l, reads))
        })
        .collect();
    let mut out = Vec::new();
    for w in pts.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let (ra, rb) = ((a.3).1, (b.3).1);
        if a.1 > 0.0
            && ra > 0.0
            && b.1 > a.1 * (1.0 + limits::FAKE_IO_TPS_RISE)
            && rb < ra * (1.0 - limits::FAKE_IO_READS_FALL)
        {
            out.push(finding(
                CheckKind::FakeIoBound,
                Some(b.2),
                format!(
                    "TPS rose {:.0} % from {} to {} users while {}/s fell {:.0} % ({:.1} -> {:.1}): the data set is being cached, so this is not an IO-bound result; make the data set larger than the buffer pool or warm it up first",
                    (b.1 / a.1 - 1.0) * 100.0,
                    a.0,
                    b.0,
                    (a.3).0,
                    (1.0 - rb / ra) * 100.0,
                    ra,
                    rb
                ),
            ));
        }
    }
    out
}

/// The table groups a run uses, from its options: `--tables` (sysbench, TPC-C table
/// sets) or `--obj-tables` (dbSTRESS); `None` when neither is given.
fn planned_groups(run: &RunData) -> Option<u32> {
    let options = run.options();
    ["tables", "obj-tables"]
        .iter()
        .find_map(|k| options.get(*k)?.parse::<u32>().ok())
}

/// Levels where one of the benchmark's table groups (the tables sharing a number:
/// `sbtest3`; `warehouse3`, `district3`, ... of TPC-C's set 3) read and wrote far more
/// or far fewer rows than the mean of the others, from the per-table counters the
/// capture sampled. With `--tables` known, groups beyond it are not the run's and an
/// idle group within it is starved; without it, idle groups are left out.
pub fn unfair_table_groups(run: &RunData) -> Vec<Finding> {
    let planned = planned_groups(run);
    let mut out = Vec::new();
    for l in &run.levels {
        let Some(activity) = rates::table_activity(l) else {
            continue;
        };
        let mut groups: BTreeMap<u32, f64> = match planned {
            Some(n) => (1..=n).map(|g| (g, 0.0)).collect(),
            None => BTreeMap::new(),
        };
        for (name, rows) in &activity.tables {
            let Some(g) = rates::table_group(name) else {
                continue;
            };
            if planned.is_some_and(|n| g > n) {
                continue;
            }
            if planned.is_some() || *rows > 0.0 {
                *groups.entry(g).or_default() += rows;
            }
        }
        if groups.len() < 2 {
            continue;
        }
        let total: f64 = groups.values().sum();
        let mean = total / groups.len() as f64;
        if mean < limits::UNFAIR_MIN_ROWS {
            continue;
        }
        let others_mean = |g: u32| (total - groups[&g]) / (groups.len() - 1) as f64;
        let (top, top_rows) = groups
            .iter()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(g, r)| (*g, *r))
            .expect("two or more groups");
        let (low, low_rows) = groups
            .iter()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .map(|(g, r)| (*g, *r))
            .expect("two or more groups");
        let (group, rows, ratio, what) = if top_rows >= limits::UNFAIR_RATIO * others_mean(top) {
            (top, top_rows, top_rows / others_mean(top), "more")
        } else if low_rows * limits::UNFAIR_RATIO <= others_mean(low) {
            (low, low_rows, low_rows / others_mean(low), "fewer")
        } else {
            continue;
        };
        out.push(finding(
            CheckKind::UnfairTableGroups,
            Some(l),
            format!(
                "table group {group} read and wrote {rows:.0} rows ({:.0} % of the {} groups' {total:.0}, {ratio:.2}x the mean of the others; {}): far {what} than its share, so its tables are cached or served unfairly and the level's TPS is not the whole data set's; check the users-to-tables mapping and warm every table alike",
                rows / total * 100.0,
                groups.len(),
                activity.source
            ),
        ));
    }
    out
}

/// Read-only levels (no writes) whose query counts include BEGIN/COMMIT ("other").
pub fn read_only_counts_transactions(run: &RunData) -> Vec<Finding> {
    let levels: Vec<(&Level, f64, f64)> = run
        .levels
        .iter()
        .filter_map(|l| {
            let f = &l.result.as_ref()?.final_stats;
            let c = &f.counters;
            (c.writes == 0 && c.reads > 0 && c.other > 0)
                .then(|| (l, f.per_sec(c.queries()), f.per_sec(c.other)))
        })
        .collect();
    let Some((first, qps, other)) = levels.first() else {
        return Vec::new();
    };
    vec![finding(
        CheckKind::ReadOnlyCountsTransactions,
        Some(first),
        format!(
            "{} read-only level(s) count BEGIN/COMMIT as queries: QPS {:.2} includes {:.2} of them ({:.0} %); compare read-only QPS without them or run with --skip-trx",
            levels.len(),
            qps,
            other,
            other / qps * 100.0
        ),
    )]
}

/// Whether the run's database runs in a server of its own (MySQL, PostgreSQL): with
/// SQLite or a system test, bmk's CPU is the benchmark itself.
fn uses_server(run: &RunData) -> bool {
    let driver = run
        .manifest
        .as_ref()
        .and_then(|m| m.server.as_ref().map(|s| s.driver.clone()))
        .or_else(|| run.options().get("db-driver").cloned());
    matches!(driver.as_deref(), Some("mysql" | "pgsql"))
}

/// Levels whose bmk process used more than 90 % of the cores it can use: the host's,
/// or its users' when there are fewer of them (one user is one busy thread at most).
/// From `level.json`'s `cpu` (bmk's own `getrusage`); levels without it (written by an
/// older bmk) fall back to the captured `os/client_stat.txt`. Only runs against a
/// database server: with SQLite, bmk's CPU is the database's.
pub fn saturated_client(run: &RunData) -> Vec<Finding> {
    if !uses_server(run) {
        return Vec::new();
    }
    let host_cores = run
        .manifest
        .as_ref()
        .map(|m| m.host.cpus_available.max(1))
        .unwrap_or(1);
    let clock_ticks = run
        .manifest
        .as_ref()
        .and_then(|m| m.host.clock_ticks_per_s)
        .unwrap_or(100);
    let mut out = Vec::new();
    for l in &run.levels {
        let (used, cores) = match &l.info.cpu {
            Some(cpu) => (cpu.bmk_cores(), cpu.host_cpus.max(1)),
            None => {
                let Some(text) = l.os_capture(capture::OS_CLIENT_STAT) else {
                    continue;
                };
                let points = rates::client_cpu_percent(&text, clock_ticks);
                if points.is_empty() {
                    continue;
                }
                let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
                (mean / 100.0, host_cores)
            }
        };
        let usable = cores.min(l.info.users.max(1)) as f64;
        if used > limits::CLIENT_CPU_SHARE * usable {
            let by = if (cores as f64) <= usable {
                format!("the client's {cores} cores")
            } else {
                format!("its {} users' threads", l.info.users)
            };
            out.push(finding(
                CheckKind::SaturatedClient,
                Some(l),
                format!(
                    "bmk used {used:.2} cores, {:.0} % of the {usable:.0} that {by} can give: the client, not the server, may be the limit; use more client cores or hosts (bmk merge combines their results)",
                    used / usable * 100.0
                ),
            ));
        }
    }
    out
}

/// Levels during which the host was busy with other work: CPU used by neither bmk nor
/// a database server on the same host above 25 % of all CPUs, or steal time above
/// 5 %. Both take CPU from the benchmark and from a local server unevenly, so two runs
/// on such a host differ for reasons that are not theirs. From `level.json`'s `cpu`.
pub fn busy_host(run: &RunData) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &run.levels {
        let Some(cpu) = &l.info.cpu else {
            continue;
        };
        let other = cpu.host_other_pct > limits::HOST_OTHER_PCT;
        let steal = cpu.steal_pct > limits::STEAL_PCT;
        if !other && !steal {
            continue;
        }
        let mut why = Vec::new();
        if other {
            why.push(format!(
                "other work used {:.0} % of its {} CPUs (limit {:.0} %; bmk {:.2} cores, local server {:.2} cores)",
                cpu.host_other_pct,
                cpu.host_cpus,
                limits::HOST_OTHER_PCT,
                cpu.bmk_cores(),
                if cpu.wall_s > 0.0 { cpu.server_s / cpu.wall_s } else { 0.0 }
            ));
        }
        if steal {
            why.push(format!(
                "the hypervisor stole {:.1} % of its CPU time (limit {:.0} %)",
                cpu.steal_pct,
                limits::STEAL_PCT
            ));
        }
        out.push(finding(
            CheckKind::BusyHost,
            Some(l),
            format!(
                "the host was busy: {}; the level's numbers depend on that load, so repeat it on a quiet host before comparing",
                why.join(", and ")
            ),
        ));
    }
    out
}

/// Levels during which the server's uptime (MySQL) went back, its statistics counters
/// (PostgreSQL) went back, or the sampler recorded a restart.
pub fn server_restarts(run: &RunData) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &run.levels {
        let mut why = None;
        if let Some(text) = l.server_capture(capture::MYSQL_GLOBAL_STATUS) {
            let uptimes: Vec<(f64, f64)> = capture::samples(&text)
                .iter()
                .filter_map(|s| {
                    let v = Table::parse(s.body).value("Uptime")?.parse::<f64>().ok()?;
                    Some((s.unix_s(), v))
                })
                .collect();
            if let Some(w) = uptimes.windows(2).find(|w| w[1].1 < w[0].1) {
                why = Some(format!(
                    "the server's Uptime went back from {:.0} s to {:.0} s between samples",
                    w[0].1, w[1].1
                ));
            }
        }
        if why.is_none() {
            if let Some(text) = l.server_capture(capture::PG_STAT_DATABASE) {
                let s = rates::pg_database_totals(&text);
                if let Some(w) = s.windows(2).find(|w| {
                    matches!((w[0].1.get("xact_commit"), w[1].1.get("xact_commit")), (Some(a), Some(b)) if b < a)
                }) {
                    why = Some(format!(
                        "PostgreSQL's commit counter went back from {:.0} to {:.0} (a restart or a statistics reset)",
                        w[0].1["xact_commit"], w[1].1["xact_commit"]
                    ));
                }
            }
        }
        if why.is_none() {
            if let Some(text) = l.server_capture(capture::SERVER_EVENTS) {
                if let Some(line) = text
                    .lines()
                    .find(|x| x.to_ascii_lowercase().contains("restart"))
                {
                    why = Some(format!("the sampler recorded: {}", line.trim()));
                }
            }
        }
        if let Some(why) = why {
            out.push(finding(
                CheckKind::ServerRestart,
                Some(l),
                format!("{why}: the level's numbers mix two server lifetimes (cold caches after the restart); run it again"),
            ));
        }
    }
    out
}

/// Levels without `result.json`: their process was killed or failed before the end.
pub fn unfinished_levels(run: &RunData) -> Vec<Finding> {
    run.levels
        .iter()
        .filter(|l| l.result.is_none())
        .map(|l| {
            finding(
                CheckKind::UnfinishedLevel,
                Some(l),
                format!(
                    "no result.json (the level's record says '{}', {} interval(s) written): its process was killed or failed, so it is not in the table or the curves",
                    l.info.status,
                    l.intervals.len()
                ),
            )
        })
        .collect()
}

/// Levels whose sampler noted that it could not connect or that a statement failed
/// (`server/events.txt`): their server rates are missing or have gaps.
pub fn capture_failures(run: &RunData) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &run.levels {
        let Some(text) = l.server_capture(capture::SERVER_EVENTS) else {
            continue;
        };
        let notes: Vec<&str> = text
            .lines()
            .filter(|x| {
                x.starts_with("sampler cannot connect") || x.starts_with("sampler query failed")
            })
            .collect();
        if let Some(first) = notes.first() {
            out.push(finding(
                CheckKind::CaptureFailed,
                Some(l),
                format!(
                    "{} sampler failure(s), the first: {first}; the level's server rates are missing or have gaps (its benchmark numbers are not affected)",
                    notes.len()
                ),
            ));
        }
    }
    out
}

/// Completed levels whose throughput never settled: MSER-5's warm-up reached the end
/// of the first half of the level, or the window after it still trends.
pub fn never_steady(run: &RunData) -> Vec<Finding> {
    run.levels
        .iter()
        .filter_map(|l| {
            let s = steady::of_level(l);
            (s.verdict == SteadyVerdict::NeverSteady).then(|| {
                finding(
                    CheckKind::NeverSteady,
                    Some(l),
                    format!(
                        "{}: its average mixes warm-up with the result; run the level longer or warm it up first (compare uses its whole time)",
                        s.reason
                    ),
                )
            })
        })
        .collect()
}
/// Levels whose ignored errors exceed a share of the attempts (a fatal error ends its
/// level, which [`unusable_levels`] flags): every error is an attempt at an event that did not count, so
/// the share is errors / (events + errors). Above [`limits::ERRORS_FAIL_PCT`] the
/// level measures the error path (an error returns faster than a transaction, so TPS
/// and latency look better or worse than the workload's) and fails; above
/// [`limits::ERRORS_WARN_PCT`] it warns.
pub fn errors(run: &RunData) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &run.levels {
        let Some(r) = &l.result else {
            continue;
        };
        let f = &r.final_stats;
        let errors = f.counters.errors;
        if errors == 0 {
            continue;
        }
        let attempts = f.events + errors;
        let pct = errors as f64 / attempts as f64 * 100.0;
        let (severity, threshold) = if pct > limits::ERRORS_FAIL_PCT {
            (Severity::Fail, limits::ERRORS_FAIL_PCT)
        } else if pct > limits::ERRORS_WARN_PCT {
            (Severity::Warn, limits::ERRORS_WARN_PCT)
        } else {
            continue;
        };
        let per_s = |n: u64| f.per_sec(n);
        out.push(
            finding(
                CheckKind::Errors,
                Some(l),
                format!(
                    "{errors} errors against {} events ({pct:.2} % of attempts, above {threshold} %; {:.1} errors/s beside {:.1} TPS): {}",
                    f.events,
                    per_s(errors),
                    f.events_per_sec,
                    if severity == Severity::Fail {
                        "the level measures the error path, not the workload; find the error in the level's output and fix its cause (missing tables, --tables or --table-size larger than the data, deadlocks from too few rows or warehouses)"
                    } else {
                        "some transactions were retried; check that contention is what the test means to measure"
                    }
                ),
            )
            .tripped(pct, threshold)
            .with_severity(severity),
        );
    }
    out
}

/// Finished levels whose status is not `completed` (fatal, failed, interrupted...): they
/// are listed in the table with their status and left off the curves.
pub fn unusable_levels(run: &RunData) -> Vec<Finding> {
    run.levels
        .iter()
        .filter(|l| l.result.is_some() && !l.usable())
        .map(|l| {
            let tps = l
                .result
                .as_ref()
                .map(|r| r.final_stats.events_per_sec)
                .unwrap_or(0.0);
            finding(
                CheckKind::UnusableLevel,
                Some(l),
                format!(
                    "status '{}' after {:.1} s ({tps:.2} TPS): the level did not run its course, so its numbers measure how it stopped; it is left off the scalability curves and out of comparisons",
                    l.status(),
                    l.seconds()
                ),
            )
        })
        .collect()
}

/// A run whose `run.json` does not say `completed`: failed or interrupted (some planned
/// levels never ran), or still `running` (the sweep was killed, or runs now).
pub fn run_not_completed(run: &RunData) -> Vec<Finding> {
    let Some(m) = &run.manifest else {
        return Vec::new();
    };
    if m.status == "completed" {
        return Vec::new();
    }
    let planned = m
        .sweep
        .as_ref()
        .map(|s| s.users.len() * s.repeat.max(1) as usize)
        .unwrap_or(0);
    let ran = run.levels.len();
    let severity = if m.status == "interrupted" {
        Severity::Warn
    } else {
        Severity::Fail
    };
    let why = match m.status.as_str() {
        "running" => {
            "run.json still says 'running': the sweep was killed, or still runs".to_string()
        }
        s => format!("the run ended '{s}'"),
    };
    vec![finding(
        CheckKind::RunNotCompleted,
        None,
        format!(
            "{why}; {ran} of {planned} planned level(s) have a folder: the curves miss the levels that did not run"
        ),
    )
    .with_severity(severity)]
}

/// Whether test `test` reads only rows that exist when the data matches its options:
/// the OLTP family (ids drawn in 1..=`--table-size` of tables 1..=`--tables`) and the
/// select_random scripts. TPC-C and dbSTRESS legitimately read nothing at times (an
/// empty new-order queue).
pub fn expects_rows(test: &str) -> bool {
    let base = test
        .rsplit('/')
        .next()
        .unwrap_or(test)
        .trim_end_matches(".lua");
    base.starts_with("oltp_") || base.starts_with("OLTP_") || base.starts_with("select_random_")
}

/// OLTP levels whose read statements returned no row in more than a share of the
/// reads. The OLTP workloads read ids that exist in the data `prepare` loads, so an
/// empty read means the data is smaller than the options claim (or was deleted): the
/// server answered "no such row" from its index, which is fast and measures nothing.
/// Only a read between the DELETE and the INSERT of an autocommit delete/insert pair
/// may legitimately miss its row, and that is rare.
pub fn empty_reads(run: &RunData) -> Vec<Finding> {
    if !expects_rows(&run.test()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for l in &run.levels {
        let Some(r) = &l.result else {
            continue;
        };
        let c = &r.final_stats.counters;
        let (Some(rows), Some(empty)) = (c.rows, c.empty_reads) else {
            continue;
        };
        if c.reads == 0 || empty == 0 {
            continue;
        }
        let pct = empty as f64 / c.reads as f64 * 100.0;
        let (severity, threshold) = if pct > limits::EMPTY_READS_FAIL_PCT {
            (Severity::Fail, limits::EMPTY_READS_FAIL_PCT)
        } else if pct > limits::EMPTY_READS_WARN_PCT {
            (Severity::Warn, limits::EMPTY_READS_WARN_PCT)
        } else {
            continue;
        };
        out.push(
            finding(
                CheckKind::EmptyReads,
                Some(l),
                format!(
                    "{empty} of {} reads ({pct:.2} %, above {threshold} %) returned no row ({:.2} rows per read): the workload reads ids 1..--table-size that prepare loaded, so the tables hold fewer rows than the options claim (see the data-size check) or rows were deleted; a read of a missing row is fast and proves nothing",
                    c.reads,
                    rows as f64 / c.reads as f64
                ),
            )
            .tripped(pct, threshold)
            .with_severity(severity),
        );
    }
    out
}

/// OLTP levels whose reads returned far fewer rows per event than the options make a
/// complete data set return ([`expected_rows`]): ranges cut short by missing ids (rows
/// deleted, or `--table-size` larger than the data) read less and answer faster than
/// the workload the options name. A level whose share of empty reads already trips
/// [`empty_reads`] is left to that check, which names the same cause.
pub fn short_reads(run: &RunData) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &run.levels {
        let Some(r) = &l.result else {
            continue;
        };
        let Some(expected) = expected_rows::rows_per_event(&r.run.test, &r.run.options) else {
            continue;
        };
        let f = &r.final_stats;
        let c = &f.counters;
        let Some(rows) = c.rows else {
            continue;
        };
        if f.events == 0 || expected <= 0.0 {
            continue;
        }
        let empty_pct = c.empty_reads.unwrap_or(0) as f64 / c.reads.max(1) as f64 * 100.0;
        if empty_pct > limits::EMPTY_READS_WARN_PCT {
            continue;
        }
        let per_event = rows as f64 / f.events as f64;
        let pct = per_event / expected * 100.0;
        let (severity, threshold) = if pct < limits::SHORT_READS_FAIL_PCT {
            (Severity::Fail, limits::SHORT_READS_FAIL_PCT)
        } else if pct < limits::SHORT_READS_WARN_PCT {
            (Severity::Warn, limits::SHORT_READS_WARN_PCT)
        } else {
            continue;
        };
        out.push(
            finding(
                CheckKind::ShortReads,
                Some(l),
                format!(
                    "{per_event:.1} rows read per event, {pct:.1} % of the {expected:.1} that the options (point selects one row each, ranges --range-size rows) make a complete data set return (below {threshold} %): ranges find ids missing, so the tables hold fewer or sparser rows than the options claim (rows deleted, or --table-size larger than the data); shorter reads answer faster and measure less than the workload"
                ),
            )
            .tripped(pct, threshold)
            .with_severity(severity),
        );
    }
    out
}

/// Levels whose tables, as the kit read them before the level started, are fewer or
/// smaller than the options claim: a missing table, or a largest id below
/// `--table-size`.
pub fn data_smaller_than_claimed(run: &RunData) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &run.levels {
        let Some(d) = &l.info.data else {
            continue;
        };
        if d.error.is_some() {
            continue;
        }
        if d.tables_missing > 0 {
            out.push(
                finding(
                    CheckKind::DataSmallerThanClaimed,
                    Some(l),
                    format!(
                        "{} of the {} tables the options claim (--tables={}) do not exist (found {} {}N table(s)): the level's events on them fail or read nothing; prepare that many tables or lower --tables",
                        d.tables_missing,
                        d.tables_claimed,
                        d.tables_claimed,
                        d.tables.len(),
                        d.table_prefix
                    ),
                )
                .tripped(d.tables_missing as f64, 0.0),
            );
        }
        let small: Vec<(&str, u64)> = d
            .tables
            .iter()
            .map(|t| (t.name.as_str(), t.max_id.unwrap_or(0)))
            .filter(|(_, m)| *m < d.table_size_claimed)
            .collect();
        if let Some(smallest) = small.iter().map(|s| s.1).min() {
            let names: Vec<String> = small
                .iter()
                .take(3)
                .map(|(n, m)| format!("{n} max id {m}"))
                .collect();
            let more = if small.len() > 3 {
                format!(" and {} more", small.len() - 3)
            } else {
                String::new()
            };
            out.push(
                finding(
                    CheckKind::DataSmallerThanClaimed,
                    Some(l),
                    format!(
                        "{} table(s) hold fewer rows than --table-size={} ({}{more}): reads of ids above the largest find nothing; prepare with the same --table-size or run with the real one",
                        small.len(),
                        d.table_size_claimed,
                        names.join(", ")
                    ),
                )
                .tripped(smallest as f64, d.table_size_claimed as f64),
            );
        }
    }
    out
}
