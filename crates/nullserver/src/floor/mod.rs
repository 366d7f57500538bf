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
pub mod run_config;
pub mod scramble;
mod ticker;
pub mod workload;

pub use run_config::{FloorConfig, Outcome};

use std::io::{self, Read, Write};
use std::time::Instant;

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::server::Kind;
use ticker::Ticker;
use workload::{Step, Workload};

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
    while ticker.wait(&mut poll, &mut evs, deadline, events, report)? {
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
