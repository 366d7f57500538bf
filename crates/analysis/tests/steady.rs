//! Steady windows of levels written by the report crate's own writers: found where
//! the simulated warm-up ends, with the window's throughput and merged-histogram
//! latency beside the whole level's; a level that never settles is flagged.
mod support;

use std::path::{Path, PathBuf};

use bmk_analysis::checks::{run_checks, CheckKind};
use bmk_analysis::report::Report;
use bmk_analysis::steady::{self, SteadyVerdict};
use bmk_engine::latency::{new_histogram, percentile_ns};
use bmk_results::RunData;
use support::*;

/// A one-level run of `seconds` whose events per second are `rate(second)` and whose
/// latencies are `latency_ns` until second `slow_until`, then half of it.
fn level_run(
    root: &Path,
    name: &str,
    seconds: u64,
    slow_until: u64,
    rate: impl Fn(u64) -> u64,
) -> (PathBuf, Vec<Event>) {
    let dir = root.join(name);
    let evs: Vec<Event> = events(4, seconds, 7, 4_000_000, rate)
        .into_iter()
        .map(|e| Event {
            latency_ns: if e.end_ns / 1_000_000_000 < slow_until {
                e.latency_ns
            } else {
                e.latency_ns / 2
            },
            ..e
        })
        .collect();
    let options = default_options("10000");
    let row = write_level(
        &dir.join("level-0001"),
        1,
        1,
        0.0,
        &Process {
            threads: 4,
            seconds,
            start_ns: T0_NS,
            events: &evs,
            options: options.clone(),
            test: "oltp_read_write".into(),
            query_counts: false,
        },
    );
    write_run(
        &dir,
        "oltp_read_write",
        &options,
        &[4],
        &[row],
        Default::default(),
    );
    (dir, evs)
}

#[test]
fn a_warm_up_is_found_and_the_window_reported_beside_the_whole_level() {
    let tmp = tempfile::tempdir().unwrap();
    // 12 seconds at 40 % of the steady rate, with twice the latency: a cold cache.
    let (dir, evs) = level_run(tmp.path(), "warm", 60, 12, |s| {
        let jitter = [0, 13, 5, 21, 9, 17, 2][(s % 7) as usize];
        if s < 12 {
            400 + jitter
        } else {
            1000 + jitter
        }
    });
    let run = RunData::read(&dir).unwrap();
    let report = Report::build(&run).unwrap();
    let s = &report.steady[0];
    assert_eq!(s.verdict, SteadyVerdict::Steady, "{s:?}");
    let w = s.window.as_ref().unwrap();
    assert_eq!((w.start_s, w.end_s), (12.0, 60.0), "{s:?}");
    assert_eq!((w.warmup_intervals, w.intervals), (12, 48));
    assert_eq!(w.start_unix_ns, T0_NS + 12_000_000_000);
    // The window's figures are those of its own events.
    let kept: Vec<&Event> = evs.iter().filter(|e| e.end_ns >= 12_000_000_000).collect();
    assert!((w.figures.tps - kept.len() as f64 / 48.0).abs() < 1e-9);
    let mut h = new_histogram();
    for e in &kept {
        h.record(e.latency_ns).unwrap();
    }
    let p95 = percentile_ns(&h, 95.0, h.min(), h.max()) as f64 / 1e6;
    assert!(
        (w.figures.p95_ms - p95).abs() < 1e-9,
        "{} {p95}",
        w.figures.p95_ms
    );
    let whole = s.whole.unwrap();
    assert!(w.figures.tps > whole.tps * 1.1 && w.figures.p95_ms < whole.p95_ms);
    // The text summary and the page show both.
    let text = report.text_summary();
    assert!(text.contains("Steady state (MSER-5):"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("level-0001") && l.contains("steady"))
        .unwrap();
    assert!(line.contains("12-60"), "{line}");
    assert!(line.contains(&format!("{:.2}", w.figures.tps)), "{line}");
    assert!(line.contains(&format!("{:.2}", whole.tps)), "{line}");
    let html = bmk_analysis::page::render("report", &report).unwrap();
    assert!(html.contains("<h2 id=\"steady\">Steady state</h2>"));
    assert!(html.contains("warm-up of 12 interval(s), steady from 12 s"));
    assert!(
        html.contains(">\nsteady window\n</text>"),
        "the window is shaded"
    );
    assert!(!run_checks(&run)
        .iter()
        .any(|f| f.kind == CheckKind::NeverSteady));
}

#[test]
fn a_level_that_keeps_climbing_is_flagged() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = level_run(tmp.path(), "ramp", 40, 0, |s| 200 + 30 * s);
    let run = RunData::read(&dir).unwrap();
    let s = steady::of_level(&run.levels[0]);
    assert_eq!(s.verdict, SteadyVerdict::NeverSteady, "{s:?}");
    let f: Vec<_> = run_checks(&run)
        .into_iter()
        .filter(|f| f.kind == CheckKind::NeverSteady)
        .collect();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].level.as_deref(), Some("level-0001 (4 users)"));
    assert!(
        f[0].message.starts_with("throughput still rises by"),
        "{}",
        f[0].message
    );
    let report = Report::build(&run).unwrap();
    let html = bmk_analysis::page::render("report", &report).unwrap();
    assert!(html.contains("never steady") && html.contains(">\nnot steady\n</text>"));
}

#[test]
fn short_levels_are_not_judged() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = level_run(tmp.path(), "short", 10, 0, |_| 500);
    let run = RunData::read(&dir).unwrap();
    let s = steady::of_level(&run.levels[0]);
    assert_eq!(s.verdict, SteadyVerdict::NotJudged);
    assert!(s.window.is_none() && s.reason.contains("fewer than the 20"));
    assert!(run_checks(&run).is_empty());
    assert!(!Report::build(&run)
        .unwrap()
        .text_summary()
        .contains("Steady state"));
}
