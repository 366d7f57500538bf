//! SIGINT/SIGTERM: the first one asks the run to stop and report; a second one of the
//! same kind terminates the process at once (for a run stuck in a server call).

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};

/// Installs the handlers; the returned cell holds the number of the signal received.
pub fn install() -> std::io::Result<Arc<AtomicUsize>> {
    let received = Arc::new(AtomicUsize::new(0));
    let second = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // Order matters: the conditional default is registered first so it only fires
        // once `second` has been set by an earlier delivery.
        signal_hook::flag::register_conditional_default(sig, second.clone())?;
        signal_hook::flag::register(sig, second.clone())?;
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
