//! `--db-debug` / `--mysql-debug` tracing of driver calls to stderr. Only statement
//! text and connection targets are traced, never credentials.

use std::io::Write as _;

/// Print one trace line `[driver] what: detail` to stderr.
pub(crate) fn trace(driver: &str, what: &str, detail: &str) {
    let stderr = std::io::stderr();
    let mut lock = stderr.lock();
    let _ = writeln!(lock, "DEBUG: {driver}: {what}: {detail}");
}
