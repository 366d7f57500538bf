//! The SQL API's messages (FATAL: level 0, ALERT: level 1), printed as sysbench's log prints them: on stdout (C's, as
//! Lua's `print`), one line per message, shown only up to `--verbosity`, and a message
//! repeated right after itself printed once, its repeats told as
//! `(last message repeated N times)` before the next different message.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

/// A misuse of the API (`ALERT: `), shown from verbosity 1.
pub(crate) const ALERT: i64 = 1;

/// `--verbosity`, as the CLI validated it (sysbench's default, 3, until set).
static VERBOSITY: AtomicI64 = AtomicI64::new(3);

/// The last message printed and how many times it came again since.
static LAST: Mutex<(String, u32)> = Mutex::new((String::new(), 0));

/// Sets the verbosity messages are filtered by.
pub(crate) fn set_verbosity(v: i64) {
    VERBOSITY.store(v, Ordering::Relaxed);
}

/// A script's failure that does not end the run (a report hook that raised): its
/// `FATAL:` line through the same log, so that a hook failing at every report prints
/// once and then `(last message repeated N times)`.
pub fn log_fatal(line: &str) {
    log_line(0, line);
}

/// Tells the repeats of the last message, if any, before output that does not go
/// through this log (the final report), as sysbench's next log line would.
pub fn end_repeats() {
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if last.1 == 0 {
        return;
    }
    let text = format!("(last message repeated {} times)\n", last.1);
    last.0.clear();
    last.1 = 0;
    // SAFETY: as in `log_line`.
    unsafe {
        libc::fwrite(
            text.as_ptr().cast(),
            1,
            text.len(),
            crate::report::c_stdout(),
        );
        libc::fflush(crate::report::c_stdout());
    }
}

/// Prints `line` (its prefix included) at `level`, as sysbench's log would.
pub(crate) fn log_line(level: i64, line: &str) {
    if level > VERBOSITY.load(Ordering::Relaxed) {
        return;
    }
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if last.0 == line {
        last.1 += 1;
        return;
    }
    let mut text = Vec::with_capacity(line.len() + 40);
    if last.1 > 0 {
        text.extend_from_slice(format!("(last message repeated {} times)\n", last.1).as_bytes());
    }
    last.0.clear();
    last.0.push_str(line);
    last.1 = 0;
    text.extend_from_slice(line.as_bytes());
    text.push(b'\n');
    // SAFETY: fwrite on the process's stdout stream with a valid buffer; glibc locks
    // the stream for the duration of the call.
    unsafe {
        libc::fwrite(
            text.as_ptr().cast(),
            1,
            text.len(),
            crate::report::c_stdout(),
        );
        libc::fflush(crate::report::c_stdout());
    }
}
