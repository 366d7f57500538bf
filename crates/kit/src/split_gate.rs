//! The start gate of the processes of one split level (`--max-users-per-process`):
//! the processes run on one host, so they need no database to agree on an instant;
//! a folder of small files does it, and the host's own clock is the shared one.
//!
//! The parent names the folder, each process's index and the count in the
//! environment variable [`GATE_ENV`] (`DIR:INDEX:COUNT`). A process whose workers are
//! all initialised creates `DIR/ready-INDEX` and polls for `DIR/start`, which the
//! parent writes (by rename, so it is whole when it appears) once every process is
//! ready: the start instant in nanoseconds of the system's clock, a short lead ahead.
//! Every process places that instant on its own monotonic clock by reading both
//! clocks together, so all release their workers within the polling step plus how
//! late the operating system wakes them, and their interval grids coincide.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bmk_engine::{StartAt, StartGate};
use bmk_results::results_file::{BarrierRecord, StartRecord};

/// `DIR:INDEX:COUNT`: this process is part INDEX (1-based) of COUNT of a split level.
pub const GATE_ENV: &str = "BMK_SPLIT_GATE";

/// The file a ready process creates.
pub fn ready_file(dir: &Path, index: u32) -> PathBuf {
    dir.join(format!("ready-{index}"))
}

/// The file holding the agreed start.
pub fn start_file(dir: &Path) -> PathBuf {
    dir.join("start")
}

/// A part's identity, as the results file's start record names it.
pub fn part_name(index: u32) -> String {
    format!("part-{index:02}")
}

/// How often a waiting process looks for the start file.
const POLL: Duration = Duration::from_millis(2);

/// The gate of one part of a split level.
#[derive(Debug, Clone)]
pub struct SplitGate {
    dir: PathBuf,
    index: u32,
    count: u32,
    record: Option<BarrierRecord>,
}

impl SplitGate {
    /// The gate the environment asks for, if any; a malformed value is an error.
    pub fn from_env() -> Result<Option<SplitGate>, String> {
        let Some(value) = std::env::var_os(GATE_ENV) else {
            return Ok(None);
        };
        let value = value.to_string_lossy().into_owned();
        let bad = || format!("{GATE_ENV}='{value}': expected DIR:INDEX:COUNT");
        let mut it = value.rsplitn(3, ':');
        let count: u32 = it.next().and_then(|v| v.parse().ok()).ok_or_else(bad)?;
        let index: u32 = it.next().and_then(|v| v.parse().ok()).ok_or_else(bad)?;
        let dir = it.next().filter(|d| !d.is_empty()).ok_or_else(bad)?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Some(SplitGate {
            dir: PathBuf::from(dir),
            index,
            count,
            record: None,
        }))
    }

    /// This part's 1-based index among the level's processes.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The results file's start record once the gate opened; `released` is when the
    /// workers were released (the system's clock). The record's "server" is this
    /// host's clock: the parts of a split level share it.
    pub fn start_record(&self, released: Option<SystemTime>) -> Option<StartRecord> {
        Some(StartRecord::passed(self.record.clone()?, released?))
    }
}

fn unix_ns(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

impl StartGate for SplitGate {
    fn open(&mut self, interrupt: &AtomicUsize) -> Result<StartAt, String> {
        let ready = ready_file(&self.dir, self.index);
        std::fs::write(&ready, b"")
            .map_err(|e| format!("cannot signal readiness at {}: {e}", ready.display()))?;
        let start = start_file(&self.dir);
        let text = loop {
            if interrupt.load(Ordering::Relaxed) != 0 {
                return Ok(StartAt::Now);
            }
            match std::fs::read_to_string(&start) {
                Ok(t) => break t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::thread::sleep(POLL),
                Err(e) => return Err(format!("cannot read {}: {e}", start.display())),
            }
        };
        let start_ns: i128 = text
            .trim()
            .parse()
            .map_err(|_| format!("{} does not hold a start time", start.display()))?;
        let (now_mono, now_wall) = (Instant::now(), unix_ns(SystemTime::now()));
        let ahead = start_ns - now_wall;
        let local = if ahead >= 0 {
            now_mono + Duration::from_nanos(ahead as u64)
        } else {
            now_mono
                .checked_sub(Duration::from_nanos((-ahead) as u64))
                .unwrap_or(now_mono)
        };
        let start_us = (start_ns / 1000) as i64;
        let at = UNIX_EPOCH + Duration::from_micros(start_us.max(0) as u64);
        self.record = Some(BarrierRecord {
            name: format!("split:{}", self.dir.display()),
            client: part_name(self.index),
            clients: (1..=self.count).map(part_name).collect(),
            server_start: bmk_report::host::rfc3339_utc(at),
            server_start_unix_us: start_us,
            placement_error_ms: 0.0,
        });
        Ok(StartAt::At(local))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_names_dir_index_and_count() {
        std::env::set_var(GATE_ENV, "/tmp/a:b/gate:2:3");
        let g = SplitGate::from_env().unwrap().unwrap();
        assert_eq!(
            (g.dir.to_str().unwrap(), g.index, g.count),
            ("/tmp/a:b/gate", 2, 3)
        );
        std::env::set_var(GATE_ENV, "/tmp/gate:4:3");
        assert!(SplitGate::from_env().is_err());
        std::env::remove_var(GATE_ENV);
        assert!(SplitGate::from_env().unwrap().is_none());
    }

    #[test]
    fn a_written_start_opens_the_gate_at_that_instant() {
        let dir = tempfile::tempdir().unwrap();
        let mut g = SplitGate {
            dir: dir.path().to_path_buf(),
            index: 1,
            count: 2,
            record: None,
        };
        let at = unix_ns(SystemTime::now()) + 50_000_000;
        std::fs::write(start_file(dir.path()), at.to_string()).unwrap();
        let before = Instant::now();
        let StartAt::At(local) = g.open(&AtomicUsize::new(0)).unwrap() else {
            panic!("the gate should name an instant");
        };
        assert!(ready_file(dir.path(), 1).exists());
        let lead = local.duration_since(before);
        assert!(lead > Duration::from_millis(30) && lead < Duration::from_millis(60));
        let r = g.record.unwrap();
        assert_eq!(r.clients, ["part-01", "part-02"]);
        assert_eq!(r.client, "part-01");
    }
}
