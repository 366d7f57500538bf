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

/// The source this binary was built from, as SemVer build metadata: `git.COMMIT`
/// (its first 12 hex digits, `.modified` when tracked files differed from it), or
/// `commit.unknown` (see the crate's build script).
pub fn bmk_build() -> &'static str {
    env!("BMK_BUILD")
}

/// What `--version` prints: as `bmk`, the version and the exact source
/// (`bmk 0.1.0+git.0123456789ab (sysbench 1.1.0 compatible)`); as `sysbench`, the
/// release alone, as sysbench prints it.
pub fn version_line(strict: bool, compat: Compat) -> String {
    if strict {
        sysbench_version_string(compat)
    } else {
        format!(
            "bmk {}+{} (sysbench {} compatible)",
            bmk_version(),
            bmk_build(),
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
    fn bmk_version_names_its_source() {
        let line = version_line(false, Compat::V1_1);
        let re = regex::Regex::new(
            r"^bmk \d+\.\d+\.\d+\+(git\.[0-9a-f]{7,12}(\.modified)?|commit\.unknown) \(sysbench 1\.1\.0 compatible\)$",
        )
        .unwrap();
        assert!(re.is_match(&line), "{line}");
    }

    #[test]
    fn bmk_banner_says_which_release_it_follows() {
        assert!(banner(false, Compat::V1_0).contains("(sysbench 1.0.20 compatible,"));
        assert!(version_line(false, Compat::V1_1).ends_with("(sysbench 1.1.0 compatible)"));
    }
}
