//! How busy a run's client host was with work other than bmk's own, from the captures
//! every level already has: the host's CPU use from `/proc/stat` (`os/stat.txt`) minus
//! the bmk processes' share from their `/proc/<pid>/stat` (`os/client_stat.txt`).
//!
//! When the run recorded where its host's CPU went (`cpu` in `level.json`, with the
//! database server's processes told apart), that figure is used instead.
//!
//! Two runs measured while something else competed for the host's CPU (a build, a
//! backup, another benchmark) can differ by tens of percent with nothing changed in
//! the database; `bmk compare` warns about such runs. The capture does not tell the
//! database server's processes apart from the rest, so when the server runs on the
//! client host its own work is part of the "other" figure; see [`HostLoad::busy`].

use bmk_results::capture;

use crate::rates;
use bmk_results::load::{Level, RunData};

/// Other work above this share of all the host's CPUs makes the host busy.
pub const OTHER_PCT: f64 = 25.0;
/// With the database server on the same host (whose work the capture cannot tell
/// apart from other processes'), the host is called busy only when it was also
/// saturated: its CPUs above this % busy in all.
pub const SATURATED_PCT: f64 = 90.0;

/// The host's CPU during one level, in % of all its CPUs (means over the level's
/// capture samples).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostLoad {
    /// Busy in all (not idle, not waiting for I/O).
    pub busy_pct: f64,
    /// Used by the bmk processes.
    pub bmk_pct: f64,
    /// The rest: `busy_pct - bmk_pct`, never below 0.
    pub other_pct: f64,
    /// Whether the database server ran on this host and its work is in `other_pct`.
    pub server_local: bool,
}

impl HostLoad {
    /// Whether the host was busy with work other than bmk's during the level.
    pub fn busy(&self) -> bool {
        self.other_pct >= OTHER_PCT && (!self.server_local || self.busy_pct >= SATURATED_PCT)
    }
}

/// Whether `run`'s database server ran on the client host: a loopback address or a
/// Unix socket path (SQLite runs inside bmk, so its work is bmk's own).
pub fn server_is_local(run: &RunData) -> bool {
    let Some(s) = run.manifest.as_ref().and_then(|m| m.server.as_ref()) else {
        return false;
    };
    if s.driver == "sqlite" {
        return false;
    }
    let a = s.address.as_deref().unwrap_or("").to_ascii_lowercase();
    a.starts_with('/')
        || a.starts_with("127.")
        || a.starts_with("localhost")
        || a.starts_with("[::1]")
        || a.starts_with("::1")
}

/// The host's CPU cores as the run recorded them (at least 1).
pub fn host_cores(run: &RunData) -> u32 {
    run.manifest
        .as_ref()
        .map(|m| m.host.cpu_count.max(m.host.cpus_available))
        .or_else(|| {
            run.levels
                .iter()
                .find_map(|l| l.result.as_ref().map(|r| r.run.host.cpu_count))
        })
        .unwrap_or(1)
        .max(1)
}

/// The split of the host's CPU that the run recorded in `level.json` (`cpu`: bmk's own
/// rusage, the local database server's processes, the rest), when it did: exact where
/// the captures can only estimate, and the server's work is already taken out.
fn recorded(level: &Level) -> Option<HostLoad> {
    let path = level
        .dir
        .as_ref()?
        .join(bmk_results::results_dir::LEVEL_FILE);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let cpu = v.get("cpu")?;
    let num = |k: &str| cpu.get(k).and_then(serde_json::Value::as_f64);
    let (wall, cpus) = (num("wall_s")?, num("host_cpus")?);
    let bmk_s = num("bmk_user_s")? + num("bmk_system_s")?;
    let bmk_pct = if wall > 0.0 && cpus > 0.0 {
        bmk_s / wall / cpus * 100.0
    } else {
        0.0
    };
    Some(HostLoad {
        busy_pct: num("host_busy_pct")?,
        bmk_pct,
        other_pct: num("host_other_pct")?.max(0.0),
        server_local: false,
    })
}

/// The host load of `level`: as recorded in `level.json` when it is, else from the
/// captures; `None` without either (or with fewer than two samples).
pub fn of_level(
    level: &Level,
    clock_ticks: u64,
    cores: u32,
    server_local: bool,
) -> Option<HostLoad> {
    if let Some(h) = recorded(level) {
        return Some(h);
    }
    let stat = level.os_capture("stat.txt")?;
    let client = level.os_capture(capture::OS_CLIENT_STAT)?;
    let busy = rates::cpu_percent(&stat, clock_ticks)
        .into_iter()
        .find(|s| s.name == "busy")?;
    if busy.points.is_empty() {
        return None;
    }
    let bmk = rates::client_cpu_percent(&client, clock_ticks);
    if bmk.is_empty() {
        return None;
    }
    let busy_pct = busy.mean();
    let bmk_pct = bmk.iter().map(|p| p.1).sum::<f64>() / bmk.len() as f64 / cores.max(1) as f64;
    Some(HostLoad {
        busy_pct,
        bmk_pct,
        other_pct: (busy_pct - bmk_pct).max(0.0),
        server_local,
    })
}
