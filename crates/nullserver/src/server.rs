//! The listening sockets and one event loop per thread: each thread has its own
//! listener per protocol on the same port (`SO_REUSEPORT`, so the kernel spreads new
//! connections over the threads) and serves the connections it accepted until they
//! close. A connection's requests are answered as soon as they are complete, in the
//! order they came; everything answered from one read goes out in one write.
//!
//! Why `mio`: it is epoll itself with safe registration, no runtime, no task
//! scheduling and no allocation per event, so the server's cost per query is its
//! `read`, its parsing and its `write`. It is edge-triggered, so a connection is read
//! until a read comes back short of the buffer: on Linux a readiness edge is raised
//! for every arrival of new data, so a short read has taken everything that was there
//! and whatever comes later raises a new edge (this saves the extra `read` that would
//! return `EAGAIN` on every query).

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use socket2::{Domain, Socket, Type};

use crate::faults::Action;
use crate::flow::Flow;
use crate::mysql::MysqlSession;
use crate::options::Config;
use crate::pgsql::PgSession;
use crate::session::Protocol;

/// Answers waiting to be written beyond which a connection's requests are left unread
/// until the client has read some (a client that pipelines without reading).
const OUT_LIMIT: usize = 1 << 20;
/// First size of a connection's input buffer (grown for larger requests).
const INPUT_BUF: usize = 16 * 1024;
/// Tokens below this are listeners.
const FIRST_CONN: usize = 2;

/// Connection ids (MySQL's connection id, PostgreSQL's backend pid), process-wide.
static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// Which protocol a listener speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// MySQL.
    Mysql,
    /// PostgreSQL.
    Pgsql,
}

/// The bound listeners of all threads, before serving.
pub struct Bound {
    /// The MySQL address, if served.
    pub mysql: Option<SocketAddr>,
    /// The PostgreSQL address, if served.
    pub pgsql: Option<SocketAddr>,
    per_thread: Vec<Vec<(std::net::TcpListener, Kind)>>,
}

/// A listener on 127.0.0.1:`port` that other threads can share (`SO_REUSEPORT`).
fn listener(port: u16) -> io::Result<std::net::TcpListener> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    s.set_reuse_address(true)?;
    s.set_reuse_port(true)?;
    s.set_nonblocking(true)?;
    s.bind(&SocketAddr::from((Ipv4Addr::LOCALHOST, port)).into())?;
    s.listen(4096)?;
    Ok(s.into())
}

/// Binds the listeners of every thread (port 0: the kernel picks one, shared by all).
pub fn bind(config: &Config) -> io::Result<Bound> {
    let mut per_thread: Vec<Vec<(std::net::TcpListener, Kind)>> = Vec::new();
    let mut addrs = [None, None];
    for t in 0..config.threads {
        let mut mine = Vec::new();
        for (slot, (port, kind)) in [
            (config.mysql_port, Kind::Mysql),
            (config.pgsql_port, Kind::Pgsql),
        ]
        .into_iter()
        .enumerate()
        {
            let Some(port) = port else { continue };
            let port = match (t, addrs[slot]) {
                (0, _) | (_, None) => port,
                (_, Some(a)) => SocketAddr::port(&a),
            };
            let l = listener(port).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot listen on 127.0.0.1:{port}: {e}"))
            })?;
            if t == 0 {
                addrs[slot] = Some(l.local_addr()?);
            }
            mine.push((l, kind));
        }
        per_thread.push(mine);
    }
    Ok(Bound {
        mysql: addrs[0],
        pgsql: addrs[1],
        per_thread,
    })
}

/// Serves forever on the bound listeners, one thread each.
pub fn serve(bound: Bound, config: Arc<Config>) -> io::Result<()> {
    let mut handles = Vec::new();
    for (t, listeners) in bound.per_thread.into_iter().enumerate() {
        let config = config.clone();
        let mut worker = Worker::new(listeners, config)?;
        handles.push(
            std::thread::Builder::new()
                .name(format!("null-{t}"))
                .spawn(move || worker.run())?,
        );
    }
    for h in handles {
        h.join()
            .map_err(|_| io::Error::other("a server thread panicked"))??;
    }
    Ok(())
}

/// An answer held back by `--delay-ms`.
struct Delayed {
    at: Instant,
    index: usize,
    generation: u64,
    end: usize,
}

/// One client connection.
struct Conn {
    stream: TcpStream,
    session: Protocol,
    generation: u64,
    input: Vec<u8>,
    head: usize,
    tail: usize,
    out: Vec<u8>,
    /// Bytes of `out` already written.
    written: usize,
    /// Bytes of `out` that may be written (the rest waits for its delay).
    released: usize,
    /// End of the last complete answer to a query (faults cut back to it).
    mark: usize,
    /// Delayed answers not yet released (`out` is not reset while there are any).
    delays: usize,
    queries: u64,
    frozen: bool,
}

impl Conn {
    /// Writes what is released; false when the socket cannot take it all now.
    fn flush(&mut self) -> io::Result<bool> {
        while self.written < self.released {
            match self.stream.write(&self.out[self.written..self.released]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.written == self.out.len() && self.delays == 0 {
            self.out.clear();
            self.written = 0;
            self.released = 0;
            self.mark = 0;
        }
        Ok(true)
    }

    /// Reads once into the input buffer: `Ok(None)` at end of stream, else whether the
    /// read filled the buffer (more may be waiting).
    fn read(&mut self) -> io::Result<Option<bool>> {
        if self.head == self.tail {
            self.head = 0;
            self.tail = 0;
        } else if self.tail == self.input.len() {
            if self.head > 0 {
                self.input.copy_within(self.head..self.tail, 0);
                self.tail -= self.head;
                self.head = 0;
            } else {
                self.input.resize(self.input.len() * 2, 0);
            }
        }
        loop {
            match self.stream.read(&mut self.input[self.tail..]) {
                Ok(0) => return Ok(None),
                Ok(n) => {
                    self.tail += n;
                    if self.frozen {
                        self.head = self.tail;
                    }
                    return Ok(Some(self.tail == self.input.len()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Some(false)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Answers the complete requests in the input buffer, applying the faults.
    fn answer(&mut self, config: &Config, delayed: &mut VecDeque<Delayed>, index: usize) -> Flow {
        while !self.frozen && self.out.len() - self.written < OUT_LIMIT {
            let n = match self.session.next_request(&self.input[self.head..self.tail]) {
                Ok(Some(n)) => n,
                Ok(None) => break,
                Err(_) => return Flow::Close,
            };
            let req = &self.input[self.head..self.head + n];
            self.head += n;
            if !self.session.is_query(req) {
                let was_in = self.session.logged_in();
                let flow = self.session.answer(req, &mut self.out);
                if !was_in || flow == Flow::Close {
                    self.released = self.out.len();
                    self.mark = self.out.len();
                }
                if flow == Flow::Close {
                    return flow;
                }
                continue;
            }
            self.queries += 1;
            let mut flow = Flow::Continue;
            match config.faults.action(self.queries) {
                Action::Answer => flow = self.session.answer(req, &mut self.out),
                Action::Drop => {
                    self.out.truncate(self.mark);
                    return Flow::Close;
                }
                Action::Freeze => {
                    self.out.truncate(self.mark);
                    self.frozen = true;
                    self.head = self.tail;
                    break;
                }
                Action::Malformed => {
                    self.out.truncate(self.mark);
                    self.session.malformed(&mut self.out);
                }
            }
            self.mark = self.out.len();
            match config.faults.delay {
                Some(d) if flow == Flow::Continue => {
                    self.delays += 1;
                    delayed.push_back(Delayed {
                        at: Instant::now() + d,
                        index,
                        generation: self.generation,
                        end: self.out.len(),
                    });
                }
                _ => self.released = self.out.len(),
            }
            if flow == Flow::Close {
                return flow;
            }
        }
        Flow::Continue
    }

    /// Serves the connection after a readiness event: writes, reads, answers, until
    /// the socket has nothing more to give or cannot take more. False to close it.
    fn serve(&mut self, config: &Config, delayed: &mut VecDeque<Delayed>, index: usize) -> bool {
        loop {
            match self.flush() {
                Ok(true) => {}
                Ok(false) => return true,
                Err(_) => return false,
            }
            if self.out.len() - self.written >= OUT_LIMIT {
                return true;
            }
            let more = match self.read() {
                Ok(Some(more)) => more,
                Ok(None) | Err(_) => return false,
            };
            if self.answer(config, delayed, index) == Flow::Close {
                let _ = self.flush();
                return false;
            }
            if !more {
                return self.flush().is_ok();
            }
        }
    }
}

/// One thread's event loop.
struct Worker {
    poll: Poll,
    listeners: Vec<(TcpListener, Kind)>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    delayed: VecDeque<Delayed>,
    generation: u64,
    config: Arc<Config>,
}

impl Worker {
    fn new(
        listeners: Vec<(std::net::TcpListener, Kind)>,
        config: Arc<Config>,
    ) -> io::Result<Worker> {
        let poll = Poll::new()?;
        let mut ls = Vec::new();
        for (i, (l, kind)) in listeners.into_iter().enumerate() {
            let mut l = TcpListener::from_std(l);
            poll.registry()
                .register(&mut l, Token(i), Interest::READABLE)?;
            ls.push((l, kind));
        }
        Ok(Worker {
            poll,
            listeners: ls,
            conns: Vec::new(),
            free: Vec::new(),
            delayed: VecDeque::new(),
            generation: 0,
            config,
        })
    }

    fn run(&mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        loop {
            let timeout = self
                .delayed
                .front()
                .map(|d| d.at.saturating_duration_since(Instant::now()));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            for ev in events.iter() {
                let t = ev.token().0;
                if t < FIRST_CONN {
                    self.accept(t);
                } else {
                    self.serve(t - FIRST_CONN);
                }
            }
            self.release_due();
        }
    }

    fn accept(&mut self, which: usize) {
        loop {
            let (listener, kind) = &self.listeners[which];
            let kind = *kind;
            match listener.accept() {
                Ok((stream, _)) => self.add(stream, kind),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
                    ) => {}
                Err(e) => {
                    eprintln!("bmk-null-server: accept failed: {e}");
                    return;
                }
            }
        }
    }

    fn add(&mut self, mut stream: TcpStream, kind: Kind) {
        let _ = stream.set_nodelay(true);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let index = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        if self
            .poll
            .registry()
            .register(
                &mut stream,
                Token(index + FIRST_CONN),
                Interest::READABLE | Interest::WRITABLE,
            )
            .is_err()
        {
            self.free.push(index);
            return;
        }
        let mut session = match kind {
            Kind::Mysql => Protocol::Mysql(MysqlSession::new(
                self.config.mysql_auth,
                self.config.mysql_version.clone(),
                id,
            )),
            Kind::Pgsql => Protocol::Pgsql(PgSession::new(
                self.config.pgsql_auth,
                self.config.pgsql_version.clone(),
                id,
            )),
        };
        let mut out = Vec::with_capacity(1024);
        session.greet(&mut out);
        self.generation += 1;
        let len = out.len();
        self.conns[index] = Some(Conn {
            stream,
            session,
            generation: self.generation,
            input: vec![0; INPUT_BUF],
            head: 0,
            tail: 0,
            out,
            written: 0,
            released: len,
            mark: len,
            delays: 0,
            queries: 0,
            frozen: false,
        });
        self.serve(index);
    }

    fn serve(&mut self, index: usize) {
        let Some(conn) = self.conns.get_mut(index).and_then(Option::as_mut) else {
            return;
        };
        if !conn.serve(&self.config, &mut self.delayed, index) {
            self.close(index);
        }
    }

    fn close(&mut self, index: usize) {
        if let Some(mut conn) = self.conns[index].take() {
            let _ = self.poll.registry().deregister(&mut conn.stream);
            self.free.push(index);
        }
    }

    fn release_due(&mut self) {
        if self.delayed.is_empty() {
            return;
        }
        let now = Instant::now();
        while self.delayed.front().is_some_and(|d| d.at <= now) {
            let d = self.delayed.pop_front().expect("checked");
            let Some(conn) = self.conns.get_mut(d.index).and_then(Option::as_mut) else {
                continue;
            };
            if conn.generation != d.generation {
                continue;
            }
            conn.delays -= 1;
            conn.released = conn.released.max(d.end);
            self.serve(d.index);
        }
    }
}
