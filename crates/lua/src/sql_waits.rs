//! The `sysbench.sql` calls that may wait for the server, as classic Lua C functions.
//!
//! Every other entry point of `sql.rs` is an FFI call that LuaJIT makes from compiled
//! code. These may wait — and on an event loop a worker waits by suspending its
//! coroutine while the loop runs other workers — so they are called the way LuaJIT
//! calls a `lua_CFunction`: it ends the trace before the call and the interpreter
//! makes it, with the VM's registers saved in the calling Lua thread. Only there can
//! the VM be left mid-call while another Lua thread of the same state runs (the
//! measurements and the reason are in docs/ARCHITECTURE.md, "Workers sharing a state").
//! Such a call costs about 17 ns more than an FFI call, nothing beside a round trip to
//! the server.
//!
//! Each function reads its arguments as `sql.lua` passes them — a handle as the cdata
//! pointer it holds, text as Lua strings, a data pointer as a number — calls the entry
//! point in `sql.rs`, and pushes its status. None raises a Lua error: a wrong argument
//! is status [`BAD_ARGUMENT`], which `sql.lua` raises at the script's level. A failed
//! `connect` or `prepare` pushes nil and leaves the error for `take_error()`.

use std::os::raw::{c_char, c_int, c_void};

use mlua::ffi::{self, lua_State};
use mlua::{Lua, Table};

use crate::sql::{self, BmkConn, BmkStmt};

/// Status of a call given something other than the handle or text it takes.
const BAD_ARGUMENT: ffi::lua_Integer = -3;

/// The pointer a pointer-typed cdata at `idx` holds; null for anything else.
///
/// # Safety
/// `l` must be a live Lua state with a value at `idx`.
unsafe fn handle<T>(l: *mut lua_State, idx: c_int) -> *mut T {
    // SAFETY: for a cdata, LuaJIT's `lua_topointer` gives the address of its payload,
    // which for the pointer types `sql.lua` passes (`bmk_conn *`, `bmk_stmt *`) is
    // the pointer itself.
    unsafe {
        if ffi::lua_type(l, idx) != ffi::LUA_TCDATA {
            return std::ptr::null_mut();
        }
        let payload = ffi::lua_topointer(l, idx).cast::<*mut T>();
        if payload.is_null() {
            std::ptr::null_mut()
        } else {
            *payload
        }
    }
}

/// The bytes of the string at `idx`; `None` when it is not a string.
///
/// # Safety
/// As [`handle`]; the bytes live as long as the string stays on the stack, that is for
/// the rest of the call.
unsafe fn string_arg(l: *mut lua_State, idx: c_int) -> Option<(*const c_char, usize)> {
    // SAFETY: forwarded; a type check first, so that a number is not converted in place.
    unsafe {
        if ffi::lua_type(l, idx) != ffi::LUA_TSTRING {
            return None;
        }
        let mut len = 0usize;
        let p = ffi::lua_tolstring(l, idx, &mut len);
        Some((p, len))
    }
}

/// Pushes `status` as the call's one result.
///
/// # Safety
/// As [`handle`].
unsafe fn status(l: *mut lua_State, status: ffi::lua_Integer) -> c_int {
    // SAFETY: forwarded.
    unsafe { ffi::lua_pushinteger(l, status) };
    1
}

/// Pushes a handle just made as a light userdata, or nil for none; one result.
///
/// # Safety
/// `l` must be a live Lua state with room for a value.
unsafe fn push_made(l: *mut lua_State, made: *mut c_void) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        if made.is_null() {
            ffi::lua_pushnil(l);
        } else {
            ffi::lua_pushlightuserdata(l, made);
        }
    }
    1
}

/// The call of entry point `f` on the handle at index 1: its status, or
/// [`BAD_ARGUMENT`].
///
/// # Safety
/// As [`handle`]; `f` must accept any live handle of its type.
unsafe fn on_handle<T>(l: *mut lua_State, f: unsafe extern "C" fn(*mut T) -> c_int) -> c_int {
    // SAFETY: forwarded; the handle is checked to be a pointer cdata first.
    unsafe {
        let h = handle::<T>(l, 1);
        if h.is_null() {
            return status(l, BAD_ARGUMENT);
        }
        status(l, f(h).into())
    }
}

/// The call of entry point `f` on the connection at index 1 and the text at index 2:
/// its status, or [`BAD_ARGUMENT`].
///
/// # Safety
/// As [`on_handle`].
unsafe fn on_text(
    l: *mut lua_State,
    f: unsafe extern "C" fn(*mut BmkConn, *const c_char, usize) -> c_int,
) -> c_int {
    // SAFETY: forwarded; the text stays on the stack for the call.
    unsafe {
        let c = handle::<BmkConn>(l, 1);
        match (c.is_null(), string_arg(l, 2)) {
            (false, Some((p, n))) => status(l, f(c, p, n).into()),
            _ => status(l, BAD_ARGUMENT),
        }
    }
}

/// `execute(stmt)`: the status of `bmk_stmt_execute`.
unsafe extern "C-unwind" fn execute(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe { on_handle(l, sql::bmk_stmt_execute) }
}

/// `query(conn, text)`: the status of `bmk_conn_query`.
unsafe extern "C-unwind" fn query(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe { on_text(l, sql::bmk_conn_query) }
}

/// `prepare(conn, text)`: the new statement as a light userdata, or nil (the error for
/// `take_error()`, none for a bad argument).
unsafe extern "C-unwind" fn prepare(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe {
        let c = handle::<BmkConn>(l, 1);
        let made = match (c.is_null(), string_arg(l, 2)) {
            (false, Some((p, n))) => sql::bmk_conn_prepare(c, p, n),
            _ => std::ptr::null_mut(),
        };
        push_made(l, made.cast::<c_void>())
    }
}

/// `next_result(conn)`: the status of `bmk_conn_next_result`.
unsafe extern "C-unwind" fn next_result(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe { on_handle(l, sql::bmk_conn_next_result) }
}

/// `reconnect(conn)`: the status of `bmk_conn_reconnect`.
unsafe extern "C-unwind" fn reconnect(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe { on_handle(l, sql::bmk_conn_reconnect) }
}

/// `bmk_conn_disconnect` with a status: `0`.
unsafe extern "C" fn disconnect_status(c: *mut BmkConn) -> c_int {
    // SAFETY: forwarded from `on_handle`, which checked the handle.
    unsafe { sql::bmk_conn_disconnect(c) };
    0
}

/// `bmk_stmt_close` with a status: `0`.
unsafe extern "C" fn close_status(s: *mut BmkStmt) -> c_int {
    // SAFETY: forwarded from `on_handle`, which checked the handle.
    unsafe { sql::bmk_stmt_close(s) };
    0
}

/// `disconnect(conn)`: `0`, or [`BAD_ARGUMENT`].
unsafe extern "C-unwind" fn disconnect(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe { on_handle(l, disconnect_status) }
}

/// `close(stmt)`: `0`, or [`BAD_ARGUMENT`].
unsafe extern "C-unwind" fn close(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe { on_handle(l, close_status) }
}

/// `bulk_init(conn, prefix)`: the status of `bmk_conn_bulk_init`.
unsafe extern "C-unwind" fn bulk_init(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe { on_text(l, sql::bmk_conn_bulk_init) }
}

/// `bulk_next(conn, tuple)`: the status of `bmk_conn_bulk_next`.
unsafe extern "C-unwind" fn bulk_next(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe { on_text(l, sql::bmk_conn_bulk_next) }
}

/// `bulk_done(conn)`: the status of `bmk_conn_bulk_done`.
unsafe extern "C-unwind" fn bulk_done(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe { on_handle(l, sql::bmk_conn_bulk_done) }
}

/// `load_text(conn, table, columns, data, len)`: the status of `bmk_conn_load_text`
/// and the rows loaded. `data` is a string, or the address of `len` bytes as a number
/// (`sql.lua` converts a char pointer so).
unsafe extern "C-unwind" fn load_text(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack; an address comes from a
    // pointer the script holds to `len` bytes, as the FFI declaration required.
    unsafe {
        let c = handle::<BmkConn>(l, 1);
        let data = match ffi::lua_type(l, 4) {
            ffi::LUA_TSTRING => string_arg(l, 4),
            ffi::LUA_TNUMBER => Some((
                ffi::lua_tonumber(l, 4) as usize as *const c_char,
                ffi::lua_tonumber(l, 5).max(0.0) as usize,
            )),
            _ => None,
        };
        let (Some((t, tn)), Some((cols, cn)), Some((d, dn)), false) =
            (string_arg(l, 2), string_arg(l, 3), data, c.is_null())
        else {
            return status(l, BAD_ARGUMENT);
        };
        let mut rows = 0u64;
        let r = sql::bmk_conn_load_text(c, t, tn, cols, cn, d, dn, &mut rows);
        ffi::lua_pushinteger(l, r.into());
        ffi::lua_pushnumber(l, rows as f64);
        2
    }
}

/// `insert_generated(conn, table, columns, nrows)`: the status of
/// `bmk_conn_insert_generated` and the rows inserted.
unsafe extern "C-unwind" fn insert_generated(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack.
    unsafe {
        let c = handle::<BmkConn>(l, 1);
        let nrows = ffi::lua_tonumber(l, 4).max(0.0) as u64;
        let (Some((t, tn)), Some((cols, cn)), false) =
            (string_arg(l, 2), string_arg(l, 3), c.is_null())
        else {
            return status(l, BAD_ARGUMENT);
        };
        let mut inserted = 0u64;
        let r = sql::bmk_conn_insert_generated(c, t, tn, cols, cn, nrows, &mut inserted);
        ffi::lua_pushinteger(l, r.into());
        ffi::lua_pushnumber(l, inserted as f64);
        2
    }
}

/// `connect(driver)`: a new connection of the driver behind the light userdata
/// `raw:handle()` gave, as a light userdata, or nil (the error for `take_error()`).
unsafe extern "C-unwind" fn connect(l: *mut lua_State) -> c_int {
    // SAFETY: called by Lua with its arguments on `l`'s stack; the handle points into
    // the driver userdata, which `sql.lua` holds for the whole call.
    unsafe {
        let made = if ffi::lua_type(l, 1) == ffi::LUA_TLIGHTUSERDATA {
            let driver = ffi::lua_touserdata(l, 1).cast::<bmk_sql::Driver>();
            if driver.is_null() {
                std::ptr::null_mut()
            } else {
                sql::connect(&*driver)
            }
        } else {
            std::ptr::null_mut()
        };
        push_made(l, made.cast::<c_void>())
    }
}

/// The table of these functions, `host.api("sql_waits")` for `sql.lua`.
pub(crate) fn table(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let entries: [(&str, ffi::lua_CFunction); 13] = [
        ("execute", execute),
        ("query", query),
        ("prepare", prepare),
        ("next_result", next_result),
        ("reconnect", reconnect),
        ("disconnect", disconnect),
        ("close", close),
        ("bulk_init", bulk_init),
        ("bulk_next", bulk_next),
        ("bulk_done", bulk_done),
        ("load_text", load_text),
        ("insert_generated", insert_generated),
        ("connect", connect),
    ];
    for (name, f) in entries {
        // SAFETY: each is a Lua C function that reads only its own arguments and pushes
        // the results it says.
        t.raw_set(name, unsafe { lua.create_c_function(f) }?)?;
    }
    Ok(t)
}
