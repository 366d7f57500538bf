//! TLS for the own protocol client: a rustls client session over the connection's TCP
//! socket, driven by the caller's socket reads. The caller reads ciphertext the way it
//! reads a plain socket (blocking during the handshake, suspended on an event loop
//! afterwards), so a TLS connection keeps the plain one's costs apart from the
//! cryptography: no runtime, no helper thread, no extra copy of the plaintext.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};

use crate::socket_timeouts::ReadDeadline;

/// Ciphertext read from the socket at a time: a full TLS record and its header.
const CIPHER_BUF: usize = 16 * 1024 + 512;

/// A TLS session over a TCP socket.
pub(super) struct TlsStream {
    tcp: TcpStream,
    session: ClientConnection,
    /// Ciphertext read from the socket and not yet handed to the session:
    /// `cipher[start..end]`.
    cipher: Box<[u8]>,
    start: usize,
    end: usize,
}

impl TlsStream {
    /// Runs the TLS handshake on `tcp` (blocking, bounded by the socket's timeouts
    /// and, as a whole, by `deadline`), for server `host` (a name that is no DNS name
    /// or IP address, such as a UNIX socket directory, is checked as `localhost`).
    pub(super) fn handshake(
        mut tcp: TcpStream,
        config: Arc<ClientConfig>,
        host: &str,
        deadline: &mut ReadDeadline,
    ) -> io::Result<TlsStream> {
        let name = ServerName::try_from(host.to_string())
            .unwrap_or_else(|_| ServerName::try_from("localhost").expect("a valid name"));
        let mut session = ClientConnection::new(config, name).map_err(io::Error::other)?;
        let mut bounded = Bounded {
            tcp: &mut tcp,
            deadline,
        };
        while session.is_handshaking() {
            session.complete_io(&mut bounded)?;
        }
        Ok(TlsStream {
            tcp,
            session,
            cipher: vec![0; CIPHER_BUF].into_boxed_slice(),
            start: 0,
            end: 0,
        })
    }

    /// Reads decrypted bytes into `buf`; `read_cipher` reads what the socket has into
    /// the slice it is given (0 at end of stream). Returns 0 at end of stream.
    pub(super) fn read_plain(
        &mut self,
        buf: &mut [u8],
        mut read_cipher: impl FnMut(RawFd, &mut [u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        loop {
            match self.session.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed without a close_notify: the end of the stream.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            if self.start == self.end {
                let fd = self.tcp.as_raw_fd();
                let n = read_cipher(fd, &mut self.cipher)?;
                if n == 0 {
                    return Ok(0);
                }
                self.start = 0;
                self.end = n;
            }
            // The session's plaintext was drained above, so it takes what it is given.
            let mut pending = &self.cipher[self.start..self.end];
            let took = self.session.read_tls(&mut pending)?;
            if took == 0 {
                return Err(io::Error::other("TLS session took no data"));
            }
            self.start += took;
            self.session
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
    }

    /// Encrypts `bytes` and writes them to the socket (blocking). The session buffers
    /// a limited amount of plaintext, so large requests go in pieces.
    pub(super) fn write_plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut rest = bytes;
        loop {
            let took = self.session.writer().write(rest)?;
            rest = &rest[took..];
            let mut flushed = false;
            while self.session.wants_write() {
                self.session.write_tls(&mut self.tcp)?;
                flushed = true;
            }
            if rest.is_empty() {
                return Ok(());
            }
            if took == 0 && !flushed {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "TLS session took no data",
                ));
            }
        }
    }

    /// The ciphertext of `last` followed by the session's close_notify, for a
    /// goodbye sent without blocking.
    pub(super) fn goodbye(&mut self, last: &[u8]) -> Vec<u8> {
        let _ = self.session.writer().write_all(last);
        self.session.send_close_notify();
        let mut out = Vec::new();
        while self.session.wants_write() {
            if self.session.write_tls(&mut out).is_err() {
                break;
            }
        }
        out
    }
}

/// The socket during the handshake: every read within the deadline.
struct Bounded<'a> {
    tcp: &'a mut TcpStream,
    deadline: &'a mut ReadDeadline,
}

impl Read for Bounded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.deadline.before_recv(self.tcp.as_raw_fd())?;
        self.tcp.read(buf)
    }
}

impl Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tcp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.tcp.flush()
    }
}

impl AsRawFd for TlsStream {
    fn as_raw_fd(&self) -> RawFd {
        self.tcp.as_raw_fd()
    }
}
