//! Child `bmk` processes that must not outlive the process that started them: a sweep's
//! level processes, and the parts of a level split over several processes.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes the child that `cmd` starts receive SIGTERM when its parent dies, so that a
/// killed sweep or split run leaves no benchmark running on unattended.
pub fn stop_with_parent(cmd: &mut Command) {
    // SAFETY: the closure runs in the child between fork and exec and only calls
    // prctl, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGTERM as libc::c_ulong,
                0,
                0,
                0,
            );
            Ok(())
        });
    }
}
