//! Reading a socket from an event-loop worker: the coroutine is suspended (instead of
//! its thread blocked) while the answer has not arrived. Shared by the drivers' own
//! protocol paths (`mysql_fast.rs`, `pgsql/wire.rs`).

use std::io;
use std::os::fd::RawFd;

/// Reads what `fd` has, suspending the calling event-loop worker (instead of
/// blocking its thread) while there is nothing yet.
pub(crate) fn read_cooperatively(
    fd: RawFd,
    socket: u64,
    wait_first: bool,
    buf: &mut [u8],
) -> io::Result<usize> {
    if wait_first {
        // Right after sending, the answer is never there yet: skip the empty read.
        bmk_engine::coop::wait_readable(fd, socket);
    }
    loop {
        // SAFETY: `buf` is writable for `buf.len()` bytes; `fd` is the live socket.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => {
                bmk_engine::coop::wait_readable(fd, socket);
            }
            _ => return Err(e),
        }
    }
}
