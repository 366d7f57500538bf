//! Builds results directories for the tests with the report crate's own writers
//! (`ResultsWriter`, `IntervalLine`, the `run.json`/`level.json` records), from a
//! deterministic simulated event stream, and copies in the real captures of
//! `tests/data`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use bmk_engine::{Counter, Counters, CumulativeStats, IntervalStats, ThreadTotals};
use bmk_report::host::HostInfo;
use bmk_results::results_dir::{
    self, IntervalLine, LevelInfo, RunManifest, ServerInfo, SummaryRow, SweepPlan,
};
use bmk_results::results_file::{RunEnd, ToolInfo};
use bmk_results::{ResultsWriter, RunInfo};

/// The start of every simulated run: 2026-11-25 20:00:00 UTC.
pub const T0_NS: u64 = 1_795_636_800_000_000_000;

/// One simulated event: which thread ran it, when it ended (ns after the measured
/// start), and its latency (ns).
#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub thread: usize,
    pub end_ns: u64,
    pub latency_ns: u64,
}

/// The events of `all` run by one of `processes` processes: process `which` runs the
/// threads `which`, `which + processes`, ..., numbered from 0 in that process.
pub fn process_share(all: &[Event], processes: usize, which: usize) -> Vec<Event> {
    all.iter()
        .filter(|e| e.thread % processes == which)
        .map(|e| Event {
            thread: e.thread / processes,
            ..*e
        })
        .collect()
}

/// A deterministic stream of events: `threads` workers for `seconds`, `rate(second)`
/// events per second in total, latencies from a linear congruential generator around
/// `base_latency_ns`.
pub fn events(
    threads: usize,
    seconds: u64,
    seed: u64,
    base_latency_ns: u64,
    rate: impl Fn(u64) -> u64,
) -> Vec<Event> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut out = Vec::new();
    for s in 0..seconds {
        let n = rate(s);
        for i in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (x >> 33) % 1000;
            // A long tail: one event in a hundred takes ten times longer.
            let latency_ns = base_latency_ns / 2
                + base_latency_ns * r / 1000
                + if r % 100 == 7 {
                    base_latency_ns * 10
                } else {
                    0
                };
            out.push(Event {
                thread: (i as usize) % threads,
                end_ns: s * 1_000_000_000 + (i * 1_000_000_000) / n.max(1),
                latency_ns,
            });
        }
    }
    out
}

/// Statements per event: 14 reads, 4 writes, 2 other, as `oltp_read_write`.
pub const READS: u64 = 14;
pub const WRITES: u64 = 4;
pub const OTHER: u64 = 2;

fn counters_for(events: u64) -> Counters {
    let mut c = Counters::default();
    c.0[Counter::Read as usize] = events * READS;
    c.0[Counter::Write as usize] = events * WRITES;
    c.0[Counter::Other as usize] = events * OTHER;
    c.0[Counter::Transaction as usize] = events;
    // Every read found its row, as against data that matches the options.
    c.0[Counter::Rows as usize] = events * READS;
    c
}

/// What one process of one level did.
pub struct Process<'a> {
    pub threads: usize,
    pub seconds: u64,
    /// Measured start, ns since the epoch.
    pub start_ns: u64,
    pub events: &'a [Event],
    pub options: BTreeMap<String, String>,
    pub test: String,
    /// Per-interval query kind counts (`point_select`, ...) from an event's index.
    pub query_counts: bool,
}

pub fn default_options(table_size: &str) -> BTreeMap<String, String> {
    [
        ("tables", "4"),
        ("table-size", table_size),
        ("time", "10"),
        ("report-interval", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Writes `level.json`, `intervals.jsonl` and `result.json` for `p` into `dir`.
pub fn write_level(dir: &Path, index: u32, repeat: u32, warmup_s: f64, p: &Process) -> SummaryRow {
    std::fs::create_dir_all(dir).unwrap();
    let percentiles = [95.0];
    let mut run = RunInfo::new(
        "0.1.0-test",
        &p.test,
        "run",
        &["bmk".to_string()],
        p.options.clone(),
    )
    .with_percentiles(95.0, &[]);
    run.options.insert("threads".into(), p.threads.to_string());
    run.host = test_host();
    run.start_time = "2026-11-25T20:00:00.000Z".into();
    let mut writer = ResultsWriter::create(dir.join(results_dir::RESULT_FILE), &run).unwrap();
    let mut lines = std::fs::File::create(dir.join(results_dir::INTERVALS_FILE)).unwrap();
    let mut total = CumulativeStats {
        time_total: 0.0,
        events: 0,
        counters: Counters::default(),
        histogram: bmk_engine::latency::new_histogram(),
        min_ns: 0,
        max_ns: 0,
        sum_ns: 0,
        threads: vec![ThreadTotals::default(); p.threads],
        lag: None,
    };
    let mut min = u64::MAX;
    for s in 0..p.seconds {
        let mut iv = IntervalStats {
            time_total: (s + 1) as f64,
            time_interval: 1.0,
            threads_running: p.threads as u32,
            events: 0,
            counters: Counters::default(),
            histogram: bmk_engine::latency::new_histogram(),
            queue_length: 0,
            concurrency: 0,
            rate_mode: false,
        };
        let mut qc: BTreeMap<String, u64> = BTreeMap::new();
        for e in p.events.iter().filter(|e| e.end_ns / 1_000_000_000 == s) {
            iv.events += 1;
            iv.histogram.record(e.latency_ns).unwrap();
            total.threads[e.thread % p.threads].events += 1;
            total.threads[e.thread % p.threads].busy_ns += e.latency_ns;
            total.sum_ns += e.latency_ns;
            total.max_ns = total.max_ns.max(e.latency_ns);
            min = min.min(e.latency_ns);
            if p.query_counts {
                *qc.entry("point_select".into()).or_default() += 10;
                *qc.entry("range".into()).or_default() += 4;
                *qc.entry("update_index".into()).or_default() += 1;
            }
        }
        iv.counters = counters_for(iv.events);
        total.events += iv.events;
        total.counters.add(&iv.counters);
        total.histogram.add(&iv.histogram).unwrap();
        writer.interval(&iv).unwrap();
        let mut line =
            IntervalLine::from_interval(&iv, &percentiles, p.start_ns + (s + 1) * 1_000_000_000)
                .unwrap();
        line.query_counts = qc;
        writeln!(lines, "{}", line.to_line().unwrap()).unwrap();
    }
    total.min_ns = if total.events > 0 { min } else { 0 };
    total.time_total = p.seconds as f64;
    let result = writer.finish(&total, &RunEnd::new("completed")).unwrap();
    let info = LevelInfo {
        schema: results_dir::LEVEL_SCHEMA_NAME.into(),
        schema_version: results_dir::DIR_SCHEMA_VERSION,
        index,
        users: p.threads as u32,
        repeat,
        processes: 1,
        warmup_s,
        start_unix_ns: p.start_ns,
        end_unix_ns: Some(p.start_ns + p.seconds * 1_000_000_000),
        status: "completed".into(),
        ..LevelInfo::default()
    };
    std::fs::write(
        dir.join(results_dir::LEVEL_FILE),
        serde_json::to_string_pretty(&info).unwrap(),
    )
    .unwrap();
    let f = bmk_results::ResultsFile::read(&result).unwrap().final_stats;
    SummaryRow {
        level: results_dir::level_dir_name(index),
        users: p.threads as u32,
        repeat,
        tps: f.events_per_sec,
        qps: f.per_sec(f.counters.queries()),
        avg_ms: f.latency.avg_ms,
        p95_ms: f.latency.percentile_ms(95.0).unwrap_or(0.0),
        p99_ms: f.latency.percentile_ms(99.0).unwrap_or(0.0),
        max_ms: f.latency.max_ms,
        errors: f.counters.errors,
        reconnects: f.counters.reconnects,
        status: "completed".into(),
        ..SummaryRow::default()
    }
}

pub fn test_host() -> HostInfo {
    HostInfo {
        hostname: "bench-client".into(),
        os: "Debian GNU/Linux 12 (bookworm)".into(),
        kernel: "6.1.0".into(),
        arch: "x86_64".into(),
        cpu_model: Some("Test CPU".into()),
        cpu_count: 2,
        cpus_available: 2,
        memory_total_bytes: Some(24 << 30),
        clock_ticks_per_s: Some(100),
        page_size_bytes: Some(4096),
    }
}

/// Writes `run.json` and `summary.csv` for a sweep.
pub fn write_run(
    dir: &Path,
    test: &str,
    options: &BTreeMap<String, String>,
    users: &[u32],
    rows: &[SummaryRow],
    variables: BTreeMap<String, String>,
) {
    let manifest = RunManifest {
        schema: results_dir::RUN_SCHEMA_NAME.into(),
        schema_version: results_dir::DIR_SCHEMA_VERSION,
        tool: ToolInfo {
            name: "bmk".into(),
            version: "0.1.0-test".into(),
        },
        scenario: Some(format!("{test}-test")),
        target: None,
        test: test.into(),
        command_line: vec!["bmk".into(), "kit".into(), "sweep".into()],
        options: options.clone(),
        sweep: Some(SweepPlan {
            users: users.to_vec(),
            time_s: 10.0,
            warmup_s: 2.0,
            pause_s: 0.0,
            repeat: 1,
            max_users_per_process: 0,
        }),
        host: test_host(),
        server: Some(ServerInfo {
            driver: "mysql".into(),
            version: Some("10.11.19-MariaDB".into()),
            address: Some("127.0.0.1:3306".into()),
            variables,
        }),
        capture_interval_s: 2.0,
        start_time: "2026-11-25T20:00:00.000Z".into(),
        end_time: Some("2026-11-25T20:05:00.000Z".into()),
        status: "completed".into(),
        reason: None,
        checks: None,
        ..RunManifest::default()
    };
    std::fs::write(
        dir.join(results_dir::RUN_FILE),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.join(results_dir::SUMMARY_FILE),
        results_dir::summary_csv(rows),
    )
    .unwrap();
}

/// `tests/data`.
pub fn data_dir() -> PathBuf {
    // Relative to the analysis crate, not to the crate compiling this module: the cli
    // tests include it too, and their own `tests/data` has no captures.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("a crate inside crates/")
        .join("analysis/tests/data")
}

/// Copies the real captures of `tests/data/<which>/{server,os}` into a level folder.
pub fn copy_captures(which: &str, level_dir: &Path) {
    for sub in ["server", "os"] {
        let from = data_dir().join(which).join(sub);
        // A missing capture is a broken test set-up, not a run without capture: a silent
        // skip here once made the cli's report test draw no rate charts.
        let entries =
            std::fs::read_dir(&from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        std::fs::create_dir_all(level_dir.join(sub)).unwrap();
        for e in entries {
            let e = e.unwrap();
            std::fs::copy(e.path(), level_dir.join(sub).join(e.file_name())).unwrap();
        }
    }
}

/// Rewrites the value of status variable `name` in every sample of a `SHOW GLOBAL
/// STATUS` capture: `f(sample index, old value)`. Used to turn a real capture into one
/// that triggers a check (documented at each use).
pub fn edit_status(path: &Path, name: &str, f: impl Fn(usize, f64) -> f64) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut sample = 0usize;
    let mut first = true;
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("TS ") {
            if !first {
                sample += 1;
            }
            first = false;
        }
        match line.trim_end().split_once('\t') {
            Some((k, v)) if k == name => {
                let old: f64 = v.parse().unwrap();
                out.push_str(&format!("{k}\t{}\n", f(sample, old) as u64));
            }
            _ => out.push_str(line),
        }
    }
    std::fs::write(path, out).unwrap();
}

/// Rewrites the user and system CPU ticks (fields 14 and 15) of every line of a
/// `client_stat.txt` capture: `f(sample index, old ticks)`.
pub fn edit_client_ticks(path: &Path, f: impl Fn(usize, u64) -> u64) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut sample = 0usize;
    let mut first = true;
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("TS ") {
            if !first {
                sample += 1;
            }
            first = false;
            out.push_str(line);
        } else {
            // Fields after the command name in parentheses: state is field 3.
            let (head, rest) = line.split_at(line.rfind(')').unwrap() + 1);
            let mut fields: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
            // rest starts at field 3; utime is field 14, stime 15.
            for i in [14 - 3, 15 - 3] {
                let old: u64 = fields[i].parse().unwrap();
                fields[i] = f(sample, old).to_string();
            }
            out.push_str(head);
            out.push(' ');
            out.push_str(&fields.join(" "));
        }
        out.push('\n');
    }
    std::fs::write(path, out).unwrap();
}

/// A sweep of `users` levels of 10 s with the real MariaDB captures in every level;
/// `rate(users, second)` is the total events per second. Returns the directory.
pub fn sweep(
    root: &Path,
    name: &str,
    users: &[u32],
    warmup_s: &[f64],
    read_only: bool,
    rate: impl Fn(u32, u64) -> u64,
) -> PathBuf {
    let dir = root.join(name);
    let options = default_options("10000");
    let mut rows = Vec::new();
    for (i, &u) in users.iter().enumerate() {
        let evs = events(
            u as usize,
            10,
            1000 + i as u64,
            1_000_000 + 150_000 * u as u64,
            |s| rate(u, s),
        );
        let level = dir.join(results_dir::level_dir_name(i as u32 + 1));
        let start = T0_NS + i as u64 * 20_000_000_000;
        let mut row = write_level(
            &level,
            i as u32 + 1,
            1,
            warmup_s.get(i).copied().unwrap_or(2.0),
            &Process {
                threads: u as usize,
                seconds: 10,
                start_ns: start,
                events: &evs,
                options: options.clone(),
                test: if read_only {
                    "oltp_read_only".into()
                } else {
                    "oltp_read_write".into()
                },
                query_counts: true,
            },
        );
        if read_only {
            // A read-only result: writes are zero, BEGIN/COMMIT stay in "other".
            let path = level.join(results_dir::RESULT_FILE);
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            v["final"]["counters"]["writes"] = 0.into();
            std::fs::write(&path, v.to_string()).unwrap();
        }
        copy_captures("mariadb", &level);
        // The kit found the 4 tables of 10000 rows the options claim.
        set_level_data(&level, |d| {
            *d = Some(table_data(4, 10_000, &[10_000; 4]));
        });
        row.level = results_dir::level_dir_name(i as u32 + 1);
        rows.push(row);
    }
    let vars = variables_of("mariadb");
    write_run(
        &dir,
        if read_only {
            "oltp_read_only"
        } else {
            "oltp_read_write"
        },
        &options,
        users,
        &rows,
        vars,
    );
    dir
}

/// The captured `SHOW GLOBAL VARIABLES` of `tests/data/<which>` as name → value.
pub fn variables_of(which: &str) -> BTreeMap<String, String> {
    let path = data_dir().join(which).join("server/variables.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let samples = bmk_results::capture::samples(&text);
    let Some(s) = samples.first() else {
        return BTreeMap::new();
    };
    let t = bmk_results::capture::Table::parse(s.body);
    t.rows
        .iter()
        .filter_map(|r| Some((r.first()?.clone()?, r.get(1)?.clone().unwrap_or_default())))
        .collect()
}

/// `level.json`'s `data` as the kit records it: `tables` claimed of `table_size` rows,
/// found with these largest ids (fewer than `tables`: the rest are missing).
pub fn table_data(tables: u32, table_size: u64, found: &[u64]) -> results_dir::TableData {
    results_dir::TableData {
        table_prefix: "sbtest".into(),
        tables_claimed: tables,
        table_size_claimed: table_size,
        tables: found
            .iter()
            .enumerate()
            .map(|(i, &m)| results_dir::TableSize {
                name: format!("sbtest{}", i + 1),
                max_id: Some(m),
            })
            .collect(),
        tables_missing: tables - found.len() as u32,
        error: None,
    }
}

/// Rewrites a level's `level.json` with `f` applied to its `data`.
pub fn set_level_data(level: &Path, f: impl FnOnce(&mut Option<results_dir::TableData>)) {
    let path = level.join(results_dir::LEVEL_FILE);
    let mut info: LevelInfo = results_dir::read_json(&path).unwrap();
    f(&mut info.data);
    std::fs::write(&path, serde_json::to_string_pretty(&info).unwrap()).unwrap();
}

/// Rewrites a level's `result.json` with `f` applied to it as JSON.
pub fn edit_result(level: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let path = level.join(results_dir::RESULT_FILE);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(&path, v.to_string()).unwrap();
}
