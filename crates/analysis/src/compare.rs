//! `bmk compare`: several results directories side by side, with a plain verdict per
//! users count on whether each later side is faster or slower than the first (A).
//!
//! Samples are the throughputs of a level's repeats. With one repeat a side the
//! level's 1-second throughputs are cut into ten batches and the batch means are the
//! samples (as latte does for correlated samples); this understates run-to-run
//! variation, so the comparison warns whenever a side has fewer than four repeats.
//! The tests themselves are in [`crate::stats`].

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::charts::LineChart;
use crate::load::RunData;
use crate::output;
use crate::report::Chart;
use crate::stats::{self, ALPHA, MIN_MANN_WHITNEY};
use crate::Error;

/// Fewer repeats than this a side get a warning.
pub const MIN_REPEATS: usize = 4;
/// Batches of 1-second throughput used when a side has a single run.
pub const BATCHES: usize = 10;

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
    /// The side's letter.
    pub side: String,
    /// Estimated change of throughput, %.
    pub change_pct: f64,
    /// Whether the difference is significant.
    pub significant: bool,
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
}

/// One level's samples: the TPS of each repeat, the p95 of each repeat, and the
/// 1-second TPS of each repeat.
type LevelSamples = (Vec<f64>, Vec<f64>, Vec<Vec<f64>>);
/// Per users count, that level's samples.
type Levels = BTreeMap<u32, LevelSamples>;

fn levels_of(run: &RunData) -> Levels {
    let mut out: Levels = BTreeMap::new();
    for l in &run.levels {
        let Some(row) = output::summary_row(l) else {
            continue;
        };
        let e = out.entry(row.users).or_default();
        e.0.push(row.tps);
        e.1.push(row.p95_ms);
        e.2.push(l.intervals.iter().map(|i| i.record.tps).collect());
    }
    out
}

fn letter(i: usize) -> String {
    char::from(b'A' + (i % 26) as u8).to_string()
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
pub fn compare(runs: &[RunData]) -> Result<Comparison, Error> {
    if runs.len() < 2 {
        return Err(Error::Incompatible(
            "compare needs two or more results directories".into(),
        ));
    }
    let diffs = differences(runs);
    let sides: Vec<Side> = runs
        .iter()
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
        .collect();
    let all: Vec<Levels> = runs.iter().map(levels_of).collect();
    let mut warnings = Vec::new();
    let mut verdicts = Vec::new();
    let mut rows = Vec::new();
    let users: BTreeSet<u32> = all.iter().flat_map(|l| l.keys().copied()).collect();
    for (i, levels) in all.iter().enumerate() {
        let short: Vec<String> = levels
            .iter()
            .filter(|(_, v)| v.0.len() < MIN_REPEATS)
            .map(|(u, v)| format!("{u} ({})", v.0.len()))
            .collect();
        if !short.is_empty() {
            warnings.push(format!(
                "{} has fewer than {MIN_REPEATS} repeats at users {}: with a single run the interval is computed from batch means of its 1-second throughput, which understates run-to-run variation; use --repeat {MIN_REPEATS} or more",
                letter(i),
                short.join(", ")
            ));
        }
    }
    for &u in &users {
        let Some(base) = all[0].get(&u) else { continue };
        let (bm, bsd) = stats::mean_sd(&base.0);
        rows.push(CompareRow {
            users: u,
            side: "A".into(),
            n: base.0.len(),
            mean: bm,
            sd: bsd,
            p95_ms: stats::mean_sd(&base.1).0,
            change: String::new(),
            ci: String::new(),
            p: String::new(),
            test: String::new(),
        });
        for (i, levels) in all.iter().enumerate().skip(1) {
            let Some(cand) = levels.get(&u) else { continue };
            let (m, sd) = stats::mean_sd(&cand.0);
            let (samples_a, samples_b, kind) = if base.0.len() >= 2 && cand.0.len() >= 2 {
                (base.0.clone(), cand.0.clone(), "repeats")
            } else {
                let batch = |v: &Vec<Vec<f64>>| {
                    v.iter()
                        .flat_map(|s| stats::batch_means(s, BATCHES))
                        .collect::<Vec<f64>>()
                };
                (batch(&base.2), batch(&cand.2), "batch means")
            };
            let side = letter(i);
            let logs = |v: &[f64]| {
                v.iter()
                    .filter(|x| **x > 0.0)
                    .map(|x| x.ln())
                    .collect::<Vec<f64>>()
            };
            let welch = stats::welch(&logs(&samples_a), &logs(&samples_b));
            let mut row = CompareRow {
                users: u,
                side: side.clone(),
                n: cand.0.len(),
                mean: m,
                sd,
                p95_ms: stats::mean_sd(&cand.1).0,
                change: String::new(),
                ci: String::new(),
                p: String::new(),
                test: String::new(),
            };
            let Some(w) = welch else {
                row.test = "not enough samples".into();
                rows.push(row);
                verdicts.push(Verdict {
                    text: format!(
                        "{side} vs A at {}: not enough samples to compare",
                        crate::load::users(u)
                    ),
                    class: "same".into(),
                    users: u,
                    side,
                    change_pct: 0.0,
                    significant: false,
                });
                continue;
            };
            let (p, test) = if samples_a.len().min(samples_b.len()) >= MIN_MANN_WHITNEY {
                match stats::mann_whitney(&samples_a, &samples_b) {
                    Some(mw) => (mw.p, format!("Mann-Whitney U on {kind}")),
                    None => (w.p, format!("Welch t on log {kind}")),
                }
            } else {
                (w.p, format!("Welch t on log {kind}"))
            };
            let change = w.diff.exp() - 1.0;
            let (lo, hi) = (w.ci.0.exp() - 1.0, w.ci.1.exp() - 1.0);
            let significant = p < ALPHA;
            row.change = pct(change);
            row.ci = format!("[{}, {}]", pct(lo), pct(hi));
            row.p = format!("{p:.3}");
            row.test = test;
            rows.push(row);
            let ci = format!("95 % CI [{:.1} %, {:.1} %]", lo * 100.0, hi * 100.0);
            let (text, class) = if significant && change > 0.0 {
                (
                    format!(
                        "{side} is {:.1} % faster than A at {}, {ci}",
                        change * 100.0,
                        crate::load::users(u)
                    ),
                    "faster",
                )
            } else if significant && change < 0.0 {
                (
                    format!(
                        "{side} is {:.1} % slower than A at {}, {ci}",
                        -change * 100.0,
                        crate::load::users(u)
                    ),
                    "slower",
                )
            } else {
                (
                    format!(
                        "{side} vs A at {}: no significant difference ({:+.1} %, {ci}, p = {p:.2})",
                        crate::load::users(u),
                        change * 100.0
                    ),
                    "same",
                )
            };
            verdicts.push(Verdict {
                text,
                class: class.into(),
                users: u,
                side,
                change_pct: change * 100.0,
                significant,
            });
        }
    }
    let series = |pick: &dyn Fn(&LevelSamples) -> f64| {
        all.iter()
            .enumerate()
            .map(|(i, l)| {
                (
                    format!("{} {}", letter(i), runs[i].label()),
                    l.iter().map(|(u, v)| (*u as f64, pick(v))).collect(),
                )
            })
            .collect::<Vec<_>>()
    };
    let charts = vec![
        LineChart {
            title: "TPS vs users".into(),
            x_label: "users".into(),
            y_label: "TPS (mean of repeats)".into(),
            series: series(&|v| stats::mean_sd(&v.0).0),
            ..LineChart::default()
        },
        LineChart {
            title: "p95 latency vs users".into(),
            x_label: "users".into(),
            y_label: "ms".into(),
            series: series(&|v| stats::mean_sd(&v.1).0),
            ..LineChart::default()
        },
    ]
    .into_iter()
    .map(|c| {
        Ok(Chart {
            title: c.title.clone(),
            svg: c.to_svg()?,
        })
    })
    .collect::<Result<Vec<_>, Error>>()?;
    Ok(Comparison {
        sides,
        warnings,
        verdicts,
        rows,
        charts,
        differences: diffs,
    })
}

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
            "{:>6} {:<4} {:>4} {:>11} {:>9} {:>9} {:>8} {:>20} {:>6}  {}\n",
            "users", "side", "n", "TPS", "stddev", "p95 ms", "change", "95 % CI", "p", "test"
        ));
        for r in &self.rows {
            out.push_str(&format!(
                "{:>6} {:<4} {:>4} {:>11.2} {:>9.2} {:>9.3} {:>8} {:>20} {:>6}  {}\n",
                r.users, r.side, r.n, r.mean, r.sd, r.p95_ms, r.change, r.ci, r.p, r.test
            ));
        }
        out.push('\n');
        for v in &self.verdicts {
            out.push_str(&v.text);
            out.push('\n');
        }
        out
    }
}
