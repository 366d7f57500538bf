//! Closing a TCP connection cheaply: the driver's goodbye message (MySQL's `COM_QUIT`,
//! PostgreSQL's `Terminate`) is held back and leaves together with the FIN in one
//! segment. On loopback the kernel delivers a segment to the server in the sender's own
//! context (its TCP receive path and the server thread's wake-up are charged to the
//! client's CPU), so one segment instead of two saves a delivery per connect.

use std::os::fd::RawFd;

/// Holds back what is written to TCP socket `fd` from now on until it is closed
/// (`TCP_CORK`): the close then sends it with the FIN. Harmless on other sockets (the
/// option is refused and nothing changes).
pub(crate) fn hold_until_close(fd: RawFd) {
    let on: libc::c_int = 1;
    // SAFETY: `on` is a valid c_int of the size given; the kernel checks `fd`.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CORK,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Sends `bytes` as the last message on socket `fd` without blocking, held back
/// (`MSG_MORE`) so that closing the socket right after sends it with the FIN. A full
/// socket buffer just loses it.
pub(crate) fn send_last(fd: RawFd, bytes: &[u8]) {
    // SAFETY: `bytes` is readable for its length; the kernel checks `fd`.
    unsafe {
        libc::send(
            fd,
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL | libc::MSG_MORE,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    #[test]
    fn the_last_message_arrives_before_the_end_of_stream() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        for corked in [false, true] {
            let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
            c.set_nodelay(true).unwrap();
            let (mut s, _) = l.accept().unwrap();
            if corked {
                hold_until_close(c.as_raw_fd());
                std::io::Write::write_all(&mut &c, b"bye").unwrap();
            } else {
                send_last(c.as_raw_fd(), b"bye");
            }
            drop(c);
            let mut got = Vec::new();
            s.read_to_end(&mut got).unwrap();
            assert_eq!(got, b"bye");
        }
    }
}
