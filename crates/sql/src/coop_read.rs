//! Reading a socket from an event-loop worker: the coroutine is suspended (instead of
//! its thread blocked) while the answer has not arrived. Shared by the drivers' own
//! protocol paths (`mysql_fast.rs`, `pgsql/wire.rs`).

use std::io;
use std::os::fd::RawFd;

/// One read of what the socket `fd` has into `buf`, for both drivers' own protocol
/// paths. On an event loop the worker is suspended while nothing has arrived
/// (`socket_id` is given its loop-wide id on first use; `awaiting`, set by a send, skips
/// the read that would find nothing right after it); elsewhere the read blocks, bounded
/// by the socket's own receive timeout. Returns 0 at end of stream.
pub(crate) fn read_some(
    fd: RawFd,
    socket_id: &mut u64,
    awaiting: &mut bool,
    buf: &mut [u8],
) -> io::Result<usize> {
    if bmk_engine::coop::active() {
        if *socket_id == 0 {
            *socket_id = bmk_engine::coop::new_socket_id();
        }
        let first_wait = std::mem::take(awaiting);
        return read_cooperatively(fd, *socket_id, first_wait, buf);
    }
    read_blocking(fd, buf)
}

/// One read of what the socket `fd` has into `buf`, blocking the thread (even on an
/// event loop) until something arrives or the socket's receive timeout passes.
/// Returns 0 at end of stream.
pub(crate) fn read_blocking(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is writable for `buf.len()` bytes; `fd` is the live socket.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Reads what `fd` has, suspending the calling event-loop worker (instead of
/// blocking its thread) while there is nothing yet.
fn read_cooperatively(
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
