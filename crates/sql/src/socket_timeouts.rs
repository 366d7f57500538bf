//! Bounding a blocking connect by kernel socket timeouts: both drivers run their
//! handshakes on the calling thread with every read and write limited by
//! `SO_RCVTIMEO`/`SO_SNDTIMEO`, instead of handing the handshake to a helper thread
//! bounded as a whole (a thread start and two cross-CPU wake-ups per connect, which
//! were most of a connect's client CPU; see BENCHMARKS.md).

use std::io::{self, ErrorKind};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

/// Whether a socket read or write gave up at its timeout (`SO_RCVTIMEO` reports
/// `EAGAIN`).
pub(crate) fn timed_out(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Sets the receive and send timeouts of socket `fd` (`None`: block without limit).
pub(crate) fn set_socket_timeouts(fd: RawFd, timeout: Option<Duration>) -> std::io::Result<()> {
    // A zero timeval means no limit; a limit below a microsecond is rounded up to one.
    let t = timeout.map_or(Duration::ZERO, |t| t.max(Duration::from_micros(1)));
    let tv = libc::timeval {
        tv_sec: t.as_secs() as libc::time_t,
        tv_usec: libc::suseconds_t::from(t.subsec_micros()),
    };
    for opt in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
        // SAFETY: `tv` is a valid timeval of the size given; the kernel checks `fd`.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Why [`connect_tcp`] failed.
#[derive(Debug)]
pub(crate) enum ConnectFailure {
    /// The last address tried did not answer within the limit.
    TimedOut,
    /// Name resolution, or the last address tried, failed.
    Io(io::Error),
}

/// Connects to `host:port`, trying its addresses in turn, each attempt bounded by
/// `limit`: the socket gets `limit` as its read and write timeouts first, and a
/// blocking `connect` gives up at the send timeout. Returns the stream with those
/// timeouts still set and `TCP_NODELAY` on. Both drivers' own clients connect here:
/// cheaper than a non-blocking connect with `poll` and the mode changes around it
/// (four `fcntl`s), and their handshakes need the timeouts anyway.
pub(crate) fn connect_tcp(
    host: &str,
    port: u16,
    limit: Duration,
) -> Result<TcpStream, ConnectFailure> {
    let mut last = ConnectFailure::Io(io::Error::new(
        ErrorKind::NotFound,
        "no address for the host",
    ));
    for addr in (host, port).to_socket_addrs().map_err(ConnectFailure::Io)? {
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
            .map_err(ConnectFailure::Io)?;
        set_socket_timeouts(s.as_raw_fd(), Some(limit)).map_err(ConnectFailure::Io)?;
        match s.connect(&SockAddr::from(addr)) {
            Ok(()) => {
                s.set_tcp_nodelay(true).map_err(ConnectFailure::Io)?;
                return Ok(s.into());
            }
            // A blocking connect that reached the send timeout reports "in progress".
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) || timed_out(&e) => {
                last = ConnectFailure::TimedOut;
            }
            Err(e) => last = ConnectFailure::Io(e),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::time::Instant;

    #[test]
    fn a_read_with_nothing_to_read_gives_up_at_the_timeout() {
        let (mut a, b) = UnixStream::pair().unwrap();
        set_socket_timeouts(a.as_raw_fd(), Some(Duration::from_millis(50))).unwrap();
        let t = Instant::now();
        let e = a.read(&mut [0u8; 4]).unwrap_err();
        assert!(timed_out(&e), "{e:?}");
        assert!(t.elapsed() >= Duration::from_millis(40));
        // No limit again: a read finds what was sent.
        set_socket_timeouts(a.as_raw_fd(), None).unwrap();
        std::io::Write::write_all(&mut &b, b"x").unwrap();
        assert_eq!(a.read(&mut [0u8; 4]).unwrap(), 1);
    }

    #[test]
    fn socket_timeouts_are_set_and_cleared() {
        let (a, _b) = UnixStream::pair().unwrap();
        set_socket_timeouts(a.as_raw_fd(), Some(Duration::from_millis(1500))).unwrap();
        assert_eq!(a.read_timeout().unwrap(), Some(Duration::from_millis(1500)));
        assert_eq!(
            a.write_timeout().unwrap(),
            Some(Duration::from_millis(1500))
        );
        set_socket_timeouts(a.as_raw_fd(), None).unwrap();
        assert_eq!(a.read_timeout().unwrap(), None);
        assert_eq!(a.write_timeout().unwrap(), None);
    }
}
