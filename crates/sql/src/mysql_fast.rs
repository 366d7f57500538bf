//! Hand-written `COM_STMT_EXECUTE` fast path for the MySQL driver.
//!
//! # Why
//! Profiling `oltp_point_select` showed the `mysql` crate spending most of bmk's
//! client CPU per query in allocation and bookkeeping that is intrinsic to its API: a
//! `Vec<mysql::Value>` per execute (and a copy of every text parameter), a request
//! buffer plus one pooled buffer per packet taken from a process-wide lock-free queue
//! (a shared `Arc` and atomics per packet, contended with many threads), a `Row`
//! holding an `Arc<[Column]>` and one `Vec<u8>` per cell, then our copy of every cell
//! into the [`ResultSet`]. None of that can be avoided through its public API
//! (`exec_iter`, `exec_drop` and `FromRow` all go through the same row decoding).
//!
//! The binary protocol of an execute is small, so for the common case — a server-side
//! prepared statement on a plain (no TLS, no compression) TCP or UNIX socket — the
//! driver writes the request itself and decodes the response straight into the
//! caller's [`ResultSet`] buffer. Steady state: no allocation at all, one `write` and
//! usually one `read` system call per query. On plain sockets this module speaks every
//! command after the login (execute, text queries with `LOAD DATA LOCAL INFILE`,
//! prepare, statement close, MariaDB's bulk execute), on the socket
//! [`crate::mysql_handshake`] logged in. A login that one declines, TLS and
//! compression stay with the crate altogether: this module never speaks on the
//! crate's socket.
//!
//! The protocol is strictly request/response and this module always consumes a whole
//! response (every result set up to the final OK/EOF/ERR without "more results"). On
//! any I/O or protocol error the caller drops the connection (the error is reported as
//! a lost connection), so a desynchronised stream is never reused.
//!
//! MariaDB's `MARIADB_CLIENT_CACHE_METADATA` (negotiated by the login) is honoured:
//! the column definitions are parsed when the server sends them and otherwise taken
//! from the statement's cached metadata.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql::consts::{ColumnFlags, ColumnType};

use crate::coop_read::read_some;
use crate::resultset::ResultSet;
use crate::row_source::RowSource;
use crate::socket_timeouts::ReadDeadline;
use crate::value::Value;

/// Largest payload of one protocol packet.
const MAX_PAYLOAD: usize = 0xff_ffff;
/// Initial size of the receive buffer: a point select's response is ~200 bytes. It
/// doubles whenever a `read` fills it (up to [`KEEP_BUF`], so that a connection running
/// range selects soon gets each response in one `read`) and for packets that do not
/// fit; buffers grown past [`KEEP_BUF`] are released after the response.
const INITIAL_BUF: usize = 2048;
/// Receive buffers larger than this are released after the response.
const KEEP_BUF: usize = 64 * 1024;
/// `SERVER_MORE_RESULTS_EXISTS` status flag.
const MORE_RESULTS: u16 = 0x0008;

const T_TINY: u8 = ColumnType::MYSQL_TYPE_TINY as u8;
const T_SHORT: u8 = ColumnType::MYSQL_TYPE_SHORT as u8;
const T_LONG: u8 = ColumnType::MYSQL_TYPE_LONG as u8;
const T_FLOAT: u8 = ColumnType::MYSQL_TYPE_FLOAT as u8;
const T_DOUBLE: u8 = ColumnType::MYSQL_TYPE_DOUBLE as u8;
const T_NULL: u8 = ColumnType::MYSQL_TYPE_NULL as u8;
const T_TIMESTAMP: u8 = ColumnType::MYSQL_TYPE_TIMESTAMP as u8;
const T_LONGLONG: u8 = ColumnType::MYSQL_TYPE_LONGLONG as u8;
const T_INT24: u8 = ColumnType::MYSQL_TYPE_INT24 as u8;
const T_DATE: u8 = ColumnType::MYSQL_TYPE_DATE as u8;
const T_TIME: u8 = ColumnType::MYSQL_TYPE_TIME as u8;
const T_DATETIME: u8 = ColumnType::MYSQL_TYPE_DATETIME as u8;
const T_YEAR: u8 = ColumnType::MYSQL_TYPE_YEAR as u8;
const T_VAR_STRING: u8 = ColumnType::MYSQL_TYPE_VAR_STRING as u8;
const T_BLOB: u8 = ColumnType::MYSQL_TYPE_BLOB as u8;
const T_NEWDATE: u8 = ColumnType::MYSQL_TYPE_NEWDATE as u8;
const T_TIMESTAMP2: u8 = ColumnType::MYSQL_TYPE_TIMESTAMP2 as u8;
const T_DATETIME2: u8 = ColumnType::MYSQL_TYPE_DATETIME2 as u8;
const T_TIME2: u8 = ColumnType::MYSQL_TYPE_TIME2 as u8;

/// `COM_STMT_BULK_EXECUTE` flag: parameter types follow the header.
const STMT_BULK_FLAG_SEND_TYPES: u16 = 128;
/// Bulk row indicators: a value follows, or the value is NULL.
const BULK_INDICATOR_NONE: u8 = 0;
const BULK_INDICATOR_NULL: u8 = 1;
/// Errors of a server that has no bulk execute: 1047 unknown command (MySQL), 1295
/// "not supported in the prepared statement protocol" (MariaDB without the capability).
const BULK_REFUSED: [u16; 2] = [1047, 1295];

/// What [`FastIo::bulk_execute`] did.
pub(crate) enum BulkOutcome {
    /// The rows inserted.
    Inserted(u64),
    /// The server has no bulk execute; nothing was inserted.
    Refused,
}

/// Type information of one result column.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColMeta {
    ty: u8,
    unsigned: bool,
    decimals: u8,
}

/// The result metadata of a prepared statement, shared by its result sets.
#[derive(Debug, Clone, Default)]
pub(crate) struct StmtMeta {
    cols: Vec<ColMeta>,
    names: Arc<[String]>,
}

/// Per-connection buffers of the fast path.
#[derive(Debug, Default)]
pub(crate) struct FastIo {
    out: Vec<u8>,
    inbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// Current packet: a range of `inbuf`, or `big` for a payload split over several
    /// packets.
    cur: (usize, usize),
    in_big: bool,
    big: Vec<u8>,
    /// Sequence id of the last packet read.
    seq: u8,
    /// Identity of the socket for event-loop waits (0: not yet numbered).
    socket_id: u64,
    /// A request was sent and nothing read since: on an event loop the answer is
    /// waited for before the first read rather than after a read that finds nothing.
    awaiting: bool,
    /// `--db-timeout`, the socket's receive timeout: the longest one packet may take to
    /// arrive, as a whole, when the read blocks (see [`Self::read_packet_slow`]).
    read_limit: Option<Duration>,
}

/// What an execute produced.
pub(crate) struct Executed {
    /// The first result had a rows part (its rows are in the caller's result set).
    pub has_rows: bool,
    /// Affected rows of the last result (0 when it had rows).
    pub affected: u64,
}

fn protocol_error() -> mysql::Error {
    mysql::Error::DriverError(mysql::DriverError::PacketOutOfSync)
}

fn eof_error() -> mysql::Error {
    mysql::Error::IoError(io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "server closed the connection",
    ))
}

/// A little-endian reader over one packet.
struct Rd<'a>(&'a [u8]);

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], mysql::Error> {
        if self.0.len() < n {
            return Err(protocol_error());
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, mysql::Error> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, mysql::Error> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, mysql::Error> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, mysql::Error> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    fn lenenc(&mut self) -> Result<u64, mysql::Error> {
        match self.u8()? {
            0xfc => Ok(u64::from(self.u16()?)),
            0xfd => {
                let b = self.take(3)?;
                Ok(u64::from(b[0]) | u64::from(b[1]) << 8 | u64::from(b[2]) << 16)
            }
            0xfe => self.u64(),
            x => Ok(u64::from(x)),
        }
    }
    fn lenenc_bytes(&mut self) -> Result<&'a [u8], mysql::Error> {
        let n = self.lenenc()?;
        self.take(usize::try_from(n).map_err(|_| protocol_error())?)
    }
}

/// The server error of an ERR packet.
pub(crate) fn server_error(p: &[u8]) -> mysql::Error {
    let mut r = Rd(&p[1..]);
    let code = r.u16().unwrap_or(2000);
    let mut state = "HY000".to_string();
    if r.0.first() == Some(&b'#') && r.0.len() >= 6 {
        state = String::from_utf8_lossy(&r.0[1..6]).into_owned();
        r.0 = &r.0[6..];
    }
    mysql::Error::MySqlError(mysql::MySqlError {
        state,
        message: String::from_utf8_lossy(r.0).into_owned(),
        code,
    })
}

impl FastIo {
    /// Buffers for a connection whose socket has `read_limit` as its receive timeout.
    pub(crate) fn new(read_limit: Option<Duration>) -> FastIo {
        FastIo {
            read_limit,
            ..FastIo::default()
        }
    }

    /// Forget any buffered input (after a reconnect).
    pub(crate) fn reset(&mut self) {
        self.start = 0;
        self.end = 0;
        self.socket_id = 0;
        self.awaiting = false;
    }

    fn socket(fd: RawFd) -> ManuallyDrop<File> {
        // SAFETY: `fd` is the open socket of the live session, which outlives this
        // borrow; `ManuallyDrop` keeps us from closing it. `File`'s `Read`/`Write` are
        // plain `read(2)`/`write(2)`, valid on sockets.
        ManuallyDrop::new(unsafe { File::from_raw_fd(fd) })
    }

    /// Make at least `n` bytes available from `start` (an empty or released buffer
    /// grows to [`INITIAL_BUF`] here, so callers need not prepare it), by `deadline`
    /// if there is one.
    fn need(
        &mut self,
        sock: &mut File,
        n: usize,
        deadline: &mut Option<ReadDeadline>,
    ) -> Result<(), mysql::Error> {
        while self.end - self.start < n {
            if self.start + n > self.inbuf.len() {
                self.inbuf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
                if n > self.inbuf.len() {
                    let size = n.max(self.inbuf.len() * 2).max(INITIAL_BUF);
                    self.inbuf.resize(size, 0);
                }
            }
            if let Some(d) = deadline {
                d.before_recv(sock.as_raw_fd())
                    .map_err(mysql::Error::IoError)?;
            }
            let got = read_some(
                sock.as_raw_fd(),
                &mut self.socket_id,
                &mut self.awaiting,
                &mut self.inbuf[self.end..],
            )
            .map_err(mysql::Error::IoError)?;
            if got == 0 {
                return Err(eof_error());
            }
            self.end += got;
            if self.end == self.inbuf.len() && self.inbuf.len() < KEEP_BUF {
                self.inbuf.resize(self.inbuf.len() * 2, 0);
            }
        }
        Ok(())
    }

    /// Read the next packet (joining payloads split over several packets).
    #[inline]
    fn read_packet(&mut self, sock: &mut File) -> Result<(), mysql::Error> {
        // Common case: the whole packet is already buffered (one `read` usually brings
        // the whole response).
        if let Some(h) = self.inbuf.get(self.start..self.end) {
            if let [a, b, c, seq, ..] = *h {
                let len = usize::from(a) | usize::from(b) << 8 | usize::from(c) << 16;
                if len < MAX_PAYLOAD && h.len() >= 4 + len {
                    let s = self.start + 4;
                    self.seq = seq;
                    self.in_big = false;
                    self.cur = (s, s + len);
                    self.start = s + len;
                    return Ok(());
                }
            }
        }
        self.read_packet_slow(sock)
    }

    /// A packet not (wholly) buffered yet. A read that blocks gets the packet within
    /// the read limit as a whole: the socket's receive timeout bounds each `recv`
    /// alone, and a server sending one byte at a time just within it could hold the
    /// connection for ever. On an event loop the worker waits in `epoll`, where the
    /// run's stop grace bounds it.
    #[cold]
    fn read_packet_slow(&mut self, sock: &mut File) -> Result<(), mysql::Error> {
        self.in_big = false;
        loop {
            let mut deadline = match self.read_limit {
                Some(limit) if !bmk_engine::coop::active() => {
                    Some(ReadDeadline::new(Instant::now() + limit, Some(limit)))
                }
                _ => None,
            };
            self.need(sock, 4, &mut deadline)?;
            let h = &self.inbuf[self.start..self.start + 4];
            let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
            self.seq = h[3];
            self.need(sock, 4 + len, &mut deadline)?;
            if let Some(d) = deadline.as_mut() {
                d.restore(sock.as_raw_fd()).map_err(mysql::Error::IoError)?;
            }
            let s = self.start + 4;
            self.start += 4 + len;
            if !self.in_big && len < MAX_PAYLOAD {
                self.cur = (s, s + len);
                return Ok(());
            }
            if !self.in_big {
                self.big.clear();
                self.in_big = true;
            }
            self.big.extend_from_slice(&self.inbuf[s..s + len]);
            if len < MAX_PAYLOAD {
                return Ok(());
            }
        }
    }

    #[inline]
    fn packet(&self) -> &[u8] {
        if self.in_big {
            &self.big
        } else {
            &self.inbuf[self.cur.0..self.cur.1]
        }
    }

    /// Send `payload` (already in `self.out` after a 4-byte gap) as one command.
    fn send(&mut self, sock: &mut File) -> Result<(), mysql::Error> {
        let total = self.out.len() - 4;
        if total < MAX_PAYLOAD {
            let len = (total as u32).to_le_bytes();
            self.out[..4].copy_from_slice(&[len[0], len[1], len[2], 0]);
            sock.write_all(&self.out).map_err(mysql::Error::IoError)?;
            self.awaiting = true;
            return Ok(());
        }
        // Split into maximal packets (an exact multiple ends with an empty packet).
        let mut framed = Vec::with_capacity(total + total / MAX_PAYLOAD * 4 + 8);
        let mut seq = 0u8;
        let mut rest = &self.out[4..];
        loop {
            let n = rest.len().min(MAX_PAYLOAD);
            let len = (n as u32).to_le_bytes();
            framed.extend_from_slice(&[len[0], len[1], len[2], seq]);
            framed.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            seq = seq.wrapping_add(1);
            if n < MAX_PAYLOAD {
                break;
            }
        }
        sock.write_all(&framed).map_err(mysql::Error::IoError)
    }

    /// Execute server statement `stmt_id` with `params`, decoding the first result set
    /// into `first` (reset to the statement's columns) and any further ones into
    /// `pending`. `meta` is updated when the server sends new column definitions.
    pub(crate) fn execute(
        &mut self,
        fd: RawFd,
        stmt_id: u32,
        meta: &mut StmtMeta,
        params: &[Value],
        first: &mut ResultSet,
        pending: &mut VecDeque<Option<ResultSet>>,
    ) -> Result<Executed, mysql::Error> {
        let mut sock = Self::socket(fd);
        self.build_request(stmt_id, params);
        self.send(&mut sock)?;
        let res = self.read_results(&mut sock, meta, true, None, first, pending);
        self.finish(res)
    }

    /// Run a text query (`COM_QUERY`): results as for [`execute`](FastIo::execute);
    /// `meta` caches the last column names so repeated queries allocate none. When the
    /// server asks for the file of a `LOAD DATA LOCAL INFILE`, it gets `file` (once),
    /// or an empty one: what the server names is not read from the client's disk.
    pub(crate) fn query(
        &mut self,
        fd: RawFd,
        sql: &[u8],
        file: Option<&[u8]>,
        meta: &mut StmtMeta,
        first: &mut ResultSet,
        pending: &mut VecDeque<Option<ResultSet>>,
    ) -> Result<Executed, mysql::Error> {
        let mut sock = Self::socket(fd);
        self.command(0x03, sql); // COM_QUERY
        self.send(&mut sock)?;
        let res = self.read_results(&mut sock, meta, false, file, first, pending);
        self.finish(res)
    }

    /// Prepares `sql` on the server (`COM_STMT_PREPARE`): its statement id and result
    /// metadata.
    pub(crate) fn prepare(
        &mut self,
        fd: RawFd,
        sql: &[u8],
    ) -> Result<(u32, StmtMeta), mysql::Error> {
        let mut sock = Self::socket(fd);
        self.command(0x16, sql); // COM_STMT_PREPARE
        self.send(&mut sock)?;
        let res = self.read_prepared(&mut sock);
        self.finish(res)
    }

    fn read_prepared(&mut self, sock: &mut File) -> Result<(u32, StmtMeta), mysql::Error> {
        self.read_packet(sock)?;
        let p = self.packet();
        match p.first() {
            Some(0x00) => {}
            Some(0xff) => return Err(server_error(p)),
            _ => return Err(protocol_error()),
        }
        let mut r = Rd(&p[1..]);
        let id = r.u32()?;
        let ncols = usize::from(r.u16()?);
        let nparams = usize::from(r.u16()?);
        // Parameter definitions, then the column definitions, each list ended by an
        // EOF packet.
        if nparams > 0 {
            for _ in 0..nparams {
                self.read_packet(sock)?;
            }
            self.read_eof(sock)?;
        }
        let mut meta = StmtMeta::default();
        if ncols > 0 {
            self.read_columns(sock, ncols, &mut meta)?;
            self.read_eof(sock)?;
        }
        Ok((id, meta))
    }

    fn read_eof(&mut self, sock: &mut File) -> Result<(), mysql::Error> {
        self.read_packet(sock)?;
        match self.packet() {
            [0xfe, ..] if self.packet().len() < 9 => Ok(()),
            _ => Err(protocol_error()),
        }
    }

    /// Frees server statement `stmt_id` (`COM_STMT_CLOSE`, which has no answer).
    pub(crate) fn close_statement(&mut self, fd: RawFd, stmt_id: u32) -> Result<(), mysql::Error> {
        let mut sock = Self::socket(fd);
        self.command(0x19, &stmt_id.to_le_bytes()); // COM_STMT_CLOSE
        self.send(&mut sock)?;
        self.awaiting = false;
        Ok(())
    }

    /// Puts command byte `cmd` and `body` in the request buffer after the header gap.
    fn command(&mut self, cmd: u8, body: &[u8]) {
        self.out.clear();
        self.out.extend_from_slice(&[0; 4]);
        self.out.push(cmd);
        self.out.extend_from_slice(body);
    }

    /// Sends `data` as the requested file of a `LOAD DATA LOCAL INFILE`: packets of at
    /// most 1 MiB after the server's request, then the empty packet that ends it.
    fn send_file(&mut self, sock: &mut File, data: &[u8]) -> Result<(), mysql::Error> {
        let mut seq = self.seq;
        for chunk in data.chunks(1 << 20) {
            seq = seq.wrapping_add(1);
            let len = (chunk.len() as u32).to_le_bytes();
            self.out.clear();
            self.out.extend_from_slice(&[len[0], len[1], len[2], seq]);
            self.out.extend_from_slice(chunk);
            sock.write_all(&self.out).map_err(mysql::Error::IoError)?;
        }
        seq = seq.wrapping_add(1);
        sock.write_all(&[0, 0, 0, seq])
            .map_err(mysql::Error::IoError)?;
        self.awaiting = true;
        Ok(())
    }

    /// Inserts the rows of `rows` with MariaDB's `COM_STMT_BULK_EXECUTE` of server
    /// statement `stmt_id` (a single-row INSERT with one placeholder per column): as
    /// many rows per command as fit in `limit` bytes, one OK per command. Returns the
    /// rows inserted, or `Refused` when the server does not know the command: nothing
    /// was inserted then, and when `taken` was given it holds the rows taken from
    /// `rows` (a caller not yet sure of the server passes it, to insert them otherwise;
    /// the first command then holds one row, so that at most one is kept).
    /// With `ascii_as_binary`, ASCII text goes out as binary parameters: the server's
    /// scan of every string parameter is then a byte loop instead of decoding each
    /// multi-byte character (7% of its CPU during a table load), and the bytes land
    /// unchanged — the caller knows that no column of the table is in a charset that
    /// is not ASCII-based (UCS-2, UTF-16, UTF-32), into which the server would pad
    /// binary strings instead.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn bulk_execute(
        &mut self,
        fd: RawFd,
        stmt_id: u32,
        ncols: usize,
        rows: &mut dyn RowSource,
        limit: usize,
        ascii_as_binary: bool,
        mut taken: Option<&mut Vec<Vec<Value>>>,
    ) -> Result<BulkOutcome, mysql::Error> {
        let mut sock = Self::socket(fd);
        let mut row = vec![Value::Null; ncols];
        let mut have_row = rows.next_row(&mut row);
        let mut first_command = true;
        let mut total = 0u64;
        let mut types = vec![T_NULL; ncols];
        // Room for a whole command up front: growing by doubling would copy and
        // page-fault its way up to `limit` for every load (a sixth of the client's CPU).
        self.out.reserve(limit + (64 << 10));
        while have_row {
            let out = &mut self.out;
            out.clear();
            out.extend_from_slice(&[0; 4]);
            out.push(0xfa); // COM_STMT_BULK_EXECUTE
            out.extend_from_slice(&stmt_id.to_le_bytes());
            out.extend_from_slice(&STMT_BULK_FLAG_SEND_TYPES.to_le_bytes());
            // A column's type is its first non-null value's in this command; a row
            // that does not fit the types goes into the next command.
            for (t, v) in types.iter_mut().zip(&row) {
                *t = bulk_param_type(v, ascii_as_binary);
            }
            for t in &types {
                out.extend_from_slice(&[*t, 0]);
            }
            let mut nrows = 0usize;
            let probing = first_command && taken.is_some();
            while have_row {
                let fits = types.iter().zip(&row).all(|(t, v)| {
                    let vt = bulk_param_type(v, ascii_as_binary);
                    vt == T_NULL || vt == *t
                });
                if !fits || (nrows > 0 && (probing || out.len() >= limit)) {
                    break;
                }
                for v in &row {
                    match v {
                        Value::Null => out.push(BULK_INDICATOR_NULL),
                        other => {
                            out.push(BULK_INDICATOR_NONE);
                            put_param(out, other);
                        }
                    }
                }
                if let Some(t) = taken.as_mut().filter(|_| first_command) {
                    t.push(row.clone());
                }
                nrows += 1;
                have_row = rows.next_row(&mut row);
            }
            self.send(&mut sock)?;
            let mut meta = StmtMeta::default();
            let mut rs = ResultSet::default();
            let mut pending = VecDeque::new();
            let res = self.read_results(&mut sock, &mut meta, true, None, &mut rs, &mut pending);
            // The request buffer serves every command of the load (the caller releases
            // it with `release_request_buffer`).
            let out = std::mem::take(&mut self.out);
            let res = self.finish(res);
            self.out = out;
            match res {
                Ok(done) => total += done.affected,
                Err(mysql::Error::MySqlError(e))
                    if first_command && BULK_REFUSED.contains(&e.code) =>
                {
                    if let Some(t) = taken.as_mut().filter(|_| have_row) {
                        t.push(row);
                    }
                    return Ok(BulkOutcome::Refused);
                }
                Err(e) => return Err(e),
            }
            first_command = false;
        }
        Ok(BulkOutcome::Inserted(total))
    }

    /// Drops a request buffer grown past what one query needs.
    pub(crate) fn release_request_buffer(&mut self) {
        if self.out.capacity() > KEEP_BUF {
            self.out = Vec::new();
        }
    }

    fn finish<T>(&mut self, res: Result<T, mysql::Error>) -> Result<T, mysql::Error> {
        if self.inbuf.len() > KEEP_BUF {
            self.inbuf = Vec::new();
            self.big = Vec::new();
            self.start = 0;
            self.end = 0;
        }
        if self.out.capacity() > KEEP_BUF {
            self.out = Vec::new();
        }
        if res.is_ok() && self.start != self.end {
            // Bytes after the final packet: the stream is out of sync.
            return Err(protocol_error());
        }
        // The next response starts at the front: otherwise each response lands after
        // the last one and the buffer creeps up to KEEP_BUF on every connection.
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        res
    }

    fn build_request(&mut self, stmt_id: u32, params: &[Value]) {
        let out = &mut self.out;
        out.clear();
        out.extend_from_slice(&[0; 4]);
        out.push(0x17); // COM_STMT_EXECUTE
        out.extend_from_slice(&stmt_id.to_le_bytes());
        out.push(0); // CURSOR_TYPE_NO_CURSOR
        out.extend_from_slice(&1u32.to_le_bytes()); // iteration count
        if params.is_empty() {
            return;
        }
        let bitmap = out.len();
        out.resize(bitmap + params.len().div_ceil(8), 0);
        for (i, p) in params.iter().enumerate() {
            if matches!(p, Value::Null) {
                out[bitmap + i / 8] |= 1 << (i % 8);
            }
        }
        out.push(1); // new params bound: types follow
        for p in params {
            out.extend_from_slice(&[param_type(p), 0]);
        }
        for p in params {
            put_param(out, p);
        }
    }

    fn read_results(
        &mut self,
        sock: &mut File,
        meta: &mut StmtMeta,
        binary: bool,
        mut file: Option<&[u8]>,
        first: &mut ResultSet,
        pending: &mut VecDeque<Option<ResultSet>>,
    ) -> Result<Executed, mysql::Error> {
        let mut done = Executed {
            has_rows: false,
            affected: 0,
        };
        let mut index = 0usize;
        loop {
            self.read_packet(sock)?;
            let p = self.packet();
            let status = match p.first() {
                None => return Err(protocol_error()),
                Some(0xff) => return Err(server_error(p)),
                Some(0xfb) => {
                    // LOAD DATA LOCAL INFILE request: the file given, else an empty
                    // one; the server answers with an error or OK.
                    self.send_file(sock, file.take().unwrap_or_default())?;
                    continue;
                }
                Some(0x00) => {
                    let mut r = Rd(&p[1..]);
                    let affected = r.lenenc()?;
                    let _insert_id = r.lenenc()?;
                    let status = r.u16()?;
                    if index == 0 {
                        first.clear();
                    } else {
                        pending.push_back(None);
                    }
                    done.affected = affected;
                    status
                }
                Some(_) => {
                    let mut r = Rd(p);
                    let ncols = usize::try_from(r.lenenc()?).map_err(|_| protocol_error())?;
                    // MariaDB metadata cache: a trailing 0 means "unchanged, not sent".
                    let follows = r.0.first().is_none_or(|b| *b != 0);
                    let mut other;
                    let m: &mut StmtMeta = if index == 0 {
                        meta
                    } else {
                        other = meta.clone();
                        &mut other
                    };
                    if follows {
                        self.read_columns(sock, ncols, m)?;
                    } else if m.cols.len() != ncols {
                        return Err(protocol_error());
                    }
                    // EOF after the column definitions (CLIENT_DEPRECATE_EOF is not
                    // negotiated by the login).
                    self.read_packet(sock)?;
                    let mut fresh;
                    let rs: &mut ResultSet = if index == 0 {
                        first
                    } else {
                        fresh = ResultSet::default();
                        &mut fresh
                    };
                    rs.reset(&m.names);
                    let status = self.read_rows(sock, &m.cols, binary, rs)?;
                    if index == 0 {
                        done.has_rows = true;
                    } else {
                        pending.push_back(Some(std::mem::take(rs)));
                    }
                    done.affected = 0;
                    status
                }
            };
            index += 1;
            if status & MORE_RESULTS == 0 {
                return Ok(done);
            }
        }
    }

    fn read_columns(
        &mut self,
        sock: &mut File,
        ncols: usize,
        m: &mut StmtMeta,
    ) -> Result<(), mysql::Error> {
        m.cols.clear();
        // Column names are only rebuilt when they differ from the cached ones.
        let mut names: Option<Vec<String>> = (m.names.len() != ncols).then(Vec::new);
        for i in 0..ncols {
            self.read_packet(sock)?;
            let mut r = Rd(self.packet());
            for _ in 0..4 {
                r.lenenc_bytes()?; // catalog, schema, table, org_table
            }
            let name = r.lenenc_bytes()?;
            match names.as_mut() {
                Some(v) => v.push(String::from_utf8_lossy(name).into_owned()),
                None if m.names[i].as_bytes() != name => {
                    let mut v: Vec<String> = m.names[..i].to_vec();
                    v.push(String::from_utf8_lossy(name).into_owned());
                    names = Some(v);
                }
                None => {}
            }
            r.lenenc_bytes()?; // org_name
            r.lenenc()?; // length of the fixed fields
            r.u16()?; // character set
            r.u32()?; // column length
            let ty = r.u8()?;
            let flags = r.u16()?;
            let decimals = r.u8()?;
            m.cols.push(ColMeta {
                ty,
                unsigned: flags & ColumnFlags::UNSIGNED_FLAG.bits() != 0,
                decimals,
            });
        }
        if let Some(v) = names {
            m.names = v.into();
        }
        Ok(())
    }

    /// Decode binary rows until the terminating EOF/OK; returns its status flags.
    fn read_rows(
        &mut self,
        sock: &mut File,
        cols: &[ColMeta],
        binary: bool,
        rs: &mut ResultSet,
    ) -> Result<u16, mysql::Error> {
        loop {
            self.read_packet(sock)?;
            let p = self.packet();
            match p.first() {
                Some(0xfe) if p.len() < 9 => {
                    let mut r = Rd(&p[1..]);
                    let _warnings = r.u16()?;
                    return r.u16();
                }
                Some(0xff) => return Err(server_error(p)),
                Some(0x00) if binary => decode_row(p, cols, rs)?,
                Some(_) if !binary => decode_text_row(p, cols.len(), rs)?,
                _ => return Err(protocol_error()),
            }
        }
    }
}

/// The protocol type a parameter is sent as.
fn param_type(v: &Value) -> u8 {
    match v {
        Value::Null => T_NULL,
        Value::Int(_) => T_LONGLONG,
        Value::Float(_) => T_FLOAT,
        Value::Double(_) => T_DOUBLE,
        Value::Text(_) => T_VAR_STRING,
    }
}

/// [`param_type`] of a bulk execute parameter: ASCII text as `BLOB` (binary) when
/// `ascii_as_binary`, see [`FastIo::bulk_execute`].
fn bulk_param_type(v: &Value, ascii_as_binary: bool) -> u8 {
    match v {
        Value::Text(t) if ascii_as_binary && t.is_ascii() => T_BLOB,
        _ => param_type(v),
    }
}

/// A parameter value in the binary protocol (nothing for NULL: the bitmap or the
/// indicator says so).
fn put_param(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => {}
        Value::Int(i) => out.extend_from_slice(&i.to_le_bytes()),
        Value::Float(f) => out.extend_from_slice(&f.to_le_bytes()),
        Value::Double(d) => out.extend_from_slice(&d.to_le_bytes()),
        Value::Text(t) => {
            put_lenenc(out, t.len() as u64);
            out.extend_from_slice(t);
        }
    }
}

fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    if n < 0xfb {
        out.push(n as u8);
    } else if n <= 0xffff {
        out.push(0xfc);
        out.extend_from_slice(&(n as u16).to_le_bytes());
    } else if n <= 0xff_ffff {
        out.push(0xfd);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xfe);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// Append the decimal text of `v` (with a leading `-` when `neg`).
fn put_u64(buf: &mut Vec<u8>, neg: bool, mut v: u64) {
    let mut tmp = [0u8; 21];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if neg {
        i -= 1;
        tmp[i] = b'-';
    }
    buf.extend_from_slice(&tmp[i..]);
}

pub(crate) fn put_i64(buf: &mut Vec<u8>, v: i64) {
    put_u64(buf, v < 0, v.unsigned_abs());
}

/// Append `n` as at least two digits.
fn put_2(buf: &mut Vec<u8>, n: u64) {
    if n < 10 {
        buf.push(b'0');
    }
    put_u64(buf, false, n);
}

fn put_fraction(buf: &mut Vec<u8>, micros: u32, decimals: u8) {
    let d = usize::from(decimals.min(6));
    if d > 0 {
        let mut digits = [b'0'; 6];
        let mut v = micros.min(999_999);
        for slot in digits.iter_mut().rev() {
            *slot = b'0' + (v % 10) as u8;
            v /= 10;
        }
        buf.push(b'.');
        buf.extend_from_slice(&digits[..d]);
    }
}

/// Decode one text-protocol row (`0xfb` = NULL, else length-encoded text) into `rs`.
fn decode_text_row(p: &[u8], ncols: usize, rs: &mut ResultSet) -> Result<(), mysql::Error> {
    let mut r = Rd(p);
    for _ in 0..ncols {
        if r.0.first() == Some(&0xfb) {
            r.0 = &r.0[1..];
            rs.push_null();
        } else {
            rs.push_cell(Some(r.lenenc_bytes()?));
        }
    }
    Ok(())
}

/// Decode one binary-protocol row into `rs`, as the text the server would print
/// (the same text as the crate path's `push_value`).
fn decode_row(p: &[u8], cols: &[ColMeta], rs: &mut ResultSet) -> Result<(), mysql::Error> {
    let nbitmap = (cols.len() + 7 + 2) / 8;
    let mut r = Rd(&p[1..]);
    let bitmap = r.take(nbitmap)?;
    for (i, c) in cols.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            rs.push_null();
            continue;
        }
        let start = rs.data_mut().len();
        let buf = rs.data_mut();
        match c.ty {
            T_TINY => {
                let b = r.u8()?;
                if c.unsigned {
                    put_u64(buf, false, u64::from(b));
                } else {
                    put_i64(buf, i64::from(b as i8));
                }
            }
            T_SHORT | T_YEAR => {
                let v = r.u16()?;
                if c.unsigned || c.ty == T_YEAR {
                    put_u64(buf, false, u64::from(v));
                } else {
                    put_i64(buf, i64::from(v as i16));
                }
            }
            T_LONG | T_INT24 => {
                let v = r.u32()?;
                if c.unsigned {
                    put_u64(buf, false, u64::from(v));
                } else {
                    put_i64(buf, i64::from(v as i32));
                }
            }
            T_LONGLONG => {
                let v = r.u64()?;
                if c.unsigned {
                    put_u64(buf, false, v);
                } else {
                    put_i64(buf, v as i64);
                }
            }
            T_FLOAT => {
                let f = f32::from_bits(r.u32()?);
                let _ = write!(buf, "{f}");
            }
            T_DOUBLE => {
                let d = f64::from_bits(r.u64()?);
                let _ = write!(buf, "{d}");
            }
            T_DATE | T_NEWDATE | T_DATETIME | T_DATETIME2 | T_TIMESTAMP | T_TIMESTAMP2 => {
                put_date_time(&mut r, c, buf)?
            }
            T_TIME | T_TIME2 => put_time(&mut r, c, buf)?,
            T_NULL => {
                rs.push_null();
                continue;
            }
            // DECIMAL, strings, BLOBs, ENUM, SET, BIT, JSON, GEOMETRY: length-encoded
            // bytes.
            _ => buf.extend_from_slice(r.lenenc_bytes()?),
        }
        rs.end_cell(start);
    }
    Ok(())
}

/// A binary DATE, DATETIME or TIMESTAMP value as the server prints it
/// (`YYYY-MM-DD[ hh:mm:ss[.ffffff]]`).
fn put_date_time(r: &mut Rd<'_>, c: &ColMeta, buf: &mut Vec<u8>) -> Result<(), mysql::Error> {
    let n = usize::from(r.u8()?);
    let f = r.take(n)?;
    let mut d = Rd(f);
    let (y, mo, da) = if n >= 4 {
        (d.u16()?, d.u8()?, d.u8()?)
    } else {
        (0, 0, 0)
    };
    let (h, mi, s) = if n >= 7 {
        (d.u8()?, d.u8()?, d.u8()?)
    } else {
        (0, 0, 0)
    };
    let us = if n >= 11 { d.u32()? } else { 0 };
    let y = u64::from(y);
    if y < 1000 {
        buf.extend_from_slice(
            &b"000"[..if y < 10 {
                3
            } else if y < 100 {
                2
            } else {
                1
            }],
        );
    }
    put_u64(buf, false, y);
    buf.push(b'-');
    put_2(buf, u64::from(mo));
    buf.push(b'-');
    put_2(buf, u64::from(da));
    if c.ty != T_DATE && c.ty != T_NEWDATE {
        buf.push(b' ');
        put_clock(buf, u64::from(h), mi, s, us, c.decimals);
    }
    Ok(())
}

/// A binary TIME value as the server prints it (`[-]hh:mm:ss[.ffffff]`, hours over 24
/// for whole days).
fn put_time(r: &mut Rd<'_>, c: &ColMeta, buf: &mut Vec<u8>) -> Result<(), mysql::Error> {
    let n = usize::from(r.u8()?);
    let f = r.take(n)?;
    let mut d = Rd(f);
    let (neg, days, h, mi, s) = if n >= 8 {
        (d.u8()? != 0, d.u32()?, d.u8()?, d.u8()?, d.u8()?)
    } else {
        (false, 0, 0, 0, 0)
    };
    let us = if n >= 12 { d.u32()? } else { 0 };
    if neg {
        buf.push(b'-');
    }
    put_clock(
        buf,
        u64::from(days) * 24 + u64::from(h),
        mi,
        s,
        us,
        c.decimals,
    );
    Ok(())
}

/// `hh:mm:ss[.ffffff]`, the clock part of DATETIME, TIMESTAMP and TIME values.
fn put_clock(buf: &mut Vec<u8>, hours: u64, minutes: u8, seconds: u8, us: u32, decimals: u8) {
    put_2(buf, hours);
    buf.push(b':');
    put_2(buf, u64::from(minutes));
    buf.push(b':');
    put_2(buf, u64::from(seconds));
    put_fraction(buf, us, decimals);
}

/// The fast path's row decoders over arbitrary bytes, for the fuzz targets and their
/// corpus replay: `data[0]` gives the column count (1–8), the next two bytes per column
/// its type and flags (bit 0 unsigned, the rest decimals), the rest is one binary row
/// packet and, the same bytes, one text row. Errors are results; nothing may panic.
pub(crate) fn fuzz_rows(data: &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let ncols = usize::from(n % 8) + 1;
    if rest.len() < 2 * ncols {
        return;
    }
    let (meta, packet) = rest.split_at(2 * ncols);
    let cols: Vec<ColMeta> = meta
        .chunks(2)
        .map(|c| ColMeta {
            ty: c[0],
            unsigned: c[1] & 1 != 0,
            decimals: c[1] >> 1,
        })
        .collect();
    let names: Vec<String> = (0..ncols).map(|i| format!("c{i}")).collect();
    let mut rs = ResultSet::new(names.clone());
    // A row packet starts with its 0x00 header, which the reader checked.
    let mut row = vec![0u8];
    row.extend_from_slice(packet);
    let _ = decode_row(&row, &cols, &mut rs);
    let mut rs = ResultSet::new(names);
    let _ = decode_text_row(packet, ncols, &mut rs);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_text() {
        let mut b = Vec::new();
        put_i64(&mut b, i64::MIN);
        b.push(b' ');
        put_u64(&mut b, false, u64::MAX);
        b.push(b' ');
        put_i64(&mut b, 0);
        b.push(b' ');
        put_i64(&mut b, -7);
        b.push(b' ');
        put_2(&mut b, 5);
        put_fraction(&mut b, 120, 4);
        assert_eq!(
            String::from_utf8(b).unwrap(),
            format!("{} {} 0 -7 05.0001", i64::MIN, u64::MAX)
        );
    }

    #[test]
    fn lenenc_round_trip() {
        for n in [
            0u64,
            250,
            251,
            65535,
            65536,
            0xff_ffff,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, n);
            assert_eq!(Rd(&b).lenenc().unwrap(), n);
        }
    }
}
