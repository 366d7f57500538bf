//! Native Rust workers for the stock OLTP workloads.
//!
//! `bmk oltp_read_write ... run` (a built-in workload by name) runs its events in Rust
//! when the options ask for nothing beyond what [`plan`] reproduces: no Lua state per
//! worker (the memory of thousands of connections is then the connections'), no Lua
//! between the random draws and the driver. The Lua workload still owns everything
//! else — option declarations, help, `prepare`/`cleanup`/`warmup`, `init()`/`done()`,
//! and every run that uses a BMK-kit extension — and a script that
//! `require("oltp_common")` always runs in Lua. The statements, parameters, random
//! draws, counters and restart rules match the Lua workloads (the tests run both and
//! compare). `--native-oltp=off` (or, when that option is not given,
//! `BMK_NATIVE_OLTP=0` in the environment) turns the native path off. [`choose`] says
//! which path runs and why, for the results file and `--verbosity=4`.

mod plan;
mod worker;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use bmk_engine::options::OptionSet;
use bmk_engine::Workload;
use bmk_sql::{Driver, DriverConfig, DriverKind};

use plan::OltpPlan;
use worker::NativeOltp;

/// Which workers run a built-in workload's events.
pub enum Choice {
    /// The native workers.
    Native(Arc<dyn Workload>),
    /// The Lua workload, for this reason (an option as `--name`, a switch, an
    /// environment variable, or a workload without native workers).
    Lua(String),
}

/// The environment variable that stands in for `--native-oltp` when it is not given.
pub const NATIVE_OLTP_ENV: &str = "BMK_NATIVE_OLTP";

/// Whether the native path is switched off, and by what: `--native-oltp=off`, else
/// `BMK_NATIVE_OLTP=0` (or `off`/`no`/`false`).
fn switched_off(opts: &OptionSet) -> Option<String> {
    if opts.is_given("native-oltp") {
        return (!opts.flag("native-oltp")).then(|| "--native-oltp=off".to_string());
    }
    let env = std::env::var(NATIVE_OLTP_ENV).ok()?;
    (bmk_engine::options::parse_bool(&env) == Some(false))
        .then(|| format!("{NATIVE_OLTP_ENV}={env}"))
}

/// The workers for built-in workload `workload` with these (validated) options:
/// native when the workload has native workers and every workload option given is one
/// they implement, else Lua with the reason. `script_options`: the canonical keys of
/// the options the workload's script declares.
pub fn choose(workload: &str, opts: &OptionSet, script_options: &[String]) -> Choice {
    if let Some(off) = switched_off(opts) {
        return Choice::Lua(off);
    }
    let plan = match OltpPlan::for_workload(workload, opts, script_options) {
        Ok(plan) => plan,
        Err(reason) => return Choice::Lua(reason),
    };
    let kind: DriverKind = match opts
        .raw("db-driver")
        .unwrap_or_else(|| "mysql".into())
        .parse()
    {
        Ok(kind) => kind,
        Err(_) => return Choice::Lua("--db-driver".into()),
    };
    // A configuration error is reported by the Lua path, in its words.
    // Only the options given: a default filled in would hide the environment variables
    // that stand in for the fast-path switches (`BMK_MYSQL_FASTPATH`, ...) when not given.
    let given = |n: &str| opts.is_given(n).then(|| opts.raw(n)).flatten();
    let config = match DriverConfig::from_options(kind, &given) {
        Ok(config) => config,
        Err(_) => return Choice::Lua("the driver's options".into()),
    };
    Choice::Native(Arc::new(NativeOltp {
        plan: Arc::new(plan),
        driver: Driver::new(config),
        connections: AtomicUsize::new(0),
    }))
}
