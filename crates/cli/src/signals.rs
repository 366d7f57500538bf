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

/// Restores the default SIGPIPE action so `bmk ... | head` ends quietly.
pub fn default_sigpipe() {
    // SAFETY: setting a signal disposition to SIG_DFL has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
