//! `merge`: two processes' results against one process's for the same total load.
mod support;

use bmk_results::workload_latency::Buckets;
use bmk_results::{merge_runs, MergeOptions, RunData};
use support::*;

fn process<'a>(
    threads: usize,
    start_ns: u64,
    events: &'a [Event],
    table_size: &str,
) -> Process<'a> {
    Process {
        threads,
        seconds: 10,
        start_ns,
        events,
        options: default_options(table_size),
        test: "oltp_read_write".into(),
        query_counts: true,
    }
}

/// The same event stream, run by one process with 8 threads or split over two
/// processes of 4 threads (even threads in A, odd ones in B).
fn split_runs(root: &std::path::Path, b_offset_ns: u64) -> (RunData, RunData, RunData) {
    let all = events(8, 10, 42, 2_000_000, |s| 900 + 40 * s);
    let a = process_share(&all, 2, 0);
    let b = process_share(&all, 2, 1);
    let one = root.join("one/level-0001");
    write_level(&one, 1, 1, 0.0, &process(8, T0_NS, &all, "10000"));
    let pa = root.join("a/level-0001");
    write_level(&pa, 1, 1, 0.0, &process(4, T0_NS, &a, "10000"));
    let pb = root.join("b/level-0001");
    // B's clock runs b_offset_ns behind A's: its lines still fall on A's grid.
    let mut b_shifted = b.clone();
    for e in &mut b_shifted {
        e.end_ns = e.end_ns.saturating_sub(0);
    }
    write_level(
        &pb,
        1,
        1,
        0.0,
        &process(4, T0_NS + b_offset_ns, &b_shifted, "10000"),
    );
    (
        RunData::read(&root.join("one")).unwrap(),
        RunData::read(&root.join("a")).unwrap(),
        RunData::read(&root.join("b")).unwrap(),
    )
}

#[test]
fn two_processes_merge_into_exactly_one_processs_result() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, a, b) = split_runs(tmp.path(), 3_000_000);
    let merged = merge_runs(&[a, b], MergeOptions::default()).unwrap();
    let m = merged.levels[0].result.as_ref().unwrap();
    let o = one.levels[0].result.as_ref().unwrap();
    // Counters add up exactly.
    assert_eq!(m.final_stats.events, o.final_stats.events);
    assert_eq!(m.final_stats.counters, o.final_stats.counters);
    assert_eq!(m.final_stats.threads, 8);
    assert_eq!(merged.levels[0].info.users, 8);
    assert_eq!(merged.levels[0].info.processes, 2);
    // Percentiles are those of all samples together.
    assert_eq!(
        m.final_stats.latency.percentiles,
        o.final_stats.latency.percentiles
    );
    assert_eq!(m.final_stats.latency.min_ms, o.final_stats.latency.min_ms);
    assert_eq!(m.final_stats.latency.max_ms, o.final_stats.latency.max_ms);
    assert!((m.final_stats.latency.avg_ms - o.final_stats.latency.avg_ms).abs() < 1e-9);
    assert_eq!(m.histogram().unwrap(), o.histogram().unwrap());
    // Pooled fairness over the 8 workers equals one process's.
    assert!((m.final_stats.fairness.events_avg - o.final_stats.fairness.events_avg).abs() < 1e-9);
    assert!(
        (m.final_stats.fairness.events_stddev - o.final_stats.fairness.events_stddev).abs() < 1e-6
    );
    // Throughput over the common window (9.997 s of overlap, the rates of 10 s
    // intervals) equals one process's.
    assert!(
        (m.final_stats.events_per_sec - o.final_stats.events_per_sec).abs() < 1e-6,
        "{} vs {}",
        m.final_stats.events_per_sec,
        o.final_stats.events_per_sec
    );
    // Intervals are aligned on the grid: ten slots, each the sum of A's and B's.
    let (mi, oi) = (&merged.levels[0].intervals, &one.levels[0].intervals);
    assert_eq!(mi.len(), 10);
    for (m, o) in mi.iter().zip(oi) {
        assert_eq!(m.record.events, o.record.events);
        assert_eq!(m.record.reads, o.record.reads);
        assert_eq!(m.record.threads, 8);
        assert_eq!(m.record.latency.percentiles, o.record.latency.percentiles);
        assert_eq!(m.query_counts, o.query_counts);
    }
    // Query kinds add up.
    let (mq, oq) = (m.query_types.as_ref(), o.query_types.as_ref());
    assert_eq!(mq, oq);
}

#[test]
fn runs_that_did_not_overlap_are_refused_unless_mixed() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, a, b) = split_runs(tmp.path(), 60_000_000_000);
    let err = merge_runs(&[a.clone(), b.clone()], MergeOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("cannot merge: the runs did not overlap in time"),
        "{err}"
    );
    assert!(!err.contains('\n'));
    // Parts released by one start gate merge whenever they measured (these two also
    // ended a minute apart, which only a partial merge takes).
    let gated = merge_runs(
        &[a.clone(), b.clone()],
        MergeOptions {
            started_together: true,
            partial: true,
            ..MergeOptions::default()
        },
    );
    assert!(gated.is_ok(), "{:?}", gated.err());
    let merged = merge_runs(
        &[a, b],
        MergeOptions {
            mixed: true,
            ..MergeOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        merged.levels[0]
            .result
            .as_ref()
            .unwrap()
            .final_stats
            .threads,
        8
    );
}

#[test]
fn different_workloads_are_refused_unless_mixed() {
    let tmp = tempfile::tempdir().unwrap();
    let evs = events(4, 10, 7, 1_000_000, |_| 500);
    write_level(
        &tmp.path().join("a/level-0001"),
        1,
        1,
        0.0,
        &process(4, T0_NS, &evs, "10000"),
    );
    write_level(
        &tmp.path().join("b/level-0001"),
        1,
        1,
        0.0,
        &process(4, T0_NS, &evs, "20000"),
    );
    let a = RunData::read(&tmp.path().join("a")).unwrap();
    let b = RunData::read(&tmp.path().join("b")).unwrap();
    let err = merge_runs(&[a.clone(), b.clone()], MergeOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("workload option --table-size is '10000' in"),
        "{err}"
    );
    assert!(err.contains("use --mixed"), "{err}");
    assert!(merge_runs(
        &[a, b],
        MergeOptions {
            mixed: true,
            ..MergeOptions::default()
        }
    )
    .is_ok());
}

#[test]
fn plain_results_files_merge_too() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, _, _) = split_runs(tmp.path(), 0);
    let a = RunData::read(&tmp.path().join("a/level-0001/result.json")).unwrap();
    let b = RunData::read(&tmp.path().join("b/level-0001/result.json")).unwrap();
    let merged = merge_runs(&[a, b], MergeOptions::default()).unwrap();
    let m = merged.levels[0].result.as_ref().unwrap();
    let o = one.levels[0].result.as_ref().unwrap();
    assert_eq!(m.final_stats.counters, o.final_stats.counters);
    assert_eq!(
        m.final_stats.latency.percentiles,
        o.final_stats.latency.percentiles
    );
}

/// Copies directory `from` to `to`, file by file.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// One results file given twice, or two copies of one directory, would count every
/// event twice: refused with one line naming both inputs, unless allowed.
#[test]
fn the_same_run_twice_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, a, b) = split_runs(tmp.path(), 0);
    copy_tree(&tmp.path().join("a"), &tmp.path().join("copy"));
    let copy = RunData::read(&tmp.path().join("copy")).unwrap();
    let e = merge_runs(
        &[a.clone(), b.clone(), copy.clone()],
        MergeOptions::default(),
    )
    .unwrap_err()
    .to_string();
    let id = a.levels[0]
        .result
        .as_ref()
        .unwrap()
        .run
        .run_id
        .clone()
        .unwrap();
    assert_eq!(id.len(), 32, "{id}");
    assert_eq!(
        e,
        format!(
            "cannot merge: {} and {} are the same run (run_id {id}); merging them would count every event twice (use --allow-duplicates to merge anyway)",
            a.path.display(),
            copy.path.display()
        )
    );
    let file = tmp.path().join("a/level-0001/result.json");
    let once = RunData::read(&file).unwrap();
    let e = merge_runs(&[once.clone(), once.clone()], MergeOptions::default()).unwrap_err();
    assert!(e.to_string().contains("are the same run"), "{e}");

    // Allowed: every event counts twice, as asked.
    let allow = MergeOptions {
        allow_duplicates: true,
        ..MergeOptions::default()
    };
    let twice = merge_runs(&[a.clone(), copy], allow).unwrap();
    let events = |r: &RunData| r.levels[0].result.as_ref().unwrap().final_stats.events;
    assert_eq!(events(&twice), 2 * events(&a));

    // A merge is a run of its own, with an identity derived from its inputs'.
    let m1 = merge_runs(&[a.clone(), b.clone()], MergeOptions::default()).unwrap();
    let m2 = merge_runs(&[b.clone(), a.clone()], MergeOptions::default()).unwrap();
    let id_of = |r: &RunData| r.levels[0].result.as_ref().unwrap().run.run_id.clone();
    assert_eq!(id_of(&m1), id_of(&m2));
    assert_ne!(id_of(&m1), Some(id));
}

/// Files written before runs had an identity: the same host, start time and totals
/// are one run.
#[test]
fn old_files_without_an_identity_are_matched_by_host_start_and_totals() {
    let tmp = tempfile::tempdir().unwrap();
    // B started 3 ms after A (the fixture gives both one start_time text).
    let (_, a, b) = split_runs(tmp.path(), 3_000_000);
    let strip = |r: &RunData| {
        let mut r = r.clone();
        for l in &mut r.levels {
            l.info.run_id = None;
            if let Some(f) = l.result.as_mut() {
                f.run.run_id = None;
            }
        }
        r
    };
    let (old_a, old_b) = (strip(&a), strip(&b));
    // Two processes of one run: distinct totals, so merged as before.
    assert!(merge_runs(&[old_a.clone(), old_b], MergeOptions::default()).is_ok());
    let e = merge_runs(&[old_a.clone(), old_a], MergeOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("are the same run (host ") && e.contains(", same totals)"),
        "{e}"
    );
}

/// TPC-C's latency of one transaction type as the workload prints it: `samples` (ms) in
/// buckets whose bounds grow by 10 % from 0.01 ms.
fn tpcc_buckets(samples: &[f64]) -> Buckets {
    let mut counts: Vec<(f64, u64)> = Vec::new();
    for &ms in samples {
        let bound = (0..)
            .map(|i| 0.01 * 1.1f64.powi(i))
            .find(|b| *b >= ms)
            .unwrap();
        match counts.iter_mut().find(|(b, _)| *b == bound) {
            Some(c) => c.1 += 1,
            None => counts.push((bound, 1)),
        }
    }
    counts.sort_by(|a, b| a.0.total_cmp(&b.0));
    Buckets {
        sum_ms: samples.iter().sum(),
        min_ms: samples.iter().copied().fold(f64::INFINITY, f64::min),
        max_ms: samples.iter().copied().fold(0.0, f64::max),
        counts,
    }
}

/// Sets a level's `workload_latency` to new_order's `samples`.
fn with_new_order_latency(level: &std::path::Path, samples: &[f64]) {
    let path = level.join("result.json");
    let mut r = bmk_results::ResultsFile::read(&path).unwrap();
    r.workload.insert("new_order".into(), samples.len() as f64);
    let stats = tpcc_buckets(samples).stats().unwrap();
    r.workload_latency.insert("new_order".into(), stats);
    bmk_results::dir_writer::write_results_file(&path, &r).unwrap();
}

#[test]
fn two_clients_tpcc_latency_merges_into_one_clients() {
    let tmp = tempfile::tempdir().unwrap();
    split_runs(tmp.path(), 0);
    // A answered fast, B slow: together, neither one's percentiles.
    let a: Vec<f64> = (1..=100).map(|i| 0.05 * i as f64).collect();
    let b: Vec<f64> = (1..=20).map(|i| 10.0 * i as f64).collect();
    let both: Vec<f64> = a.iter().chain(&b).copied().collect();
    with_new_order_latency(&tmp.path().join("a/level-0001"), &a);
    with_new_order_latency(&tmp.path().join("b/level-0001"), &b);
    with_new_order_latency(&tmp.path().join("one/level-0001"), &both);
    let read = |name: &str| RunData::read(&tmp.path().join(name)).unwrap();
    let merged = merge_runs(&[read("a"), read("b")], MergeOptions::default()).unwrap();
    let (one, ra, rb) = (read("one"), read("a"), read("b"));
    let latency =
        |r: &RunData| r.levels[0].result.as_ref().unwrap().workload_latency["new_order"].clone();
    let (m, o) = (latency(&merged), latency(&one));
    // Counts add, the max is the larger, the sum is exact.
    assert_eq!(m.count, 120);
    assert_eq!(m.latency.max_ms, 200.0);
    assert_eq!(m.latency.min_ms, 0.05);
    assert!((m.latency.sum_ms - o.latency.sum_ms).abs() < 1e-9);
    // Percentiles come from the added buckets: one client's, not either part's.
    assert_eq!(m.latency.percentiles, o.latency.percentiles);
    assert_eq!(
        bmk_results::codec::decode(m.histogram.as_deref().unwrap()).unwrap(),
        bmk_results::codec::decode(o.histogram.as_deref().unwrap()).unwrap()
    );
    let p95 =
        |s: &bmk_results::results_file::QueryTypeStats| s.latency.percentile_ms(95.0).unwrap();
    assert!(p95(&m) > p95(&latency(&ra)) && p95(&m) < p95(&latency(&rb)));
    // summary.csv's row of the merged level shows that p95.
    let row = bmk_results::dir_writer::summary_row(&merged.levels[0]).unwrap();
    assert_eq!(row.workload["new_order_p95_ms"], p95(&o));
    assert_eq!(row.workload["new_order"], 120.0);
}
