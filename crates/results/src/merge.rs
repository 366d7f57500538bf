//! `bmk merge`: one exact result from runs that ran at the same time in several
//! processes or on several hosts.
//!
//! Counters add; latency histograms are added bucket by bucket, so merged percentiles
//! are those of all the samples together (to the histograms' precision, as for one
//! process); the interval series are aligned on the wall clock (each line goes to the
//! grid slot its end falls on, counted from the earliest measured start); throughput is
//! taken over the window every input was measuring. Inputs must have run the same
//! workload (options other than the user count and per-process bookkeeping equal) and
//! overlap in time, unless the caller allows mixed inputs. Nothing here prints.

use std::collections::BTreeMap;

use crate::results_dir::IntervalLine;
use crate::results_file::{IntervalLatency, IntervalRecord, QueryRates, QueryTypeStats};
use bmk_engine::latency::{new_histogram, percentile_ns};
use bmk_report::summary::{add_count, Fairness, LagSummary, LatencySummary};
use bmk_report::{CounterTotals, FinalStats, PercentileValue};

use crate::codec;
use crate::results_file::ResultsFile;
use hdrhistogram::Histogram;

use crate::load::{Level, RunData};
use crate::Error;

/// Options that may differ between the processes of one merged run.
/// (Canonical spelling: underscores, as results files store option names.)
const PER_PROCESS_OPTIONS: [&str; 6] = [
    "threads",
    "results",
    "results_dir",
    "sync_file",
    "rand_seed",
    "verbosity",
];

/// How strict the merge is.
#[derive(Debug, Clone, Copy, Default)]
pub struct MergeOptions {
    /// Merge even when workloads differ or the runs did not overlap in time.
    pub mixed: bool,
    /// Merge even when a client of the run is missing or stopped early (a partial
    /// result, said so by the caller).
    pub partial: bool,
    /// The parts were released at one agreed instant (the start gate of a split
    /// level): they ran together by construction, so they need not overlap in time. A
    /// part can finish its share of an events limit before a late-woken sibling has
    /// started measuring.
    pub started_together: bool,
    /// Merge inputs that are the same run (one file given twice, two copies of one
    /// directory): every event then counts twice.
    pub allow_duplicates: bool,
}

/// Merges whole inputs level by level (level N of every input together).
pub fn merge_runs(inputs: &[RunData], opts: MergeOptions) -> Result<RunData, Error> {
    let first = inputs
        .first()
        .ok_or_else(|| Error::Incompatible("nothing to merge".into()))?;
    if !opts.mixed {
        check_same_workload(inputs)?;
    }
    let n = first.levels.len();
    if let Some(other) = inputs.iter().find(|r| r.levels.len() != n) {
        return Err(Error::Incompatible(format!(
            "cannot merge: {} has {} level(s) but {} has {}",
            first.path.display(),
            n,
            other.path.display(),
            other.levels.len()
        )));
    }
    let mut levels = Vec::with_capacity(n);
    for i in 0..n {
        let parts: Vec<(&str, &Level)> = inputs
            .iter()
            .map(|r| (r.path.to_str().unwrap_or("?"), &r.levels[i]))
            .collect();
        levels.push(merge_levels(&parts, opts)?);
    }
    let mut manifest = first.manifest.clone();
    if let Some(m) = manifest.as_mut() {
        m.options.remove("threads");
    }
    Ok(RunData {
        path: first.path.clone(),
        manifest,
        levels,
    })
}

/// Refuses inputs whose test or workload options differ, naming the first difference.
pub fn check_same_workload(inputs: &[RunData]) -> Result<(), Error> {
    let Some(first) = inputs.first() else {
        return Ok(());
    };
    let strip = |o: BTreeMap<String, String>| -> BTreeMap<String, String> {
        o.into_iter()
            .map(|(k, v)| (k.replace('-', "_"), v))
            .filter(|(k, _)| !PER_PROCESS_OPTIONS.contains(&k.as_str()))
            .collect()
    };
    let base = strip(first.options());
    for other in &inputs[1..] {
        if other.test() != first.test() {
            return Err(Error::Incompatible(format!(
                "cannot merge: {} ran '{}' but {} ran '{}' (use --mixed to merge anyway)",
                first.path.display(),
                first.test(),
                other.path.display(),
                other.test()
            )));
        }
        let theirs = strip(other.options());
        let keys: std::collections::BTreeSet<&String> = base.keys().chain(theirs.keys()).collect();
        for k in keys {
            let (a, b) = (base.get(k), theirs.get(k));
            if a != b {
                let show = |v: Option<&String>| v.map_or("unset".to_string(), |v| format!("'{v}'"));
                return Err(Error::Incompatible(format!(
                    "cannot merge: workload option --{} is {} in {} but {} in {} (use --mixed to merge anyway)",
                    k.replace('_', "-"),
                    show(a),
                    first.path.display(),
                    show(b),
                    other.path.display()
                )));
            }
        }
    }
    Ok(())
}

/// Merges one level run by several processes; `parts` are (input name, level).
pub fn merge_levels(parts: &[(&str, &Level)], opts: MergeOptions) -> Result<Level, Error> {
    let (_, first) = parts
        .first()
        .ok_or_else(|| Error::Incompatible("nothing to merge".into()))?;
    if !opts.allow_duplicates {
        check_distinct_runs(parts)?;
    }
    if !opts.partial {
        check_all_clients(parts)?;
    }
    let start = parts
        .iter()
        .map(|(_, l)| l.info.start_unix_ns)
        .max()
        .unwrap_or(0);
    let end = parts
        .iter()
        .map(|(_, l)| l.end_unix_ns())
        .min()
        .unwrap_or(0);
    if end <= start && !opts.mixed && !opts.started_together {
        let span = |l: &Level| {
            format!(
                "{:.3}..{:.3}",
                l.info.start_unix_ns as f64 / 1e9,
                l.end_unix_ns() as f64 / 1e9
            )
        };
        // The two that do not overlap: the last to start and the first to end.
        let late = parts.iter().max_by_key(|(_, l)| l.info.start_unix_ns);
        let early = parts.iter().min_by_key(|(_, l)| l.end_unix_ns());
        let (a, b) = (*early.expect("not empty"), *late.expect("not empty"));
        return Err(Error::Incompatible(format!(
            "cannot merge: the runs did not overlap in time ({} measured {}, {} measured {}, Unix seconds); merge only runs that ran together (use --mixed to merge anyway)",
            a.0,
            span(a.1),
            b.0,
            span(b.1)
        )));
    }
    let mut results = Vec::with_capacity(parts.len());
    for (name, level) in parts {
        match &level.result {
            Some(r) => results.push(r),
            None => {
                return Err(Error::Incompatible(format!(
                    "cannot merge: {name} {} has no result.json (the level did not finish)",
                    level.name()
                )))
            }
        }
    }
    // Runs that did not overlap (--mixed) end at different times by design.
    if !opts.partial && !opts.mixed {
        check_none_ended_early(parts)?;
    }
    let common_s = if end > start {
        (end - start) as f64 / 1e9
    } else {
        results
            .iter()
            .map(|r| r.final_stats.time_total_s)
            .fold(0.0, f64::max)
    };
    let earliest = parts
        .iter()
        .map(|(_, l)| l.info.start_unix_ns)
        .min()
        .unwrap_or(0);
    let intervals = merge_intervals(parts, earliest)?;
    let tps = common_window_rate(parts, start, end);
    let result = merge_results(&results, common_s, tps)?;
    let mut info = first.info.clone();
    info.users = parts.iter().map(|(_, l)| l.info.users).sum();
    info.processes = parts.iter().map(|(_, l)| l.info.processes.max(1)).sum();
    info.start_unix_ns = earliest;
    info.end_unix_ns = parts.iter().map(|(_, l)| l.end_unix_ns()).max();
    info.warmup_s = parts
        .iter()
        .map(|(_, l)| l.info.warmup_s)
        .fold(0.0, f64::max);
    info.status = result.status.clone();
    // The merge is a run of its own: merged again with one of its inputs, it must not
    // pass for that input, nor for a stranger.
    info.run_id = result.run.run_id.clone();
    Ok(Level {
        dir: None,
        info,
        intervals,
        result: Some(result),
    })
}

/// What tells one run's level from another's: its `run_id` (random, drawn when the run
/// starts), or, for files written before it existed, the host, the start instant and
/// the totals together, which two different runs do not share.
#[derive(Debug, PartialEq)]
enum RunIdentity {
    Id(String),
    Old {
        host: String,
        start: String,
        start_unix_ns: u64,
        events: u64,
        queries: u64,
        intervals: usize,
    },
}

impl RunIdentity {
    fn of(level: &Level) -> RunIdentity {
        let id = level
            .result
            .as_ref()
            .and_then(|r| r.run.run_id.clone())
            .or_else(|| level.info.run_id.clone());
        if let Some(id) = id {
            return RunIdentity::Id(id);
        }
        let (host, start, events, queries) = match &level.result {
            Some(r) => (
                r.run.host.hostname.clone(),
                r.run.start_time.clone(),
                r.final_stats.events,
                r.final_stats.counters.queries(),
            ),
            None => (
                String::new(),
                String::new(),
                level.intervals.iter().map(|l| l.record.events).sum(),
                0,
            ),
        };
        RunIdentity::Old {
            host,
            start,
            start_unix_ns: level.info.start_unix_ns,
            events,
            queries,
            intervals: level.intervals.len(),
        }
    }

    fn shown(&self) -> String {
        match self {
            RunIdentity::Id(id) => format!("run_id {id}"),
            RunIdentity::Old { host, start, .. } if !start.is_empty() => {
                format!("host {host}, started {start}, same totals")
            }
            RunIdentity::Old { .. } => "same start instant and totals".into(),
        }
    }
}

/// The identity of a merge of `results`: derived from theirs (the same inputs give the
/// same merged identity, so merging a merge twice is caught too), none when an input
/// has none. FNV-1a over 128 bits: a stable digest, not a secret.
fn merged_run_id(results: &[&ResultsFile]) -> Option<String> {
    let mut ids: Vec<&str> = results
        .iter()
        .map(|r| r.run.run_id.as_deref())
        .collect::<Option<_>>()?;
    ids.sort_unstable();
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for b in ids.join(",").bytes() {
        h ^= u128::from(b);
        h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    Some(format!("{h:032x}"))
}

/// Refuses to merge two inputs that are one run (one results file given twice, two
/// copies of a directory): their events would all count twice.
fn check_distinct_runs(parts: &[(&str, &Level)]) -> Result<(), Error> {
    let ids: Vec<RunIdentity> = parts.iter().map(|(_, l)| RunIdentity::of(l)).collect();
    for (j, id) in ids.iter().enumerate() {
        if let Some(i) = ids[..j].iter().position(|earlier| earlier == id) {
            return Err(Error::Incompatible(format!(
                "cannot merge: {} and {} are the same run ({}); merging them would count every event twice (use --allow-duplicates to merge anyway)",
                parts[i].0,
                parts[j].0,
                id.shown()
            )));
        }
    }
    Ok(())
}

/// Refuses a merge that lacks a client of a run that started through a barrier: every
/// client's results file names all the clients that passed the barrier with it, so a
/// client killed mid-run (it leaves no results) is known to be missing.
fn check_all_clients(parts: &[(&str, &Level)]) -> Result<(), Error> {
    // barrier name -> (clients that passed it, clients given here)
    let mut runs: BTreeMap<&str, (Vec<&str>, Vec<&str>)> = BTreeMap::new();
    for (name, level) in parts {
        let Some(b) = level
            .result
            .as_ref()
            .and_then(|r| r.start.as_ref())
            .and_then(|s| s.barrier.as_ref())
        else {
            continue;
        };
        let entry = runs.entry(b.name.as_str()).or_default();
        for c in &b.clients {
            if !entry.0.contains(&c.as_str()) {
                entry.0.push(c);
            }
        }
        if entry.1.contains(&b.client.as_str()) {
            return Err(Error::Incompatible(format!(
                "cannot merge: client '{}' of barrier '{}' is given twice ({name} is the second)",
                b.client, b.name
            )));
        }
        entry.1.push(&b.client);
    }
    for (barrier, (passed, given)) in &runs {
        let missing: Vec<&str> = passed
            .iter()
            .filter(|c| !given.contains(c))
            .copied()
            .collect();
        if !missing.is_empty() {
            return Err(Error::Incompatible(format!(
                "cannot merge: {} clients passed barrier '{barrier}' but {} {} missing: killed mid-run or not given; the others alone are a partial result (use --partial to merge anyway)",
                passed.len(),
                missing.join(", "),
                if missing.len() == 1 { "is" } else { "are" }
            )));
        }
    }
    Ok(())
}

/// Refuses a merge where one input stopped measuring well before the others (more
/// than two report intervals, at least a second): a client stopped mid-run (signal,
/// failure) wrote a result that covers only part of the run.
fn check_none_ended_early(parts: &[(&str, &Level)]) -> Result<(), Error> {
    let last_end = |l: &Level| {
        l.intervals
            .last()
            .map(|i| i.end_unix_ns)
            .unwrap_or_else(|| l.end_unix_ns())
    };
    let Some(latest) = parts.iter().map(|(_, l)| last_end(l)).max() else {
        return Ok(());
    };
    for (name, level) in parts {
        let step = level.intervals.last().map_or(0.0, |i| i.record.interval_s);
        let slack = ((2.0 * step).max(1.0) * 1e9) as u64;
        let end = last_end(level);
        if end + slack < latest {
            let status = level
                .result
                .as_ref()
                .map_or("unknown", |r| r.status.as_str());
            return Err(Error::Incompatible(format!(
                "cannot merge: {name} stopped measuring {:.1} s before the others (status {status}): a client that ended early makes a partial result (use --partial to merge anyway)",
                (latest - end) as f64 / 1e9
            )));
        }
    }
    Ok(())
}

/// Events per second over the window every input was measuring: each input's events in
/// the intervals whose middle falls inside the window, over those intervals' length,
/// added up. `None` when some input has no intervals there.
fn common_window_rate(parts: &[(&str, &Level)], start: u64, end: u64) -> Option<f64> {
    if end <= start {
        return None;
    }
    let mut total = 0.0;
    for (_, level) in parts {
        let (mut events, mut secs) = (0u64, 0.0);
        for line in &level.intervals {
            let len_ns = (line.record.interval_s * 1e9) as u64;
            let mid = line.end_unix_ns.saturating_sub(len_ns / 2);
            if mid >= start && mid <= end {
                events += line.record.events;
                secs += line.record.interval_s;
            }
        }
        if secs <= 0.0 {
            return None;
        }
        total += events as f64 / secs;
    }
    Some(total)
}

fn decode_all<'a>(
    encoded: impl IntoIterator<Item = &'a str>,
) -> Result<Option<Histogram<u64>>, Error> {
    let mut total = new_histogram();
    total.auto(true);
    for text in encoded {
        if text.is_empty() {
            return Ok(None);
        }
        let h = codec::decode(text)?;
        total
            .add(&h)
            .map_err(|e| Error::Histogram(format!("cannot merge histograms: {e:?}")))?;
    }
    Ok(Some(total))
}

fn merge_results(
    results: &[&ResultsFile],
    common_s: f64,
    tps: Option<f64>,
) -> Result<ResultsFile, Error> {
    let first = results[0];
    let hist = codec::merge(results.iter().map(|r| r.histogram.as_str()))?;
    let finals: Vec<&FinalStats> = results.iter().map(|r| &r.final_stats).collect();
    let events: u64 = finals.iter().map(|f| f.events).sum();
    let mut counters = CounterTotals::default();
    for f in &finals {
        let c = &f.counters;
        counters.reads += c.reads;
        counters.writes += c.writes;
        counters.other += c.other;
        counters.transactions += c.transactions;
        counters.errors += c.errors;
        counters.reconnects += c.reconnects;
        counters.bytes_read += c.bytes_read;
        counters.bytes_written += c.bytes_written;
        add_count(&mut counters.rows, c.rows);
        add_count(&mut counters.empty_reads, c.empty_reads);
    }
    let with_events: Vec<&&FinalStats> = finals.iter().filter(|f| f.events > 0).collect();
    let min_ms = with_events
        .iter()
        .map(|f| f.latency.min_ms)
        .fold(f64::INFINITY, f64::min);
    let min_ms = if min_ms.is_finite() { min_ms } else { 0.0 };
    let max_ms = finals.iter().map(|f| f.latency.max_ms).fold(0.0, f64::max);
    let sum_ms: f64 = finals.iter().map(|f| f.latency.sum_ms).sum();
    let percentiles = first
        .final_stats
        .latency
        .percentiles
        .iter()
        .map(|p| PercentileValue {
            percentile: p.percentile,
            ms: if hist.is_empty() {
                0.0
            } else {
                percentile_ns(
                    &hist,
                    p.percentile,
                    (min_ms * 1e6).round() as u64,
                    (max_ms * 1e6).round() as u64,
                ) as f64
                    / 1e6
            },
        })
        .collect();
    let threads: u32 = finals.iter().map(|f| f.threads).sum();
    let final_stats = FinalStats {
        time_total_s: common_s,
        threads,
        events,
        events_per_sec: tps
            .unwrap_or_else(|| finals.iter().map(|f| f.per_sec(f.events)).sum::<f64>()),
        counters,
        latency: LatencySummary {
            min_ms,
            avg_ms: if events > 0 {
                sum_ms / events as f64
            } else {
                0.0
            },
            max_ms,
            sum_ms,
            percentiles,
        },
        fairness: pooled_fairness(&finals),
        lag: merged_lag(&finals),
    };
    let mut run = first.run.clone();
    run.options.insert("threads".into(), threads.to_string());
    run.run_id = merged_run_id(results);
    let status = results
        .iter()
        .map(|r| r.status.as_str())
        .find(|s| *s != "completed")
        .unwrap_or("completed")
        .to_string();
    let end_time = results
        .iter()
        .map(|r| r.end_time.clone())
        .max()
        .unwrap_or_default();
    Ok(ResultsFile {
        schema: first.schema.clone(),
        schema_version: first.schema_version,
        run,
        intervals: Vec::new(),
        checkpoints: Vec::new(),
        status,
        end_time,
        final_stats,
        histogram: codec::encode(&hist)?,
        query_types: merge_type_stats(results.iter().map(|r| r.query_types.as_ref()))?,
        // Each client passed the barrier on its own; the merged run has no one start.
        start: None,
        // Counts and rates of clients that ran together add up.
        workload: results.iter().fold(BTreeMap::new(), |mut m, r| {
            for (k, v) in &r.workload {
                *m.entry(k.clone()).or_default() += v;
            }
            m
        }),
        // Per transaction type as per query kind: counts and sums add, histograms too.
        workload_latency: merge_type_stats(
            results
                .iter()
                .map(|r| Some(&r.workload_latency).filter(|l| !l.is_empty())),
        )?
        .unwrap_or_default(),
    })
}

/// Mean and population standard deviation over all workers of all inputs, from each
/// input's own mean and deviation (exact: n·(σ² + μ²) is each input's sum of squares).
fn pooled_fairness(finals: &[&FinalStats]) -> Fairness {
    let pool = |get: &dyn Fn(&Fairness) -> (f64, f64)| {
        let n: f64 = finals.iter().map(|f| f.threads as f64).sum();
        if n == 0.0 {
            return (0.0, 0.0);
        }
        let (mut sum, mut sq) = (0.0, 0.0);
        for f in finals {
            let (m, s) = get(&f.fairness);
            let k = f.threads as f64;
            sum += k * m;
            sq += k * (s * s + m * m);
        }
        let mean = sum / n;
        (mean, (sq / n - mean * mean).max(0.0).sqrt())
    };
    let (events_avg, events_stddev) = pool(&|f| (f.events_avg, f.events_stddev));
    let (time_avg_s, time_stddev_s) = pool(&|f| (f.time_avg_s, f.time_stddev_s));
    Fairness {
        events_avg,
        events_stddev,
        time_avg_s,
        time_stddev_s,
    }
}

fn merged_lag(finals: &[&FinalStats]) -> Option<LagSummary> {
    let lags: Vec<(&LagSummary, u64)> = finals
        .iter()
        .filter_map(|f| f.lag.as_ref().map(|l| (l, f.events)))
        .collect();
    if lags.is_empty() {
        return None;
    }
    let n: u64 = lags.iter().map(|(_, e)| e).sum();
    let mean = if n > 0 {
        lags.iter().map(|(l, e)| l.mean_ms * *e as f64).sum::<f64>() / n as f64
    } else {
        0.0
    };
    Some(LagSummary {
        mean_ms: mean,
        max_ms: lags.iter().map(|(l, _)| l.max_ms).fold(0.0, f64::max),
        // Every client drops its own arrivals: the merged run dropped their sum.
        dropped_arrivals: lags.iter().map(|(l, _)| l.dropped_arrivals).sum(),
    })
}

/// Per-type statistics (`query_types`, `workload_latency`) of several inputs, type by
/// type: counts and sums add, min and max are exact, histograms are added and the
/// percentiles read from the sum. `None` when no input has any.
fn merge_type_stats<'a>(
    maps: impl Iterator<Item = Option<&'a BTreeMap<String, QueryTypeStats>>>,
) -> Result<Option<BTreeMap<String, QueryTypeStats>>, Error> {
    let maps: Vec<&BTreeMap<String, QueryTypeStats>> = maps.flatten().collect();
    if maps.is_empty() {
        return Ok(None);
    }
    let mut names: Vec<&String> = maps.iter().flat_map(|q| q.keys()).collect();
    names.sort();
    names.dedup();
    let mut out = BTreeMap::new();
    for name in names {
        let each: Vec<&QueryTypeStats> = maps.iter().filter_map(|q| q.get(name)).collect();
        let count: u64 = each.iter().map(|q| q.count).sum();
        let sum_ms: f64 = each.iter().map(|q| q.latency.sum_ms).sum();
        let min_ms = each
            .iter()
            .filter(|q| q.count > 0)
            .map(|q| q.latency.min_ms)
            .fold(f64::INFINITY, f64::min);
        let min_ms = if min_ms.is_finite() { min_ms } else { 0.0 };
        let max_ms = each.iter().map(|q| q.latency.max_ms).fold(0.0, f64::max);
        let hist = if each.iter().all(|q| q.histogram.is_some()) {
            decode_all(each.iter().map(|q| q.histogram.as_deref().unwrap_or("")))?
        } else {
            None
        };
        // The percentiles the inputs kept (none where a part had no samples).
        let asked = each
            .iter()
            .map(|q| &q.latency.percentiles)
            .find(|p| !p.is_empty());
        let percentiles = match (&hist, asked) {
            (Some(h), Some(asked)) if !h.is_empty() => asked
                .iter()
                .map(|p| PercentileValue {
                    percentile: p.percentile,
                    ms: percentile_ns(
                        h,
                        p.percentile,
                        (min_ms * 1e6).round() as u64,
                        (max_ms * 1e6).round() as u64,
                    ) as f64
                        / 1e6,
                })
                .collect(),
            // Percentiles of parts cannot be combined without their histograms.
            _ => Vec::new(),
        };
        out.insert(
            name.clone(),
            QueryTypeStats {
                count,
                errors: each.iter().map(|q| q.errors).sum(),
                latency: LatencySummary {
                    min_ms,
                    avg_ms: if count > 0 {
                        sum_ms / count as f64
                    } else {
                        0.0
                    },
                    max_ms,
                    sum_ms,
                    percentiles,
                },
                histogram: match &hist {
                    Some(h) => Some(codec::encode(h)?),
                    None => None,
                },
            },
        );
    }
    Ok(Some(out))
}

/// The agreed start instant (microseconds) when every part passed the same start
/// barrier: their engines then count time from that one instant.
fn shared_epoch(parts: &[(&str, &Level)]) -> Option<i64> {
    let mut epoch = None;
    for (_, level) in parts {
        let b = level.result.as_ref()?.start.as_ref()?.barrier.as_ref()?;
        match epoch {
            None => epoch = Some((b.name.as_str(), b.server_start_unix_us)),
            Some(e) if e == (b.name.as_str(), b.server_start_unix_us) => {}
            Some(_) => return None,
        }
    }
    epoch.map(|(_, us)| us)
}

/// The report interval the parts ran with (`--report-interval`), else the median
/// length of their intervals: a part released late has a shorter first interval, so a
/// line's own length does not name its slot.
fn nominal_step(parts: &[(&str, &Level)]) -> f64 {
    let given = parts.iter().find_map(|(_, l)| {
        let opts = &l.result.as_ref()?.run.options;
        opts.get("report_interval")
            .or_else(|| opts.get("report-interval"))?
            .parse::<f64>()
            .ok()
            .filter(|v| *v > 0.0)
    });
    if let Some(v) = given {
        return v;
    }
    let mut lens: Vec<f64> = parts
        .iter()
        .flat_map(|(_, l)| l.intervals.iter().map(|i| i.record.interval_s))
        .filter(|v| *v > 0.0)
        .collect();
    lens.sort_by(f64::total_cmp);
    lens.get(lens.len() / 2).copied().unwrap_or(1.0)
}

/// Aligns the interval lines of every part on one grid and adds up the lines of each
/// slot. Parts that passed one start barrier share their epoch, so a line's own time
/// (`time_s`, counted from the agreed instant) names its slot, however late a loaded
/// host stamped its end; otherwise the wall-clock end does, counted from `earliest`
/// (the first measured start).
fn merge_intervals(parts: &[(&str, &Level)], earliest: u64) -> Result<Vec<IntervalLine>, Error> {
    let epoch = shared_epoch(parts);
    let step = nominal_step(parts);
    let mut slots: BTreeMap<u64, Vec<&IntervalLine>> = BTreeMap::new();
    for (_, level) in parts {
        for line in &level.intervals {
            let len_s = line.record.interval_s.max(1e-9);
            let slot = match epoch {
                Some(_) => (line.record.time_s / step).round().max(0.0) as u64,
                None => {
                    let len_ns = ((len_s * 1e9).round() as u64).max(1);
                    (line.end_unix_ns.saturating_sub(earliest) + len_ns / 2) / len_ns
                }
            };
            slots.entry(slot).or_default().push(line);
        }
    }
    let mut out = Vec::with_capacity(slots.len());
    for lines in slots.values() {
        let mut line = add_lines(lines, earliest)?;
        if epoch.is_some() {
            line.record.time_s = lines.iter().map(|l| l.record.time_s).fold(0.0, f64::max);
        }
        out.push(line);
    }
    Ok(out)
}

/// Adds up interval lines of several processes that cover the same grid slot (the
/// live report of a level split over processes); `earliest` is the measured start
/// the merged line's `time_s` counts from.
pub fn merge_interval_lines(
    lines: &[&IntervalLine],
    earliest: u64,
) -> Result<Option<IntervalLine>, Error> {
    if lines.is_empty() {
        return Ok(None);
    }
    add_lines(lines, earliest).map(Some)
}

fn add_lines(lines: &[&IntervalLine], earliest: u64) -> Result<IntervalLine, Error> {
    let first = lines[0];
    let end_unix_ns = lines.iter().map(|l| l.end_unix_ns).max().unwrap_or(0);
    let interval_s = lines
        .iter()
        .map(|l| l.record.interval_s)
        .fold(0.0, f64::max);
    let mut r = IntervalRecord {
        time_s: (end_unix_ns.saturating_sub(earliest)) as f64 / 1e9,
        interval_s,
        ..IntervalRecord::default()
    };
    let mut query_counts: BTreeMap<String, u64> = BTreeMap::new();
    for l in lines {
        let s = &l.record;
        r.threads += s.threads;
        r.events += s.events;
        r.reads += s.reads;
        r.writes += s.writes;
        r.other += s.other;
        r.errors += s.errors;
        r.reconnects += s.reconnects;
        r.bytes_read += s.bytes_read;
        r.bytes_written += s.bytes_written;
        add_count(&mut r.rows, s.rows);
        add_count(&mut r.empty_reads, s.empty_reads);
        if let Some(q) = s.queue_length {
            *r.queue_length.get_or_insert(0) += q;
        }
        if let Some(c) = s.concurrency {
            *r.concurrency.get_or_insert(0) += c;
        }
        for (k, v) in &l.query_counts {
            *query_counts.entry(k.clone()).or_default() += v;
        }
    }
    let per_s = |n: u64| {
        if interval_s > 0.0 {
            n as f64 / interval_s
        } else {
            0.0
        }
    };
    r.tps = per_s(r.events);
    r.qps = QueryRates {
        total: per_s(r.reads + r.writes + r.other),
        reads: per_s(r.reads),
        writes: per_s(r.writes),
        other: per_s(r.other),
    };
    r.errors_per_s = per_s(r.errors);
    r.reconnects_per_s = per_s(r.reconnects);
    let hist = decode_all(lines.iter().map(|l| l.histogram.as_str()))?;
    let wanted: Vec<f64> = first
        .record
        .latency
        .percentiles
        .iter()
        .map(|p| p.percentile)
        .collect();
    r.latency = match &hist {
        Some(h) if !h.is_empty() => IntervalLatency {
            min_ms: h.min() as f64 / 1e6,
            avg_ms: h.mean() / 1e6,
            max_ms: h.max() as f64 / 1e6,
            percentiles: wanted
                .iter()
                .map(|&p| PercentileValue {
                    percentile: p,
                    ms: percentile_ns(h, p, h.min(), h.max()) as f64 / 1e6,
                })
                .collect(),
        },
        Some(_) => IntervalLatency::default(),
        // Without histograms only the extremes and the mean combine exactly.
        None => IntervalLatency {
            min_ms: lines
                .iter()
                .filter(|l| l.record.events > 0)
                .map(|l| l.record.latency.min_ms)
                .reduce(f64::min)
                .unwrap_or(0.0),
            avg_ms: if r.events > 0 {
                lines
                    .iter()
                    .map(|l| l.record.latency.avg_ms * l.record.events as f64)
                    .sum::<f64>()
                    / r.events as f64
            } else {
                0.0
            },
            max_ms: lines
                .iter()
                .map(|l| l.record.latency.max_ms)
                .fold(0.0, f64::max),
            percentiles: Vec::new(),
        },
    };
    Ok(IntervalLine {
        record: r,
        end_unix_ns,
        histogram: match &hist {
            Some(h) => codec::encode(h)?,
            None => String::new(),
        },
        query_counts,
    })
}
