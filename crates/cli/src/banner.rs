//! Version strings: bmk's own, and the sysbench ones strict mode prints.

use crate::compat::Compat;

/// The LuaJIT version bmk embeds (what bmk's own banner names).
pub const LUAJIT_VERSION: &str = "2.1.0-beta3";

/// bmk's version.
pub fn bmk_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// `sysbench 1.1.0` (or `sysbench 1.0.20`): what sysbench's `--version` prints and
/// scripts read as `sysbench.version_string`. No revision suffix: scripts compare
/// it with the release they expect.
pub fn sysbench_version_string(compat: Compat) -> String {
    format!("sysbench {}", compat.sysbench_version())
}

/// What `--version` prints.
pub fn version_line(strict: bool, compat: Compat) -> String {
    if strict {
        sysbench_version_string(compat)
    } else {
        format!(
            "bmk {} (sysbench {} compatible)",
            bmk_version(),
            compat.sysbench_version()
        )
    }
}

/// The first line of every run's output.
pub fn banner(strict: bool, compat: Compat) -> String {
    if strict {
        format!(
            "{} (using bundled LuaJIT {})",
            sysbench_version_string(compat),
            compat.luajit_version()
        )
    } else {
        format!(
            "bmk {} (sysbench {} compatible, using bundled LuaJIT {LUAJIT_VERSION})",
            bmk_version(),
            compat.sysbench_version()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_version_is_the_release_alone() {
        assert_eq!(version_line(true, Compat::V1_1), "sysbench 1.1.0");
        assert_eq!(version_line(true, Compat::V1_0), "sysbench 1.0.20");
    }

    #[test]
    fn strict_banner_names_the_release_and_its_luajit() {
        assert_eq!(
            banner(true, Compat::V1_1),
            "sysbench 1.1.0 (using bundled LuaJIT 2.1.0-beta3)"
        );
        assert_eq!(
            banner(true, Compat::V1_0),
            "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)"
        );
    }

    #[test]
    fn bmk_banner_says_which_release_it_follows() {
        assert!(banner(false, Compat::V1_0).contains("(sysbench 1.0.20 compatible,"));
        assert!(version_line(false, Compat::V1_1).ends_with("(sysbench 1.1.0 compatible)"));
    }
}
