//! The sweep on one time axis: every level's throughput, latency and server counters
//! drawn against the seconds since the first level started, the level boundaries
//! marked with their users, as a sweep is read when looking for what changed between
//! levels (a level that starts on a cache its predecessor warmed, a checkpoint that
//! lands across a boundary).
//!
//! Levels do not follow each other without a pause (the kit reads the tables, starts
//! the capture), so a line breaks between levels instead of joining two levels' points
//! across time nobody measured.

use std::collections::BTreeMap;

use bmk_results::load::{Level, RunData};

use crate::charts::LineChart;
use crate::rates::MetricGroup;
use crate::series::{LatencyLines, LevelSeries};

/// Server and OS charts shown on the timeline, by their group id, in page order: the
/// few that tell a sweep's story (the rest stay in each level's section).
const TIMELINE_GROUPS: [&str; 8] = [
    "mysql_statements",
    "mysql_threads",
    "mysql_session_states",
    "pg_wait_types",
    "innodb_io",
    "pg_transactions",
    "pg_blocks",
    "cpu",
];

/// A server or OS chart joined across levels: its title, unit, and each line's points.
type JoinedGroup = (String, &'static str, BTreeMap<String, Vec<(f64, f64)>>);

/// The timeline charts of `run`: none unless it has two levels with intervals.
/// `metrics` are each level's server and OS groups, in the order of `run.levels` (the
/// report derives them once for the level sections and the timeline).
pub fn charts(run: &RunData, metrics: &[Vec<MetricGroup>]) -> Vec<LineChart> {
    let with_metrics: Vec<(&Level, &[MetricGroup])> = run
        .levels
        .iter()
        .zip(metrics.iter().map(Vec::as_slice))
        .filter(|(l, _)| !l.intervals.is_empty())
        .collect();
    let levels: Vec<&Level> = with_metrics.iter().map(|(l, _)| *l).collect();
    if levels.len() < 2 {
        return Vec::new();
    }
    let origin_s = levels
        .iter()
        .map(|l| l.info.start_unix_ns)
        .min()
        .unwrap_or(0) as f64
        / 1e9;
    let at = |l: &Level| l.info.start_unix_ns as f64 / 1e9 - origin_s;
    let verticals: Vec<(f64, String)> = levels
        .iter()
        .map(|l| (at(l), bmk_results::load::users(l.info.users)))
        .collect();
    let base = |title: &str, y_label: &str| LineChart {
        title: title.to_string(),
        x_label: "seconds since the sweep started".into(),
        y_label: y_label.to_string(),
        verticals: verticals.clone(),
        ..LineChart::default()
    };

    let mut tps = Vec::new();
    let mut stalls = Vec::new();
    let mut latency: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut gaps = Vec::new();
    for l in &levels {
        let start = at(l);
        let s = LevelSeries::of(l);
        tps.extend(s.time_s.iter().zip(&s.tps).map(|(t, v)| (start + t, *v)));
        stalls.extend(s.stalls.iter().map(|&i| (start + s.time_s[i], s.tps[i])));
        let lat = LatencyLines::of(l);
        for (name, values) in &lat.lines {
            let line = latency.entry(name.clone()).or_default();
            line.extend(lat.time_s.iter().zip(values).map(|(t, v)| (start + t, *v)));
            line.push((start, f64::NAN));
        }
        gaps.extend(lat.gaps.iter().map(|(a, b)| (start + a, start + b)));
        tps.push((start, f64::NAN));
    }
    // The breaks were pushed at each level's start: in time order they fall between
    // the previous level's last point and this level's first.
    let in_time_order = |mut v: Vec<(f64, f64)>| {
        v.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then_with(|| b.1.is_nan().cmp(&a.1.is_nan()))
        });
        v
    };
    let mut out = vec![LineChart {
        series: vec![("TPS".into(), in_time_order(tps))],
        marks: stalls,
        marks_label: "stall".into(),
        ..base("Sweep timeline: throughput", "per second")
    }];
    // p50, p95, p99, max in that order.
    let order = ["p50", "p95", "p99", "max"];
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = latency
        .into_iter()
        .map(|(n, v)| (n, in_time_order(v)))
        .collect();
    lines.sort_by_key(|(n, _)| order.iter().position(|o| o == n).unwrap_or(order.len()));
    if !lines.is_empty() {
        out.push(LineChart {
            series: lines,
            gaps,
            ..base("Sweep timeline: latency", "ms")
        });
    }
    // Server and OS groups, joined across levels by their id.
    let mut groups: BTreeMap<&str, JoinedGroup> = BTreeMap::new();
    for (l, level_groups) in &with_metrics {
        for g in level_groups.iter() {
            if !TIMELINE_GROUPS.contains(&g.id) {
                continue;
            }
            let entry = groups
                .entry(g.id)
                .or_insert_with(|| (g.title.clone(), g.unit, BTreeMap::new()));
            for s in &g.series {
                let line = entry.2.entry(s.name.clone()).or_default();
                line.extend(s.points.iter().map(|p| (p.0 - origin_s, p.1)));
                line.push((at(l), f64::NAN));
            }
        }
    }
    for id in TIMELINE_GROUPS {
        let Some((title, unit, series)) = groups.remove(id) else {
            continue;
        };
        out.push(LineChart {
            series: series
                .into_iter()
                .map(|(n, v)| (n, in_time_order(v)))
                .collect(),
            ..base(&format!("Sweep timeline: {title}"), unit)
        });
    }
    out
}
