//! The results directory: the on-disk layout of a kit run (a sweep of load levels, or any
//! run given `--results-dir`), shared by the writer (the kit) and the readers (`bmk
//! report`, `bmk compare`, `bmk merge`).
//!
//! ```text
//! DIR/
//!   run.json                 RunManifest: what ran, on what, against which server
//!   summary.csv              one SummaryRow per finished level (rewritten atomically)
//!   level-0001/              one folder per load level and repeat, in run order
//!     level.json             LevelInfo: users, repeat, wall-clock window, status
//!     intervals.jsonl        one IntervalLine per report interval, appended as it ends
//!     result.json            the level's `--results` document (crate::results_file)
//!     output.txt             the level's console output, as printed
//!     server/*.txt, os/*.txt raw status samples (crate::capture)
//! ```
//!
//! The format is described for users in `docs/results-dir.md`. This module holds the
//! file names and the serialisable records, and the tolerant readers: a directory left
//! by a crash (`kill -9`) is still readable, because `intervals.jsonl` is only ever
//! appended whole lines and every JSON file is replaced by rename. It must not decide
//! what to measure or how to render it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use bmk_engine::bounded_file;
use bmk_engine::IntervalStats;
use serde::{Deserialize, Serialize};

use crate::codec;
use crate::error::Error;
use crate::results_file::{IntervalRecord, ToolInfo};
use bmk_report::host::{now_rfc3339, HostInfo};
use bmk_report::redact::{redact_args, redact_options};
use bmk_report::summary::FinalStats;

/// The `schema` field of `run.json`.
pub const RUN_SCHEMA_NAME: &str = "bmk-run";
/// The `schema` field of `level.json`.
pub const LEVEL_SCHEMA_NAME: &str = "bmk-level";
/// The version of the directory layout and of its JSON records; bumped on incompatible
/// changes (adding a field is not one: readers ignore fields they do not know).
pub const DIR_SCHEMA_VERSION: u32 = 1;

/// The manifest at the top of the directory.
pub const RUN_FILE: &str = "run.json";
/// The per-level summary table.
pub const SUMMARY_FILE: &str = "summary.csv";
/// A level's own manifest.
pub const LEVEL_FILE: &str = "level.json";
/// A level's interval series.
pub const INTERVALS_FILE: &str = "intervals.jsonl";
/// A level's final statistics (a `--results` document).
pub const RESULT_FILE: &str = "result.json";
/// A level's console output (its process's stdout and stderr, as printed).
pub const OUTPUT_FILE: &str = "output.txt";
/// A level's raw server samples.
pub const SERVER_DIR: &str = "server";
/// A level's raw OS samples.
pub const OS_DIR: &str = "os";

/// The folder name of the level with 1-based run-order `index`: `level-0001`.
pub fn level_dir_name(index: u32) -> String {
    format!("level-{index:04}")
}

/// The database server a run targeted, as seen when it started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// `mysql`, `pgsql` or `sqlite`.
    pub driver: String,
    /// The server's version string (`SELECT VERSION()`), if it could be read.
    #[serde(default)]
    pub version: Option<String>,
    /// Where it was reached (`127.0.0.1:3306`, a socket path, a file), no credentials.
    #[serde(default)]
    pub address: Option<String>,
    /// `SHOW GLOBAL VARIABLES` / `pg_settings` at start, name → value (empty when the
    /// capture could not read them; the raw text is also kept under `server/`).
    #[serde(default)]
    pub variables: BTreeMap<String, String>,
}

/// The load levels a sweep planned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepPlan {
    /// Users (threads) of each level, in order.
    pub users: Vec<u32>,
    /// Measured seconds per level.
    pub time_s: f64,
    /// Warm-up seconds per level (not measured).
    #[serde(default)]
    pub warmup_s: f64,
    /// Pause between levels, seconds.
    #[serde(default)]
    pub pause_s: f64,
    /// How many times each level runs.
    #[serde(default = "one")]
    pub repeat: u32,
    /// Most users one bmk process runs; larger levels are split (0: no limit).
    #[serde(default)]
    pub max_users_per_process: u32,
}

fn one() -> u32 {
    1
}

/// `run.json`: what ran. Written when the run starts and rewritten (atomically) when it
/// ends, with `end_time` and `status` filled in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    /// Always [`RUN_SCHEMA_NAME`].
    pub schema: String,
    /// [`DIR_SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// The program that wrote the directory.
    pub tool: ToolInfo,
    /// The kit scenario name (`OLTP_RW_10M_8tab-uniform-ps-trx`), if the run was one.
    #[serde(default)]
    pub scenario: Option<String>,
    /// The `bmk.toml` target the run was given with `--target`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The test or workload every level ran (`oltp_read_write`, a script path).
    pub test: String,
    /// The command line that started the run, secrets redacted.
    pub command_line: Vec<String>,
    /// The workload options every level shares (threads excluded), secrets redacted.
    pub options: BTreeMap<String, String>,
    /// The sweep, when the run was one.
    #[serde(default)]
    pub sweep: Option<SweepPlan>,
    /// The client machine.
    pub host: HostInfo,
    /// The server, when the test used one.
    #[serde(default)]
    pub server: Option<ServerInfo>,
    /// Seconds between capture samples (0: no capture).
    #[serde(default)]
    pub capture_interval_s: f64,
    /// When the run started (RFC 3339, UTC).
    pub start_time: String,
    /// When it ended; absent while it runs or after a crash.
    #[serde(default)]
    pub end_time: Option<String>,
    /// `running` until the end, then `completed`, `interrupted` or `failed`.
    pub status: String,
    /// Why the run `failed`, when bmk knows (a results file it could not write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How many sanity checks failed or warned, when `bmk report` last ran on the
    /// directory (the verdicts themselves are in `checks.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<CheckCounts>,
    /// The capacity search, when the run is one (`bmk kit search`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchPlan>,
    /// What the search found, once it ended (absent while it runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<SearchAnswer>,
    /// Each time the run was taken up again (`--resume`, `--only-level`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub continuations: Vec<Continuation>,
}

/// A capacity search as it was asked for: the load it varies, the objectives every
/// probe must meet and where it stops.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchPlan {
    /// `users` (closed loop, more users) or `rate` (open loop, more arrivals per second).
    pub by: String,
    /// The objectives every probe had to meet.
    pub objectives: Vec<ObjectiveRecord>,
    /// The first load probed.
    pub start: f64,
    /// The highest load probed.
    pub max: f64,
    /// The search ends when the bounds are this close, as a fraction of the lower one.
    pub precision: f64,
    /// Users of every probe of a search by rate (0 for a search by users).
    #[serde(default)]
    pub users: u32,
}

/// One objective of a capacity search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ObjectiveRecord {
    /// As given, without spaces (`p99<=20ms`).
    pub text: String,
    /// What it bounds: `avg`, `max`, a percentile (`p99`, `p99.9`) or `errors`.
    pub metric: String,
    /// The limit: milliseconds for a latency, percent of the attempts for errors.
    pub limit: f64,
    /// `<` rather than `<=`.
    #[serde(default)]
    pub strict: bool,
}

/// What a capacity search found: the highest load that met every objective and the
/// probes that bound it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchAnswer {
    /// Users (search by users) or arrivals per second (search by rate) found; absent
    /// when no probe met the objectives.
    pub load: Option<f64>,
    /// The level that ran that load (`level-0005`).
    pub level: Option<String>,
    /// Its throughput, events per second.
    pub tps: Option<f64>,
    /// Its mean latency, ms.
    pub avg_ms: Option<f64>,
    /// Its 95th percentile latency, ms.
    pub p95_ms: Option<f64>,
    /// Its 99th percentile latency, ms.
    pub p99_ms: Option<f64>,
    /// The lowest load above it that did not (failed an objective, brought no more
    /// throughput, or was rejected twice by the sanity checks), and its level.
    pub upper_load: Option<f64>,
    /// The level of `upper_load`.
    pub upper_level: Option<String>,
    /// Why the search ended, one sentence.
    pub reason: String,
    /// Levels the search ran.
    pub probes: u32,
}

/// One taking-up of an interrupted or finished run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Continuation {
    /// `resume` or `only-level`.
    pub kind: String,
    /// When (RFC 3339, UTC).
    pub time: String,
    /// The first level run this time.
    pub from_level: u32,
    /// Level folders moved aside (`level-0003` kept as `level-0003.1`), as
    /// `level-0003 -> level-0003.1`.
    #[serde(default)]
    pub kept_aside: Vec<String>,
}

/// What a run says of itself as it starts: the rest of its manifest (the host, the
/// start time, the status) is [`RunManifest::starting`]'s to fill in.
#[derive(Debug, Clone, Default)]
pub struct RunStart {
    /// The version of bmk that runs.
    pub version: String,
    /// The kit scenario, if the run is one.
    pub scenario: Option<String>,
    /// The `bmk.toml` target, if one was given.
    pub target: Option<String>,
    /// The test or workload.
    pub test: String,
    /// The command line, as given (redacted here).
    pub argv: Vec<String>,
    /// The workload options as (name, value), as given (`threads` is left out and
    /// secrets are redacted here).
    pub options: Vec<(String, String)>,
    /// The sweep, when the run is one.
    pub sweep: Option<SweepPlan>,
    /// Seconds between capture samples (0: no capture).
    pub capture_interval_s: f64,
}

impl RunManifest {
    /// The manifest of a run starting now on this host: `running`, its server not yet
    /// known.
    pub fn starting(start: RunStart) -> RunManifest {
        RunManifest {
            schema: RUN_SCHEMA_NAME.into(),
            schema_version: DIR_SCHEMA_VERSION,
            tool: ToolInfo {
                name: "bmk".into(),
                version: start.version,
            },
            scenario: start.scenario,
            target: start.target,
            test: start.test,
            command_line: redact_args(&start.argv),
            options: redact_options(start.options.into_iter().filter(|(k, _)| k != "threads"))
                .into_iter()
                .collect(),
            sweep: start.sweep,
            host: HostInfo::collect(),
            server: None,
            capture_interval_s: start.capture_interval_s,
            start_time: now_rfc3339(),
            end_time: None,
            status: "running".into(),
            reason: None,
            checks: None,
            search: None,
            answer: None,
            continuations: Vec::new(),
        }
    }
}

/// `run.json`'s `checks`: findings of `bmk report`'s sanity checks by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckCounts {
    /// Findings that make the numbers unusable as they are.
    pub fail: u32,
    /// Findings that need a second look.
    pub warn: u32,
}

/// `level.json`: one load level (and repeat) of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelInfo {
    /// Always [`LEVEL_SCHEMA_NAME`].
    pub schema: String,
    /// [`DIR_SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// 1-based position in run order (the `NNNN` of `level-NNNN`).
    pub index: u32,
    /// Users (threads, connections) of the level, over all processes.
    pub users: u32,
    /// 1-based repeat number of this users count.
    #[serde(default = "one")]
    pub repeat: u32,
    /// How many bmk processes (or client hosts) ran the level together.
    #[serde(default = "one")]
    pub processes: u32,
    /// Warm-up seconds before the measured start.
    #[serde(default)]
    pub warmup_s: f64,
    /// Wall clock of the measured start, nanoseconds since the Unix epoch.
    pub start_unix_ns: u64,
    /// Wall clock of the measured end; absent while the level runs or after a crash.
    #[serde(default)]
    pub end_unix_ns: Option<u64>,
    /// `running`, then the level's `--results` status (`completed`, `interrupted`,
    /// `fatal`, ...), or `failed` when its results could not be written whole.
    pub status: String,
    /// Why the level `failed` (a results file it could not write: which, and the
    /// system's error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The run identity of the process that ran the level (its results file's
    /// `run_id`); absent in directories of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The benchmark's tables as the kit found them on the server just before the
    /// level started (OLTP workloads), to set beside what the options claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<TableData>,
    /// CPU of the level's bmk process and of the host over the measured part, written
    /// when the level ends (absent for older levels and for a level that crashed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<LevelCpu>,
    /// Arrivals per second offered (`--rate`) in an open-loop level; absent for a
    /// closed-loop one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// A search's verdict on this level, written when it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeVerdict>,
}

/// How a capacity search judged one of its levels.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeVerdict {
    /// `meets` (every objective), `fails` (one or more), `no-gain` (throughput did not
    /// grow with the load, or fell short of the offered rate) or `rejected` (the
    /// sanity checks do not trust the level: not used).
    pub verdict: String,
    /// Why, in words (each objective's measured value, or the checks' findings).
    pub why: String,
}

/// Where the CPU time of a level's host went during its measured part: the level
/// process's own (`getrusage`), the database server's when it runs on the same host,
/// and the rest, from `/proc/stat` read at the measured start and end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelCpu {
    /// Wall-clock seconds between the two readings.
    pub wall_s: f64,
    /// User CPU seconds of the bmk process(es) running the level.
    pub bmk_user_s: f64,
    /// System CPU seconds of the bmk process(es) running the level.
    pub bmk_system_s: f64,
    /// CPU seconds of the database server's processes on this host (`mariadbd`,
    /// `mysqld`, `postgres`); 0 for a remote server.
    #[serde(default)]
    pub server_s: f64,
    /// CPUs of the host (`/proc/stat` lines).
    pub host_cpus: u32,
    /// Host CPU busy (neither idle, iowait nor steal), % of all its CPUs.
    pub host_busy_pct: f64,
    /// The part of `host_busy_pct` that was neither bmk nor the local database server:
    /// other work on the host, % of all its CPUs.
    pub host_other_pct: f64,
    /// Time the hypervisor gave the host's virtual CPUs to someone else, % of all CPUs.
    #[serde(default)]
    pub steal_pct: f64,
}

impl LevelCpu {
    /// bmk's CPU in cores (1.0: one core busy the whole time).
    pub fn bmk_cores(&self) -> f64 {
        if self.wall_s > 0.0 {
            (self.bmk_user_s + self.bmk_system_s) / self.wall_s
        } else {
            0.0
        }
    }
}

/// The tables an OLTP level reads, as found on the server: how many of the tables the
/// options name exist, and the largest `id` of each (ids run 1..=`--table-size` in the
/// data `prepare` loads, so a largest id below it means fewer rows than claimed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableData {
    /// The tables' name prefix (`sbtest`: the tables are `sbtest1`..`sbtestN`).
    pub table_prefix: String,
    /// Tables the options claim (`--tables`).
    pub tables_claimed: u32,
    /// Rows per table the options claim (`--table-size`).
    pub table_size_claimed: u64,
    /// The claimed tables found, each with its largest id, in table order.
    pub tables: Vec<TableSize>,
    /// Claimed tables not found on the server.
    pub tables_missing: u32,
    /// Why the tables could not be read (no connection, a failed query); the other
    /// fields are then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One table as found on the server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableSize {
    /// Its name (`sbtest3`).
    pub name: String,
    /// `MAX(id)`; absent for an empty table.
    pub max_id: Option<u64>,
}

/// One line of `intervals.jsonl`: a report interval with its mergeable histogram.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalLine {
    /// The interval as in a `--results` file.
    #[serde(flatten)]
    pub record: IntervalRecord,
    /// Wall clock at the interval's end, nanoseconds since the Unix epoch: lines of
    /// several clients are aligned on it.
    pub end_unix_ns: u64,
    /// The interval's latency histogram ([`crate::codec`], nanoseconds).
    pub histogram: String,
    /// Events per kind of query in the interval (`point_select`, `update_index`, ...),
    /// where the workload tells them apart.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query_counts: BTreeMap<String, u64>,
}

impl IntervalLine {
    /// The line for one engine interval that ended at `end_unix_ns`.
    pub fn from_interval(
        stats: &IntervalStats,
        percentiles: &[f64],
        end_unix_ns: u64,
    ) -> Result<IntervalLine, Error> {
        Ok(IntervalLine {
            record: IntervalRecord::from_interval(stats, percentiles),
            end_unix_ns,
            histogram: codec::encode(&stats.histogram)?,
            query_counts: BTreeMap::new(),
        })
    }

    /// This line as one line of text (no newline).
    pub fn to_line(&self) -> Result<String, Error> {
        serde_json::to_string(self).map_err(|source| Error::Json {
            path: PathBuf::from(INTERVALS_FILE),
            source,
        })
    }
}

/// One row of `summary.csv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// The kit scenario of the run (empty for a plain run), so that the files of
    /// several runs can be concatenated.
    #[serde(default)]
    pub scenario: String,
    /// The `bmk.toml` target the run was given (empty without `--target`).
    #[serde(default)]
    pub target: String,
    /// The level's folder (`level-0001`).
    pub level: String,
    /// Users.
    pub users: u32,
    /// Repeat number.
    pub repeat: u32,
    /// Events (transactions) per second.
    pub tps: f64,
    /// Queries per second.
    pub qps: f64,
    /// Mean latency, ms.
    pub avg_ms: f64,
    /// 95th percentile latency, ms.
    pub p95_ms: f64,
    /// 99th percentile latency, ms.
    pub p99_ms: f64,
    /// Largest latency, ms.
    pub max_ms: f64,
    /// Ignored errors.
    pub errors: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// The level's status.
    pub status: String,
    /// The workload's own results (TPC-C `tpmC`, dbSTRESS rates), name → value.
    #[serde(default)]
    pub workload: BTreeMap<String, f64>,
    /// Arrivals per second offered (`--rate`), for an open-loop level.
    #[serde(default)]
    pub rate: Option<f64>,
    /// A search's verdict on the level (`meets`, `fails`, `no-gain`, `rejected`); on
    /// the search's answer row, the levels that bound it.
    #[serde(default)]
    pub probe: String,
}

/// The header line of `summary.csv`.
pub const SUMMARY_HEADER: &str =
    "scenario,target,level,users,repeat,tps,qps,avg_ms,p95_ms,p99_ms,max_ms,errors,reconnects,status,workload,rate,probe";

/// The `level` of the row a capacity search adds after its levels' rows: the load it
/// found, with that level's numbers.
pub const ANSWER_ROW: &str = "answer";

/// The header line `summary.csv` had before the `scenario`, `target` and `workload`
/// columns: its rows are still read.
pub const SUMMARY_HEADER_V1: &str =
    "level,users,repeat,tps,qps,avg_ms,p95_ms,p99_ms,max_ms,errors,reconnects,status";

/// A name as one CSV field: the separators of the file (`,`, `;`, `=`) and line breaks
/// become `_` (names are identifiers; quoting would make the file harder to `cut`).
pub fn csv_name(s: &str) -> String {
    s.chars()
        .map(|c| if ",;=\r\n\"".contains(c) { '_' } else { c })
        .collect()
}

impl SummaryRow {
    /// The row of a finished level from its final statistics: the one place the
    /// per-level numbers (summary.csv, the kit's table, `bmk report`'s table) are made.
    pub fn of(level: &str, users: u32, repeat: u32, f: &FinalStats, status: &str) -> SummaryRow {
        let pct = |p: f64| f.latency.percentile_ms(p).unwrap_or(0.0);
        SummaryRow {
            scenario: String::new(),
            target: String::new(),
            level: level.to_string(),
            users,
            repeat,
            tps: f.events_per_sec,
            qps: f.per_sec(f.counters.queries()),
            avg_ms: f.latency.avg_ms,
            p95_ms: pct(95.0),
            p99_ms: pct(99.0),
            max_ms: f.latency.max_ms,
            errors: f.counters.errors,
            reconnects: f.counters.reconnects,
            status: status.to_string(),
            workload: BTreeMap::new(),
            rate: None,
            probe: String::new(),
        }
    }

    /// The same row naming its run's scenario and target.
    pub fn in_run(mut self, scenario: Option<&str>, target: Option<&str>) -> SummaryRow {
        self.scenario = scenario.unwrap_or_default().to_string();
        self.target = target.unwrap_or_default().to_string();
        self
    }

    /// The row as CSV (no newline). Rates with 2 decimals, latencies with 3, as the
    /// text reports print them; the workload's own results as `name=value` pairs
    /// separated by `;` in the last column.
    pub fn to_csv(&self) -> String {
        let workload: Vec<String> = self
            .workload
            .iter()
            .map(|(k, v)| format!("{}={}", csv_name(k), trim_float(*v)))
            .collect();
        format!(
            "{},{},{},{},{},{:.2},{:.2},{:.3},{:.3},{:.3},{:.3},{},{},{},{},{},{}",
            csv_name(&self.scenario),
            csv_name(&self.target),
            self.level,
            self.users,
            self.repeat,
            self.tps,
            self.qps,
            self.avg_ms,
            self.p95_ms,
            self.p99_ms,
            self.max_ms,
            self.errors,
            self.reconnects,
            csv_name(&self.status),
            workload.join(";"),
            self.rate.map(trim_float).unwrap_or_default(),
            csv_name(&self.probe)
        )
    }

    /// Parses a line written by [`SummaryRow::to_csv`], or one of the older layouts:
    /// without the `rate` and `probe` columns, or also without the scenario, target
    /// and workload ones ([`SUMMARY_HEADER_V1`]).
    pub fn parse(line: &str) -> Option<SummaryRow> {
        let f: Vec<&str> = line.trim_end().split(',').collect();
        let (scenario, target, f, workload, rate, probe) = match f.len() {
            12 => ("", "", &f[..], "", "", ""),
            15 => (f[0], f[1], &f[2..14], f[14], "", ""),
            17 => (f[0], f[1], &f[2..14], f[14], f[15], f[16]),
            _ => return None,
        };
        let rate = match rate {
            "" => None,
            r => Some(r.parse::<f64>().ok()?),
        };
        let workload = workload
            .split(';')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=')?;
                Some((k.to_string(), v.parse::<f64>().ok()?))
            })
            .collect::<Option<BTreeMap<String, f64>>>()?;
        Some(SummaryRow {
            scenario: scenario.to_string(),
            target: target.to_string(),
            level: f[0].to_string(),
            users: f[1].parse().ok()?,
            repeat: f[2].parse().ok()?,
            tps: f[3].parse().ok()?,
            qps: f[4].parse().ok()?,
            avg_ms: f[5].parse().ok()?,
            p95_ms: f[6].parse().ok()?,
            p99_ms: f[7].parse().ok()?,
            max_ms: f[8].parse().ok()?,
            errors: f[9].parse().ok()?,
            reconnects: f[10].parse().ok()?,
            status: f[11].to_string(),
            workload,
            rate,
            probe: probe.to_string(),
        })
    }
}

/// A value as short as it reads exactly (`12`, `0.25`), at most 4 decimals.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// The whole `summary.csv` text for `rows`.
pub fn summary_csv(rows: &[SummaryRow]) -> String {
    let mut out = String::from(SUMMARY_HEADER);
    out.push('\n');
    for r in rows {
        out.push_str(&r.to_csv());
        out.push('\n');
    }
    out
}

/// Reads a JSON record (`run.json`, `level.json`): a regular file of at most
/// [`bounded_file::RECORD_FILE`] (a longer one is refused: a document cut short
/// cannot parse).
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, Error> {
    let bytes =
        bounded_file::read(path, bounded_file::RECORD_FILE).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
    serde_json::from_slice(&bytes).map_err(|source| Error::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// What [`read_intervals_capped`] read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntervalsRead {
    /// The whole lines, in order.
    pub lines: Vec<IntervalLine>,
    /// Whether the file goes on past [`bounded_file::INTERVALS_FILE`] (the lines after
    /// it were not read).
    pub cut: bool,
}

/// Reads `intervals.jsonl`. A last line without its newline is what a crash mid-write
/// leaves and is skipped; any other line that does not parse is an error.
pub fn read_intervals(path: &Path) -> Result<Vec<IntervalLine>, Error> {
    read_intervals_capped(path).map(|r| r.lines)
}

/// [`read_intervals`], saying whether the file was longer than the cap: only a regular
/// file is read, at most [`bounded_file::INTERVALS_FILE`] of it (the line the cap falls
/// in is dropped like a torn one), and a line longer than
/// [`bounded_file::INTERVAL_LINE`] is an error (no interval is that long).
pub fn read_intervals_capped(path: &Path) -> Result<IntervalsRead, Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = bounded_file::open_regular(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let cap = bounded_file::INTERVALS_FILE;
    let mut reader = BufReader::new(file.take(cap.bytes));
    let line_cap = bounded_file::INTERVAL_LINE;
    let mut out = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut reader)
            .take(line_cap.bytes + 1)
            .read_until(b'\n', &mut line)
            .map_err(io)?;
        if n == 0 {
            break;
        }
        let complete = line.ends_with(b"\n");
        if !complete && n as u64 > line_cap.bytes {
            return Err(io(bounded_file::too_large(line_cap)));
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<IntervalLine>(text.trim_end()) {
            Ok(v) => out.push(v),
            Err(_) if !complete => break,
            Err(source) => {
                return Err(Error::Json {
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
    }
    Ok(IntervalsRead {
        lines: out,
        cut: size > cap.bytes,
    })
}

/// The level folders of a results directory, in run order.
pub fn level_dirs(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut levels: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("level-"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    levels.sort();
    Ok(levels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn summary_rows_round_trip() {
        let row = SummaryRow {
            scenario: "OLTP_RW_10M_8tab-uniform-ps-trx".into(),
            target: "maria,main".into(),
            level: level_dir_name(3),
            users: 64,
            repeat: 2,
            tps: 1234.5678,
            qps: 24691.0,
            avg_ms: 51.8421,
            p95_ms: 99.5,
            p99_ms: 120.25,
            max_ms: 300.0,
            errors: 7,
            reconnects: 0,
            status: "completed".into(),
            workload: [
                ("tpmC".to_string(), 1520.125),
                ("new_order".to_string(), 380.0),
            ]
            .into_iter()
            .collect(),
            rate: None,
            probe: String::new(),
        };
        let text = summary_csv(std::slice::from_ref(&row));
        assert!(text.starts_with("scenario,target,level,users,"));
        let line = text.lines().nth(1).unwrap();
        assert_eq!(
            line,
            "OLTP_RW_10M_8tab-uniform-ps-trx,maria_main,level-0003,64,2,1234.57,24691.00,51.842,99.500,120.250,300.000,7,0,completed,new_order=380;tpmC=1520.125,,"
        );
        let probe = SummaryRow {
            rate: Some(87.5),
            probe: "meets".into(),
            ..row.clone()
        };
        let back = SummaryRow::parse(&probe.to_csv()).unwrap();
        assert_eq!((back.rate, back.probe.as_str()), (Some(87.5), "meets"));
        // Files written before the rate and probe columns still read.
        let before = SummaryRow::parse(line.trim_end_matches(",,")).unwrap();
        assert_eq!((before.rate, before.probe.as_str()), (None, ""));
        let back = SummaryRow::parse(line).unwrap();
        assert_eq!(back.users, 64);
        assert_eq!(back.tps, 1234.57);
        assert_eq!(back.target, "maria_main");
        assert_eq!(back.workload["tpmC"], 1520.125);
        // Files written before the scenario and target columns still read.
        let old = SummaryRow::parse(
            "level-0003,64,2,1234.57,24691.00,51.842,99.500,120.250,300.000,7,0,completed",
        )
        .unwrap();
        assert_eq!((old.users, old.scenario.as_str()), (64, ""));
        assert!(SummaryRow::parse("a,b,c").is_none());
    }

    #[test]
    fn a_torn_last_interval_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(INTERVALS_FILE);
        let line = IntervalLine {
            end_unix_ns: 1_700_000_000_000_000_000,
            histogram: codec::encode(&bmk_engine::latency::new_histogram()).unwrap(),
            ..IntervalLine::default()
        };
        let mut f = std::fs::File::create(&path).unwrap();
        writeln!(f, "{}", line.to_line().unwrap()).unwrap();
        writeln!(f, "{}", line.to_line().unwrap()).unwrap();
        write!(f, "{{\"time_s\":3,\"inter").unwrap();
        drop(f);
        assert_eq!(read_intervals(&path).unwrap().len(), 2);

        std::fs::write(&path, "{not json}\n").unwrap();
        assert!(read_intervals(&path).is_err());
    }

    #[test]
    fn level_folders_are_listed_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["level-0002", "level-0001", "level-x", "server"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        let names: Vec<String> = level_dirs(dir.path())
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["level-0001", "level-0002"]);
    }
}
