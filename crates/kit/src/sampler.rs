//! Live capture: a thread of its own that, while a level runs, samples the server's
//! status through its own connection and the client host's `/proc` files at
//! wall-clock ticks falling on multiples of the capture interval (so samples line up
//! with other tools' and with other client hosts'), and appends them raw to the level's
//! `server/` and `os/` files (`bmk_results::capture` fixes names and layout).
//!
//! What it sends never goes through the benchmark's connections, so it is never
//! counted in the level's statistics; its failures (no connection, a statement the
//! server refuses) are written to `server/events.txt` and never stop the benchmark.
//! A server restart is noticed when `Uptime` (MySQL) goes back or the postmaster start
//! time (PostgreSQL) changes. The sampler does not interpret anything else.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bmk_results::append_file::append_once;
use bmk_results::capture::{self, sample_header, Table};
use bmk_results::results_dir::{OS_DIR, SERVER_DIR};
use bmk_sql::{Connection, DriverConfig, DriverKind};

use crate::server;

/// The default `--capture-interval`, seconds: the report interval's, so that every
/// interval has a server sample ending with it (a sample costs MariaDB about 2 ms of
/// CPU, 0.2 % of a core at one a second; BENCHMARKS.md has the measurement).
pub const DEFAULT_INTERVAL_S: f64 = 1.0;

/// Where a MySQL/MariaDB server keeps per-table row counters, if anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableCounters {
    /// `performance_schema.table_io_waits_summary_by_table` (`performance_schema=ON`).
    PerformanceSchema,
    /// `information_schema.TABLE_STATISTICS` (MariaDB and Percona with `userstat=ON`).
    UserStat,
}

/// The per-table counters of the benchmark's schema (the sampler's connection uses
/// the benchmark's database), for the unfair table groups check.
const MYSQL_TABLE_IO_SQL: &str = "SELECT OBJECT_NAME, COUNT_READ, COUNT_WRITE, COUNT_FETCH, \
     COUNT_INSERT, COUNT_UPDATE, COUNT_DELETE \
     FROM performance_schema.table_io_waits_summary_by_table \
     WHERE OBJECT_SCHEMA = DATABASE() ORDER BY OBJECT_NAME";
const MYSQL_TABLE_STATISTICS_SQL: &str = "SELECT TABLE_NAME, ROWS_READ, ROWS_CHANGED \
     FROM information_schema.TABLE_STATISTICS \
     WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME";
/// Only the row counters: with hundreds of tables sampled every second, every column
/// of the view would make the file ten times larger for nothing the analysis reads.
const PG_USER_TABLES_SQL: &str = "SELECT schemaname, relname, seq_tup_read, idx_tup_fetch, \
     n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables ORDER BY schemaname, relname";
/// Every database's row, the benchmark's marked: the charts show it, with the rest of
/// the server as context.
const PG_STAT_DATABASE_SQL: &str =
    "SELECT *, datname = current_database() AS bmk_target FROM pg_stat_database";

/// What to sample and where.
#[derive(Debug, Clone)]
pub struct SamplerConfig {
    /// The server, when the run uses one (SQLite has no status to sample).
    pub driver: Option<DriverConfig>,
    /// The level's folder; `server/` and `os/` are made in it.
    pub level_dir: PathBuf,
    /// Seconds between samples.
    pub interval: Duration,
    /// The bmk processes running the level (their `/proc/<pid>/stat`).
    pub client_pids: Vec<u32>,
}

/// The next instant after `now` that is a whole multiple of `interval` since the epoch.
pub fn next_tick(now: SystemTime, interval: Duration) -> SystemTime {
    let step = interval.as_nanos().max(1);
    let t = now
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let next = (t / step + 1) * step;
    UNIX_EPOCH + Duration::from_nanos(next as u64)
}

type StopFlag = Arc<(Mutex<bool>, Condvar)>;

/// A running sampler; [`Sampler::stop`] ends it.
#[derive(Debug)]
pub struct Sampler {
    stop: StopFlag,
    handle: Option<JoinHandle<()>>,
    failed: Failure,
}

impl Sampler {
    /// Starts sampling on a new thread.
    pub fn start(config: SamplerConfig) -> Sampler {
        let stop: StopFlag = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = stop.clone();
        let failed: Failure = Arc::default();
        let failure = failed.clone();
        let handle = std::thread::Builder::new()
            .name("bmk-sampler".into())
            .spawn(move || Capture::new(config, failure).run(&flag))
            .ok();
        Sampler {
            stop,
            handle,
            failed,
        }
    }

    /// Stops and waits for the thread (a sample under way is finished first); returns
    /// why a capture file could not be written, if one could not (already said on
    /// stderr when it happened).
    pub fn stop(mut self) -> Option<String> {
        self.signal_stop();
        let failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        failed.clone()
    }

    fn signal_stop(&mut self) {
        let (lock, cv) = &*self.stop;
        if let Ok(mut s) = lock.lock() {
            *s = true;
        }
        cv.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.signal_stop();
    }
}

/// The sampler thread's state.
struct Capture {
    config: SamplerConfig,
    server_dir: PathBuf,
    os_dir: PathBuf,
    conn: Option<Box<dyn Connection>>,
    /// Whether the connection was lost (to note when it comes back).
    lost: bool,
    /// MySQL `Uptime` or PostgreSQL postmaster start time at the last sample.
    last_uptime: Option<f64>,
    last_start: Option<String>,
    /// Whether the settings were written (once, at the start).
    settings_done: bool,
    /// PostgreSQL 17+ has `pg_stat_checkpointer`.
    has_checkpointer: bool,
    /// The first write failure.
    failed: Failure,
    /// Where a MySQL/MariaDB server keeps per-table counters (known after the settings).
    table_counters: Option<TableCounters>,
}

/// The first capture file that could not be written, and why; shared with
/// [`Sampler::stop`], which hands it to the caller to record.
type Failure = Arc<Mutex<Option<String>>>;

/// Appends one sample to `path`: one write of the whole sample, cut back when it fails
/// part-way (`bmk_results::append_file`), so the file holds whole samples only. The first failure
/// is said on stderr at once and kept in `failed`; sampling goes on (a later write may
/// succeed), but the caller records the level as failed.
fn append(path: &Path, at: SystemTime, body: &str, failed: &Failure) {
    let mut text = sample_header(at);
    text.push_str(body);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if let Err(e) = append_once(path, text.as_bytes()) {
        let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            let reason = format!("cannot write capture file {}: {e}", path.display());
            eprintln!("WARNING: {reason}");
            *f = Some(reason);
        }
    }
}

impl Capture {
    fn new(config: SamplerConfig, failed: Failure) -> Capture {
        let server_dir = config.level_dir.join(SERVER_DIR);
        let os_dir = config.level_dir.join(OS_DIR);
        let _ = std::fs::create_dir_all(&os_dir);
        if config
            .driver
            .as_ref()
            .is_some_and(|d| d.kind != DriverKind::Sqlite)
        {
            let _ = std::fs::create_dir_all(&server_dir);
        }
        Capture {
            config,
            server_dir,
            os_dir,
            conn: None,
            lost: false,
            last_uptime: None,
            last_start: None,
            settings_done: false,
            has_checkpointer: false,
            failed,
            table_counters: None,
        }
    }

    fn run(mut self, stop: &StopFlag) {
        let (lock, cv) = &**stop;
        // The server's settings as the level starts.
        self.server_sample(SystemTime::now(), true);
        loop {
            let tick = next_tick(SystemTime::now(), self.config.interval);
            let Ok(mut stopped) = lock.lock() else { return };
            loop {
                if *stopped {
                    return;
                }
                let now = SystemTime::now();
                let Ok(left) = tick.duration_since(now) else {
                    break;
                };
                stopped = match cv.wait_timeout(stopped, left) {
                    Ok((g, _)) => g,
                    Err(_) => return,
                };
            }
            drop(stopped);
            let at = SystemTime::now();
            self.os_sample(at);
            self.server_sample(at, false);
        }
    }

    fn os_sample(&self, at: SystemTime) {
        for (file, source) in capture::OS_FILES {
            if let Ok(text) = std::fs::read_to_string(source) {
                append(&self.os_dir.join(file), at, &text, &self.failed);
            }
        }
        let mut lines = String::new();
        for pid in &self.config.client_pids {
            if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                lines.push_str(text.trim_end());
                lines.push('\n');
            }
        }
        if !lines.is_empty() {
            append(
                &self.os_dir.join(capture::OS_CLIENT_STAT),
                at,
                &lines,
                &self.failed,
            );
        }
    }

    fn event(&self, at: SystemTime, what: &str) {
        append(
            &self.server_dir.join(capture::SERVER_EVENTS),
            at,
            what,
            &self.failed,
        );
    }

    fn server_sample(&mut self, at: SystemTime, first: bool) {
        let Some(cfg) = self.config.driver.clone() else {
            return;
        };
        if cfg.kind == DriverKind::Sqlite {
            return;
        }
        if self.conn.is_none() {
            match server::connect(&cfg) {
                Ok(c) => {
                    self.conn = Some(c);
                    if self.lost {
                        self.event(at, "sampler connection restored");
                        self.lost = false;
                    }
                }
                Err(e) => {
                    if !self.lost {
                        self.event(at, &format!("sampler cannot connect: {e}"));
                        self.lost = true;
                    }
                    return;
                }
            }
        }
        let result = if first || !self.settings_done {
            self.settings(&cfg, at)
        } else {
            Ok(())
        };
        let result = result.and_then(|_| if first { Ok(()) } else { self.status(&cfg, at) });
        if let Err(e) = result {
            self.event(at, &format!("sampler query failed: {e}"));
            if let Some(mut c) = self.conn.take() {
                c.disconnect();
            }
            self.lost = true;
        }
    }

    fn conn(&mut self) -> Result<&mut (dyn Connection + 'static), crate::KitError> {
        self.conn
            .as_deref_mut()
            .ok_or_else(|| crate::KitError::Server("no connection".into()))
    }

    fn settings(&mut self, cfg: &DriverConfig, at: SystemTime) -> Result<(), crate::KitError> {
        let (file, sql) = match cfg.kind {
            DriverKind::Mysql => (capture::MYSQL_VARIABLES, "SHOW GLOBAL VARIABLES"),
            DriverKind::Pgsql => (
                capture::PG_SETTINGS,
                "SELECT * FROM pg_settings ORDER BY name",
            ),
            DriverKind::Sqlite => return Ok(()),
        };
        let t = server::query_table(self.conn()?, sql)?;
        append(&self.server_dir.join(file), at, &t.to_text(), &self.failed);
        if cfg.kind == DriverKind::Mysql {
            let on = |name: &str| {
                t.value(name)
                    .is_some_and(|v| v.eq_ignore_ascii_case("ON") || v == "1")
            };
            self.table_counters = if on("performance_schema") {
                Some(TableCounters::PerformanceSchema)
            } else if on("userstat") {
                Some(TableCounters::UserStat)
            } else {
                None
            };
            if self.table_counters.is_none() && !self.settings_done {
                self.event(
                    at,
                    "no per-table counters: performance_schema and userstat are off, so the unfair table groups check cannot run (SET GLOBAL userstat=ON on MariaDB, or performance_schema=ON in the server's configuration, provides them)",
                );
            }
        }
        if cfg.kind == DriverKind::Pgsql {
            let v = server::query_value(self.conn()?, "SHOW server_version_num")?;
            self.has_checkpointer = v
                .and_then(|v| v.parse::<u32>().ok())
                .is_some_and(|v| v >= 170_000);
        }
        self.settings_done = true;
        Ok(())
    }

    fn table(&mut self, at: SystemTime, file: &str, sql: &str) -> Result<Table, crate::KitError> {
        let t = server::query_table(self.conn()?, sql)?;
        append(&self.server_dir.join(file), at, &t.to_text(), &self.failed);
        Ok(t)
    }

    fn status(&mut self, cfg: &DriverConfig, at: SystemTime) -> Result<(), crate::KitError> {
        match cfg.kind {
            DriverKind::Mysql => {
                let status = self.table(at, capture::MYSQL_GLOBAL_STATUS, "SHOW GLOBAL STATUS")?;
                let innodb = server::query_table(self.conn()?, "SHOW ENGINE INNODB STATUS")?;
                let text = innodb
                    .column("Status")
                    .and_then(|c| {
                        innodb
                            .rows
                            .first()
                            .and_then(|r| r.get(c).cloned().flatten())
                    })
                    .unwrap_or_default();
                append(
                    &self.server_dir.join(capture::MYSQL_INNODB_STATUS),
                    at,
                    &text,
                    &self.failed,
                );
                self.table(at, capture::MYSQL_PROCESSLIST, "SHOW FULL PROCESSLIST")?;
                match self.table_counters {
                    Some(TableCounters::PerformanceSchema) => {
                        self.table(at, capture::MYSQL_TABLE_IO, MYSQL_TABLE_IO_SQL)?;
                    }
                    Some(TableCounters::UserStat) => {
                        self.table(
                            at,
                            capture::MYSQL_TABLE_STATISTICS,
                            MYSQL_TABLE_STATISTICS_SQL,
                        )?;
                    }
                    None => {}
                }
                if let Some(up) = status.value("Uptime").and_then(|v| v.parse::<f64>().ok()) {
                    if self.last_uptime.is_some_and(|prev| up < prev) {
                        self.event(
                            at,
                            &format!(
                                "server restart: Uptime went back from {} to {up}",
                                self.last_uptime.unwrap_or(0.0)
                            ),
                        );
                    }
                    self.last_uptime = Some(up);
                }
            }
            DriverKind::Pgsql => {
                self.table(at, capture::PG_STAT_DATABASE, PG_STAT_DATABASE_SQL)?;
                self.table(at, capture::PG_STAT_USER_TABLES, PG_USER_TABLES_SQL)?;
                self.table(
                    at,
                    capture::PG_STAT_BGWRITER,
                    "SELECT * FROM pg_stat_bgwriter",
                )?;
                if self.has_checkpointer {
                    self.table(
                        at,
                        capture::PG_STAT_CHECKPOINTER,
                        "SELECT * FROM pg_stat_checkpointer",
                    )?;
                }
                self.table(
                    at,
                    capture::PG_STAT_ACTIVITY,
                    "SELECT * FROM pg_stat_activity",
                )?;
                let start =
                    server::query_value(self.conn()?, "SELECT pg_postmaster_start_time()::text")?;
                if let (Some(prev), Some(now)) = (&self.last_start, &start) {
                    if prev != now {
                        self.event(
                            at,
                            &format!(
                            "server restart: postmaster start time changed from {prev} to {now}"
                        ),
                        );
                    }
                }
                self.last_start = start;
            }
            DriverKind::Sqlite => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_fall_on_multiples_of_the_interval() {
        let t = UNIX_EPOCH + Duration::from_millis(1_000_003_250);
        assert_eq!(
            next_tick(t, Duration::from_secs(5)),
            UNIX_EPOCH + Duration::from_secs(1_000_005)
        );
        let exact = UNIX_EPOCH + Duration::from_secs(1_000_005);
        assert_eq!(
            next_tick(exact, Duration::from_secs(5)),
            UNIX_EPOCH + Duration::from_secs(1_000_010)
        );
        assert_eq!(
            next_tick(t, Duration::from_millis(500)),
            UNIX_EPOCH + Duration::from_millis(1_000_003_500)
        );
    }

    #[test]
    fn os_samples_are_taken_at_ticks_and_a_dead_server_is_only_noted() {
        let dir = tempfile::tempdir().unwrap();
        // A server nobody listens on: the sampler notes it and goes on with the OS.
        let driver = server::driver_config(&|k| match k {
            "db-driver" => Some("mysql".into()),
            "mysql-host" => Some("127.0.0.1".into()),
            "mysql-port" => Some("1".into()),
            _ => None,
        })
        .unwrap();
        let s = Sampler::start(SamplerConfig {
            driver: Some(driver),
            level_dir: dir.path().to_path_buf(),
            interval: Duration::from_millis(200),
            client_pids: vec![std::process::id()],
        });
        std::thread::sleep(Duration::from_millis(900));
        s.stop();
        let text = std::fs::read_to_string(dir.path().join("os/loadavg.txt")).unwrap();
        let samples = capture::samples(&text);
        assert!(samples.len() >= 2, "{text}");
        for s in &samples {
            let ns = s.at.duration_since(UNIX_EPOCH).unwrap().as_nanos() % 200_000_000;
            // Within 50 ms after the tick (a loaded machine wakes late, never early).
            assert!(ns < 50_000_000, "sample {ns} ns after a tick");
        }
        let own = std::fs::read_to_string(dir.path().join("os/client_stat.txt")).unwrap();
        assert!(own.contains(&format!("{} (", std::process::id())), "{own}");
        let events = std::fs::read_to_string(dir.path().join("server/events.txt")).unwrap();
        assert_eq!(
            capture::samples(&events).len(),
            1,
            "one note, not one per tick: {events}"
        );
        assert!(events.contains("sampler cannot connect"), "{events}");
    }
}
