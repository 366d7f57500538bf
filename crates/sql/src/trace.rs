//! `--db-debug` / `--mysql-debug` tracing of driver calls to stderr. Only statement
//! text and connection targets are traced, never credentials.

use std::io::Write as _;

/// Print one trace line `[driver] what: detail` to stderr.
pub(crate) fn trace(driver: &str, what: &str, detail: &str) {
    let stderr = std::io::stderr();
    let mut lock = stderr.lock();
    let _ = writeln!(lock, "DEBUG: {driver}: {what}: {detail}");
}

/// [`trace`] when `enabled`, with a detail built only then: a connect loop would
/// otherwise format its target for every connection and throw it away.
pub(crate) fn trace_if(enabled: bool, driver: &str, what: &str, detail: impl FnOnce() -> String) {
    if enabled {
        trace(driver, what, &detail());
    }
}
