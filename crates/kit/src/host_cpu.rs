//! Where a level's CPU went: the level process's own time (`getrusage`), the local
//! database server's, and the rest of the host's (`/proc/stat`), read at the measured
//! start and at the end. A client whose own CPU is the limit, or a host busy with other
//! work, makes the numbers say something about the client, not the server; the
//! analysis checks read the [`LevelCpu`] this makes (`level.json`'s `cpu`).
//!
//! The server is told apart by process name (`mariadbd`, `mysqld`, `postgres`,
//! `postmaster`): a database on the same host is part of the benchmark, not other
//! load. A server process that ended during the level (a PostgreSQL backend of a
//! connection that closed) is not counted, so its time shows as other load.

use std::time::Instant;

use bmk_results::results_dir::LevelCpu;
use procfs_core::{ExplicitSystemInfo, FromRead, FromReadSI};

/// Process names of database servers whose CPU counts as the benchmark's.
const SERVER_PROCESSES: [&str; 4] = ["mariadbd", "mysqld", "postgres", "postmaster"];

/// One reading of the clocks.
#[derive(Debug, Clone)]
pub struct CpuSnapshot {
    at: Instant,
    /// This process's user and system CPU seconds (all its threads, and its children
    /// that were waited for: the parts of a split level).
    self_user_s: f64,
    self_system_s: f64,
    /// Host totals in clock ticks: busy (user, nice, system, irq, softirq), idle and
    /// iowait together, steal.
    busy: u64,
    idle: u64,
    steal: u64,
    cpus: u32,
    /// Ticks of the local database server's processes, by pid.
    server: Vec<(i32, u64)>,
    ticks_per_s: u64,
}

fn rusage(who: libc::c_int) -> (f64, f64) {
    // SAFETY: getrusage fills the struct it is given.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut r) } != 0 {
        return (0.0, 0.0);
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(r.ru_utime), s(r.ru_stime))
}

fn ticks_per_s() -> u64 {
    // SAFETY: sysconf only reads a constant of the system.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

fn system_info(ticks: u64) -> ExplicitSystemInfo {
    ExplicitSystemInfo {
        boot_time_secs: 0,
        ticks_per_second: ticks,
        page_size: 4096,
        is_little_endian: cfg!(target_endian = "little"),
    }
}

/// The pids and CPU ticks of the database server processes running on this host.
fn server_ticks() -> Vec<(i32, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| {
            let text = std::fs::read(e.path().join("stat")).ok()?;
            let st = procfs_core::process::Stat::from_read(text.as_slice()).ok()?;
            SERVER_PROCESSES
                .contains(&st.comm.as_str())
                .then_some((st.pid, st.utime + st.stime))
        })
        .collect()
}

impl CpuSnapshot {
    /// Reads the clocks now. `children`: count the time of this process's waited-for
    /// children too (a split level's parts) rather than its own threads only.
    pub fn take(children: bool) -> CpuSnapshot {
        let ticks = ticks_per_s();
        let (mut u, mut s) = rusage(libc::RUSAGE_SELF);
        if children {
            let (cu, cs) = rusage(libc::RUSAGE_CHILDREN);
            u += cu;
            s += cs;
        }
        let mut snap = CpuSnapshot {
            at: Instant::now(),
            self_user_s: u,
            self_system_s: s,
            busy: 0,
            idle: 0,
            steal: 0,
            cpus: 0,
            server: server_ticks(),
            ticks_per_s: ticks,
        };
        if let Ok(text) = std::fs::read("/proc/stat") {
            if let Ok(k) = procfs_core::KernelStats::from_read(text.as_slice(), &system_info(ticks))
            {
                let c = &k.total;
                snap.busy =
                    c.user + c.nice + c.system + c.irq.unwrap_or(0) + c.softirq.unwrap_or(0);
                snap.idle = c.idle + c.iowait.unwrap_or(0);
                snap.steal = c.steal.unwrap_or(0);
                snap.cpus = k.cpu_time.len() as u32;
            }
        }
        snap
    }

    /// Where the CPU went from `self` (the measured start) to `end`.
    pub fn until(&self, end: &CpuSnapshot) -> LevelCpu {
        let wall_s = end.at.duration_since(self.at).as_secs_f64();
        let bmk_user_s = (end.self_user_s - self.self_user_s).max(0.0);
        let bmk_system_s = (end.self_system_s - self.self_system_s).max(0.0);
        let server_ticks: u64 = end
            .server
            .iter()
            .map(|(pid, t1)| {
                // A server process that started during the level: all its time is in it.
                let t0 = self
                    .server
                    .iter()
                    .find(|(p, _)| p == pid)
                    .map_or(0, |x| x.1);
                t1.saturating_sub(t0)
            })
            .sum();
        let server_s = server_ticks as f64 / self.ticks_per_s.max(1) as f64;
        let busy = end.busy.saturating_sub(self.busy) as f64;
        let idle = end.idle.saturating_sub(self.idle) as f64;
        let steal = end.steal.saturating_sub(self.steal) as f64;
        let total = busy + idle + steal;
        let cpus = end.cpus.max(1);
        let (host_busy_pct, steal_pct, host_other_pct) = if total > 0.0 {
            let busy_pct = busy / total * 100.0;
            // Ours and the server's, as % of all CPUs over the same wall time.
            let capacity = wall_s * cpus as f64;
            let known = if capacity > 0.0 {
                (bmk_user_s + bmk_system_s + server_s) / capacity * 100.0
            } else {
                0.0
            };
            (busy_pct, steal / total * 100.0, (busy_pct - known).max(0.0))
        } else {
            (0.0, 0.0, 0.0)
        };
        LevelCpu {
            wall_s,
            bmk_user_s,
            bmk_system_s,
            server_s,
            host_cpus: cpus,
            host_busy_pct,
            host_other_pct,
            steal_pct,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_busy_time_is_counted_as_bmk_and_not_as_other_load() {
        let start = CpuSnapshot::take(false);
        let until = Instant::now() + std::time::Duration::from_millis(400);
        let mut x = 0u64;
        while Instant::now() < until {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let cpu = start.until(&CpuSnapshot::take(false));
        assert!(cpu.wall_s >= 0.4, "{cpu:?}");
        // A spinning thread gets most of a core even on a shared host.
        assert!(cpu.bmk_cores() > 0.2, "{cpu:?}");
        assert!(cpu.host_cpus >= 1);
        assert!(
            cpu.host_busy_pct > 0.0 && cpu.host_busy_pct <= 100.0,
            "{cpu:?}"
        );
        assert!(cpu.host_other_pct <= cpu.host_busy_pct, "{cpu:?}");
    }
}
