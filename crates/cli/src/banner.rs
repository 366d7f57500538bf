//! Version strings: bmk's own, and the sysbench-compatible one strict mode prints.

/// The sysbench version bmk is compatible with.
pub const SYSBENCH_VERSION: &str = "1.1.0";
/// The LuaJIT version embedded.
pub const LUAJIT_VERSION: &str = "2.1.0-beta3";

/// bmk's version.
pub fn bmk_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// `sysbench 1.1.0` plus `-<hex revision>` when the build knows it.
pub fn sysbench_version_string() -> String {
    let rev = env!("BMK_GIT_REV");
    if rev.is_empty() {
        format!("sysbench {SYSBENCH_VERSION}")
    } else {
        format!("sysbench {SYSBENCH_VERSION}-{rev}")
    }
}

/// What `--version` prints.
pub fn version_line(strict: bool) -> String {
    if strict {
        sysbench_version_string()
    } else {
        format!(
            "bmk {} (sysbench {SYSBENCH_VERSION} compatible)",
            bmk_version()
        )
    }
}

/// The first line of every run's output.
pub fn banner(strict: bool) -> String {
    if strict {
        format!(
            "{} (using bundled LuaJIT {LUAJIT_VERSION})",
            sysbench_version_string()
        )
    } else {
        format!(
            "bmk {} (sysbench {SYSBENCH_VERSION} compatible, using bundled LuaJIT {LUAJIT_VERSION})",
            bmk_version()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_version_matches_what_scripts_grep_for() {
        let v = version_line(true);
        let rest = v.strip_prefix("sysbench ").unwrap();
        let (num, rev) = rest.split_once('-').unwrap_or((rest, ""));
        assert!(num.chars().all(|c| c.is_ascii_digit() || c == '.'));
        assert!(rev.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
