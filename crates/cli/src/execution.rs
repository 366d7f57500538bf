//! How a script's events ran, as the results file records it (`execution`) and
//! `--verbosity=4` prints it: native or Lua workers (and why Lua), a thread per worker
//! or event loops, and whether MySQL executes (or PostgreSQL connections) took bmk's own
//! protocol path.

use bmk_engine::options::OptionSet;
use bmk_engine::RunConfig;
use bmk_results::results_file::Execution;
use bmk_sql::{Driver, DriverConfig, DriverKind};

/// The record of a run of `config` whose workers are cooperative or not; `lua_reason`
/// is `None` on the native path.
pub fn record(
    opts: &OptionSet,
    config: &RunConfig,
    cooperative: bool,
    lua_reason: Option<String>,
) -> Execution {
    let event_loops = bmk_engine::event_loops(config, cooperative);
    Execution {
        path: if lua_reason.is_some() {
            "lua"
        } else {
            "native"
        }
        .to_string(),
        lua_reason,
        workers: if event_loops > 0 {
            "event_loops"
        } else {
            "threads"
        }
        .to_string(),
        event_loops,
        mysql_fast_path: fast_path(opts, DriverKind::Mysql),
        pgsql_fast_path: fast_path(opts, DriverKind::Pgsql),
    }
}

/// Whether the run's connections take the fast path of driver `kind`: false when the
/// driver is another (or its options do not parse, which the run itself then reports).
fn fast_path(opts: &OptionSet, kind: DriverKind) -> bool {
    let given = opts
        .raw("db-driver")
        .unwrap_or_else(|| "mysql".into())
        .parse::<DriverKind>();
    if !matches!(given, Ok(k) if k == kind) {
        return false;
    }
    // Only the options given: a default filled in here would hide the environment
    // variables that stand in for the fast-path switches when they are not given.
    let given = |n: &str| opts.is_given(n).then(|| opts.raw(n)).flatten();
    DriverConfig::from_options(kind, &given).is_ok_and(|cfg| {
        let driver = Driver::new(cfg);
        match kind {
            DriverKind::Mysql => driver.mysql_fast_path(),
            _ => driver.pgsql_fast_path(),
        }
    })
}

/// The one line `--verbosity=4` prints.
pub fn line(e: &Execution) -> String {
    let workers = if e.path == "native" {
        "native workers"
    } else {
        "Lua workers"
    };
    let placement = if e.event_loops > 0 {
        format!("on {} event loops", e.event_loops)
    } else {
        "on a thread each".to_string()
    };
    let reason = e
        .lua_reason
        .as_ref()
        .map(|r| format!(" (Lua because of {r})"))
        .unwrap_or_default();
    let fast = if e.mysql_fast_path { "on" } else { "off" };
    let pgsql = if e.pgsql_fast_path {
        ", PostgreSQL fast path on"
    } else {
        ""
    };
    format!("Execution: {workers} {placement}{reason}, MySQL fast path {fast}{pgsql}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_path_placement_reason_and_fast_path() {
        let e = Execution {
            path: "lua".into(),
            lua_reason: Some("--pin-tables".into()),
            workers: "threads".into(),
            event_loops: 0,
            mysql_fast_path: false,
            pgsql_fast_path: false,
        };
        assert_eq!(
            line(&e),
            "Execution: Lua workers on a thread each (Lua because of --pin-tables), MySQL fast path off"
        );
        let e = Execution {
            workers: "event_loops".into(),
            event_loops: 4,
            mysql_fast_path: true,
            ..e
        };
        assert_eq!(
            line(&e),
            "Execution: Lua workers on 4 event loops (Lua because of --pin-tables), MySQL fast path on"
        );
        let e = Execution {
            path: "native".into(),
            lua_reason: None,
            workers: "event_loops".into(),
            event_loops: 2,
            mysql_fast_path: true,
            pgsql_fast_path: false,
        };
        assert_eq!(
            line(&e),
            "Execution: native workers on 2 event loops, MySQL fast path on"
        );
        let e = Execution {
            mysql_fast_path: false,
            pgsql_fast_path: true,
            ..e
        };
        assert_eq!(
            line(&e),
            "Execution: native workers on 2 event loops, MySQL fast path off, PostgreSQL fast path on"
        );
    }

    #[test]
    fn threads_without_cooperative_workers_or_with_a_rate() {
        let opts = OptionSet::new();
        let config = RunConfig {
            threads: 8,
            event_loops: Some(2),
            ..RunConfig::default()
        };
        let e = record(&opts, &config, true, None);
        assert_eq!((e.workers.as_str(), e.event_loops), ("event_loops", 2));
        let e = record(&opts, &config, false, Some("x".into()));
        assert_eq!((e.workers.as_str(), e.event_loops), ("threads", 0));
        assert_eq!(e.path, "lua");
        let paced = RunConfig {
            rate: 100.0,
            ..config
        };
        assert_eq!(record(&opts, &paced, true, None).event_loops, 0);
    }
}
