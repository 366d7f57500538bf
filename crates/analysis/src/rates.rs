//! Per-second rates and gauges derived from a level's raw captures, as HPM's `analyze`
//! script does it: for each counter, the difference between consecutive samples over
//! the seconds between them; for gauges, the value itself.
//!
//! Server: MySQL/MariaDB `Questions` (without the sampler's own `SHOW` statements),
//! `Com_*`, `Innodb_rows_*`, `Innodb_data_reads/writes`, `Innodb_buffer_pool_reads`,
//! checkpoint age and history list length; PostgreSQL commits, rollbacks, blocks read
//! and hit, tuples, checkpoints and buffers written. OS: CPU %, disk IOPS and MB/s per
//! device, load average, and the client processes' CPU. A counter that goes backwards
//! (a restart or a statistics reset) gives no point for that step; the restart check
//! reports it. Parsing of `/proc` text is `procfs-core`'s.

use std::collections::BTreeMap;

use crate::sessions;
use bmk_results::capture::{self, Table};
use procfs_core::{ExplicitSystemInfo, FromRead, FromReadSI};

use crate::innodb::InnodbGauges;
use bmk_results::load::Level;

/// One line of a chart: (Unix seconds, value) points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// What it is (`Com_select`, `vda reads`).
    pub name: String,
    /// Points in time order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// The mean of the values (0 without points).
    pub fn mean(&self) -> f64 {
        if self.points.is_empty() {
            0.0
        } else {
            self.points.iter().map(|p| p.1).sum::<f64>() / self.points.len() as f64
        }
    }
}

/// A group of series drawn together (one chart).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricGroup {
    /// Short identifier (`mysql_statements`).
    pub id: &'static str,
    /// Chart title.
    pub title: String,
    /// Unit of the values (`/s`, `%`, `bytes`).
    pub unit: &'static str,
    /// The lines.
    pub series: Vec<Series>,
}

/// Counter samples: (Unix seconds, name → value).
type CounterSamples = Vec<(f64, BTreeMap<String, f64>)>;

/// Rates of the counters `keys` between consecutive samples, named as the keys.
fn rates(samples: &CounterSamples, keys: &[&str]) -> Vec<Series> {
    rates_as(samples, keys.iter().map(|k| (*k, k.to_string())))
}

/// Rates of counters between consecutive samples: (key, label) pairs.
fn rates_as<'a>(
    samples: &CounterSamples,
    names: impl IntoIterator<Item = (&'a str, String)>,
) -> Vec<Series> {
    names
        .into_iter()
        .filter_map(|(key, label)| {
            let mut points = Vec::new();
            for w in samples.windows(2) {
                let (t0, a) = (&w[0].0, &w[0].1);
                let (t1, b) = (&w[1].0, &w[1].1);
                let (Some(v0), Some(v1)) = (a.get(key), b.get(key)) else {
                    continue;
                };
                if t1 > t0 && v1 >= v0 {
                    points.push((*t1, (v1 - v0) / (t1 - t0)));
                }
            }
            (!points.is_empty()).then_some(Series {
                name: label,
                points,
            })
        })
        .collect()
}

fn name_value_samples(text: &str) -> CounterSamples {
    capture::samples(text)
        .iter()
        .map(|s| {
            let t = Table::parse(s.body);
            let map = t
                .rows
                .iter()
                .filter_map(|r| {
                    let name = r.first()?.as_deref()?;
                    let value = r.get(1)?.as_deref()?.parse::<f64>().ok()?;
                    Some((name.to_string(), value))
                })
                .collect();
            (s.unix_s(), map)
        })
        .collect()
}

/// The sampler's own statements, counted in `Questions` (a pitfall peers hit).
const SAMPLER_STATEMENTS: [&str; 4] = [
    "Com_show_status",
    "Com_show_engine_status",
    "Com_show_processlist",
    "Com_show_variables",
];

/// MySQL/MariaDB `SHOW GLOBAL STATUS` samples: `Questions` less the `SHOW` statements.
pub fn mysql_status_samples(text: &str) -> CounterSamples {
    let mut samples = name_value_samples(text);
    for (_, m) in &mut samples {
        if let Some(q) = m.get("Questions").copied() {
            let shows: f64 = SAMPLER_STATEMENTS.iter().filter_map(|k| m.get(*k)).sum();
            m.insert("Questions without SHOW".into(), (q - shows).max(0.0));
        }
    }
    samples
}

/// How one group is shown: its id, chart title and unit.
#[derive(Debug, Clone, Copy)]
struct GroupSpec {
    id: &'static str,
    title: &'static str,
    unit: &'static str,
}

impl GroupSpec {
    /// Adds the group of `series` to `out`, keeping only the series with points; a
    /// group left without any is not added.
    fn push(self, out: &mut Vec<MetricGroup>, series: Vec<Series>) {
        let series: Vec<Series> = series
            .into_iter()
            .filter(|s| !s.points.is_empty())
            .collect();
        if !series.is_empty() {
            out.push(MetricGroup {
                id: self.id,
                title: self.title.to_string(),
                unit: self.unit,
                series,
            });
        }
    }

    /// Adds the group of one series named `name`.
    fn push_one(self, out: &mut Vec<MetricGroup>, name: &str, points: Vec<(f64, f64)>) {
        self.push(
            out,
            vec![Series {
                name: name.into(),
                points,
            }],
        );
    }
}

/// A group of per-second counter rates, each series named as its counter.
struct RateGroup {
    spec: GroupSpec,
    counters: &'static [&'static str],
}

impl RateGroup {
    fn series(&self, samples: &CounterSamples) -> Vec<Series> {
        rates(samples, self.counters)
    }
}

const fn spec(id: &'static str, title: &'static str, unit: &'static str) -> GroupSpec {
    GroupSpec { id, title, unit }
}

const MYSQL_STATEMENTS: RateGroup = RateGroup {
    spec: spec("mysql_statements", "Statements", "/s"),
    counters: &[
        "Questions without SHOW",
        "Com_select",
        "Com_insert",
        "Com_update",
        "Com_delete",
        "Com_begin",
        "Com_commit",
        "Com_rollback",
    ],
};
const INNODB_ROWS: RateGroup = RateGroup {
    spec: spec("innodb_rows", "InnoDB rows", "/s"),
    counters: &[
        "Innodb_rows_read",
        "Innodb_rows_inserted",
        "Innodb_rows_updated",
        "Innodb_rows_deleted",
    ],
};
/// MariaDB 10.6 and later dropped `Innodb_rows_*`; the handler counters count the same
/// row operations for every engine.
const HANDLER_ROWS: RateGroup = RateGroup {
    spec: spec("handler_rows", "Row operations (Handler_*)", "/s"),
    counters: &[
        "Handler_read_key",
        "Handler_read_next",
        "Handler_read_rnd_next",
        "Handler_write",
        "Handler_update",
        "Handler_delete",
    ],
};
const INNODB_IO: RateGroup = RateGroup {
    spec: spec("innodb_io", "InnoDB data reads and writes", "/s"),
    counters: &[
        "Innodb_data_reads",
        "Innodb_data_writes",
        "Innodb_buffer_pool_reads",
    ],
};
const MYSQL_THREADS: GroupSpec = spec("mysql_threads", "Server threads", "threads");
const INNODB_ROW_LOCKS: GroupSpec = spec("innodb_row_locks", "InnoDB row lock waits", "/s");
const INNODB_ROW_LOCK_TIME: GroupSpec = spec(
    "innodb_row_lock_time",
    "InnoDB time spent waiting for row locks",
    "ms/s",
);
const INNODB_REDO: GroupSpec = spec("innodb_redo", "InnoDB redo log written", "MB/s");
const INNODB_DIRTY: GroupSpec = spec(
    "innodb_dirty_pages",
    "InnoDB buffer pool dirty pages",
    "pages",
);
const INNODB_HIT_RATIO: GroupSpec = spec(
    "innodb_hit_ratio",
    "InnoDB buffer pool hit ratio (reads served without a disk read)",
    "%",
);
const MYSQL_SESSION_STATES: GroupSpec = spec(
    "mysql_session_states",
    "Sessions by state (processlist)",
    "sessions",
);
const PG_WAIT_TYPES: GroupSpec = spec(
    "pg_wait_types",
    "PostgreSQL client backends by wait event type (pg_stat_activity)",
    "backends",
);
const INNODB_CHECKPOINT_AGE: GroupSpec =
    spec("innodb_checkpoint_age", "InnoDB checkpoint age", "bytes");
const INNODB_HISTORY: GroupSpec = spec(
    "innodb_history",
    "InnoDB history list length",
    "undo records",
);
const PG_TRANSACTIONS: GroupSpec = spec(
    "pg_transactions",
    "PostgreSQL transactions (the benchmark's database)",
    "/s",
);
const PG_BLOCKS: GroupSpec = spec(
    "pg_blocks",
    "PostgreSQL blocks (the benchmark's database)",
    "/s",
);
const PG_TUPLES: RateGroup = RateGroup {
    spec: spec(
        "pg_tuples",
        "PostgreSQL tuples (the benchmark's database)",
        "/s",
    ),
    counters: &[
        "tup_returned",
        "tup_fetched",
        "tup_inserted",
        "tup_updated",
        "tup_deleted",
    ],
};
const PG_CHECKPOINTS: GroupSpec = spec("pg_checkpoints", "PostgreSQL checkpoints", "/min");
const PG_CHECKPOINT_BUFFERS: GroupSpec = spec(
    "pg_checkpoint_buffers",
    "PostgreSQL buffers written by checkpoints",
    "/s",
);
const CPU: GroupSpec = spec("cpu", "Client host CPU", "%");
const CLIENT_CPU: GroupSpec = spec("client_cpu", "bmk processes' CPU (100 % = one core)", "%");
const CPU_SPLIT: GroupSpec = spec(
    "cpu_split",
    "Client host CPU: bmk and the other processes (100 % = all CPUs)",
    "%",
);
const DISK_IOPS: GroupSpec = spec("disk_iops", "Disk IOPS", "/s");
const DISK_MBS: GroupSpec = spec("disk_mbs", "Disk throughput", "MB/s");
const LOAD: GroupSpec = spec("load", "Load average (1 min)", "");

/// Adds the groups one capture of a level gives (the clock ticks per second are for
/// CPU times).
type Source = fn(&Level, u64, &mut Vec<MetricGroup>);

/// Every source of groups, in page order.
const SOURCES: [Source; 10] = [
    mysql_status_groups,
    innodb_status_groups,
    session_groups,
    pg_database_groups,
    pg_checkpoint_groups,
    host_cpu_group,
    client_cpu_group,
    cpu_split_group,
    disk_groups,
    load_average_group,
];

/// Every metric group of a level, in page order; groups without data are left out.
pub fn level_metrics(level: &Level, clock_ticks: u64) -> Vec<MetricGroup> {
    let mut out = Vec::new();
    for source in SOURCES {
        source(level, clock_ticks, &mut out);
    }
    out
}

/// MySQL/MariaDB `SHOW GLOBAL STATUS`: statements, row operations, InnoDB I/O.
fn mysql_status_groups(level: &Level, _: u64, out: &mut Vec<MetricGroup>) {
    let Some(text) = level.server_capture(capture::MYSQL_GLOBAL_STATUS) else {
        return;
    };
    let s = mysql_status_samples(&text);
    MYSQL_STATEMENTS.spec.push(out, MYSQL_STATEMENTS.series(&s));
    let rows = INNODB_ROWS.series(&s);
    if rows.is_empty() {
        HANDLER_ROWS.spec.push(out, HANDLER_ROWS.series(&s));
    } else {
        INNODB_ROWS.spec.push(out, rows);
    }
    INNODB_IO.spec.push(out, INNODB_IO.series(&s));
    MYSQL_THREADS.push(
        out,
        gauges(
            &s,
            &[
                ("Threads_running", "Threads_running"),
                ("Threads_connected", "Threads_connected"),
            ],
        ),
    );
    INNODB_ROW_LOCKS.push(
        out,
        rates_as(
            &s,
            [("Innodb_row_lock_waits", "Innodb_row_lock_waits".to_string())],
        ),
    );
    // Innodb_row_lock_time counts milliseconds: its rate is ms waited per second,
    // summed over the sessions (4 sessions blocked all second give 4000).
    INNODB_ROW_LOCK_TIME.push(
        out,
        rates_as(
            &s,
            [("Innodb_row_lock_time", "Innodb_row_lock_time".to_string())],
        ),
    );
    let mut redo = rates_as(
        &s,
        [("Innodb_os_log_written", "Innodb_os_log_written".to_string())],
    );
    for p in redo.iter_mut().flat_map(|l| l.points.iter_mut()) {
        p.1 /= 1e6;
    }
    INNODB_REDO.push(out, redo);
    INNODB_DIRTY.push(
        out,
        gauges(
            &s,
            &[(
                "Innodb_buffer_pool_pages_dirty",
                "Innodb_buffer_pool_pages_dirty",
            )],
        ),
    );
    INNODB_HIT_RATIO.push_one(out, "hit ratio", buffer_pool_hit_ratio(&s));
}

/// The values of gauges (`Threads_running`) at each sample: (key, label) pairs.
fn gauges(samples: &CounterSamples, names: &[(&str, &str)]) -> Vec<Series> {
    names
        .iter()
        .map(|(key, label)| Series {
            name: label.to_string(),
            points: samples
                .iter()
                .filter_map(|(t, m)| Some((*t, *m.get(*key)?)))
                .collect(),
        })
        .collect()
}

/// The share of buffer pool read requests between two samples that found their page
/// in memory: 100 × (1 − Δ`Innodb_buffer_pool_reads` / Δ`Innodb_buffer_pool_read_requests`).
/// No point for a span without read requests (nothing was read: no ratio).
pub fn buffer_pool_hit_ratio(samples: &CounterSamples) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    for w in samples.windows(2) {
        let get = |i: usize, k: &str| w[i].1.get(k).copied();
        let (Some(r0), Some(r1), Some(q0), Some(q1)) = (
            get(0, "Innodb_buffer_pool_reads"),
            get(1, "Innodb_buffer_pool_reads"),
            get(0, "Innodb_buffer_pool_read_requests"),
            get(1, "Innodb_buffer_pool_read_requests"),
        ) else {
            continue;
        };
        let (reads, requests) = (r1 - r0, q1 - q0);
        if requests > 0.0 && reads >= 0.0 {
            points.push((w[1].0, 100.0 * (1.0 - (reads / requests).min(1.0))));
        }
    }
    points
}

/// `SHOW ENGINE INNODB STATUS`: checkpoint age and history list length.
fn innodb_status_groups(level: &Level, _: u64, out: &mut Vec<MetricGroup>) {
    let Some(text) = level.server_capture(capture::MYSQL_INNODB_STATUS) else {
        return;
    };
    let mut age = Vec::new();
    let mut hll = Vec::new();
    for s in &capture::samples(&text) {
        let g = InnodbGauges::parse(s.body);
        if let Some(a) = g.checkpoint_age() {
            age.push((s.unix_s(), a as f64));
        }
        if let Some(h) = g.history_list_length {
            hll.push((s.unix_s(), h as f64));
        }
    }
    INNODB_CHECKPOINT_AGE.push_one(out, "checkpoint age", age);
    INNODB_HISTORY.push_one(out, "history list length", hll);
}

/// The sampled session lists: MySQL processlist states, PostgreSQL wait event types.
fn session_groups(level: &Level, _: u64, out: &mut Vec<MetricGroup>) {
    let as_series = |lines: Vec<sessions::StateLine>| -> Vec<Series> {
        lines
            .into_iter()
            .map(|(name, points)| Series { name, points })
            .collect()
    };
    if let Some(text) = level.server_capture(capture::MYSQL_PROCESSLIST) {
        MYSQL_SESSION_STATES.push(out, as_series(sessions::mysql_states(&text)));
    }
    if let Some(text) = level.server_capture(capture::PG_STAT_ACTIVITY) {
        PG_WAIT_TYPES.push(out, as_series(sessions::pg_wait_types(&text)));
    }
}

/// `pg_stat_database`: the benchmark's database, with the rest of the server drawn
/// beside it as context.
fn pg_database_groups(level: &Level, _: u64, out: &mut Vec<MetricGroup>) {
    let Some(text) = level.server_capture(capture::PG_STAT_DATABASE) else {
        return;
    };
    let (own, others) = pg_database_split(&text);
    let mut transactions = rates(&own, &["xact_commit", "xact_rollback"]);
    transactions.extend(rates_as(
        &others,
        [("xact_commit", "other databases' xact_commit".to_string())],
    ));
    PG_TRANSACTIONS.push(out, transactions);
    let mut blocks = rates(&own, &["blks_read", "blks_hit"]);
    blocks.extend(rates_as(
        &others,
        [("blks_read", "other databases' blks_read".to_string())],
    ));
    PG_BLOCKS.push(out, blocks);
    PG_TUPLES.spec.push(out, PG_TUPLES.series(&own));
}

/// `pg_stat_checkpointer` (PostgreSQL 17 and later), else `pg_stat_bgwriter`:
/// checkpoints and the buffers they wrote.
fn pg_checkpoint_groups(level: &Level, _: u64, out: &mut Vec<MetricGroup>) {
    let checkpointer = level
        .server_capture(capture::PG_STAT_CHECKPOINTER)
        .map(|t| (t, ["num_timed", "num_requested", "buffers_written"]));
    let bgwriter = level.server_capture(capture::PG_STAT_BGWRITER).map(|t| {
        (
            t,
            ["checkpoints_timed", "checkpoints_req", "buffers_checkpoint"],
        )
    });
    let Some((text, [timed, req, buffers])) = checkpointer.or(bgwriter) else {
        return;
    };
    let s = first_row_samples(&text);
    let mut series = rates_as(
        &s,
        [
            (timed, "timed checkpoints".to_string()),
            (req, "requested checkpoints".to_string()),
        ],
    );
    // Checkpoints are rare: per minute reads better than per second.
    for line in &mut series {
        line.name.push_str(" per min");
        for p in &mut line.points {
            p.1 *= 60.0;
        }
    }
    PG_CHECKPOINTS.push(out, series);
    PG_CHECKPOINT_BUFFERS.push(
        out,
        rates_as(&s, [(buffers, "buffers written".to_string())]),
    );
}

/// `/proc/stat`: the client host's CPU.
fn host_cpu_group(level: &Level, clock_ticks: u64, out: &mut Vec<MetricGroup>) {
    if let Some(text) = level.os_capture("stat.txt") {
        CPU.push(out, cpu_percent(&text, clock_ticks));
    }
}

/// The bmk processes' `/proc/<pid>/stat`: their CPU.
fn client_cpu_group(level: &Level, clock_ticks: u64, out: &mut Vec<MetricGroup>) {
    if let Some(text) = level.os_capture(capture::OS_CLIENT_STAT) {
        CLIENT_CPU.push_one(out, "client CPU", client_cpu_percent(&text, clock_ticks));
    }
}

/// The host's busy CPU split into bmk's share and everything else's (the database
/// server when it runs on the client host, other benchmarks, builds): a client whose
/// host is busy with other work measures that work as much as the database.
fn cpu_split_group(level: &Level, clock_ticks: u64, out: &mut Vec<MetricGroup>) {
    let (Some(host), Some(client)) = (
        level.os_capture("stat.txt"),
        level.os_capture(capture::OS_CLIENT_STAT),
    ) else {
        return;
    };
    let Some(cpus) = host_cpus(&host, clock_ticks) else {
        return;
    };
    let busy = cpu_percent(&host, clock_ticks)
        .into_iter()
        .find(|s| s.name == "busy")
        .map(|s| s.points)
        .unwrap_or_default();
    let bmk = client_cpu_percent(&client, clock_ticks);
    let (bmk_share, other) = split_busy(&busy, &bmk, cpus);
    CPU_SPLIT.push(
        out,
        vec![
            Series {
                name: "bmk".into(),
                points: bmk_share,
            },
            Series {
                name: "other processes".into(),
                points: other,
            },
        ],
    );
}

/// The number of CPUs in the first sample of a `/proc/stat` capture.
fn host_cpus(text: &str, clock_ticks: u64) -> Option<usize> {
    let si = system_info(clock_ticks);
    let first = capture::samples(text).into_iter().next()?;
    let stats = procfs_core::KernelStats::from_read(first.body.as_bytes(), &si).ok()?;
    (!stats.cpu_time.is_empty()).then_some(stats.cpu_time.len())
}

/// (Unix seconds, value) points of one line.
type Points = Vec<(f64, f64)>;

/// bmk's CPU (% of one core) as a share of `cpus` CPUs, and the host's busy share (% of
/// all CPUs) less it, at the host samples that have a bmk sample within half a second.
fn split_busy(busy: &[(f64, f64)], bmk: &[(f64, f64)], cpus: usize) -> (Points, Points) {
    let mut own = Vec::new();
    let mut other = Vec::new();
    for &(t, b) in busy {
        let Some(&(_, core_pct)) = bmk
            .iter()
            .filter(|p| (p.0 - t).abs() <= 0.5)
            .min_by(|x, y| (x.0 - t).abs().total_cmp(&(y.0 - t).abs()))
        else {
            continue;
        };
        let share = core_pct / cpus as f64;
        own.push((t, share));
        other.push((t, (b - share).max(0.0)));
    }
    (own, other)
}

/// `/proc/diskstats`: IOPS and throughput per disk.
fn disk_groups(level: &Level, _: u64, out: &mut Vec<MetricGroup>) {
    if let Some(text) = level.os_capture("diskstats.txt") {
        let (iops, mbs) = disk_rates(&text);
        DISK_IOPS.push(out, iops);
        DISK_MBS.push(out, mbs);
    }
}

/// `/proc/loadavg`: the 1-minute load average.
fn load_average_group(level: &Level, _: u64, out: &mut Vec<MetricGroup>) {
    let Some(text) = level.os_capture("loadavg.txt") else {
        return;
    };
    let points = capture::samples(&text)
        .iter()
        .filter_map(|s| {
            let l = procfs_core::LoadAverage::from_read(s.body.as_bytes()).ok()?;
            Some((s.unix_s(), l.one as f64))
        })
        .collect();
    LOAD.push_one(out, "load 1 min", points);
}

/// `pg_stat_database` samples summed over every database row.
pub fn pg_database_totals(text: &str) -> CounterSamples {
    capture::samples(text)
        .iter()
        .map(|s| {
            let t = Table::parse(s.body);
            let mut m: BTreeMap<String, f64> = BTreeMap::new();
            for row in &t.rows {
                for (i, col) in t.columns.iter().enumerate() {
                    if let Some(v) = row.get(i).and_then(|v| v.as_deref()) {
                        if let Ok(x) = v.parse::<f64>() {
                            *m.entry(col.clone()).or_default() += x;
                        }
                    }
                }
            }
            (s.unix_s(), m)
        })
        .collect()
}

/// `pg_stat_database` samples split into the benchmark's database (the row the sampler
/// marked `bmk_target`) and the sum of every other row. A capture without the mark
/// (written by an older bmk) gives the sum of all rows as the first and nothing as
/// the second.
pub fn pg_database_split(text: &str) -> (CounterSamples, CounterSamples) {
    let mut own = Vec::new();
    let mut others = Vec::new();
    for s in capture::samples(text) {
        let t = Table::parse(s.body);
        let mark = t.column("bmk_target");
        let mut mine: BTreeMap<String, f64> = BTreeMap::new();
        let mut rest: BTreeMap<String, f64> = BTreeMap::new();
        for row in &t.rows {
            let is_target = match mark {
                Some(i) => matches!(
                    row.get(i).and_then(|v| v.as_deref()),
                    Some("t" | "true" | "1")
                ),
                None => true,
            };
            let into = if is_target { &mut mine } else { &mut rest };
            for (i, col) in t.columns.iter().enumerate() {
                if Some(i) == mark {
                    continue;
                }
                if let Some(x) = row
                    .get(i)
                    .and_then(|v| v.as_deref())
                    .and_then(|v| v.parse::<f64>().ok())
                {
                    *into.entry(col.clone()).or_default() += x;
                }
            }
        }
        own.push((s.unix_s(), mine));
        if mark.is_some() {
            others.push((s.unix_s(), rest));
        }
    }
    (own, others)
}

/// Where a level's per-table row counters came from, and each table's rows read and
/// changed between the level's first and last sample.
#[derive(Debug, Clone, PartialEq)]
pub struct TableActivity {
    /// The capture they came from (`pg_stat_user_tables`, ...).
    pub source: &'static str,
    /// (table name, rows read + written) in name order.
    pub tables: Vec<(String, f64)>,
}

/// Per-table activity of the benchmark's tables over a level: PostgreSQL
/// `pg_stat_user_tables` (tuples read by sequential and index scans, inserted,
/// updated, deleted), MySQL `performance_schema` table I/O (rows read and written),
/// or MariaDB `TABLE_STATISTICS` (rows read and changed). `None` without such a
/// capture or with fewer than two samples.
pub fn table_activity(level: &Level) -> Option<TableActivity> {
    let sources: [(&str, &'static str, &[&str], &[&str]); 3] = [
        (
            capture::PG_STAT_USER_TABLES,
            "pg_stat_user_tables",
            &["relname"],
            &[
                "seq_tup_read",
                "idx_tup_fetch",
                "n_tup_ins",
                "n_tup_upd",
                "n_tup_del",
            ],
        ),
        (
            capture::MYSQL_TABLE_IO,
            "performance_schema table I/O",
            &["OBJECT_NAME"],
            &["COUNT_READ", "COUNT_WRITE"],
        ),
        (
            capture::MYSQL_TABLE_STATISTICS,
            "TABLE_STATISTICS",
            &["TABLE_NAME"],
            &["ROWS_READ", "ROWS_CHANGED"],
        ),
    ];
    for (file, source, name_cols, value_cols) in sources {
        let Some(text) = level.server_capture(file) else {
            continue;
        };
        let samples: Vec<BTreeMap<String, f64>> = capture::samples(&text)
            .iter()
            .map(|s| {
                let t = Table::parse(s.body);
                let (Some(name), values) = (
                    name_cols.iter().find_map(|c| t.column(c)),
                    value_cols
                        .iter()
                        .filter_map(|c| t.column(c))
                        .collect::<Vec<_>>(),
                ) else {
                    return BTreeMap::new();
                };
                t.rows
                    .iter()
                    .filter_map(|r| {
                        let n = r.get(name)?.as_deref()?.to_string();
                        let v: f64 = values
                            .iter()
                            .filter_map(|&i| r.get(i)?.as_deref()?.parse::<f64>().ok())
                            .sum();
                        Some((n, v))
                    })
                    .collect()
            })
            .collect();
        if samples.len() < 2 {
            continue;
        }
        let (first, last) = (&samples[0], &samples[samples.len() - 1]);
        let tables = last
            .iter()
            // A table that appeared during the level did all its work in it; a counter
            // that went back (a reset) gives no figure.
            .filter_map(|(n, v)| {
                let d = v - first.get(n).copied().unwrap_or(0.0);
                (d >= 0.0).then(|| (n.clone(), d))
            })
            .collect();
        return Some(TableActivity { source, tables });
    }
    None
}

/// The table group of a table: the number its name ends with (`sbtest12` → 12, TPC-C's
/// `warehouse3`, `district3`, ... → 3), or `None` for a table without one.
pub fn table_group(name: &str) -> Option<u32> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits == name.len() {
        return None;
    }
    name[name.len() - digits..].parse().ok()
}

fn first_row_samples(text: &str) -> CounterSamples {
    capture::samples(text)
        .iter()
        .map(|s| {
            let t = Table::parse(s.body);
            let m = t
                .rows
                .first()
                .map(|row| {
                    t.columns
                        .iter()
                        .zip(row)
                        .filter_map(|(c, v)| Some((c.clone(), v.as_deref()?.parse::<f64>().ok()?)))
                        .collect()
                })
                .unwrap_or_default();
            (s.unix_s(), m)
        })
        .collect()
}

fn system_info(clock_ticks: u64) -> ExplicitSystemInfo {
    ExplicitSystemInfo {
        boot_time_secs: 0,
        ticks_per_second: clock_ticks.max(1),
        page_size: 4096,
        is_little_endian: cfg!(target_endian = "little"),
    }
}

/// Host CPU use between `/proc/stat` samples: user, system, iowait and busy (all but
/// idle and iowait), as % of all CPUs.
pub fn cpu_percent(text: &str, clock_ticks: u64) -> Vec<Series> {
    let si = system_info(clock_ticks);
    let stats: Vec<(f64, procfs_core::KernelStats)> = capture::samples(text)
        .iter()
        .filter_map(|s| {
            Some((
                s.unix_s(),
                procfs_core::KernelStats::from_read(s.body.as_bytes(), &si).ok()?,
            ))
        })
        .collect();
    let mut user = Vec::new();
    let mut system = Vec::new();
    let mut iowait = Vec::new();
    let mut busy = Vec::new();
    for w in stats.windows(2) {
        let (a, b) = (&w[0].1.total, &w[1].1.total);
        let parts = |c: &procfs_core::CpuTime| {
            let other = c.irq.unwrap_or(0) + c.softirq.unwrap_or(0) + c.steal.unwrap_or(0);
            (
                c.user + c.nice,
                c.system,
                c.iowait.unwrap_or(0),
                c.idle,
                other,
            )
        };
        let (u0, s0, w0, i0, o0) = parts(a);
        let (u1, s1, w1, i1, o1) = parts(b);
        let total0 = u0 + s0 + w0 + i0 + o0;
        let total1 = u1 + s1 + w1 + i1 + o1;
        if total1 <= total0 {
            continue;
        }
        let d = (total1 - total0) as f64;
        let pct = |x1: u64, x0: u64| x1.saturating_sub(x0) as f64 * 100.0 / d;
        let t = w[1].0;
        user.push((t, pct(u1, u0)));
        system.push((t, pct(s1, s0)));
        iowait.push((t, pct(w1, w0)));
        busy.push((t, 100.0 - pct(i1, i0) - pct(w1, w0)));
    }
    vec![
        Series {
            name: "busy".into(),
            points: busy,
        },
        Series {
            name: "user".into(),
            points: user,
        },
        Series {
            name: "system".into(),
            points: system,
        },
        Series {
            name: "iowait".into(),
            points: iowait,
        },
    ]
}

/// CPU of the bmk processes between `client_stat.txt` samples, in % of one core
/// (user + system time of every listed process, matched by pid).
pub fn client_cpu_percent(text: &str, clock_ticks: u64) -> Vec<(f64, f64)> {
    let ticks = clock_ticks.max(1) as f64;
    let samples: Vec<(f64, BTreeMap<i32, u64>)> = capture::samples(text)
        .iter()
        .map(|s| {
            let m = s
                .body
                .lines()
                .filter_map(|l| procfs_core::process::Stat::from_read(l.as_bytes()).ok())
                .map(|st| (st.pid, st.utime + st.stime))
                .collect();
            (s.unix_s(), m)
        })
        .collect();
    samples
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| {
            let used: u64 = w[1]
                .1
                .iter()
                .map(|(pid, t1)| t1.saturating_sub(*w[0].1.get(pid).unwrap_or(t1)))
                .sum();
            (w[1].0, used as f64 / ticks / (w[1].0 - w[0].0) * 100.0)
        })
        .collect()
}

/// Whole disks (not partitions, loop or ram devices) with any I/O in the samples.
fn is_reported_disk(name: &str) -> bool {
    let skip = ["loop", "ram", "zram", "dm-", "sr", "md"];
    if skip.iter().any(|p| name.starts_with(p)) {
        return false;
    }
    // Partitions: sda1, vda2, nvme0n1p1, mmcblk0p1.
    let is_partition = if name.starts_with("nvme") || name.starts_with("mmcblk") {
        name.rsplit_once('p')
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    } else {
        name.ends_with(|c: char| c.is_ascii_digit())
    };
    !is_partition
}

/// Per-device IOPS (reads and writes) and MB/s (read and written, 10^6 bytes; sectors
/// are 512 bytes in `/proc/diskstats` whatever the device's own sector size).
pub fn disk_rates(text: &str) -> (Vec<Series>, Vec<Series>) {
    let samples: CounterSamples = capture::samples(text)
        .iter()
        .map(|s| {
            let mut m = BTreeMap::new();
            if let Ok(d) = procfs_core::DiskStats::from_read(s.body.as_bytes()) {
                for disk in d.0.iter().filter(|d| is_reported_disk(&d.name)) {
                    m.insert(format!("{} reads", disk.name), disk.reads as f64);
                    m.insert(format!("{} writes", disk.name), disk.writes as f64);
                    m.insert(
                        format!("{} read MB", disk.name),
                        disk.sectors_read as f64 * 512e-6,
                    );
                    m.insert(
                        format!("{} written MB", disk.name),
                        disk.sectors_written as f64 * 512e-6,
                    );
                }
            }
            (s.unix_s(), m)
        })
        .collect();
    let names: Vec<String> = samples
        .first()
        .map(|(_, m)| m.keys().cloned().collect())
        .unwrap_or_default();
    let pick = |suffixes: &[&str]| {
        let keys = names
            .iter()
            .filter(|n| suffixes.iter().any(|s| n.ends_with(s)))
            .map(|n| (n.as_str(), n.clone()));
        rates_as(&samples, keys)
            .into_iter()
            // A device that did nothing only clutters the chart.
            .filter(|s| s.points.iter().any(|p| p.1 > 0.0))
            .collect::<Vec<_>>()
    };
    (
        pick(&[" reads", " writes"]),
        pick(&[" read MB", " written MB"]),
    )
}

/// Mean per-second disk reads over a level: `Innodb_data_reads`, else PostgreSQL
/// `blks_read`, else the host's disk reads; `None` without any of them.
pub fn mean_disk_reads(level: &Level) -> Option<(String, f64)> {
    if let Some(text) = level.server_capture(capture::MYSQL_GLOBAL_STATUS) {
        let s = mysql_status_samples(&text);
        if let Some(r) = rates(&s, &["Innodb_data_reads"]).first() {
            return Some(("Innodb_data_reads".into(), r.mean()));
        }
    }
    if let Some(text) = level.server_capture(capture::PG_STAT_DATABASE) {
        let (s, _) = pg_database_split(&text);
        if let Some(r) = rates(&s, &["blks_read"]).first() {
            return Some(("blks_read".into(), r.mean()));
        }
    }
    let text = level.os_capture("diskstats.txt")?;
    let (iops, _) = disk_rates(&text);
    let reads: f64 = iops
        .iter()
        .filter(|s| s.name.ends_with(" reads"))
        .map(Series::mean)
        .sum();
    Some(("disk reads".into(), reads))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disks_exclude_partitions_and_virtual_devices() {
        for d in ["sda", "vda", "nvme0n1", "mmcblk0", "xvdb"] {
            assert!(is_reported_disk(d), "{d}");
        }
        for d in [
            "sda1",
            "vda2",
            "nvme0n1p1",
            "mmcblk0p2",
            "loop0",
            "zram0",
            "dm-0",
            "ram1",
        ] {
            assert!(!is_reported_disk(d), "{d}");
        }
    }

    #[test]
    fn table_groups_are_the_trailing_numbers() {
        assert_eq!(table_group("sbtest12"), Some(12));
        assert_eq!(table_group("warehouse3"), Some(3));
        assert_eq!(table_group("item"), None);
        assert_eq!(table_group("42"), None);
    }

    #[test]
    fn the_benchmark_database_is_told_from_the_rest_of_the_server() {
        let text = "TS 100.000000000 1970-01-01 00:01:40\n\
                    datid\tdatname\txact_commit\tbmk_target\n\
                    1\tpostgres\t50\tf\n5\tsbkit\t1000\tt\n6\tother\t7\tf\n\
                    TS 101.000000000 1970-01-01 00:01:41\n\
                    datid\tdatname\txact_commit\tbmk_target\n\
                    1\tpostgres\t60\tf\n5\tsbkit\t1500\tt\n6\tother\t7\tf\n";
        let (own, others) = pg_database_split(text);
        assert_eq!(own[1].1["xact_commit"], 1500.0);
        assert_eq!(others[1].1["xact_commit"], 67.0);
        assert_eq!(
            rates(&own, &["xact_commit"])[0].points,
            vec![(101.0, 500.0)]
        );
        // An older capture without the mark: every row is the benchmark's.
        let old = "TS 100.000000000 1970-01-01 00:01:40\ndatname\txact_commit\na\t1\nb\t2\n";
        let (own, others) = pg_database_split(old);
        assert_eq!(own[0].1["xact_commit"], 3.0);
        assert!(others.is_empty());
    }

    #[test]
    fn the_hit_ratio_is_the_share_of_requests_without_a_disk_read() {
        let sample = |t: f64, reads: f64, requests: f64| {
            let m: BTreeMap<String, f64> = [
                ("Innodb_buffer_pool_reads".to_string(), reads),
                ("Innodb_buffer_pool_read_requests".to_string(), requests),
            ]
            .into_iter()
            .collect();
            (t, m)
        };
        let s = vec![
            sample(1.0, 100.0, 1000.0),
            sample(2.0, 150.0, 2000.0),
            // No request in this second: no point.
            sample(3.0, 150.0, 2000.0),
            sample(4.0, 150.0, 6000.0),
        ];
        assert_eq!(buffer_pool_hit_ratio(&s), vec![(2.0, 95.0), (4.0, 100.0)]);
        let g = gauges(&s, &[("Innodb_buffer_pool_reads", "reads")]);
        assert_eq!(g[0].points[1], (2.0, 150.0));
    }

    #[test]
    fn bmk_s_cpu_is_split_from_the_host_s_other_work() {
        // Two CPUs, 60 % busy; bmk used 50 % of one core (25 % of both).
        let busy = [(10.0, 60.0), (11.0, 30.0), (12.0, 90.0)];
        let bmk = [(10.1, 50.0), (11.0, 80.0)];
        let (own, other) = split_busy(&busy, &bmk, 2);
        assert_eq!(own, vec![(10.0, 25.0), (11.0, 40.0)]);
        assert_eq!(other, vec![(10.0, 35.0), (11.0, 0.0)]);
    }

    #[test]
    fn counters_going_back_give_no_point() {
        let text = "TS 100.000000000 1970-01-01 00:01:40\nVariable_name\tValue\nQuestions\t100\n\
                    TS 102.000000000 1970-01-01 00:01:42\nVariable_name\tValue\nQuestions\t300\n\
                    TS 104.000000000 1970-01-01 00:01:44\nVariable_name\tValue\nQuestions\t10\n";
        let s = name_value_samples(text);
        let r = rates(&s, &["Questions"]);
        assert_eq!(r[0].points, vec![(102.0, 100.0)]);
    }
}
