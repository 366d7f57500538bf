//! The Rust half of `sysbench.sql` (connections, statements, result sets) over `bmk-sql`.
//!
//! Connections, prepared statements and result sets are plain Rust objects that Lua
//! holds as FFI cdata pointers (`bmk_conn *`, `bmk_stmt *`, freed by `ffi.gc`); binding
//! values and reading result sets are the `bmk_*` C entry points below, which LuaJIT
//! compiles into the event's trace like the `sb_*` ones, and the calls that may wait
//! for the server (connect, execute, query, prepare, ...) are reached through the Lua
//! C functions of `sql_waits.rs`, where a worker may let others run. Only creating a
//! driver and turning an error into a Lua table go through mlua.
//!
//! A result set lives in the object that produced it: each statement has one (filled
//! by every `stmt:execute()`) and each connection has one (for `con:query()` and
//! `con:next_result()`), so a result set is valid until the next execution of the same
//! statement or query of the same connection, as in sysbench, and executing allocates
//! nothing on the Lua side. Both objects start with the same `#[repr(C)]` header, the
//! `nrows`, `nfields` and `cursor` fields that the prelude reads as struct fields.
//!
//! The entry points never raise: they return a status (`1` result set, `0` none, `-1`
//! error; a null statement for a failed prepare). A failure is kept in a thread-local
//! slot (one per worker: the workers of an event loop share a thread) that the prelude turns into an `errinfo` table with `take_error()`, and then
//! into what sysbench does — a restartable `errdesc` for ignorable errors, or the
//! `FATAL:` lines and a `<script>:<line>: SQL error, errno = N, ...` Lua error. Every
//! statement that succeeds is classified and counted as read, write or other on the
//! calling worker; ignorable errors count as ignored errors (or reconnects when the
//! driver reconnected) when they happen. A panic in an entry point (a bug in bmk or a
//! driver) is that call's fatal error, and fails the worker (see `ffi_panic.rs`).

use std::cell::{Cell, RefCell};
use std::io::Write as _;
use std::os::raw::{c_char, c_int, c_void};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bmk_engine::{with_current, Counter};
use bmk_sql::{
    counted_as, Connection, Driver, DriverConfig, DriverKind, QueryKind, ResultSet, SqlError,
    SqlErrorKind, SqlOp, SqlType, StatementId, Value as SqlValue,
};
use mlua::{LightUserData, Lua, Table, UserData, UserDataMethods, Value};

use crate::ffi_panic::guarded;
use crate::generated_rows::GeneratedRows;
use crate::state_data::StateData;
use crate::worker_slots::{current_worker, WorkerSlots};

/// Connections made so far in the process: spreads them over hosts round-robin.
static CONNECTIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The last failure of a `bmk_*` entry point, for `take_error()`, per worker of
    /// this thread.
    static LAST_ERROR: WorkerSlots<SqlError> = const { WorkerSlots::new() };
}

/// Whether any state of this process has made a SQL driver: sysbench prints the SQL
/// statistics (and the `tps`/`qps` report lines) only for scripts that did.
static DRIVER_MADE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a script of this process made a SQL driver (`sysbench.sql.driver()`, or
/// the 1.0 API's implicit connection).
pub fn driver_made() -> bool {
    DRIVER_MADE.load(std::sync::atomic::Ordering::Relaxed)
}

/// The Rust side of `sysbench.sql` that `sql.lua` builds on: `driver(name)` and
/// `take_error()`.
pub(crate) fn raw_api(lua: &Lua) -> mlua::Result<Table> {
    let raw = lua.create_table()?;
    raw.set(
        "driver",
        lua.create_function(|lua, name: Option<String>| {
            let options = lua
                .app_data_ref::<StateData>()
                .map(|d| d.options.clone())
                .unwrap_or_default();
            // As in sysbench, asking for a driver turns the SQL statistics on, even
            // when the name turns out to be wrong.
            DRIVER_MADE.store(true, std::sync::atomic::Ordering::Relaxed);
            let name = name
                .or_else(|| options.raw("db-driver"))
                .unwrap_or_else(|| "mysql".to_string());
            let kind: DriverKind = match name.parse() {
                Ok(k) => k,
                Err(msg) => return Ok((Value::Nil, Some(msg))),
            };
            // Only the options given, so that the environment variables standing in for
            // unset fast-path switches (`BMK_MYSQL_FASTPATH`, ...) count.
            let get = |n: &str| options.is_given(n).then(|| options.raw(n)).flatten();
            match DriverConfig::from_options(kind, &get) {
                Ok(cfg) => Ok((
                    Value::UserData(lua.create_userdata(LuaDriver {
                        driver: Driver::new(cfg),
                    })?),
                    None,
                )),
                Err(e) => Ok((Value::Nil, Some(e.message))),
            }
        })?,
    )?;
    // log(level, line): a FATAL (0) or ALERT (1) line through sysbench's log.
    raw.set(
        "log",
        lua.create_function(|_, (level, line): (i64, String)| {
            crate::log::log_line(level, &line);
            Ok(())
        })?,
    )?;
    raw.set(
        "take_error",
        lua.create_function(|lua, ()| {
            let e = LAST_ERROR
                .with(|l| l.take(current_worker()))
                .unwrap_or_else(|| {
                    SqlError::new(DriverKind::Mysql, SqlOp::Query, 0, "", "unknown SQL error")
                });
            error_table(lua, &e)
        })?,
    )?;
    Ok(raw)
}

thread_local! {
    /// Fatal errors not counted yet, per worker of this thread: one counts as an
    /// ignored error only once the worker goes on after it (the script caught it, as
    /// sysbench 1.0.20 counts it then); the one that ends the worker is no ignored
    /// error, and must not count for another worker of its event loop either.
    static UNCOUNTED_FATAL: WorkerSlots<u64> = const { WorkerSlots::new() };
}

/// Counts the fatal errors the worker went on after.
#[inline]
fn count_caught_fatal() {
    if UNCOUNTED_FATAL.with(|u| u.is_empty()) {
        return;
    }
    count_caught_fatal_of(current_worker());
}

#[cold]
fn count_caught_fatal_of(worker: Option<u32>) {
    if let Some(n) = UNCOUNTED_FATAL.with(|u| u.take(worker)) {
        with_current(|ctx| ctx.count_n(Counter::Error, n));
    }
}

#[inline]
fn count(kind: QueryKind) {
    let c = match kind {
        QueryKind::Read => Counter::Read,
        QueryKind::Write => Counter::Write,
        QueryKind::Other => Counter::Other,
    };
    count_caught_fatal();
    with_current(|ctx| ctx.count(c));
}

/// Counts the rows a successful read statement returned, and the read as empty when
/// there were none: one counter add per read, on the worker's own slot.
#[inline]
fn count_rows(nrows: u32) {
    with_current(|ctx| {
        ctx.count_n(Counter::Rows, u64::from(nrows));
        if nrows == 0 {
            ctx.count(Counter::EmptyReads);
        }
    });
}

/// Counts a failure where [`SqlError::counter`] says; a fatal one once the worker goes
/// on after it.
fn count_error(e: &SqlError) {
    count_caught_fatal();
    if matches!(e.kind, SqlErrorKind::Fatal) {
        UNCOUNTED_FATAL.with(|u| u.set_or_change(current_worker(), 1, |n| *n += 1));
        return;
    }
    if let Some(c) = e.counter() {
        with_current(|ctx| ctx.count(c));
    }
}

/// Counts `e` and keeps it for `take_error()`; the status of a failed call.
#[cold]
fn fail(e: SqlError) -> c_int {
    count_error(&e);
    LAST_ERROR.with(|l| l.put(current_worker(), e));
    -1
}

/// The body of entry point `entry`, which has an error status: a panic fails the call
/// (`-1`) with the panic as a fatal SQL error of driver `kind` (see
/// [`crate::ffi_panic`]).
#[inline]
fn with_status(entry: &'static str, kind: DriverKind, body: impl FnOnce() -> c_int) -> c_int {
    guarded(entry, body).unwrap_or_else(|message| fail(panic_error(kind, message)))
}

/// A panic of an entry point as the fatal SQL error the prelude raises.
#[cold]
fn panic_error(kind: DriverKind, message: String) -> SqlError {
    SqlError::new(kind, SqlOp::Query, 0, "", message)
}

/// The `errinfo` table for the prelude (the error is counted already).
fn error_table(lua: &Lua, e: &SqlError) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let kind = match e.kind {
        SqlErrorKind::Ignorable { .. } => "ignorable",
        SqlErrorKind::Fatal => "fatal",
        SqlErrorKind::Connect => "connect",
    };
    t.set("kind", kind)?;
    t.set("sql_errno", e.errno)?;
    t.set("sql_state", e.sqlstate.as_str())?;
    t.set("sql_errmsg", e.message.as_str())?;
    if let Some(q) = &e.query {
        t.set("query", q.as_str())?;
    }
    t.set("message", e.to_string())?;
    t.set("fatal_lines", lua.create_sequence_from(e.fatal_lines())?)?;
    Ok(t)
}

fn closed_error(kind: DriverKind) -> SqlError {
    SqlError::new(kind, SqlOp::Query, 0, "", "the connection is closed")
}

/// `sysbench.sql.driver()`.
struct LuaDriver {
    driver: Driver,
}

impl UserData for LuaDriver {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("name", |_, d, ()| Ok(d.driver.name()));
        // A light userdata to the driver, for `sql_waits`'s `connect` (which may wait
        // for the server, so it is no mlua callback); valid while this userdata lives.
        methods.add_method("handle", |_, d, ()| {
            let ptr = (&d.driver as *const Driver).cast_mut().cast::<c_void>();
            Ok(LightUserData(ptr))
        });
    }
}

/// Connects with `driver`: a new connection handle owned by the caller (free it with
/// `bmk_conn_free`), or null with the error counted and kept for `take_error()`.
pub(crate) fn connect(driver: &Driver) -> *mut BmkConn {
    let index = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
    let made = guarded("connect", || match driver.connect(index) {
        Ok(conn) => Box::into_raw(Box::new(BmkConn {
            rs: RsPart::default(),
            shared: Rc::new(ConnShared {
                conn: RefCell::new(Some(conn)),
                has_result: Cell::new(false),
            }),
            kind: driver.kind(),
            bulk_started: false,
        })),
        Err(mut e) => {
            if e.kind != SqlErrorKind::Connect && !e.is_ignorable() {
                e.kind = SqlErrorKind::Connect;
            }
            fail(e);
            std::ptr::null_mut()
        }
    });
    made.unwrap_or_else(|message| {
        let mut e = panic_error(driver.kind(), message);
        e.kind = SqlErrorKind::Connect;
        fail(e);
        std::ptr::null_mut()
    })
}

/// A connection as its handles share it: the driver connection (`None` once closed)
/// and whether it holds a result set not freed yet, the state sysbench's
/// `rs:free()` checks.
struct ConnShared {
    conn: RefCell<Option<Box<dyn Connection>>>,
    has_result: Cell<bool>,
}

impl ConnShared {
    fn borrow_mut(&self) -> std::cell::RefMut<'_, Option<Box<dyn Connection>>> {
        self.conn.borrow_mut()
    }
}

type SharedConn = Rc<ConnShared>;

/// What a call on a closed connection logs (sysbench's wording); the call then fails
/// as a misuse of the API ([`API_ERROR`]).
const CLOSED: &str = "ALERT: attempt to use an already closed connection";

/// The status of a call that misused the API (a closed connection, a bulk insert not
/// started): its ALERT is printed already and there is no SQL error to describe.
const API_ERROR: c_int = -2;

#[cold]
fn api_error(alert: &str) -> c_int {
    crate::log::log_line(crate::log::ALERT, alert);
    API_ERROR
}

/// The result-set header shared by connections and statements: the first fields of
/// both `bmk_conn` and `bmk_stmt` as the prelude declares them.
#[repr(C)]
#[derive(Default)]
pub struct RsPart {
    /// Rows of the current result set.
    nrows: u32,
    /// Columns of the current result set.
    nfields: u32,
    /// Next row `fetch_row` returns (0-based); the prelude advances it.
    cursor: u32,
    rs: ResultSet,
}

impl RsPart {
    /// Refreshes the header after `rs` was (re)filled; the status for Lua.
    #[inline]
    fn sync(&mut self, has_rows: bool) -> c_int {
        self.cursor = 0;
        if has_rows {
            self.nrows = self.rs.nrows() as u32;
            self.nfields = self.rs.nfields as u32;
            1
        } else {
            self.nrows = 0;
            self.nfields = 0;
            0
        }
    }

    /// The status for Lua after a query wrote its first result set into `self.rs`.
    fn filled(&mut self, r: Result<bool, SqlError>) -> c_int {
        match r {
            Ok(has_rows) => self.sync(has_rows),
            Err(e) => {
                self.rs.clear();
                self.sync(false);
                fail(e)
            }
        }
    }

    /// As [`filled`](Self::filled), for a call that made a result set of its own.
    fn take(&mut self, r: Result<Option<ResultSet>, SqlError>) -> c_int {
        let r = r.map(|set| match set {
            Some(rs) => {
                self.rs = rs;
                true
            }
            None => {
                self.rs.clear();
                false
            }
        });
        self.filled(r)
    }
}

/// A connection (`drv:connect()`, C type `bmk_conn`); statements share it.
#[repr(C)]
pub struct BmkConn {
    /// The result set of the last `query` / `next_result`.
    rs: RsPart,
    shared: SharedConn,
    kind: DriverKind,
    /// Between `bulk_insert_init` and `bulk_insert_done`.
    bulk_started: bool,
}

// `bmk_rs_free` reaches the connection of either handle through this field.
const _: () = assert!(std::mem::offset_of!(BmkConn, shared) == std::mem::offset_of!(BmkStmt, conn));

impl BmkConn {
    /// Runs `f` on the open connection; a closed one fails.
    #[inline]
    fn with(&mut self, f: impl FnOnce(&mut dyn Connection, &mut RsPart) -> c_int) -> c_int {
        let mut guard = self.shared.borrow_mut();
        match guard.as_deref_mut() {
            Some(c) => f(c, &mut self.rs),
            None => api_error(CLOSED),
        }
    }
}

/// How one bound parameter converts values (`stmt:bind_create(type [, max_len])`).
#[derive(Clone, Copy)]
struct ParamType {
    ty: SqlType,
    max_len: usize,
}

impl ParamType {
    fn truncates(self) -> bool {
        self.max_len > 0 && matches!(self.ty, SqlType::Char | SqlType::VarChar)
    }

    /// Stores the bind value of text `bytes` in `slot`, reusing its buffer.
    fn set_text(self, slot: &mut SqlValue, bytes: &[u8]) {
        let bytes = if self.truncates() && bytes.len() > self.max_len {
            &bytes[..self.max_len]
        } else {
            bytes
        };
        if self.ty.is_integer() || self.ty.is_float() {
            *slot = self.ty.value_from_text(bytes);
        } else if let SqlValue::Text(buf) = slot {
            buf.clear();
            buf.extend_from_slice(bytes);
        } else {
            *slot = SqlValue::Text(bytes.to_vec());
        }
    }

    /// Stores the bind value of Lua number `n` in `slot`.
    fn set_number(self, slot: &mut SqlValue, n: f64) {
        match self.ty {
            t if t.is_integer() => *slot = SqlValue::Int(n as i64),
            SqlType::Float => *slot = SqlValue::Float(n as f32),
            SqlType::Double => *slot = SqlValue::Double(n),
            _ => {
                let mut buf = match std::mem::replace(slot, SqlValue::Null) {
                    SqlValue::Text(mut b) => {
                        b.clear();
                        b
                    }
                    _ => Vec::new(),
                };
                // Writing to a Vec cannot fail.
                let _ = if n.fract() == 0.0 && n.abs() < 1e15 {
                    write!(buf, "{}", n as i64)
                } else {
                    write!(buf, "{n}")
                };
                if self.truncates() {
                    buf.truncate(self.max_len);
                }
                *slot = SqlValue::Text(buf);
            }
        }
    }
}

/// A prepared statement (`con:prepare(sql)`, C type `bmk_stmt`).
#[repr(C)]
pub struct BmkStmt {
    /// The result set of the last execution.
    rs: RsPart,
    conn: SharedConn,
    kind: DriverKind,
    id: Option<StatementId>,
    types: Vec<ParamType>,
    values: Vec<SqlValue>,
}

/// The bytes `ptr[..len]` (empty for a null pointer).
///
/// # Safety
/// `ptr` must be null or point to `len` readable bytes that outlive the result.
#[inline]
unsafe fn bytes<'a>(ptr: *const c_char, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) }
    }
}

/// SQL text from Lua (invalid UTF-8 is replaced, as the drivers take `&str`).
///
/// # Safety
/// As [`bytes`].
unsafe fn text<'a>(ptr: *const c_char, len: usize) -> std::borrow::Cow<'a, str> {
    // SAFETY: forwarded.
    String::from_utf8_lossy(unsafe { bytes(ptr, len) })
}

// C entry points -------------------------------------------------------------------------
//
// Called only by the prelude with the handles it got from `connect` / `bmk_conn_prepare`
// (never null, never freed while in use: `ffi.gc` frees them once unreachable). Each
// runs its body in `guarded` / `with_status`: a panic must not unwind into LuaJIT.

/// `void bmk_conn_free(bmk_conn *)`: the `ffi.gc` finalizer of a connection.
///
/// # Safety
/// `c` must come from `connect` and not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn bmk_conn_free(c: *mut BmkConn) {
    if !c.is_null() {
        // SAFETY: `c` was made by Box::into_raw in `connect`.
        let c = unsafe { Box::from_raw(c) };
        let _ = guarded("bmk_conn_free", move || drop(c));
    }
}

/// `int bmk_conn_query(bmk_conn *, const char *sql, size_t len)`: `1` with the result
/// set in the connection, `0` without one, `-1` on error.
///
/// # Safety
/// `c` must be a live connection handle and `sql` point to `len` bytes.
pub(crate) unsafe extern "C" fn bmk_conn_query(
    c: *mut BmkConn,
    sql: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: guaranteed by the caller.
    let (c, sql) = unsafe { (&mut *c, text(sql, len)) };
    with_status("bmk_conn_query", c.kind, || {
        let status = c.with(|conn, rs| {
            // Into the connection's own result set: its buffers, grown by earlier
            // queries, are reused instead of a new set allocated and grown per query.
            let r = conn.query_into(&sql, &mut rs.rs);
            let kind = r
                .as_ref()
                .ok()
                .map(|&has_rows| counted_as(has_rows, conn.affected_rows()));
            if let Some(k) = kind {
                count(k);
                crate::load_progress::after_query(&sql);
            }
            let status = rs.filled(r);
            if kind == Some(QueryKind::Read) {
                count_rows(rs.nrows);
            }
            status
        });
        c.shared.has_result.set(status == 1);
        status
    })
}

/// `bmk_stmt *bmk_conn_prepare(bmk_conn *, const char *sql, size_t len)`: a new
/// statement owned by the caller (free it with `bmk_stmt_free`), null on error.
///
/// # Safety
/// `c` must be a live connection handle and `sql` point to `len` bytes.
pub(crate) unsafe extern "C" fn bmk_conn_prepare(
    c: *mut BmkConn,
    sql: *const c_char,
    len: usize,
) -> *mut BmkStmt {
    // SAFETY: guaranteed by the caller.
    let (c, sql) = unsafe { (&mut *c, text(sql, len)) };
    let kind = c.kind;
    let made = guarded("bmk_conn_prepare", || {
        let mut id = None;
        let status = c.with(|conn, _| match conn.prepare(&sql) {
            Ok(i) => {
                id = Some(i);
                0
            }
            Err(e) => fail(e),
        });
        if status != 0 {
            return std::ptr::null_mut();
        }
        Box::into_raw(Box::new(BmkStmt {
            rs: RsPart::default(),
            conn: c.shared.clone(),
            kind: c.kind,
            id,
            types: Vec::new(),
            values: Vec::new(),
        }))
    });
    made.unwrap_or_else(|message| {
        fail(panic_error(kind, message));
        std::ptr::null_mut()
    })
}

/// `int bmk_conn_bulk_init(bmk_conn *, const char *prefix, size_t len)`: `0` or `-1`.
///
/// # Safety
/// `c` must be a live connection handle and `prefix` point to `len` bytes.
pub(crate) unsafe extern "C" fn bmk_conn_bulk_init(
    c: *mut BmkConn,
    prefix: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: guaranteed by the caller.
    let (c, prefix) = unsafe { (&mut *c, text(prefix, len)) };
    with_status("bmk_conn_bulk_init", c.kind, || {
        let r = c.with(|conn, _| status(conn.bulk_insert_init(&prefix)));
        c.bulk_started |= r == 0;
        r
    })
}

/// `int bmk_conn_bulk_next(bmk_conn *, const char *tuple, size_t len)`: `0` or `-1`.
///
/// # Safety
/// `c` must be a live connection handle and `tuple` point to `len` bytes.
pub(crate) unsafe extern "C" fn bmk_conn_bulk_next(
    c: *mut BmkConn,
    tuple: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: guaranteed by the caller.
    let (c, tuple) = unsafe { (&mut *c, text(tuple, len)) };
    with_status("bmk_conn_bulk_next", c.kind, || {
        if c.shared.borrow_mut().is_some() && !c.bulk_started {
            return api_error(
                "ALERT: attempt to call bulk_insert_next() before bulk_insert_init()",
            );
        }
        c.with(|conn, _| status(conn.bulk_insert_next(&tuple)))
    })
}

/// `int bmk_conn_bulk_done(bmk_conn *)`: `0` or `-1`; counts one write.
///
/// # Safety
/// `c` must be a live connection handle.
pub(crate) unsafe extern "C" fn bmk_conn_bulk_done(c: *mut BmkConn) -> c_int {
    // SAFETY: guaranteed by the caller.
    let c = unsafe { &mut *c };
    with_status("bmk_conn_bulk_done", c.kind, || {
        c.bulk_started = false;
        c.with(|conn, _| {
            let r = conn.bulk_insert_done();
            if r.is_ok() {
                count(QueryKind::Write);
            }
            status(r)
        })
    })
}

/// `int bmk_conn_load_text(bmk_conn *, const char *table, size_t, const char *columns,
/// size_t, const char *data, size_t, uint64_t *rows)`: `1` loaded, `*rows` rows (counts
/// one write), `0` the connection has no bulk text path (nothing loaded), `-1` on
/// error. See
/// [`Connection::load_text`](bmk_sql::Connection::load_text).
///
/// # Safety
/// `c` must be a live connection handle and each pointer point to its length in bytes.
pub(crate) unsafe extern "C" fn bmk_conn_load_text(
    c: *mut BmkConn,
    table: *const c_char,
    table_len: usize,
    columns: *const c_char,
    columns_len: usize,
    data: *const c_char,
    data_len: usize,
    rows: *mut u64,
) -> c_int {
    // SAFETY: guaranteed by the caller.
    let (c, table, columns, data) = unsafe {
        (
            &mut *c,
            text(table, table_len),
            text(columns, columns_len),
            bytes(data, data_len),
        )
    };
    with_status("bmk_conn_load_text", c.kind, || {
        c.with(|conn, _| match conn.load_text(&table, &columns, data) {
            Ok(Some(n)) => {
                count(QueryKind::Write);
                if !rows.is_null() {
                    // SAFETY: guaranteed by the caller.
                    unsafe { *rows = n };
                }
                1
            }
            Ok(None) => 0,
            Err(e) => fail(e),
        })
    })
}

/// `int bmk_conn_insert_generated(bmk_conn *, const char *table, size_t, const char
/// *columns, size_t, uint64_t nrows, uint64_t *inserted)`: inserts `nrows` rows made
/// from the column description `columns` (see [`crate::generated_rows`]) the driver's
/// cheapest way ([`Connection::insert_rows`]); `1` with `*inserted` rows (counts one
/// write), `-1` on error.
///
/// # Safety
/// `c` must be a live connection handle and each pointer point to its length in bytes.
pub(crate) unsafe extern "C" fn bmk_conn_insert_generated(
    c: *mut BmkConn,
    table: *const c_char,
    table_len: usize,
    columns: *const c_char,
    columns_len: usize,
    nrows: u64,
    inserted: *mut u64,
) -> c_int {
    // SAFETY: guaranteed by the caller.
    let (c, table, columns) =
        unsafe { (&mut *c, text(table, table_len), bytes(columns, columns_len)) };
    with_status("bmk_conn_insert_generated", c.kind, || {
        let mut rows = match GeneratedRows::parse(columns, nrows) {
            Ok(rows) => rows,
            Err(msg) => return fail(SqlError::new(c.kind, SqlOp::Query, 0, "HY000", msg)),
        };
        let names: Vec<String> = rows.names().iter().map(|n| n.to_string()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        c.with(
            |conn, _| match conn.insert_rows(&table, &names, &mut rows) {
                Ok(n) => {
                    count(QueryKind::Write);
                    crate::load_progress::rows(n);
                    if !inserted.is_null() {
                        // SAFETY: guaranteed by the caller.
                        unsafe { *inserted = n };
                    }
                    1
                }
                Err(e) => fail(e),
            },
        )
    })
}

/// `int bmk_conn_reconnect(bmk_conn *)`: `0` or `-1`.
///
/// # Safety
/// `c` must be a live connection handle.
pub(crate) unsafe extern "C" fn bmk_conn_reconnect(c: *mut BmkConn) -> c_int {
    // SAFETY: guaranteed by the caller.
    let c = unsafe { &mut *c };
    with_status("bmk_conn_reconnect", c.kind, || {
        if c.shared.borrow_mut().is_none() {
            crate::log::log_line(crate::log::ALERT, CLOSE_CLOSED);
            return 0;
        }
        c.shared.has_result.set(false);
        c.with(|conn, _| {
            let r = conn.reconnect();
            if r.is_ok() {
                // sysbench counts every reconnect, asked for or not.
                count_caught_fatal();
                with_current(|ctx| ctx.count(Counter::Reconnect));
            }
            status(r)
        })
    })
}

/// `void bmk_conn_disconnect(bmk_conn *)`: closes the connection; later calls on it
/// and its statements fail.
///
/// # Safety
/// `c` must be a live connection handle.
pub(crate) unsafe extern "C" fn bmk_conn_disconnect(c: *mut BmkConn) {
    // SAFETY: guaranteed by the caller.
    let c = unsafe { &mut *c };
    let _ = guarded("bmk_conn_disconnect", || {
        c.shared.has_result.set(false);
        match c.shared.borrow_mut().take() {
            Some(mut conn) => conn.disconnect(),
            None => crate::log::log_line(crate::log::ALERT, CLOSE_CLOSED),
        }
    });
}

/// What closing (or reconnecting) a closed connection logs.
const CLOSE_CLOSED: &str = "ALERT: attempt to close an already closed connection";

/// `bool bmk_conn_more_results(bmk_conn *)`.
///
/// # Safety
/// `c` must be a live connection handle.
#[no_mangle]
pub unsafe extern "C" fn bmk_conn_more_results(c: *mut BmkConn) -> bool {
    // SAFETY: guaranteed by the caller.
    let c = unsafe { &mut *c };
    guarded("bmk_conn_more_results", || {
        match c.shared.borrow_mut().as_deref_mut() {
            Some(conn) => conn.more_results(),
            None => {
                crate::log::log_line(crate::log::ALERT, CLOSED);
                false
            }
        }
    })
    .unwrap_or(false)
}

/// `int bmk_conn_next_result(bmk_conn *)`: like `bmk_conn_query`.
///
/// # Safety
/// `c` must be a live connection handle.
pub(crate) unsafe extern "C" fn bmk_conn_next_result(c: *mut BmkConn) -> c_int {
    // SAFETY: guaranteed by the caller.
    let c = unsafe { &mut *c };
    with_status("bmk_conn_next_result", c.kind, || {
        let status = c.with(|conn, rs| rs.take(conn.next_result()));
        c.shared.has_result.set(status == 1);
        status
    })
}

fn status(r: Result<(), SqlError>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

/// `void bmk_stmt_free(bmk_stmt *)`: the `ffi.gc` finalizer of a statement.
///
/// # Safety
/// `s` must come from `bmk_conn_prepare` and not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn bmk_stmt_free(s: *mut BmkStmt) {
    if !s.is_null() {
        // SAFETY: `s` was made by Box::into_raw in `bmk_conn_prepare`.
        let s = unsafe { Box::from_raw(s) };
        let _ = guarded("bmk_stmt_free", move || drop(s));
    }
}

/// `void bmk_stmt_close(bmk_stmt *)`: releases the server-side statement; later
/// executions fail.
///
/// # Safety
/// `s` must be a live statement handle.
pub(crate) unsafe extern "C" fn bmk_stmt_close(s: *mut BmkStmt) {
    // SAFETY: guaranteed by the caller.
    let s = unsafe { &mut *s };
    let _ = guarded("bmk_stmt_close", || {
        let mut guard = s.conn.borrow_mut();
        let Some(conn) = guard.as_deref_mut() else {
            crate::log::log_line(crate::log::ALERT, CLOSED);
            return;
        };
        if let Some(id) = s.id.take() {
            conn.close_statement(id);
        }
    });
}

/// `void bmk_stmt_bind_reset(bmk_stmt *)`: forgets the bound parameters.
///
/// # Safety
/// `s` must be a live statement handle.
#[no_mangle]
pub unsafe extern "C" fn bmk_stmt_bind_reset(s: *mut BmkStmt) {
    // SAFETY: guaranteed by the caller.
    let s = unsafe { &mut *s };
    let _ = guarded("bmk_stmt_bind_reset", || {
        s.types.clear();
        s.values.clear();
    });
}

/// `int bmk_stmt_bind_add(bmk_stmt *, uint32_t type, double max_len)`: binds the next
/// placeholder to a parameter of `sysbench.sql.type` code `type`; `-1` for an unknown
/// type. Its value is NULL until set.
///
/// # Safety
/// `s` must be a live statement handle.
#[no_mangle]
pub unsafe extern "C" fn bmk_stmt_bind_add(s: *mut BmkStmt, ty: u32, max_len: f64) -> c_int {
    // SAFETY: guaranteed by the caller.
    let s = unsafe { &mut *s };
    guarded("bmk_stmt_bind_add", || {
        let Some(ty) = SqlType::from_code(ty) else {
            return -1;
        };
        s.types.push(ParamType {
            ty,
            max_len: max_len.max(0.0) as usize,
        });
        s.values.push(SqlValue::Null);
        0
    })
    .unwrap_or(-1)
}

/// `void bmk_stmt_set_null(bmk_stmt *, uint32_t i)`: parameter `i` (0-based) is NULL.
///
/// # Safety
/// `s` must be a live statement handle.
#[no_mangle]
pub unsafe extern "C" fn bmk_stmt_set_null(s: *mut BmkStmt, i: u32) {
    // SAFETY: guaranteed by the caller.
    let s = unsafe { &mut *s };
    let _ = guarded("bmk_stmt_set_null", || {
        if let Some(slot) = s.values.get_mut(i as usize) {
            *slot = SqlValue::Null;
        }
    });
}

/// `void bmk_stmt_set_int(bmk_stmt *, uint32_t i, int64_t v)`: parameter `i` is the
/// integer `v` whatever its type (Lua booleans).
///
/// # Safety
/// `s` must be a live statement handle.
#[no_mangle]
pub unsafe extern "C" fn bmk_stmt_set_int(s: *mut BmkStmt, i: u32, v: i64) {
    // SAFETY: guaranteed by the caller.
    let s = unsafe { &mut *s };
    let _ = guarded("bmk_stmt_set_int", || {
        if let Some(slot) = s.values.get_mut(i as usize) {
            *slot = SqlValue::Int(v);
        }
    });
}

/// `void bmk_stmt_set_number(bmk_stmt *, uint32_t i, double v)`: parameter `i` is Lua
/// number `v`, converted to the parameter's type.
///
/// # Safety
/// `s` must be a live statement handle.
#[no_mangle]
pub unsafe extern "C" fn bmk_stmt_set_number(s: *mut BmkStmt, i: u32, v: f64) {
    // SAFETY: guaranteed by the caller.
    let s = unsafe { &mut *s };
    let _ = guarded("bmk_stmt_set_number", || {
        let i = i as usize;
        if let (Some(t), Some(slot)) = (s.types.get(i), s.values.get_mut(i)) {
            t.set_number(slot, v);
        }
    });
}

/// `void bmk_stmt_set_text(bmk_stmt *, uint32_t i, const char *p, size_t len)`:
/// parameter `i` is the string `p[0..len]`, converted to the parameter's type.
///
/// # Safety
/// `s` must be a live statement handle and `p` point to `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn bmk_stmt_set_text(s: *mut BmkStmt, i: u32, p: *const c_char, len: usize) {
    // SAFETY: guaranteed by the caller.
    let (s, v) = unsafe { (&mut *s, bytes(p, len)) };
    let _ = guarded("bmk_stmt_set_text", || {
        let i = i as usize;
        if let (Some(t), Some(slot)) = (s.types.get(i), s.values.get_mut(i)) {
            t.set_text(slot, v);
        }
    });
}

/// `int bmk_stmt_execute(bmk_stmt *)`: executes with the values set; `1` with the
/// result set in the statement, `0` without one, `-1` on error.
///
/// # Safety
/// `s` must be a live statement handle.
pub(crate) unsafe extern "C" fn bmk_stmt_execute(s: *mut BmkStmt) -> c_int {
    // SAFETY: guaranteed by the caller.
    let s = unsafe { &mut *s };
    with_status("bmk_stmt_execute", s.kind, || execute(s))
}

/// The body of [`bmk_stmt_execute`].
#[inline]
fn execute(s: &mut BmkStmt) -> c_int {
    let Some(id) = s.id else {
        return fail(closed_error(s.kind));
    };
    let mut guard = s.conn.borrow_mut();
    let Some(conn) = guard.as_deref_mut() else {
        return api_error(CLOSED);
    };
    let status = match conn.execute_into(id, &s.values, &mut s.rs.rs) {
        Ok(has_rows) => {
            let kind = counted_as(has_rows, conn.affected_rows());
            count(kind);
            let status = s.rs.sync(has_rows);
            if kind == QueryKind::Read {
                count_rows(s.rs.nrows);
            }
            status
        }
        Err(e) => {
            s.rs.sync(false);
            fail(e)
        }
    };
    drop(guard);
    s.conn.has_result.set(status == 1);
    status
}

/// `const char *bmk_rs_cell(const void *rs, uint32_t row, uint32_t col, size_t *len)`: the
/// value at (`row`, `col`) of the result set of a connection or statement handle, with
/// its length in `*len`; null for SQL NULL or out of range. Valid until the handle's
/// next execution.
///
/// # Safety
/// `rs` must be a live connection or statement handle and `len` writable.
#[no_mangle]
pub unsafe extern "C" fn bmk_rs_cell(
    rs: *mut c_void,
    row: u32,
    col: u32,
    len: *mut usize,
) -> *const c_char {
    // SAFETY: both handle types start with an `RsPart` (`#[repr(C)]`).
    let rs = unsafe { &*rs.cast::<RsPart>() };
    guarded("bmk_rs_cell", || {
        match rs.rs.get(row as usize, col as usize) {
            Some(v) => {
                // SAFETY: guaranteed by the caller.
                unsafe { *len = v.len() };
                v.as_ptr().cast()
            }
            None => std::ptr::null(),
        }
    })
    .unwrap_or(std::ptr::null())
}

/// `void bmk_rs_free(const void *rs)`: empties the result set of a connection or statement
/// handle (`rs:free()`).
///
/// # Safety
/// `rs` must be a live connection or statement handle.
#[no_mangle]
pub unsafe extern "C" fn bmk_rs_free(rs: *mut c_void) -> c_int {
    if rs.is_null() {
        crate::log::log_line(crate::log::ALERT, FREE_INVALID);
        return 1;
    }
    // SAFETY: both handle types are `#[repr(C)]` and start with an `RsPart` followed
    // by their `SharedConn` (the const assertion next to `BmkConn`).
    let conn = unsafe {
        &*rs.cast::<u8>()
            .add(std::mem::offset_of!(BmkConn, shared))
            .cast::<SharedConn>()
    }
    .clone();
    // SAFETY: as above.
    let rs = unsafe { &mut *rs.cast::<RsPart>() };
    guarded("bmk_rs_free", || {
        // As sysbench, a result set can be freed once, while its connection still
        // holds it (no query since), and not on a closed connection.
        if conn.borrow_mut().is_none() {
            crate::log::log_line(crate::log::ALERT, CLOSED);
            return 1;
        }
        if !conn.has_result.get() {
            crate::log::log_line(crate::log::ALERT, FREE_INVALID);
            return 1;
        }
        conn.has_result.set(false);
        rs.rs = ResultSet::default();
        rs.sync(false);
        0
    })
    .unwrap_or(1)
}

/// What freeing a result set that is no longer (or never was) current logs.
const FREE_INVALID: &str = "ALERT: attempt to free an invalid result set";

/// Addresses of the `bmk_*` entry points, for [`crate::ffi::ensure_ffi_linked`].
pub(crate) fn entry_points() -> [usize; 11] {
    [
        bmk_conn_free as *const () as usize,
        bmk_conn_more_results as *const () as usize,
        bmk_stmt_free as *const () as usize,
        bmk_stmt_bind_reset as *const () as usize,
        bmk_stmt_bind_add as *const () as usize,
        bmk_stmt_set_null as *const () as usize,
        bmk_stmt_set_int as *const () as usize,
        bmk_stmt_set_number as *const () as usize,
        bmk_stmt_set_text as *const () as usize,
        bmk_rs_cell as *const () as usize,
        bmk_rs_free as *const () as usize,
    ]
}
