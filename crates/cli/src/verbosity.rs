//! `--verbosity`: which of bmk's own messages are printed.
//!
//! The levels are sysbench's log levels, and each message sits at the level sysbench
//! prints it at (checked against sysbench 1.0.20 side by side): the banner, the run
//! header, reports and the `prepare`/`cleanup` messages of the system tests are
//! notices (3, the default); `Doing CPU performance benchmark`, the reason a run ended
//! and `Done.` are info (4); one `DEBUG:` line per worker start is debug (5). Failures
//! (`FATAL:`), help texts, `--version` and whatever a script prints itself are shown
//! at every level, so `--verbosity=0` leaves only what went wrong and the script's
//! own output.

use crate::args::GivenOption;

/// A message's importance, from sysbench's `LOG_FATAL` (0) to `LOG_DEBUG` (5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Deprecation warnings and the like.
    Warning = 2,
    /// The normal output: banner, header, reports.
    Notice = 3,
    /// Progress detail.
    Info = 4,
    /// Debugging detail.
    Debug = 5,
}

/// The `--verbosity` of this invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verbosity(u8);

impl Default for Verbosity {
    fn default() -> Verbosity {
        Verbosity(Level::Notice as u8)
    }
}

impl Verbosity {
    /// A verbosity of `level` (values above 5 show everything).
    pub fn new(level: u8) -> Verbosity {
        Verbosity(level)
    }

    /// The verbosity the command line asks for, read before the options are
    /// validated (the banner comes first); a value that does not parse counts as the
    /// default here and is rejected with the other options right after.
    pub fn given(options: &[GivenOption]) -> Verbosity {
        options
            .iter()
            .rev()
            .find(|o| o.name == "verbosity")
            .and_then(|o| o.value.as_deref()?.trim().parse::<u8>().ok())
            .map_or_else(Verbosity::default, Verbosity)
    }

    /// Whether messages of `level` are printed.
    pub fn shows(self, level: Level) -> bool {
        self.0 >= level as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(value: Option<&str>) -> GivenOption {
        GivenOption {
            name: "verbosity".into(),
            value: value.map(str::to_string),
            original: "--verbosity".into(),
        }
    }

    #[test]
    fn levels_follow_sysbench() {
        let quiet = Verbosity::new(0);
        assert!(!quiet.shows(Level::Warning) && !quiet.shows(Level::Notice));
        let default = Verbosity::default();
        assert!(default.shows(Level::Warning) && default.shows(Level::Notice));
        assert!(!default.shows(Level::Info));
        assert!(Verbosity::new(4).shows(Level::Info) && !Verbosity::new(4).shows(Level::Debug));
        assert!(Verbosity::new(5).shows(Level::Debug));
    }

    #[test]
    fn the_last_given_value_counts() {
        assert_eq!(Verbosity::given(&[]), Verbosity::default());
        assert_eq!(
            Verbosity::given(&[given(Some("1")), given(Some("5"))]),
            Verbosity::new(5)
        );
        assert_eq!(Verbosity::given(&[given(Some("x"))]), Verbosity::default());
        assert_eq!(Verbosity::given(&[given(None)]), Verbosity::default());
    }
}
