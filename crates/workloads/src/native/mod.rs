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
//! compare). `BMK_NATIVE_OLTP=0` in the environment turns the native path off.

mod plan;
mod worker;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use bmk_engine::options::OptionSet;
use bmk_engine::Workload;
use bmk_sql::{Driver, DriverConfig, DriverKind};

use plan::OltpPlan;
use worker::NativeOltp;

/// The native workload for built-in workload `workload` with these (validated)
/// options, or `None` when the workload must run in Lua.
pub fn native_workload(workload: &str, opts: &OptionSet) -> Option<Arc<dyn Workload>> {
    if std::env::var("BMK_NATIVE_OLTP").is_ok_and(|v| v == "0") {
        return None;
    }
    let plan = OltpPlan::for_workload(workload, opts)?;
    let kind: DriverKind = opts
        .raw("db-driver")
        .unwrap_or_else(|| "mysql".into())
        .parse()
        .ok()?;
    // A configuration error is reported by the Lua path, in its words.
    let config = DriverConfig::from_options(kind, &|n| opts.raw(n)).ok()?;
    Some(Arc::new(NativeOltp {
        plan: Arc::new(plan),
        driver: Driver::new(config),
        connections: AtomicUsize::new(0),
    }))
}
