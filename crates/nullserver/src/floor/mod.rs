//! The round-trip floor: a client that does nothing but send the requests of an OLTP
//! event over N connections and wait for each reply, one request in flight per
//! connection, all connections on one thread's event loop. Its cost per event is what
//! the kernel's send, receive and wake-up cost on this machine, plus the least work
//! that finds where a reply ends; a benchmark tool can only come close to it.
//!
//! The requests are built once ([`workload`], then [`mysql::request`] or
//! [`pgsql::request`]) and written as they are; replies are scanned, not decoded.
//! The `connect` workload ([`connect`]) is the same floor for connection set-up: each
//! event is a new connection, a log-in and a clean close.

pub mod connect;
pub mod mysql;
pub mod pgsql;
pub mod scramble;
pub mod workload;

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::server::Kind;
use workload::{Step, Workload};

/// What the floor client runs.
#[derive(Debug, Clone)]
pub struct FloorConfig {
    /// The server.
    pub addr: SocketAddr,
    /// Its protocol.
    pub protocol: Kind,
    /// Connections, each with one request in flight.
    pub connections: usize,
    /// How long to run.
    pub time: Duration,
    /// The event.
    pub workload: Workload,
    /// Width of the range selects.
    pub range: i32,
    /// Report events per second at this interval (through `run`'s callback).
    pub report_interval: Option<Duration>,
}

/// What a run did.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// Events completed.
    pub events: u64,
    /// Requests answered.
    pub queries: u64,
    /// Time from the first request to the end.
    pub elapsed: Duration,
}

/// Calls the report callback at each report interval with the events per second of
/// the interval just ended.
struct Ticker {
    start: Instant,
    interval: Option<Duration>,
    /// When the next report is due, and the event count at the last one.
    next: Option<(Instant, u64)>,
}

impl Ticker {
    fn new(start: Instant, interval: Option<Duration>) -> Ticker {
        Ticker {
            start,
            interval,
            next: interval.map(|i| (start + i, 0)),
        }
    }

    /// Reports if an interval has ended by `now`.
    fn tick(&mut self, now: Instant, events: u64, report: &mut dyn FnMut(f64, f64)) {
        if let (Some((at, before)), Some(interval)) = (self.next.as_mut(), self.interval) {
            if now >= *at {
                report(
                    at.duration_since(self.start).as_secs_f64(),
                    (events - *before) as f64 / interval.as_secs_f64(),
                );
                *at += interval;
                *before = events;
            }
        }
    }

    /// When the event loop must wake at the latest: the next report or `deadline`.
    fn wake(&self, deadline: Instant) -> Instant {
        self.next.map_or(deadline, |(at, _)| at.min(deadline))
    }
}

struct Conn {
    stream: TcpStream,
    step: usize,
    buf: Vec<u8>,
    len: usize,
    used: usize,
    reply: mysql::Reply,
}

/// Runs the floor client; `report(seconds since start, events/s)` is called at each
/// report interval.
pub fn run(cfg: &FloorConfig, report: &mut dyn FnMut(f64, f64)) -> io::Result<Outcome> {
    if cfg.workload == Workload::Connect {
        return connect::run(cfg, report);
    }
    let steps: Vec<Step> = cfg.workload.event(cfg.range);
    let mut requests: Vec<Vec<u8>> = Vec::new();
    let mut conns = Vec::new();
    let poll = Poll::new()?;
    for i in 0..cfg.connections {
        let mut s = std::net::TcpStream::connect(cfg.addr)?;
        s.set_nodelay(true)?;
        match cfg.protocol {
            Kind::Mysql => {
                let ids = mysql::setup(&mut s, "sbtest", "sbtest")?;
                if requests.is_empty() {
                    requests = steps.iter().map(|st| mysql::request(st, &ids)).collect();
                } else if steps
                    .iter()
                    .map(|st| mysql::request(st, &ids))
                    .ne(requests.iter().cloned())
                {
                    return Err(io::Error::other("statement ids differ between connections"));
                }
            }
            Kind::Pgsql => {
                pgsql::setup(&mut s, "sbtest", "sbtest")?;
                if requests.is_empty() {
                    requests = steps.iter().map(pgsql::request).collect();
                }
            }
        }
        s.set_nonblocking(true)?;
        let mut stream = TcpStream::from_std(s);
        poll.registry()
            .register(&mut stream, Token(i), Interest::READABLE)?;
        conns.push(Conn {
            stream,
            step: 0,
            buf: vec![0; 16 * 1024],
            len: 0,
            used: 0,
            reply: mysql::Reply::Start,
        });
    }
    let mut poll = poll;
    let start = Instant::now();
    for c in &mut conns {
        c.stream.write_all(&requests[0])?;
    }
    let (mut events, mut queries) = (0u64, 0u64);
    let mut evs = Events::with_capacity(1024);
    let deadline = start + cfg.time;
    let mut ticker = Ticker::new(start, cfg.report_interval);
    loop {
        let now = Instant::now();
        ticker.tick(now, events, report);
        if now >= deadline {
            break;
        }
        poll.poll(
            &mut evs,
            Some(ticker.wake(deadline).saturating_duration_since(now)),
        )?;
        for ev in evs.iter() {
            let c = &mut conns[ev.token().0];
            loop {
                if c.len == c.buf.len() {
                    let n = c.buf.len();
                    c.buf.resize(n * 2, 0);
                }
                let n = match c.stream.read(&mut c.buf[c.len..]) {
                    Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                c.len += n;
                let done = match cfg.protocol {
                    Kind::Mysql => mysql::scan(&c.buf[..c.len], &mut c.reply, &mut c.used)?,
                    Kind::Pgsql => pgsql::scan(&c.buf[..c.len], &mut c.used)?,
                };
                if done {
                    // Strictly request/response: nothing follows the reply.
                    c.len = 0;
                    c.used = 0;
                    c.reply = mysql::Reply::Start;
                    queries += 1;
                    c.step += 1;
                    if c.step == requests.len() {
                        c.step = 0;
                        events += 1;
                    }
                    c.stream.write_all(&requests[c.step])?;
                    break;
                }
                if c.len < c.buf.len() {
                    break;
                }
            }
        }
    }
    Ok(Outcome {
        events,
        queries,
        elapsed: start.elapsed(),
    })
}
