//! The connection floor: each event opens a connection, logs in as a real client
//! must (greeting, handshake response with the proof the server's plugin asks for, OK;
//! or start-up message, password answer if asked, `ReadyForQuery`), says goodbye
//! (`COM_QUIT` or `Terminate`) and closes. N slots each do this one connection after
//! another, all on one thread's event loop, so its CPU per event is what the kernel's
//! connection set-up and tear-down cost plus the least protocol work a log-in needs.
//!
//! What it leaves out on purpose, since a client need not do it: `TCP_NODELAY` (each
//! write follows a reply that acknowledged the previous one, so Nagle never delays
//! it), session set-up queries, and deregistering from epoll before close (closing the
//! descriptor removes it).

use std::io::{self, Read, Write};
use std::time::Instant;

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use super::run_config::{FloorConfig, Outcome};
use super::scramble::Secrets;
use super::ticker::Ticker;
use super::{mysql, pgsql};
use crate::server::Kind;

/// The credentials bmk's and sysbench's runs use.
const USER: &str = "sbtest";
const PASSWORD: &str = "sbtest";
const DB: &str = "sbtest";

/// One connection slot: the connection being set up, and its read buffer (kept from
/// one connection to the next).
struct Slot {
    stream: TcpStream,
    /// PostgreSQL: the start-up message is sent once the connection is established.
    started: bool,
    state: mysql::Login,
    buf: Vec<u8>,
    len: usize,
    used: usize,
}

/// Writes all of `bytes` at once: log-in messages are small and the send buffer is
/// empty whenever one is sent, so a short write would be a broken connection.
fn send(stream: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
    match stream.write(bytes)? {
        n if n == bytes.len() => Ok(()),
        _ => Err(io::Error::other("short write during log-in")),
    }
}

/// Opens a connection for slot `token` and registers it: MySQL waits for the server's
/// greeting (readable); PostgreSQL also for the connection to be established
/// (writable) before sending its start-up message.
fn open(cfg: &FloorConfig, poll: &Poll, token: usize) -> io::Result<TcpStream> {
    let mut stream = TcpStream::connect(cfg.addr)?;
    let interest = match cfg.protocol {
        Kind::Mysql => Interest::READABLE,
        Kind::Pgsql => Interest::READABLE | Interest::WRITABLE,
    };
    poll.registry()
        .register(&mut stream, Token(token), interest)?;
    Ok(stream)
}

/// Runs the connect workload; `report(seconds since start, connects/s)` is called at
/// each report interval. Events are completed connect-log-in-close cycles.
pub fn run(cfg: &FloorConfig, report: &mut dyn FnMut(f64, f64)) -> io::Result<Outcome> {
    let secrets = Secrets::new(USER, PASSWORD);
    let startup = pgsql::startup(USER, DB);
    let mut poll = Poll::new()?;
    let start = Instant::now();
    let mut slots = Vec::with_capacity(cfg.connections);
    for i in 0..cfg.connections {
        slots.push(Slot {
            stream: open(cfg, &poll, i)?,
            started: false,
            state: mysql::Login::Greeting,
            buf: vec![0; 4096],
            len: 0,
            used: 0,
        });
    }
    let mut events = 0u64;
    let mut out = Vec::with_capacity(256);
    let mut evs = Events::with_capacity(1024);
    let deadline = start + cfg.time;
    let mut ticker = Ticker::new(start, cfg.report_interval);
    while ticker.wait(&mut poll, &mut evs, deadline, events, report)? {
        for ev in evs.iter() {
            let i = ev.token().0;
            let s = &mut slots[i];
            if cfg.protocol == Kind::Pgsql && !s.started {
                if let Some(e) = s.stream.take_error()? {
                    return Err(e);
                }
                match send(&mut s.stream, &startup) {
                    Ok(()) => s.started = true,
                    // Not established yet: its writable event is still to come.
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::NotConnected
                        ) =>
                    {
                        continue
                    }
                    Err(e) => return Err(e),
                }
            }
            let done = loop {
                if s.len == s.buf.len() {
                    let n = s.buf.len();
                    s.buf.resize(n * 2, 0);
                }
                let n = match s.stream.read(&mut s.buf[s.len..]) {
                    Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                s.len += n;
                out.clear();
                let done = match cfg.protocol {
                    Kind::Mysql => mysql::login(
                        &s.buf[..s.len],
                        &mut s.used,
                        &mut s.state,
                        USER,
                        DB,
                        &secrets,
                        &mut out,
                    )?,
                    Kind::Pgsql => {
                        pgsql::login(&s.buf[..s.len], &mut s.used, PASSWORD, &secrets, &mut out)?
                    }
                };
                if !out.is_empty() {
                    send(&mut s.stream, &out)?;
                }
                if s.used == s.len {
                    s.len = 0;
                    s.used = 0;
                }
                if done {
                    break true;
                }
            };
            if done {
                let bye: &[u8] = match cfg.protocol {
                    Kind::Mysql => &mysql::QUIT,
                    Kind::Pgsql => &pgsql::TERMINATE,
                };
                send(&mut s.stream, bye)?;
                events += 1;
                // Dropping the old stream closes it (and takes it out of the epoll set).
                s.stream = open(cfg, &poll, i)?;
                s.started = false;
                s.state = mysql::Login::Greeting;
                s.len = 0;
                s.used = 0;
            }
        }
    }
    Ok(Outcome {
        events,
        queries: 0,
        elapsed: start.elapsed(),
    })
}
