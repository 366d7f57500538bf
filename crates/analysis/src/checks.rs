//! Result sanity checks: what a careful benchmarker looks for before believing a
//! sweep. Each check reads the levels and their raw captures and returns findings
//! worded for the user; none of them changes a number.
//!
//! * a level measured for less time than its warm-up;
//! * a level whose throughput breaks the trend of its neighbours in the sweep;
//! * stalls (intervals far below the level's median throughput);
//! * a "fake" IO-bound result: throughput up while disk reads fall;
//! * one table group (database) getting far more commits than the others;
//! * read-only QPS that counts BEGIN/COMMIT;
//! * a saturated client (its processes above 90 % of the host's cores);
//! * a server that restarted during a level;
//! * a level that did not finish (no `result.json`: its process was killed or failed);
//! * a sampler that could not reach the server (its server rates are missing).

use std::collections::BTreeMap;

use bmk_report::capture::{self, Table};

use crate::load::{Level, RunData};
use crate::rates;
use crate::series::LevelSeries;

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
    /// One database getting far more commits than the others.
    UnfairTableGroups,
    /// Read-only QPS that counts BEGIN/COMMIT.
    ReadOnlyCountsTransactions,
    /// The client's CPU was the limit.
    SaturatedClient,
    /// The server restarted during a level.
    ServerRestart,
    /// A level without its final result.
    UnfinishedLevel,
    /// The sampler lost or never had its server connection.
    CaptureFailed,
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
            CheckKind::ServerRestart => "server restart",
            CheckKind::UnfinishedLevel => "level did not finish",
            CheckKind::CaptureFailed => "capture failed",
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
    /// What was seen and what it may mean, one sentence or two.
    pub message: String,
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
    /// A database with this many times the mean commits of the others is favoured.
    pub const UNFAIR_RATIO: f64 = 2.0;
    /// Client CPU above this % of all the host's cores is saturation.
    pub const CLIENT_CPU_PCT: f64 = 90.0;
}

/// `level-0003 (64 users)`.
pub fn level_label(level: &Level) -> String {
    format!(
        "{} ({})",
        level.name(),
        crate::load::users(level.info.users)
    )
}

/// Every check on every level of `run`, in check order.
pub fn run_checks(run: &RunData) -> Vec<Finding> {
    let clock_ticks = run
        .manifest
        .as_ref()
        .and_then(|m| m.host.clock_ticks_per_s)
        .unwrap_or(100);
    let cores = run
        .manifest
        .as_ref()
        .map(|m| m.host.cpu_count.max(m.host.cpus_available))
        .or_else(|| {
            run.levels
                .iter()
                .find_map(|l| l.result.as_ref().map(|r| r.run.host.cpu_count))
        })
        .unwrap_or(1)
        .max(1);
    let mut out = Vec::new();
    out.extend(short_levels(run));
    out.extend(trend_breaks(run));
    out.extend(stalls(run));
    out.extend(fake_io_bound(run));
    out.extend(unfair_table_groups(run));
    out.extend(read_only_counts_transactions(run));
    out.extend(saturated_client(run, clock_ticks, cores));
    out.extend(server_restarts(run));
    out.extend(unfinished_levels(run));
    out.extend(capture_failures(run));
    out
}

fn finding(kind: CheckKind, level: Option<&Level>, message: String) -> Finding {
    Finding {
        kind,
        level: level.map(level_label),
        message,
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

/// Mean TPS per users count, ascending users (repeats averaged); finished levels only.
pub fn tps_by_users(run: &RunData) -> Vec<(u32, f64, Vec<&Level>)> {
    let mut by: BTreeMap<u32, Vec<&Level>> = BTreeMap::new();
    for l in run.levels.iter().filter(|l| l.result.is_some()) {
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
        out.push(finding(
            CheckKind::Stall,
            Some(l),
            format!(
                "{} stalled interval(s), below {:.0} % of the median {:.1} TPS: at {}{more}",
                s.stalls.len(),
                crate::series::STALL_FRACTION * 100.0,
                s.median_tps,
                shown.join(", ")
            ),
        ));
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

/// Levels where one database (table group) got far more commits than the others,
/// from PostgreSQL's per-database commit counters.
pub fn unfair_table_groups(run: &RunData) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &run.levels {
        let Some(text) = l.server_capture(capture::PG_STAT_DATABASE) else {
            continue;
        };
        let samples = rates::pg_commits_by_database(&text);
        let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
            continue;
        };
        let mut commits: Vec<(String, f64)> = last
            .1
            .iter()
            .filter_map(|(db, v)| Some((db.clone(), v - first.1.get(db)?)))
            .filter(|(_, d)| *d > 0.0)
            .collect();
        if commits.len() < 2 {
            continue;
        }
        commits.sort_by(|a, b| b.1.total_cmp(&a.1));
        let (top, rest) = commits.split_first().expect("two or more");
        let others = rest.iter().map(|r| r.1).sum::<f64>() / rest.len() as f64;
        if top.1 >= limits::UNFAIR_RATIO * others {
            out.push(finding(
                CheckKind::UnfairTableGroups,
                Some(l),
                format!(
                    "database {} got {:.0} commits, {:.1}x the mean {:.0} of the other {}: its tables are cached or served unfairly; check that every table group gets the same load",
                    top.0,
                    top.1,
                    top.1 / others,
                    others,
                    rest.len()
                ),
            ));
        }
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

/// Levels whose bmk processes used more than 90 % of the host's cores on average.
pub fn saturated_client(run: &RunData, clock_ticks: u64, cores: u32) -> Vec<Finding> {
    let mut out = Vec::new();
    for l in &run.levels {
        let Some(text) = l.os_capture(capture::OS_CLIENT_STAT) else {
            continue;
        };
        let points = rates::client_cpu_percent(&text, clock_ticks);
        if points.is_empty() {
            continue;
        }
        let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
        let share = mean / cores as f64;
        if share > limits::CLIENT_CPU_PCT {
            out.push(finding(
                CheckKind::SaturatedClient,
                Some(l),
                format!(
                    "the bmk processes used {share:.0} % of the client's {cores} cores: the client, not the server, may be the limit; use more client cores or hosts (bmk merge combines their results)"
                ),
            ));
        }
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
