//! Which sysbench release bmk reproduces: 1.1 (the default) or 1.0.20.
//!
//! The two differ where their users' scripts and parsers look: 1.0.20's final report
//! says `General statistics:` / `total time:` where 1.1 says `Throughput:`, it warns
//! about its old option names instead of rejecting them, its `--help` lists other
//! options, and its Lua API still has `sysbench.rand.special`. The level is chosen by
//! `--sysbench-compat` (a bmk option, so also a `--config-file` line), else by the
//! `BMK_SYSBENCH_COMPAT` environment variable (the only way when invoked as
//! `sysbench`, which takes no options of bmk's own), else 1.1.

use crate::args::GivenOption;

/// The environment variable that picks the level.
pub const ENV_VAR: &str = "BMK_SYSBENCH_COMPAT";
/// The option that picks the level (wins over the environment).
pub const OPTION: &str = "sysbench-compat";

/// A sysbench release whose observable behaviour bmk reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compat {
    /// sysbench 1.1 (master): the default.
    #[default]
    V1_1,
    /// sysbench 1.0.20, the release distributions ship.
    V1_0,
}

impl Compat {
    /// Parses `1.1` or `1.0` (the full version numbers `1.1.0` and `1.0.20` too).
    pub fn parse(text: &str) -> Option<Compat> {
        match text.trim() {
            "1.1" | "1.1.0" => Some(Compat::V1_1),
            "1.0" | "1.0.20" => Some(Compat::V1_0),
            _ => None,
        }
    }

    /// The version string sysbench prints (`--version`, the banner, Lua's
    /// `sysbench.version`).
    pub fn sysbench_version(self) -> &'static str {
        match self {
            Compat::V1_1 => "1.1.0",
            Compat::V1_0 => "1.0.20",
        }
    }

    /// The LuaJIT version the release bundled, which its banner names.
    pub fn luajit_version(self) -> &'static str {
        match self {
            Compat::V1_1 => "2.1.0-beta3",
            Compat::V1_0 => "2.1.0-beta2",
        }
    }

    /// Whether this is 1.0.20.
    pub fn is_1_0(self) -> bool {
        self == Compat::V1_0
    }

    /// The level an invocation asks for: the last `--sysbench-compat` given, else the
    /// environment's `env` value, else 1.1. A value that names no level is an error
    /// worded for the user.
    pub fn select(given: &[GivenOption], env: Option<&str>) -> Result<Compat, String> {
        let from_option = given
            .iter()
            .rev()
            .find(|g| g.name == OPTION || g.name == "sysbench_compat");
        if let Some(g) = from_option {
            let value = g.value.as_deref().unwrap_or("");
            return Compat::parse(value).ok_or_else(|| {
                format!("invalid value '{value}' for option --{OPTION}: expected 1.1 or 1.0")
            });
        }
        match env {
            None => Ok(Compat::V1_1),
            Some("") => Ok(Compat::V1_1),
            Some(v) => Compat::parse(v).ok_or_else(|| {
                format!("invalid value '{v}' in the environment variable {ENV_VAR}: expected 1.1 or 1.0")
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(name: &str, value: &str) -> GivenOption {
        GivenOption {
            name: name.into(),
            value: Some(value.into()),
            original: format!("--{name}={value}"),
        }
    }

    #[test]
    fn default_is_1_1() {
        assert_eq!(Compat::select(&[], None), Ok(Compat::V1_1));
        assert_eq!(Compat::select(&[], Some("")), Ok(Compat::V1_1));
    }

    #[test]
    fn environment_picks_1_0() {
        assert_eq!(Compat::select(&[], Some("1.0")), Ok(Compat::V1_0));
        assert_eq!(Compat::select(&[], Some("1.0.20")), Ok(Compat::V1_0));
    }

    #[test]
    fn the_option_wins_over_the_environment() {
        let opts = [given("sysbench-compat", "1.1")];
        assert_eq!(Compat::select(&opts, Some("1.0")), Ok(Compat::V1_1));
    }

    #[test]
    fn unknown_levels_are_refused_in_one_line() {
        let err = Compat::select(&[], Some("0.5")).unwrap_err();
        assert_eq!(
            err,
            "invalid value '0.5' in the environment variable BMK_SYSBENCH_COMPAT: expected 1.1 or 1.0"
        );
        let err = Compat::select(&[given("sysbench-compat", "2")], None).unwrap_err();
        assert!(err.starts_with("invalid value '2' for option --sysbench-compat"));
    }

    #[test]
    fn versions_as_sysbench_prints_them() {
        assert_eq!(Compat::V1_1.sysbench_version(), "1.1.0");
        assert_eq!(Compat::V1_0.sysbench_version(), "1.0.20");
        assert_eq!(Compat::V1_0.luajit_version(), "2.1.0-beta2");
    }
}
