//! `bmk report`: what the page and the text summary show about one results
//! directory, computed once into plain values ([`Report`]) that [`crate::page`] renders
//! as HTML and [`Report::text_summary`] as text.

use std::collections::BTreeMap;

use bmk_results::results_dir::SummaryRow;
use serde::Serialize;

use crate::charts::{LineChart, XScale};
use crate::checks::{self, Finding};
use crate::drilldown::{self, Notch};
use crate::rates;
use crate::series::{latency_spectrum, LatencyLines, LevelSeries};
use crate::steady::{self, LevelSteady};
use crate::timeline;
use crate::verdicts::Verdict;
use crate::Error;
use bmk_results::dir_writer;
use bmk_results::load::{Level, RunData};

/// One row of the per-level table: the level's `summary.csv` row and what only the
/// report adds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LevelRow {
    /// The numbers every per-level table shows (users, TPS, latency, status, ...).
    #[serde(flatten)]
    pub summary: SummaryRow,
    /// Stalled intervals.
    pub stalls: usize,
    /// Whether the level completed: only such levels are points of the curves.
    pub usable: bool,
}

/// A chart on the page.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    /// Its title (also the figure caption).
    pub title: String,
    /// The SVG document.
    pub svg: String,
    /// What it draws, for `bmk report --export` ([`crate::export`]).
    #[serde(skip)]
    pub data: LineChart,
}

/// Thread fairness of a level.
#[derive(Debug, Clone, Serialize)]
pub struct FairnessView {
    /// Mean events per worker.
    pub events_avg: f64,
    /// Their standard deviation.
    pub events_stddev: f64,
    /// Standard deviation as % of the mean.
    pub events_cv_pct: f64,
    /// Mean busy seconds per worker.
    pub time_avg_s: f64,
    /// Their standard deviation.
    pub time_stddev_s: f64,
}

/// Counts (and latency, when recorded) of one kind of query.
#[derive(Debug, Clone, Serialize)]
pub struct QueryTypeRow {
    /// `point_select`, ...
    pub name: String,
    /// Executions.
    pub count: u64,
    /// Per second of the level.
    pub per_s: f64,
    /// Mean latency, ms, if recorded.
    pub avg_ms: Option<f64>,
    /// 95th percentile, ms, if recorded.
    pub p95_ms: Option<f64>,
}

/// The latency of one transaction type the workload timed itself (TPC-C).
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadLatencyRow {
    /// `new_order`, ...
    pub name: String,
    /// Completed transactions.
    pub count: u64,
    /// Mean latency, ms.
    pub avg_ms: f64,
    /// 95th percentile, ms, if kept.
    pub p95_ms: Option<f64>,
    /// 99th percentile, ms, if kept.
    pub p99_ms: Option<f64>,
    /// Largest latency, ms.
    pub max_ms: f64,
}

/// Everything shown about one level.
#[derive(Debug, Clone, Serialize)]
pub struct LevelSection {
    /// `level-0001 (8 users)`.
    pub label: String,
    /// `level-0001`, the HTML anchor.
    pub name: String,
    /// Throughput and latency over time.
    pub charts: Vec<Chart>,
    /// Server and OS metrics.
    pub metric_charts: Vec<Chart>,
    /// Thread fairness.
    pub fairness: Option<FairnessView>,
    /// Per query kind.
    pub query_types: Vec<QueryTypeRow>,
    /// Its steady state.
    pub steady: LevelSteady,
    /// Its stalled and empty intervals, with the server's samples from then.
    pub notches: Vec<Notch>,
    /// The heading of the workload's own results (`TPC-C results`).
    pub workload_title: String,
    /// The workload's own results (TPC-C tpmC and transaction mix, dbSTRESS rates by
    /// transaction type): name and value.
    pub workload: Vec<(String, f64)>,
    /// The latency of each transaction type the workload timed itself.
    pub workload_latency: Vec<WorkloadLatencyRow>,
}

/// A finding of the sanity checks, for display.
#[derive(Debug, Clone, Serialize)]
pub struct FindingView {
    /// The check.
    pub check: String,
    /// The level, or empty.
    pub level: String,
    /// The message.
    pub message: String,
    /// `fail` or `warn`.
    pub severity: String,
}

impl From<&Finding> for FindingView {
    fn from(f: &Finding) -> FindingView {
        FindingView {
            check: f.kind.title().to_string(),
            level: f.level.clone().unwrap_or_default(),
            message: f.message.clone(),
            severity: f.severity.name().to_string(),
        }
    }
}

/// The report of one results directory.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The directory's name.
    pub name: String,
    /// The test or scenario.
    pub title: String,
    /// Facts about the run: (what, value).
    pub facts: Vec<(String, String)>,
    /// Sanity check findings.
    pub findings: Vec<FindingView>,
    /// The same findings as `checks.json` stores them.
    #[serde(skip)]
    pub verdicts: Vec<Verdict>,
    /// The per-level table.
    pub rows: Vec<LevelRow>,
    /// Throughput and latency against users.
    pub scalability: Vec<Chart>,
    /// The whole sweep on one time axis, level boundaries marked.
    pub timeline: Vec<Chart>,
    /// (anchor, `level-0002 at 3 s: nothing completed`) of every level's notches.
    pub notch_links: Vec<(String, String)>,
    /// Each level's steady state (steady window, its figures beside the whole level's).
    pub steady: Vec<LevelSteady>,
    /// Levels in the table but not on the curves (`level-0002 (fatal)`).
    pub off_curves: Vec<String>,
    /// One section per level.
    pub levels: Vec<LevelSection>,
    /// Workload options.
    pub options: Vec<(String, String)>,
    /// Server variables at the start.
    pub variables: Vec<(String, String)>,
    /// A capacity search's answer and chart (`bmk kit search`).
    pub capacity: Option<crate::capacity_chart::CapacityView>,
}

/// The table row of a level (`None` for a level that did not finish).
pub fn level_row(level: &Level) -> Option<LevelRow> {
    Some(LevelRow {
        summary: dir_writer::summary_row(level)?,
        stalls: LevelSeries::of(level).stalls.len(),
        usable: level.usable(),
    })
}

impl Report {
    /// Computes the report of `run`, drawing every chart.
    pub fn build(run: &RunData) -> Result<Report, Error> {
        let m = run.manifest.as_ref();
        let clock_ticks = m.and_then(|m| m.host.clock_ticks_per_s).unwrap_or(100);
        let rows: Vec<LevelRow> = run.levels.iter().filter_map(level_row).collect();
        let found = checks::run_checks(run);
        let findings = found.iter().map(FindingView::from).collect();
        let verdicts = found.iter().map(Verdict::from).collect();
        let off_curves: Vec<String> = run
            .levels
            .iter()
            .filter(|l| l.result.is_some() && !l.usable())
            .map(|l| format!("{} ({})", l.name(), l.status()))
            .collect();
        let scalability = scalability_charts(&rows)?;
        // Each level's server and OS groups, derived once from its captures for its own
        // section and for the sweep's timeline.
        let metrics: Vec<Vec<rates::MetricGroup>> = run
            .levels
            .iter()
            .map(|l| rates::level_metrics(l, clock_ticks))
            .collect();
        let timeline = timeline::charts(run, &metrics)
            .into_iter()
            .map(chart)
            .collect::<Result<Vec<_>, _>>()?;
        let steady: Vec<LevelSteady> = run.levels.iter().map(steady::of_level).collect();
        let mut levels = Vec::new();
        for ((level, st), groups) in run.levels.iter().zip(&steady).zip(&metrics) {
            levels.push(level_section(level, st, groups)?);
        }
        let notch_links = levels
            .iter()
            .flat_map(|l: &LevelSection| {
                l.notches.iter().map(|n| {
                    (
                        n.anchor.clone(),
                        format!("{} at {:.0} s: {}", l.name, n.at_s, n.why),
                    )
                })
            })
            .collect();
        let mut options: Vec<(String, String)> = run.options().into_iter().collect();
        options.sort();
        let variables = m
            .and_then(|m| m.server.as_ref())
            .map(|s| s.variables.clone().into_iter().collect())
            .unwrap_or_default();
        Ok(Report {
            name: run.label(),
            title: m
                .and_then(|m| m.scenario.clone())
                .unwrap_or_else(|| run.test()),
            facts: facts(run),
            findings,
            verdicts,
            rows,
            scalability,
            timeline,
            notch_links,
            steady,
            off_curves,
            levels,
            options,
            variables,
            capacity: crate::capacity_chart::view(run)?,
        })
    }

    /// The text printed by `bmk report`: the table and the sanity checks.
    pub fn text_summary(&self) -> String {
        let mut out = format!("{} — {}\n\n", self.name, self.title);
        out.push_str(&table_text(&self.rows));
        if let Some(c) = &self.capacity {
            out.push_str(&format!("\n{}\n", c.answer));
        }
        if self.steady.iter().any(|s| s.window.is_some()) {
            out.push_str("\nSteady state (MSER-5):\n");
            out.push_str(&steady_text(&self.steady));
        }
        out.push_str("\nSanity checks:\n");
        if self.findings.is_empty() {
            out.push_str("  none triggered\n");
        }
        for f in &self.findings {
            let level = if f.level.is_empty() {
                String::new()
            } else {
                format!("{}: ", f.level)
            };
            let mark = if f.severity == "fail" { "FAIL" } else { "warn" };
            out.push_str(&format!("  {mark} {}: {level}{}\n", f.check, f.message));
        }
        out
    }
}

/// Facts about the run, (what, value), from its manifest or, without one, from its
/// first level's results; empty values are left out.
fn facts(run: &RunData) -> Vec<(String, String)> {
    let mut facts = Vec::new();
    let mut fact = |k: &str, v: String| {
        if !v.is_empty() {
            facts.push((k.to_string(), v));
        }
    };
    fact("test", run.test());
    if let Some(m) = run.manifest.as_ref() {
        fact("scenario", m.scenario.clone().unwrap_or_default());
        fact("tool", format!("{} {}", m.tool.name, m.tool.version));
        fact("started", m.start_time.clone());
        fact("ended", m.end_time.clone().unwrap_or_default());
        fact("status", m.status.clone());
        let h = &m.host;
        fact(
            "client host",
            format!(
                "{} ({}, {} CPUs, {}, kernel {})",
                h.hostname,
                h.cpu_model.clone().unwrap_or_default(),
                h.cpu_count,
                h.os,
                h.kernel
            ),
        );
        if let Some(s) = &m.server {
            fact(
                "server",
                format!(
                    "{} {} at {}",
                    s.driver,
                    s.version.clone().unwrap_or_default(),
                    s.address.clone().unwrap_or_default()
                ),
            );
        }
        fact("command", m.command_line.join(" "));
    } else if let Some(r) = run.levels.iter().find_map(|l| l.result.as_ref()) {
        fact(
            "tool",
            format!("{} {}", r.run.tool.name, r.run.tool.version),
        );
        fact("started", r.run.start_time.clone());
        fact("command", r.run.command_line.join(" "));
    }
    facts
}

/// Throughput and latency against users, each point the mean of the completed levels
/// at that users count; none without a completed level.
fn scalability_charts(rows: &[LevelRow]) -> Result<Vec<Chart>, Error> {
    let mut scalability = Vec::new();
    let users: Vec<f64> = rows
        .iter()
        .filter(|r| r.usable)
        .map(|r| r.summary.users as f64)
        .collect();
    // One users count is one point: nothing to draw a curve through.
    if users.iter().all(|&u| u == users[0]) {
        return Ok(scalability);
    }
    let x_scale = XScale::for_users(&users);
    let by_users = |get: &dyn Fn(&LevelRow) -> f64| -> Vec<(f64, f64)> {
        let mut m: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.usable) {
            m.entry(r.summary.users).or_default().push(get(r));
        }
        m.into_iter()
            .map(|(u, v)| (u as f64, v.iter().sum::<f64>() / v.len() as f64))
            .collect()
    };
    for (title, name, get) in [
        (
            "Transactions per second vs users",
            "TPS",
            &(|r: &LevelRow| r.summary.tps) as &dyn Fn(&LevelRow) -> f64,
        ),
        ("Queries per second vs users", "QPS", &|r: &LevelRow| {
            r.summary.qps
        }),
    ] {
        scalability.push(chart(LineChart {
            title: title.into(),
            x_label: "users".into(),
            y_label: name.into(),
            series: vec![(name.into(), by_users(get))],
            x_scale,
            ..LineChart::default()
        })?);
    }
    scalability.push(chart(LineChart {
        title: "Latency vs users".into(),
        x_label: "users".into(),
        y_label: "ms".into(),
        series: vec![
            ("avg".into(), by_users(&|r| r.summary.avg_ms)),
            ("p95".into(), by_users(&|r| r.summary.p95_ms)),
            ("p99".into(), by_users(&|r| r.summary.p99_ms)),
        ],
        x_scale,
        ..LineChart::default()
    })?);
    Ok(scalability)
}

/// The per-level table as aligned text.
pub fn table_text(rows: &[LevelRow]) -> String {
    let mut out = format!(
        "{:<11} {:>6} {:>6} {:>11} {:>12} {:>9} {:>9} {:>9} {:>9} {:>7} {:>6}\n",
        "level",
        "users",
        "repeat",
        "TPS",
        "QPS",
        "avg ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "errors",
        "stalls"
    );
    for r in rows {
        let s = &r.summary;
        out.push_str(&format!(
            "{:<11} {:>6} {:>6} {:>11.2} {:>12.2} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>7} {:>6}\n",
            s.level,
            s.users,
            s.repeat,
            s.tps,
            s.qps,
            s.avg_ms,
            s.p95_ms,
            s.p99_ms,
            s.max_ms,
            s.errors,
            r.stalls
        ));
    }
    out
}

/// The steady-state table as aligned text: each judged level's window and its
/// throughput and latency beside the whole level's.
pub fn steady_text(levels: &[LevelSteady]) -> String {
    let mut out = format!(
        "{:<11} {:>6} {:>6} {:<12} {:>15} {:>11} {:>11} {:>9} {:>9} {:>9} {:>9}\n",
        "level",
        "users",
        "repeat",
        "verdict",
        "window s",
        "TPS",
        "whole TPS",
        "p95 ms",
        "whole p95",
        "p99 ms",
        "whole p99"
    );
    for s in levels {
        let Some(w) = &s.window else { continue };
        let whole = s.whole.unwrap_or(steady::Figures {
            tps: 0.0,
            qps: 0.0,
            p95_ms: 0.0,
            p99_ms: 0.0,
        });
        let verdict = match s.verdict {
            steady::SteadyVerdict::Steady => "steady",
            steady::SteadyVerdict::NeverSteady => "never steady",
            steady::SteadyVerdict::NotJudged => "not judged",
        };
        out.push_str(&format!(
            "{:<11} {:>6} {:>6} {:<12} {:>15} {:>11.2} {:>11.2} {:>9.3} {:>9.3} {:>9.3} {:>9.3}\n",
            s.level,
            s.users,
            s.repeat,
            verdict,
            format!("{:.0}-{:.0}", w.start_s, w.end_s),
            w.figures.tps,
            whole.tps,
            w.figures.p95_ms,
            whole.p95_ms,
            w.figures.p99_ms,
            whole.p99_ms
        ));
    }
    out
}

/// `c` drawn, kept beside its drawing for the export.
pub(crate) fn chart(c: LineChart) -> Result<Chart, Error> {
    Ok(Chart {
        title: c.title.clone(),
        svg: c.to_svg()?,
        data: c,
    })
}

fn level_section(
    level: &Level,
    st: &LevelSteady,
    groups: &[rates::MetricGroup],
) -> Result<LevelSection, Error> {
    let label = checks::level_label(level);
    let result = level.result.as_ref();
    Ok(LevelSection {
        charts: time_charts(level, st, &label)?,
        metric_charts: metric_charts(level, groups)?,
        fairness: result.map(|r| {
            let f = &r.final_stats.fairness;
            FairnessView {
                events_avg: f.events_avg,
                events_stddev: f.events_stddev,
                events_cv_pct: if f.events_avg > 0.0 {
                    f.events_stddev / f.events_avg * 100.0
                } else {
                    0.0
                },
                time_avg_s: f.time_avg_s,
                time_stddev_s: f.time_stddev_s,
            }
        }),
        query_types: query_types(level),
        label,
        name: level.name(),
        steady: st.clone(),
        notches: drilldown::notches(level),
        workload_title: workload_title(result.map_or("", |r| r.run.test.as_str())).into(),
        workload: result
            .map(|r| r.workload.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default(),
        workload_latency: result
            .map(|r| {
                r.workload_latency
                    .iter()
                    .map(|(name, s)| WorkloadLatencyRow {
                        name: name.clone(),
                        count: s.count,
                        avg_ms: s.latency.avg_ms,
                        p95_ms: s.latency.percentile_ms(95.0),
                        p99_ms: s.latency.percentile_ms(99.0),
                        max_ms: s.latency.max_ms,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// A level's throughput, queries and p95 latency over time, its stalls marked and its
/// steady window shaded.
fn time_charts(level: &Level, st: &LevelSteady, label: &str) -> Result<Vec<Chart>, Error> {
    let s = LevelSeries::of(level);
    let mut charts = Vec::new();
    if s.time_s.is_empty() {
        return Ok(charts);
    }
    // The steady window shaded on the throughput and latency charts (and the
    // candidate window of a level that never settled, named so).
    let band = st.window.as_ref().map(|w| {
        let name = match st.verdict {
            steady::SteadyVerdict::Steady => "steady window",
            _ => "not steady",
        };
        (w.start_s, w.end_s, name.to_string())
    });
    let pts = |v: &[f64]| {
        s.time_s
            .iter()
            .copied()
            .zip(v.iter().copied())
            .collect::<Vec<_>>()
    };
    charts.push(chart(LineChart {
        title: format!("{label}: throughput"),
        x_label: "seconds".into(),
        y_label: "per second".into(),
        series: vec![("TPS".into(), pts(&s.tps))],
        marks: s.stalls.iter().map(|&i| (s.time_s[i], s.tps[i])).collect(),
        marks_label: "stall".into(),
        band: band.clone(),
        ..LineChart::default()
    })?);
    charts.push(chart(LineChart {
        title: format!("{label}: queries per second"),
        x_label: "seconds".into(),
        y_label: "QPS".into(),
        series: vec![("QPS".into(), pts(&s.qps))],
        ..LineChart::default()
    })?);
    let lat = LatencyLines::of(level);
    if !lat.lines.is_empty() {
        let p95 = lat.lines.iter().find(|l| l.0 == "p95").map(|l| &l.1);
        charts.push(chart(LineChart {
            title: format!("{label}: latency"),
            x_label: "seconds".into(),
            y_label: "ms".into(),
            series: lat.lines.iter().map(|(n, v)| (n.clone(), pts(v))).collect(),
            // Stalls on the p95 line, where it has a value (a stall that completed
            // nothing is the gap itself).
            marks: p95
                .map(|p95| {
                    s.stalls
                        .iter()
                        .filter(|&&i| p95[i].is_finite())
                        .map(|&i| (s.time_s[i], p95[i]))
                        .collect()
                })
                .unwrap_or_default(),
            marks_label: "stall".into(),
            band,
            gaps: lat.gaps.clone(),
            ..LineChart::default()
        })?);
    }
    if let Some(spectrum) = distribution_chart(level, label)? {
        charts.push(spectrum);
    }
    Ok(charts)
}

/// The heading of a level's workload results for `test`.
fn workload_title(test: &str) -> &'static str {
    let t = test.to_ascii_lowercase();
    if t.contains("tpcc") {
        "TPC-C results"
    } else if t.contains("dbstress") {
        "dbSTRESS results"
    } else {
        "Workload results"
    }
}

/// A finished level's latency distribution from its final histogram: latency against
/// percentile on a nines axis, the percentiles the run asked for marked. `None` for a
/// level without a result or without events.
fn distribution_chart(level: &Level, label: &str) -> Result<Option<Chart>, Error> {
    let Some(r) = &level.result else {
        return Ok(None);
    };
    let Ok(hist) = bmk_results::codec::decode(&r.histogram) else {
        return Ok(None);
    };
    let points = latency_spectrum(&hist);
    if points.is_empty() {
        return Ok(None);
    }
    let mut asked: Vec<f64> = r.run.percentiles.clone();
    if r.run.percentile > 0.0 && !asked.contains(&r.run.percentile) {
        asked.push(r.run.percentile);
    }
    let highest = points.last().map_or(0.0, |p| p.0);
    let marks = asked
        .iter()
        .filter(|&&p| p > 0.0 && p <= highest)
        .map(|&p| {
            (
                p,
                hist.median_equivalent(hist.value_at_quantile(p / 100.0)) as f64 / 1e6,
            )
        })
        .collect();
    Ok(Some(chart(LineChart {
        title: format!("{label}: latency distribution"),
        x_label: "percentile".into(),
        y_label: "ms".into(),
        series: vec![("latency".into(), points)],
        marks,
        marks_label: "requested percentiles".into(),
        x_scale: XScale::Nines,
        ..LineChart::default()
    })?))
}

/// A level's server and OS metrics, timed from the level's start.
fn metric_charts(level: &Level, groups: &[rates::MetricGroup]) -> Result<Vec<Chart>, Error> {
    let start_s = level.info.start_unix_ns as f64 / 1e9;
    let mut metric_charts = Vec::new();
    for g in groups {
        metric_charts.push(chart(LineChart {
            title: g.title.clone(),
            x_label: "seconds since the level started".into(),
            y_label: g.unit.to_string(),
            series: g
                .series
                .iter()
                .map(|x| {
                    (
                        x.name.clone(),
                        x.points.iter().map(|p| (p.0 - start_s, p.1)).collect(),
                    )
                })
                .collect(),
            ..LineChart::default()
        })?);
    }
    Ok(metric_charts)
}

/// A level's counts per query kind: from its result (with latency), else summed over
/// its intervals.
fn query_types(level: &Level) -> Vec<QueryTypeRow> {
    let seconds = level.seconds();
    let per_s = |n: u64| {
        if seconds > 0.0 {
            n as f64 / seconds
        } else {
            0.0
        }
    };
    match level.result.as_ref().and_then(|r| r.query_types.as_ref()) {
        Some(q) => q
            .iter()
            .map(|(name, q)| QueryTypeRow {
                name: name.clone(),
                count: q.count,
                per_s: per_s(q.count),
                avg_ms: Some(q.latency.avg_ms),
                p95_ms: q.latency.percentile_ms(95.0),
            })
            .collect(),
        None => {
            let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
            for l in &level.intervals {
                for (k, v) in &l.query_counts {
                    *counts.entry(k).or_default() += v;
                }
            }
            counts
                .into_iter()
                .map(|(k, v)| QueryTypeRow {
                    name: k.to_string(),
                    count: v,
                    per_s: per_s(v),
                    avg_ms: None,
                    p95_ms: None,
                })
                .collect()
        }
    }
}
