//! `bmk compare`: several results directories side by side, with a plain verdict per
//! users count on whether each later side is faster or slower than the first (A).
//!
//! Before any statistics the runs must be alike ([`crate::compare_rules`]): the same
//! test, scenario and data size, unless `--mixed`. Levels that did not complete are
//! left out, and a run whose host was busy with other work is warned about. At each
//! users count the samples come from the levels' steady windows
//! ([`crate::steady`]) when every level of every side there has one, else from the
//! whole measured time of each; the table says which. The statistics are
//! [`crate::compare_stats`]'s; this module gathers samples and renders.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::charts::{LineChart, XScale};
use crate::compare_rules::{self, letter};
use crate::compare_stats::{self, Outcome, Samples};
use crate::report::Chart;
use crate::stats;
use crate::steady;
use crate::Error;
use bmk_results::dir_writer;
use bmk_results::load::{Level, RunData};

pub use crate::compare_stats::BATCHES;

/// Fewer repeats than this a side get a warning.
pub const MIN_REPEATS: usize = 4;

/// How `bmk compare` is asked to compare.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompareOptions {
    /// Compare runs of different workloads, scenarios or data sizes anyway.
    pub mixed: bool,
}

/// One side of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// `A`, `B`, ...
    pub letter: String,
    /// Directory name and what differs from the others.
    pub label: String,
}

/// The verdict for one side against A at one users count.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The sentence.
    pub text: String,
    /// `faster`, `slower` or `same` (for the page's colours).
    pub class: String,
    /// Users.
    pub users: u32,
    /// The letter of the side it is measured against (`A`).
    pub base: String,
    /// The side's letter.
    pub side: String,
    /// Estimated change of throughput, %.
    pub change_pct: f64,
    /// Whether the difference is significant.
    pub significant: bool,
}

/// What the comparison reads of a span of a level: its throughput, latency
/// percentiles and throughput per interval.
#[derive(Debug, Clone)]
struct SpanFigures {
    tps: f64,
    p95_ms: f64,
    p99_ms: f64,
    series: Vec<f64>,
}

/// One level as the comparison sees it.
#[derive(Debug, Clone)]
struct LevelView {
    whole: SpanFigures,
    /// The steady window's figures, when it has one.
    steady: Option<SpanFigures>,
}

/// Per users count, the compared levels of one run.
type Levels = BTreeMap<u32, Vec<LevelView>>;

fn view(level: &Level) -> Option<LevelView> {
    let row = dir_writer::summary_row(level)?;
    let tps = |from: usize| -> Vec<f64> {
        level.intervals[from.min(level.intervals.len())..]
            .iter()
            .map(|i| i.record.tps)
            .collect()
    };
    let st = steady::of_level(level);
    // A window without stored percentiles takes the whole level's.
    let or_whole = |window: f64, whole: f64| if window > 0.0 { window } else { whole };
    Some(LevelView {
        whole: SpanFigures {
            tps: row.tps,
            p95_ms: row.p95_ms,
            p99_ms: row.p99_ms,
            series: tps(0),
        },
        steady: st.steady_window().map(|w| SpanFigures {
            tps: w.figures.tps,
            p95_ms: or_whole(w.figures.p95_ms, row.p95_ms),
            p99_ms: or_whole(w.figures.p99_ms, row.p99_ms),
            series: tps(w.warmup_intervals),
        }),
    })
}

fn levels_of(run: &RunData) -> Levels {
    let mut out: Levels = BTreeMap::new();
    for l in run.levels.iter().filter(|l| compare_rules::comparable(l)) {
        if let Some(v) = view(l) {
            out.entry(l.info.users).or_default().push(v);
        }
    }
    out
}

/// The samples of `levels` from their steady windows or their whole time.
fn samples(levels: &[LevelView], use_steady: bool) -> Samples {
    let mut s = Samples::default();
    for l in levels {
        let f = match (&l.steady, use_steady) {
            (Some(st), true) => st,
            _ => &l.whole,
        };
        s.tps.push(f.tps);
        s.p95_ms.push(f.p95_ms);
        s.p99_ms.push(f.p99_ms);
        s.series.push(f.series.clone());
    }
    s
}

/// Levels of `run` that never reached steady state, for the warning.
fn never_steady(run: &RunData) -> Vec<String> {
    run.levels
        .iter()
        .filter(|l| compare_rules::comparable(l))
        .map(steady::of_level)
        .filter(|s| s.verdict == steady::SteadyVerdict::NeverSteady)
        .map(|s| format!("{} ({} users: {})", s.level, s.users, s.reason))
        .collect()
}

/// One row of the comparison table.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// Users.
    pub users: u32,
    /// Side letter.
    pub side: String,
    /// Repeats.
    pub n: usize,
    /// Mean TPS over repeats.
    pub mean: f64,
    /// Standard deviation of TPS over repeats (0 for one).
    pub sd: f64,
    /// Mean p95 latency, ms.
    pub p95_ms: f64,
    /// Change against A (empty for A).
    pub change: String,
    /// 95 % CI of the change.
    pub ci: String,
    /// p-value.
    pub p: String,
    /// Which test and samples.
    pub test: String,
    /// The span of each level the numbers come from: `steady` (its steady window) or
    /// `whole` (its whole measured time).
    pub window: String,
}

/// A setting that differs between sides.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    /// `--table-size` or a server variable's name.
    pub name: String,
    /// Its value on each side (`-` when unset).
    pub values: Vec<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The sides, A first.
    pub sides: Vec<Side>,
    /// Warnings about the data (too few repeats).
    pub warnings: Vec<String>,
    /// One verdict per later side and users count.
    pub verdicts: Vec<Verdict>,
    /// The table.
    pub rows: Vec<CompareRow>,
    /// Overlay charts.
    pub charts: Vec<Chart>,
    /// Options and server variables that differ.
    pub differences: Vec<Difference>,
    /// With three runs or more: every later side against every earlier one (B vs A,
    /// C vs A, C vs B …), so that N configurations are ranked without running
    /// `compare` pairwise. Empty for two runs (`verdicts` says it all).
    pub pairs: Vec<Verdict>,
}

fn pct(x: f64) -> String {
    format!("{:+.1} %", x * 100.0)
}

/// The settings (workload options, then server variables) whose values differ.
fn differences(runs: &[RunData]) -> Vec<Difference> {
    let mut out = Vec::new();
    let opts: Vec<BTreeMap<String, String>> = runs.iter().map(|r| r.options()).collect();
    let vars: Vec<BTreeMap<String, String>> = runs
        .iter()
        .map(|r| {
            r.manifest
                .as_ref()
                .and_then(|m| m.server.as_ref())
                .map(|s| s.variables.clone())
                .unwrap_or_default()
        })
        .collect();
    // Settings that say where or when a run happened, not how.
    let incidental = [
        "results",
        "results_dir",
        "timestamp",
        "pid_file",
        "gtid_binlog_pos",
        "gtid_current_pos",
        "server_uuid",
    ];
    for (maps, prefix) in [(&opts, "--"), (&vars, "")] {
        let keys: BTreeSet<&String> = maps.iter().flat_map(|m| m.keys()).collect();
        for k in keys {
            if incidental.contains(&k.replace('-', "_").as_str()) {
                continue;
            }
            let values: Vec<String> = maps
                .iter()
                .map(|m| m.get(k).cloned().unwrap_or_else(|| "-".into()))
                .collect();
            if values.iter().any(|v| v != &values[0]) {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("--{}", k.replace('_', "-"))
                };
                out.push(Difference { name, values });
            }
        }
    }
    out
}

/// Compares `runs` (at least two), the first being the baseline A.
pub fn compare(runs: &[RunData], opts: CompareOptions) -> Result<Comparison, Error> {
    if runs.len() < 2 {
        return Err(Error::Incompatible(
            "compare needs two or more results directories".into(),
        ));
    }
    let mut warnings = Vec::new();
    if let Some(d) = compare_rules::check_like(runs, opts.mixed)? {
        warnings.push(format!("unlike runs compared anyway (--mixed): {d}"));
    }
    let diffs = differences(runs);
    let sides = sides(runs, &diffs);
    let all: Vec<Levels> = runs.iter().map(levels_of).collect();
    let busy = data_warnings(runs, &all, &mut warnings);
    let per_users = statistics(&all);
    let mut verdicts = Vec::new();
    let mut rows = Vec::new();
    for at in &per_users {
        rows.extend(table_rows(at));
        verdicts.extend(verdicts_at(at, &busy));
    }
    let mut pairs = Vec::new();
    if runs.len() > 2 {
        for base in 0..runs.len() {
            for side in base + 1..runs.len() {
                let pair = [all[base].clone(), all[side].clone()];
                let names = (letter(base), letter(side));
                pairs.extend(
                    statistics(&pair)
                        .iter()
                        .filter_map(|at| verdict_of(at, 1, (&names.0, &names.1), &busy)),
                );
            }
        }
    }
    Ok(Comparison {
        sides,
        warnings,
        verdicts,
        rows,
        charts: charts(runs, &per_users)?,
        differences: diffs,
        pairs,
    })
}

/// Each run as a side: its letter, and its label with the first settings that differ.
fn sides(runs: &[RunData], diffs: &[Difference]) -> Vec<Side> {
    runs.iter()
        .enumerate()
        .map(|(i, r)| {
            let mut what: Vec<String> = diffs
                .iter()
                .take(5)
                .map(|d| format!("{}={}", d.name, d.values[i]))
                .collect();
            if diffs.len() > 5 {
                what.push(format!("{} more", diffs.len() - 5));
            }
            let label = if what.is_empty() {
                r.label()
            } else {
                format!("{} ({})", r.label(), what.join(", "))
            };
            Side {
                letter: letter(i),
                label,
            }
        })
        .collect()
}

/// Adds to `warnings` what weakens each side's data: levels left out, levels never
/// steady, a busy host, too few repeats. Returns the letters of the sides whose host
/// was busy.
fn data_warnings(runs: &[RunData], all: &[Levels], warnings: &mut Vec<String>) -> Vec<String> {
    let mut busy = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let out = compare_rules::left_out(run);
        if !out.is_empty() {
            warnings.push(format!(
                "{} left out of the comparison (did not complete): {}",
                letter(i),
                out.join(", ")
            ));
        }
        let never = never_steady(run);
        if !never.is_empty() {
            warnings.push(format!(
                "{} never reached a steady state at {}; those users counts are compared over each level's whole measured time",
                letter(i),
                never.join("; ")
            ));
        }
        if let Some(w) = compare_rules::busy_host_warning(i, run) {
            warnings.push(w);
            busy.push(letter(i));
        }
    }
    for (i, levels) in all.iter().enumerate() {
        let short: Vec<String> = levels
            .iter()
            .filter(|(_, v)| v.len() < MIN_REPEATS)
            .map(|(u, v)| format!("{u} ({})", v.len()))
            .collect();
        if !short.is_empty() {
            warnings.push(format!(
                "{} has fewer than {MIN_REPEATS} repeats at users {}: with a single run the interval is computed from batch means of its 1-second throughput, which understates run-to-run variation; use --repeat {MIN_REPEATS} or more",
                letter(i),
                short.join(", ")
            ));
        }
    }
    busy
}

/// The statistics at one users count.
struct AtUsers {
    users: u32,
    /// Whether the samples come from the levels' steady windows (else from their
    /// whole measured time).
    steady: bool,
    /// Each side's samples; `None` for a side without a compared level here.
    samples: Vec<Option<Samples>>,
    /// Each side's outcome against A (none for A itself, for a side without samples,
    /// and for too few samples); empty when A has no samples here.
    outcomes: Vec<Option<Outcome>>,
}

/// The samples and outcomes at every users count any side has, in users order.
fn statistics(all: &[Levels]) -> Vec<AtUsers> {
    let users: BTreeSet<u32> = all.iter().flat_map(|l| l.keys().copied()).collect();
    users
        .into_iter()
        .map(|u| {
            // Steady windows only when every level of every side at this users count
            // has one: A and B are then measured over the same kind of span.
            let steady = all
                .iter()
                .filter_map(|l| l.get(&u))
                .all(|ls| ls.iter().all(|v| v.steady.is_some()));
            let samples: Vec<Option<Samples>> = all
                .iter()
                .map(|l| l.get(&u).map(|v| samples(v, steady)))
                .collect();
            let outcomes = match &samples[0] {
                Some(a) => samples
                    .iter()
                    .enumerate()
                    .map(|(i, b)| match b {
                        Some(b) if i > 0 => compare_stats::judge(a, b),
                        _ => None,
                    })
                    .collect(),
                None => Vec::new(),
            };
            AtUsers {
                users: u,
                steady,
                samples,
                outcomes,
            }
        })
        .collect()
}

/// The table's rows at one users count: A, then each later side with samples. None
/// when A has no samples there.
fn table_rows(at: &AtUsers) -> Vec<CompareRow> {
    let Some(a) = &at.samples[0] else {
        return Vec::new();
    };
    let window = if at.steady { "steady" } else { "whole" };
    let row = |side: String, s: &Samples| {
        let (mean, sd) = stats::mean_sd(&s.tps);
        CompareRow {
            users: at.users,
            side,
            n: s.tps.len(),
            mean,
            sd,
            p95_ms: stats::mean_sd(&s.p95_ms).0,
            change: String::new(),
            ci: String::new(),
            p: String::new(),
            test: String::new(),
            window: window.into(),
        }
    };
    let mut rows = vec![row("A".into(), a)];
    for (i, b) in at.samples.iter().enumerate().skip(1) {
        let Some(b) = b else { continue };
        let mut r = row(letter(i), b);
        match &at.outcomes[i] {
            Some(o) => {
                r.change = pct(o.change);
                r.ci = format!("[{}, {}]", pct(o.ci.0), pct(o.ci.1));
                r.p = format!("{:.3}", o.p);
                r.test = o.test.clone();
            }
            None => r.test = "not enough samples".into(),
        }
        rows.push(r);
    }
    rows
}

/// The verdicts at one users count, one per later side with samples, each with a
/// caveat when its host or A's was busy (`busy`: those sides' letters).
fn verdicts_at(at: &AtUsers, busy: &[String]) -> Vec<Verdict> {
    (1..at.samples.len())
        .filter_map(|i| verdict_of(at, i, ("A", &letter(i)), busy))
        .collect()
}

/// The verdict for sample `i` of `at` against sample 0, the two named `names`
/// (base, side); `None` when either has no level at this users count.
fn verdict_of(at: &AtUsers, i: usize, names: (&str, &str), busy: &[String]) -> Option<Verdict> {
    at.samples[0].as_ref()?;
    at.samples[i].as_ref()?;
    let (base, side) = names;
    let outcome = at.outcomes[i].as_ref();
    let (mut text, class) = compare_stats::sentence(side, base, at.users, outcome);
    let caveat: Vec<&str> = [base, side]
        .into_iter()
        .filter(|s| busy.iter().any(|b| b == s))
        .collect();
    match caveat.as_slice() {
        [] => {}
        [one] => text.push_str(&format!(
            " (but {one}'s host was busy with other work: see the warning)"
        )),
        _ => text.push_str(" (but both hosts were busy with other work: see the warnings)"),
    }
    Some(Verdict {
        text,
        class: class.into(),
        users: at.users,
        base: base.to_string(),
        side: side.to_string(),
        change_pct: outcome.map_or(0.0, |o| o.change * 100.0),
        significant: outcome.is_some_and(|o| o.significant),
    })
}

/// The overlay charts: each side's mean TPS and mean p95 latency against users.
fn charts(runs: &[RunData], per_users: &[AtUsers]) -> Result<Vec<Chart>, Error> {
    let users: Vec<f64> = per_users.iter().map(|at| at.users as f64).collect();
    let x_scale = XScale::for_users(&users);
    let series = |pick: &dyn Fn(&Samples) -> f64| {
        runs.iter()
            .enumerate()
            .map(|(i, run)| {
                (
                    format!("{} {}", letter(i), run.label()),
                    per_users
                        .iter()
                        .filter_map(|at| Some((at.users as f64, pick(at.samples[i].as_ref()?))))
                        .collect(),
                )
            })
            .collect::<Vec<_>>()
    };
    [
        LineChart {
            title: "TPS vs users".into(),
            x_label: "users".into(),
            x_scale,
            y_label: "TPS (mean of repeats)".into(),
            series: series(&|s| stats::mean_sd(&s.tps).0),
            ..LineChart::default()
        },
        LineChart {
            title: "p95 latency vs users".into(),
            x_label: "users".into(),
            x_scale,
            y_label: "ms".into(),
            series: series(&|s| stats::mean_sd(&s.p95_ms).0),
            ..LineChart::default()
        },
        LineChart {
            title: "p99 latency vs users".into(),
            x_label: "users".into(),
            x_scale,
            y_label: "ms".into(),
            series: series(&|s| stats::mean_sd(&s.p99_ms).0),
            ..LineChart::default()
        },
    ]
    .into_iter()
    .map(crate::report::chart)
    .collect()
}

/// What the `window` column means, printed under the table when a steady window was
/// used.
const WINDOW_NOTE: &str = "window: steady = each level from the end of its warm-up (found by MSER-5) to its end; whole = each level's whole measured time\n";

impl Comparison {
    /// Verdicts where a side is significantly slower than A by more than `pct` %.
    pub fn slower_than(&self, pct: f64) -> Vec<&Verdict> {
        self.verdicts
            .iter()
            .filter(|v| v.significant && v.change_pct < -pct)
            .collect()
    }

    /// The text `bmk compare` prints.
    pub fn text_summary(&self) -> String {
        let mut out = String::new();
        for s in &self.sides {
            out.push_str(&format!("{}: {}\n", s.letter, s.label));
        }
        out.push('\n');
        for w in &self.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        if !self.warnings.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!(
            "{:>6} {:<4} {:>4} {:<6} {:>11} {:>9} {:>9} {:>8} {:>20} {:>6}  {}\n",
            "users",
            "side",
            "n",
            "window",
            "TPS",
            "stddev",
            "p95 ms",
            "change",
            "95 % CI",
            "p",
            "test"
        ));
        for r in &self.rows {
            out.push_str(&format!(
                "{:>6} {:<4} {:>4} {:<6} {:>11.2} {:>9.2} {:>9.3} {:>8} {:>20} {:>6}  {}\n",
                r.users, r.side, r.n, r.window, r.mean, r.sd, r.p95_ms, r.change, r.ci, r.p, r.test
            ));
        }
        if self.rows.iter().any(|r| r.window == "steady") {
            out.push_str(WINDOW_NOTE);
        }
        out.push('\n');
        for v in &self.verdicts {
            out.push_str(&v.text);
            out.push('\n');
        }
        if !self.pairs.is_empty() {
            out.push_str("\nEvery pair:\n");
            for v in &self.pairs {
                out.push_str(&v.text);
                out.push('\n');
            }
        }
        out
    }
}
