//! The `--results=FILE.json` writer: the whole run in one versioned JSON document.
//!
//! The document (schema in `docs/results-schema.md` and `docs/results.schema.json`)
//! holds the schema id and version, the tool, the test, the command line and options
//! with secrets redacted ([`bmk_report::redact`]), host facts, start and end timestamps,
//! every intermediate interval, every checkpoint, the final statistics with a standard
//! set of percentiles, the lossless latency histogram ([`crate::codec`]), and optional
//! per-query-type statistics.
//!
//! It is written incrementally: [`ResultsWriter::create`] writes the run's header to
//! `FILE.json.tmp`, each [`ResultsWriter::interval`] appends and flushes one element of
//! the `intervals` array, and [`ResultsWriter::finish`] appends the rest, syncs the file
//! and renames it to `FILE.json` — a rename within one directory, so a reader sees
//! either no file or the complete one. A writer dropped without `finish` (a fatal
//! error, a panic) or [`ResultsWriter::abort`]ed deletes its temporary file. On
//! SIGINT/SIGTERM the CLI is expected to call `finish` with the cumulative statistics of
//! what ran and status `interrupted`, so nothing measured is lost.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use bmk_engine::{CumulativeStats, IntervalStats};
use serde::{Deserialize, Serialize};

use crate::codec;
use crate::error::Error;
use bmk_report::host::{now_rfc3339, HostInfo};
use bmk_report::redact::{redact_args, redact_options};
use bmk_report::summary::{
    normalize_percentiles, FinalStats, LatencySummary, PercentileValue, ReportStat,
};

/// The `schema` field of every results file.
pub const SCHEMA_NAME: &str = "bmk-results";
/// The version of the document layout; bumped on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;
/// Percentiles every results file stores, besides those the run asked for.
pub const STANDARD_PERCENTILES: [f64; 7] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0];

/// The program that produced the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// `bmk`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// What is known when the run starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The program.
    pub tool: ToolInfo,
    /// Test name or script path (`cpu`, `oltp_read_write`, `./my.lua`).
    pub test: String,
    /// The command (`run`, ...).
    pub command: String,
    /// The command line, secrets redacted.
    pub command_line: Vec<String>,
    /// Every option's effective value as text, secrets redacted.
    pub options: BTreeMap<String, String>,
    /// `--percentile`.
    pub percentile: f64,
    /// `--percentiles`.
    pub percentiles: Vec<f64>,
    /// The machine.
    pub host: HostInfo,
    /// When the run started (RFC 3339, UTC).
    pub start_time: String,
    /// This run's identity: 128 random bits in hex, drawn when it starts. Two inputs
    /// with one `run_id` are copies of one run (`bmk merge` refuses to add them up).
    /// Absent in files of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// How a script's events ran (native or Lua workers, threads or event loops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Execution>,
}

/// A new run identity: 128 bits from the kernel's random source, as 32 hex digits.
/// (`getrandom(2)` directly: the one call this needs does not warrant a crate.)
pub fn new_run_id() -> String {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        // SAFETY: writes at most the remaining bytes of `bytes`, which it owns.
        let n = unsafe {
            libc::getrandom(bytes[filled..].as_mut_ptr().cast(), bytes.len() - filled, 0)
        };
        if n > 0 {
            filled += n as usize;
        } else if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // No random source (a very old kernel): the clock and the process id
            // still tell runs apart.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            bytes = (t ^ (u128::from(std::process::id()) << 96)).to_le_bytes();
            break;
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How the events of a script run were executed: by bmk's native workers or by Lua,
/// on a thread per worker or on event loops, with or without the MySQL fast path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// `native` or `lua`.
    pub path: String,
    /// Why a built-in workload ran in Lua: the option that forced it (`--pin-tables`),
    /// the switch (`--native-oltp=off`, `BMK_NATIVE_OLTP=0`), an environment variable,
    /// or that the workload has no native worker. Absent on the native path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lua_reason: Option<String>,
    /// `threads` (a thread per worker) or `event_loops` (workers as coroutines).
    pub workers: String,
    /// Event-loop threads (0 with `threads`).
    pub event_loops: u32,
    /// Whether MySQL executes took bmk's own protocol path (false on other drivers).
    pub mysql_fast_path: bool,
    /// Whether PostgreSQL connections took bmk's own protocol client (false on other
    /// drivers; absent in files of versions before it, read as false).
    #[serde(default)]
    pub pgsql_fast_path: bool,
}

impl RunInfo {
    /// Describes a run starting now on this machine. `command_line` and `options` are
    /// redacted here; `version` is bmk's version.
    pub fn new<K: Into<String>, V: Into<String>>(
        version: &str,
        test: &str,
        command: &str,
        command_line: &[String],
        options: impl IntoIterator<Item = (K, V)>,
    ) -> RunInfo {
        RunInfo {
            tool: ToolInfo {
                name: "bmk".to_string(),
                version: version.to_string(),
            },
            test: test.to_string(),
            command: command.to_string(),
            command_line: redact_args(command_line),
            options: redact_options(options).into_iter().collect(),
            percentile: 95.0,
            percentiles: Vec::new(),
            host: HostInfo::collect(),
            start_time: now_rfc3339(),
            run_id: Some(new_run_id()),
            execution: None,
        }
    }

    /// Sets the percentiles the run reports.
    pub fn with_percentiles(mut self, percentile: f64, percentiles: &[f64]) -> RunInfo {
        self.percentile = percentile;
        self.percentiles = percentiles.to_vec();
        self
    }

    /// The percentiles stored in the file: [`STANDARD_PERCENTILES`] and the run's.
    pub fn stored_percentiles(&self) -> Vec<f64> {
        let mut all = STANDARD_PERCENTILES.to_vec();
        all.push(self.percentile);
        all.extend_from_slice(&self.percentiles);
        normalize_percentiles(&all)
    }
}

/// Query rates of an interval, per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryRates {
    /// All queries.
    pub total: f64,
    /// Reads.
    pub reads: f64,
    /// Writes.
    pub writes: f64,
    /// Other.
    pub other: f64,
}

/// Latency of one interval, milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalLatency {
    /// Smallest (histogram precision).
    pub min_ms: f64,
    /// Mean (histogram precision).
    pub avg_ms: f64,
    /// Largest (histogram precision).
    pub max_ms: f64,
    /// The stored percentiles.
    pub percentiles: Vec<PercentileValue>,
}

/// One intermediate interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalRecord {
    /// Seconds since the measured start, at the interval's end.
    pub time_s: f64,
    /// Interval length, seconds.
    pub interval_s: f64,
    /// Workers running.
    pub threads: u32,
    /// Events completed.
    pub events: u64,
    /// Read queries / operations.
    pub reads: u64,
    /// Write queries / operations.
    pub writes: u64,
    /// Other queries / fsyncs.
    pub other: u64,
    /// Ignored errors.
    pub errors: u64,
    /// Reconnects.
    pub reconnects: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Events per second.
    pub tps: f64,
    /// Queries per second.
    pub qps: QueryRates,
    /// Errors per second.
    pub errors_per_s: f64,
    /// Reconnects per second.
    pub reconnects_per_s: f64,
    /// Latency.
    pub latency: IntervalLatency,
    /// Arrivals waiting (rate mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_length: Option<u64>,
    /// Busy workers (rate mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u64>,
    /// Rows the interval's read statements returned (absent when none were counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// The interval's read statements that returned no row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_reads: Option<u64>,
}

impl IntervalRecord {
    /// The record of one engine interval.
    pub fn from_interval(stats: &IntervalStats, percentiles: &[f64]) -> IntervalRecord {
        let s = ReportStat::from_interval(stats, 0.0);
        let h = &stats.histogram;
        let ms = |ns: u64| ns as f64 / 1e6;
        let latency = if h.is_empty() {
            IntervalLatency::default()
        } else {
            IntervalLatency {
                min_ms: ms(h.min()),
                avg_ms: h.mean() / 1e6,
                max_ms: ms(h.max()),
                percentiles: normalize_percentiles(percentiles)
                    .into_iter()
                    .map(|p| PercentileValue {
                        percentile: p,
                        ms: stats.percentile_ms(p),
                    })
                    .collect(),
            }
        };
        IntervalRecord {
            time_s: s.time_total,
            interval_s: s.time_interval,
            threads: s.threads_running,
            events: s.events,
            reads: s.reads,
            writes: s.writes,
            other: s.other,
            errors: s.errors,
            reconnects: s.reconnects,
            bytes_read: s.bytes_read,
            bytes_written: s.bytes_written,
            tps: s.per_sec(s.events),
            qps: QueryRates {
                total: s.per_sec(s.queries()),
                reads: s.per_sec(s.reads),
                writes: s.per_sec(s.writes),
                other: s.per_sec(s.other),
            },
            errors_per_s: s.per_sec(s.errors),
            reconnects_per_s: s.per_sec(s.reconnects),
            latency,
            queue_length: stats.rate_mode.then_some(stats.queue_length),
            concurrency: stats.rate_mode.then_some(stats.concurrency),
            rows: bmk_report::summary::read_rows(&stats.counters).0,
            empty_reads: bmk_report::summary::read_rows(&stats.counters).1,
        }
    }
}

/// A checkpoint report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckpointRecord {
    /// Seconds since the measured start.
    pub at_s: f64,
    /// Statistics of the span since the previous checkpoint.
    pub stats: FinalStats,
    /// That span's latency histogram ([`crate::codec`]).
    pub histogram: String,
}

/// Counts and latency of one kind of query (point select, range, update, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryTypeStats {
    /// Executions.
    pub count: u64,
    /// Failed executions (ignored errors).
    #[serde(default)]
    pub errors: u64,
    /// Latency, milliseconds.
    pub latency: LatencySummary,
    /// Its latency histogram ([`crate::codec`]), if kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

/// How a run that started together with others (`--barrier`) began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartRecord {
    /// When this process released its workers (RFC 3339, UTC, this host's clock).
    pub measured_from: String,
    /// The same instant in nanoseconds since the Unix epoch.
    pub measured_from_unix_ns: u64,
    /// The barrier it passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub barrier: Option<BarrierRecord>,
}

impl StartRecord {
    /// The start of a process that passed `barrier` and released its workers at
    /// `released` (the system's clock).
    pub fn passed(barrier: BarrierRecord, released: std::time::SystemTime) -> StartRecord {
        StartRecord {
            measured_from: bmk_report::host::rfc3339_utc(released),
            measured_from_unix_ns: released
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            barrier: Some(barrier),
        }
    }
}

/// The start barrier a run passed with the other clients of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BarrierRecord {
    /// The barrier's name.
    pub name: String,
    /// This client's identity.
    pub client: String,
    /// Every client of the run, in order of arrival.
    pub clients: Vec<String>,
    /// The agreed start on the database server's clock (RFC 3339 with microseconds).
    pub server_start: String,
    /// The same instant in microseconds since the Unix epoch.
    pub server_start_unix_us: i64,
    /// How far off this host placed that instant on its own clock, at most
    /// (milliseconds: half the shortest round trip of its clock readings).
    pub placement_error_ms: f64,
}

/// What is known when the run ends, besides its statistics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunEnd {
    /// `completed`, `interrupted`, `fatal`, `forced_shutdown`, `init_timeout`,
    /// `queue_full` or `start_refused`.
    pub status: String,
    /// Per-query-type statistics, by query kind.
    pub query_types: Option<BTreeMap<String, QueryTypeStats>>,
    /// How the run started, when it started together with others.
    pub start: Option<StartRecord>,
}

impl RunEnd {
    /// A run that ended with `status`.
    pub fn new(status: impl Into<String>) -> RunEnd {
        RunEnd {
            status: status.into(),
            query_types: None,
            start: None,
        }
    }
}

/// A whole results file, as read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsFile {
    /// Always [`SCHEMA_NAME`].
    pub schema: String,
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// The run's description.
    #[serde(flatten)]
    pub run: RunInfo,
    /// Every intermediate interval, in order.
    pub intervals: Vec<IntervalRecord>,
    /// Every checkpoint, in order.
    pub checkpoints: Vec<CheckpointRecord>,
    /// How the run ended.
    pub status: String,
    /// When it ended (RFC 3339, UTC).
    pub end_time: String,
    /// Statistics since the start (or the last checkpoint).
    #[serde(rename = "final")]
    pub final_stats: FinalStats,
    /// The final latency histogram ([`crate::codec`]).
    pub histogram: String,
    /// Per-query-type statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_types: Option<BTreeMap<String, QueryTypeStats>>,
    /// How the run started, when it started together with others (`--barrier`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StartRecord>,
    /// The workload's own results, name → value (TPC-C `tpmC` and transactions per
    /// type, dbSTRESS transactions per second by type): counts and rates only, so that
    /// the values of clients that ran together add up. Filled in by the kit from the
    /// level's console output.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workload: BTreeMap<String, f64>,
    /// The latency the workload measured itself per transaction type (TPC-C), with
    /// histograms so that clients that ran together merge exactly
    /// ([`crate::workload_latency`]). Filled in by the kit from the level's console
    /// output.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workload_latency: BTreeMap<String, QueryTypeStats>,
}

impl ResultsFile {
    /// Reads a results file: a regular file of at most
    /// [`bmk_engine::bounded_file::RESULTS_FILE`] (a longer one is refused: a document
    /// cut short cannot parse).
    pub fn read(path: impl AsRef<Path>) -> Result<ResultsFile, Error> {
        use bmk_engine::bounded_file;
        let path = path.as_ref();
        let bytes =
            bounded_file::read(path, bounded_file::RESULTS_FILE).map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })?;
        serde_json::from_slice(&bytes).map_err(|source| Error::Json {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The final latency histogram (nanoseconds).
    pub fn histogram(&self) -> Result<hdrhistogram::Histogram<u64>, Error> {
        codec::decode(&self.histogram)
    }
}

/// The latency histogram of several runs together, exact to the histograms' precision —
/// e.g. to get the true p99 of one benchmark driven from several machines.
pub fn merge_runs<'a>(
    files: impl IntoIterator<Item = &'a ResultsFile>,
) -> Result<hdrhistogram::Histogram<u64>, Error> {
    codec::merge(files.into_iter().map(|f| f.histogram.as_str()))
}

#[derive(Serialize)]
struct Head<'a> {
    schema: &'static str,
    schema_version: u32,
    #[serde(flatten)]
    run: &'a RunInfo,
}

#[derive(Serialize)]
struct Tail<'a> {
    checkpoints: &'a [CheckpointRecord],
    status: &'a str,
    end_time: String,
    #[serde(rename = "final")]
    final_stats: FinalStats,
    histogram: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    query_types: &'a Option<BTreeMap<String, QueryTypeStats>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    start: &'a Option<StartRecord>,
}

/// Writes a results file while the run goes on.
#[derive(Debug)]
pub struct ResultsWriter {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<BufWriter<tempfile::NamedTempFile>>,
    intervals: usize,
    checkpoints: Vec<CheckpointRecord>,
    percentiles: Vec<f64>,
}

impl ResultsWriter {
    /// Starts `path`. Until [`finish`](Self::finish) the document is written to a new
    /// temporary file beside it (`.NAME.XXXXXX.tmp`, created exclusively, so no symlink
    /// or earlier file is followed or reused). `path` itself must be absent or a regular
    /// file: a symlink, device or directory there is refused, never replaced.
    pub fn create(path: impl AsRef<Path>, run: &RunInfo) -> Result<ResultsWriter, Error> {
        let path = path.as_ref().to_path_buf();
        refuse_non_regular(&path)?;
        let file = crate::atomic_file::temp_beside(&path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        let tmp = file.path().to_path_buf();
        let mut writer = ResultsWriter {
            path,
            tmp,
            file: Some(BufWriter::new(file)),
            intervals: 0,
            checkpoints: Vec::new(),
            percentiles: run.stored_percentiles(),
        };
        let head = to_json(
            &writer.path,
            &Head {
                schema: SCHEMA_NAME,
                schema_version: SCHEMA_VERSION,
                run,
            },
        )?;
        // Leave the object open: the intervals follow.
        let head = head.strip_suffix('}').unwrap_or(&head);
        writer.write(&format!("{head},\"intervals\":["))?;
        Ok(writer)
    }

    /// The final file name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary file name used until the run ends.
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    fn write(&mut self, text: &str) -> Result<(), Error> {
        let tmp = &self.tmp;
        let io = |source| Error::Io {
            path: tmp.clone(),
            source,
        };
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| io(std::io::Error::other("results file already closed")))?;
        file.write_all(text.as_bytes()).map_err(io)?;
        file.flush().map_err(io)
    }

    /// Appends one intermediate interval.
    pub fn interval(&mut self, stats: &IntervalStats) -> Result<(), Error> {
        self.interval_record(&IntervalRecord::from_interval(stats, &self.percentiles))
    }

    /// Appends one ready interval record.
    pub fn interval_record(&mut self, record: &IntervalRecord) -> Result<(), Error> {
        let json = to_json(&self.path, record)?;
        let sep = if self.intervals == 0 { "" } else { "," };
        self.write(&format!("{sep}\n{json}"))?;
        self.intervals += 1;
        Ok(())
    }

    /// Records a checkpoint taken `at` seconds after the measured start.
    pub fn checkpoint(&mut self, at: f64, stats: &CumulativeStats) -> Result<(), Error> {
        self.checkpoints.push(CheckpointRecord {
            at_s: at,
            stats: FinalStats::from_cumulative(stats, &self.percentiles),
            histogram: codec::encode(&stats.histogram)?,
        });
        Ok(())
    }

    /// Completes the file with the final statistics and renames it into place.
    /// Returns the final path.
    pub fn finish(mut self, stats: &CumulativeStats, end: &RunEnd) -> Result<PathBuf, Error> {
        let tail = Tail {
            checkpoints: &self.checkpoints,
            status: &end.status,
            end_time: now_rfc3339(),
            final_stats: FinalStats::from_cumulative(stats, &self.percentiles),
            histogram: codec::encode(&stats.histogram)?,
            query_types: &end.query_types,
            start: &end.start,
        };
        let tail = to_json(&self.path, &tail)?;
        let tail = tail.strip_prefix('{').unwrap_or(&tail).to_string();
        let nl = if self.intervals == 0 { "" } else { "\n" };
        self.write(&format!("{nl}],{tail}\n"))?;
        let io = |path: &Path, source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = self.file.take().expect("open until finished");
        let file = file
            .into_inner()
            .map_err(|e| io(&self.tmp, e.into_error()))?;
        file.as_file().sync_all().map_err(|e| io(&self.tmp, e))?;
        // Whatever appeared at the final name while the run went on must not be
        // replaced unless it is a plain file.
        refuse_non_regular(&self.path)?;
        file.persist(&self.path)
            .map_err(|e| io(&self.path, e.error))?;
        // Best effort: make the rename itself durable.
        if let Some(dir) = self.path.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(self.path.clone())
    }

    /// Gives up: deletes the temporary file; nothing appears under the final name.
    pub fn abort(mut self) {
        self.discard();
    }

    fn discard(&mut self) {
        // Dropping the temporary file deletes it.
        self.file.take();
    }
}

impl Drop for ResultsWriter {
    fn drop(&mut self) {
        self.discard();
    }
}

/// Fails when `path` exists and is not a regular file (a symlink, device, directory...).
pub(crate) fn refuse_non_regular(path: &Path) -> Result<(), Error> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => Err(Error::NotRegularFile(path.to_path_buf())),
        _ => Ok(()),
    }
}

fn to_json<T: Serialize>(path: &Path, value: &T) -> Result<String, Error> {
    serde_json::to_string(value).map_err(|source| Error::Json {
        path: path.to_path_buf(),
        source,
    })
}
