//! Bounding blocking socket calls by kernel socket timeouts: both drivers' own clients
//! run their handshakes on the calling thread with every read and write limited by
//! `SO_RCVTIMEO`/`SO_SNDTIMEO`, instead of handing the handshake to a helper thread
//! bounded as a whole (a thread start and two cross-CPU wake-ups per connect, which
//! were most of a connect's client CPU; see BENCHMARKS.md). A [`ReadDeadline`] makes
//! the same timeouts bound a read made of many `recv`s as a whole (the handshake, a
//! packet, a message).
//!
//! The crates' logins are the exception: the `mysql` crate's (TLS, compression, logins
//! bmk's own handshake does not do) and the `postgres` crate's (the certificate-verifying
//! modes, or `--pgsql-fast-path=off`) run on a helper thread bounded as a whole
//! (`deadline.rs`), as their sockets are not bmk's until they return.

use std::io::{self, ErrorKind};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

/// Whether a socket read or write gave up at its timeout (`SO_RCVTIMEO` reports
/// `EAGAIN`).
pub(crate) fn timed_out(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Sets the receive and send timeouts of socket `fd` (`None`: block without limit).
pub(crate) fn set_socket_timeouts(fd: RawFd, timeout: Option<Duration>) -> io::Result<()> {
    set_timeout(fd, libc::SO_RCVTIMEO, timeout)?;
    set_timeout(fd, libc::SO_SNDTIMEO, timeout)
}

/// Sets the receive timeout of socket `fd` alone (`None`: block without limit).
pub(crate) fn set_receive_timeout(fd: RawFd, timeout: Option<Duration>) -> io::Result<()> {
    set_timeout(fd, libc::SO_RCVTIMEO, timeout)
}

/// Sets the send timeout of socket `fd` alone (`None`: block without limit).
pub(crate) fn set_send_timeout(fd: RawFd, timeout: Option<Duration>) -> io::Result<()> {
    set_timeout(fd, libc::SO_SNDTIMEO, timeout)
}

/// Sets socket option `which` (`SO_RCVTIMEO` or `SO_SNDTIMEO`) of `fd`.
fn set_timeout(fd: RawFd, which: libc::c_int, timeout: Option<Duration>) -> io::Result<()> {
    // A zero timeval means no limit; a limit below a microsecond is rounded up to one.
    let t = timeout.map_or(Duration::ZERO, |t| t.max(Duration::from_micros(1)));
    let tv = libc::timeval {
        tv_sec: t.as_secs() as libc::time_t,
        tv_usec: libc::suseconds_t::from(t.subsec_micros()),
    };
    // SAFETY: `tv` is a valid timeval of the size given; the kernel checks `fd`.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            which,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// How far past a [`ReadDeadline`] the socket's receive timeout may reach before it is
/// lowered: lowering it is a system call, which a read that completes in one `recv`
/// (nearly all of them) should not pay. A whole read is then bounded by its limit plus
/// at most this.
const DEADLINE_SLACK: Duration = Duration::from_millis(50);

/// A limit on a whole read made of several `recv`s (a handshake, a packet, a message)
/// on a blocking socket. The socket's receive timeout bounds each `recv` alone, so a
/// server that sends one byte just before it runs out could stretch the read without
/// end; before each `recv` the timeout is lowered to what is left of the deadline when
/// it would reach past it. Cheaper than a helper thread or a watchdog that shuts the
/// socket down (nothing but a clock read per `recv` while the read goes well), and it
/// keeps the read on the calling thread.
pub(crate) struct ReadDeadline {
    at: Instant,
    /// The socket's receive timeout now (`None`: none).
    armed: Option<Duration>,
    /// The receive timeout the socket had when the read began.
    base: Option<Duration>,
}

impl ReadDeadline {
    /// A deadline at `at` on a socket whose receive timeout is `armed`.
    pub(crate) fn new(at: Instant, armed: Option<Duration>) -> ReadDeadline {
        ReadDeadline {
            at,
            armed,
            base: armed,
        }
    }

    /// To be called before each `recv` of the read: a timeout error once the deadline
    /// has passed, else the receive timeout lowered if it would reach past it.
    pub(crate) fn before_recv(&mut self, fd: RawFd) -> io::Result<()> {
        let left = self.at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::from(ErrorKind::TimedOut));
        }
        if self.armed.is_none_or(|a| a > left + DEADLINE_SLACK) {
            set_receive_timeout(fd, Some(left))?;
            self.armed = Some(left);
        }
        Ok(())
    }

    /// Whether the receive timeout was lowered (and is not the one the read began with).
    pub(crate) fn lowered(&self) -> bool {
        self.armed != self.base
    }

    /// After the read: the socket's receive timeout as it was, if it was lowered.
    pub(crate) fn restore(&mut self, fd: RawFd) -> io::Result<()> {
        if self.lowered() {
            set_receive_timeout(fd, self.base)?;
            self.armed = self.base;
        }
        Ok(())
    }
}

/// Why [`connect_tcp`] failed.
#[derive(Debug)]
pub(crate) enum ConnectFailure {
    /// The last address tried did not answer within the limit.
    TimedOut,
    /// Name resolution, or the last address tried, failed.
    Io(io::Error),
}

/// Connects to `host:port`, trying its addresses in turn, all of them by `deadline`:
/// each socket gets what is left (at most `limit`) as its read and write timeouts
/// first, and a blocking `connect` gives up at the send timeout. Returns the stream
/// with those timeouts still set (at most `limit`) and `TCP_NODELAY` on. Both drivers'
/// own clients connect here: cheaper than a non-blocking connect with `poll` and the
/// mode changes around it (four `fcntl`s), and their handshakes need the timeouts
/// anyway.
pub(crate) fn connect_tcp(
    host: &str,
    port: u16,
    limit: Duration,
    deadline: Instant,
) -> Result<TcpStream, ConnectFailure> {
    let mut last = ConnectFailure::Io(io::Error::new(
        ErrorKind::NotFound,
        "no address for the host",
    ));
    for addr in (host, port).to_socket_addrs().map_err(ConnectFailure::Io)? {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .min(limit);
        if left.is_zero() {
            return Err(ConnectFailure::TimedOut);
        }
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
            .map_err(ConnectFailure::Io)?;
        set_socket_timeouts(s.as_raw_fd(), Some(left)).map_err(ConnectFailure::Io)?;
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
    fn a_read_deadline_bounds_a_trickle_as_a_whole() {
        let (mut a, b) = UnixStream::pair().unwrap();
        set_socket_timeouts(a.as_raw_fd(), Some(Duration::from_secs(5))).unwrap();
        let feeder = std::thread::spawn(move || {
            // One byte every 100 ms: every single read completes well within 5 s.
            for _ in 0..30 {
                if std::io::Write::write_all(&mut &b, b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let t = Instant::now();
        let mut d = ReadDeadline::new(t + Duration::from_millis(500), Some(Duration::from_secs(5)));
        let mut got = 0;
        let e = loop {
            if let Err(e) = d.before_recv(a.as_raw_fd()) {
                break e;
            }
            match a.read(&mut [0u8; 1]) {
                Ok(n) => got += n,
                Err(e) => break e,
            }
        };
        assert!(timed_out(&e), "{e:?}");
        assert!(got >= 3, "{got}");
        let took = t.elapsed();
        assert!(
            took < Duration::from_millis(500) + DEADLINE_SLACK + Duration::from_millis(100),
            "{took:?}"
        );
        assert!(d.lowered());
        d.restore(a.as_raw_fd()).unwrap();
        assert_eq!(a.read_timeout().unwrap(), Some(Duration::from_secs(5)));
        drop(a);
        feeder.join().unwrap();
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
