//! Facts about the machine and the moment, for results files: host name, OS, kernel,
//! CPU, memory, and RFC 3339 timestamps.
//!
//! Everything is read from `/proc`, `/etc/os-release`, `uname` and the standard library; a fact
//! that cannot be read is left empty rather than failing the run. Nothing here is
//! written anywhere.

use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

/// The machine a run happened on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// Operating system (`PRETTY_NAME` of `/etc/os-release`, else e.g. `linux`).
    pub os: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU architecture (`x86_64`, `aarch64`, ...).
    pub arch: String,
    /// CPU model name, if known.
    pub cpu_model: Option<String>,
    /// Logical CPUs online.
    pub cpu_count: u32,
    /// CPUs this process may run on.
    pub cpus_available: u32,
    /// Physical memory in bytes, if known.
    pub memory_total_bytes: Option<u64>,
    /// Kernel clock ticks per second (`USER_HZ`, the unit of `/proc/stat`'s CPU times).
    #[serde(default)]
    pub clock_ticks_per_s: Option<u64>,
    /// Memory page size in bytes (the unit of `/proc/<pid>/stat`'s resident set).
    #[serde(default)]
    pub page_size_bytes: Option<u64>,
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

impl HostInfo {
    /// Reads the facts of this machine.
    pub fn collect() -> HostInfo {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpus_available = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        let cpu_count = cpuinfo
            .lines()
            .filter(|l| l.starts_with("processor"))
            .count() as u32;
        HostInfo {
            hostname: hostname(),
            os: std::fs::read_to_string("/etc/os-release")
                .ok()
                .and_then(|s| os_release_name(&s))
                .unwrap_or_else(|| std::env::consts::OS.to_string()),
            kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
            arch: std::env::consts::ARCH.to_string(),
            cpu_model: cpu_model(&cpuinfo),
            cpu_count: if cpu_count > 0 {
                cpu_count
            } else {
                cpus_available
            },
            cpus_available,
            memory_total_bytes: std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|s| mem_total(&s)),
            clock_ticks_per_s: sysconf(libc::_SC_CLK_TCK),
            page_size_bytes: sysconf(libc::_SC_PAGESIZE),
        }
    }
}

/// A positive `sysconf` value.
fn sysconf(name: libc::c_int) -> Option<u64> {
    // SAFETY: sysconf only reads a system constant.
    let v = unsafe { libc::sysconf(name) };
    (v > 0).then_some(v as u64)
}

fn os_release_name(text: &str) -> Option<String> {
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().trim_matches('"').to_string())
    };
    value("PRETTY_NAME=").or_else(|| value("NAME="))
}

fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| {
            l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// This host's name (`uname -n`), the one every part of bmk reports.
pub fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// `t` as an RFC 3339 UTC timestamp with milliseconds: `2026-11-21T20:58:48.123Z`. A
/// time before 1970 is written as 1970's first instant.
pub fn rfc3339_utc(t: SystemTime) -> String {
    let since_epoch = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    DateTime::<Utc>::from(UNIX_EPOCH + since_epoch).to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The current time as [`rfc3339_utc`].
pub fn now_rfc3339() -> String {
    rfc3339_utc(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(951_782_400_000 + 3_723_456);
        assert_eq!(rfc3339_utc(t), "2000-02-29T01:02:03.456Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_795_294_728);
        assert_eq!(rfc3339_utc(t), "2026-11-21T20:58:48.000Z");
        let t = UNIX_EPOCH + Duration::from_secs(4_107_542_399);
        assert_eq!(rfc3339_utc(t), "2100-02-28T23:59:59.000Z");
    }

    #[test]
    fn parsers() {
        assert_eq!(
            os_release_name("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12\"\n").as_deref(),
            Some("Debian GNU/Linux 12")
        );
        assert_eq!(
            mem_total("MemTotal:       24000000 kB\n"),
            Some(24_576_000_000)
        );
        assert_eq!(
            cpu_model("processor\t: 0\nmodel name\t: Some CPU @ 2.0GHz\n").as_deref(),
            Some("Some CPU @ 2.0GHz")
        );
    }

    #[test]
    fn collect_fills_the_basics() {
        let h = HostInfo::collect();
        assert!(h.cpu_count >= 1);
        assert!(!h.arch.is_empty());
        assert!(h.clock_ticks_per_s.is_some_and(|t| t > 0));
        assert!(h.page_size_bytes.is_some_and(|p| p >= 4096));
    }

    #[test]
    fn the_host_name_is_the_kernels() {
        if let Ok(name) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
            assert_eq!(hostname(), name.trim());
        }
    }
}
