//! SIGINT/SIGTERM: the first one asks the run to stop and report, which it does within
//! the engine's interrupt grace even with workers stuck in a server call; a second one
//! is absorbed (an impatient Ctrl-C must not lose the report that is on its way); a
//! third terminates the process at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};

/// Installs the handlers; the returned cell holds the number of the signal received.
pub fn install() -> std::io::Result<Arc<AtomicUsize>> {
    let received = Arc::new(AtomicUsize::new(0));
    let deliveries = Arc::new(AtomicUsize::new(0));
    let third = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // Order matters: the conditional default is registered first so it only fires
        // once `third` has been set by the second delivery, i.e. on the third.
        signal_hook::flag::register_conditional_default(sig, third.clone())?;
        let (deliveries, third) = (deliveries.clone(), third.clone());
        // SAFETY: the action only touches atomics, which is async-signal-safe.
        unsafe {
            signal_hook::low_level::register(sig, move || {
                if deliveries.fetch_add(1, Ordering::SeqCst) >= 1 {
                    third.store(true, Ordering::SeqCst);
                }
            })?;
        }
        signal_hook::flag::register_usize(sig, received.clone(), sig as usize)?;
    }
    Ok(received)
}

/// The conventional exit code for death by `signal`.
pub fn exit_code(signal: i32) -> i32 {
    128 + signal
}

/// Ends the process quietly when standard output is a closed pipe (`bmk ... | head`),
/// while a write to a closed *database* socket keeps returning EPIPE to the driver,
/// which then reconnects or reports the lost connection.
///
/// The default SIGPIPE action cannot tell the two apart and would kill a run whose
/// server dropped a connection, so the handler asks `poll` (async-signal-safe) whether
/// it is stdout whose reader went away.
pub fn quiet_sigpipe_on_stdout() {
    extern "C" fn on_sigpipe(_: libc::c_int) {
        let mut pfd = libc::pollfd {
            fd: libc::STDOUT_FILENO,
            events: 0,
            revents: 0,
        };
        // SAFETY: poll and _exit are async-signal-safe; pfd lives on this stack frame.
        unsafe {
            if libc::poll(&mut pfd, 1, 0) == 1 && pfd.revents & (libc::POLLERR | libc::POLLHUP) != 0
            {
                libc::_exit(0);
            }
        }
    }
    // SAFETY: installs a handler that only calls async-signal-safe functions.
    unsafe {
        libc::signal(
            libc::SIGPIPE,
            on_sigpipe as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}
