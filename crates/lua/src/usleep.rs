//! The `usleep` that scripts reach through `ffi.C.usleep`, which lets the other workers
//! of an event loop run while one sleeps.
//!
//! sysbench has no sleep in its API, so scripts sleep through the FFI: `ffi.cdef("int
//! usleep(unsigned int)")` and `ffi.C.usleep(n)` — for pacing, think time
//! (`--sleep-after-query`), or to poll a start barrier (`--sync-file`) in
//! `thread_init`, where a worker waits for the others. libc's `usleep` blocks the
//! thread, and on an event loop with it every worker of the loop; one worker polling for
//! another of its own loop would wait forever. LuaJIT resolves `ffi.C.usleep` in the
//! executable first (it exports its symbols, see `ffi.rs`), so this definition is the
//! one scripts call: on an event loop it suspends only the calling worker
//! ([`bmk_engine::coop::sleep`]); elsewhere it sleeps as libc's does. Other code of the
//! executable that calls `usleep` gets it too — SQLite's busy handler, whose wait for a
//! lock then lets the loop's other workers (one of which may hold the lock) go on.

use std::os::raw::{c_int, c_uint};
use std::time::Duration;

/// `int usleep(useconds_t usec)`: 0, or -1 with `errno` set when a signal interrupted
/// the sleep (as libc's, from which only the event-loop case differs).
#[no_mangle]
pub extern "C" fn usleep(usec: c_uint) -> c_int {
    let pause = Duration::from_micros(u64::from(usec));
    if bmk_engine::coop::active() {
        bmk_engine::coop::sleep(pause);
        return 0;
    }
    let ts = libc::timespec {
        tv_sec: pause.as_secs() as libc::time_t,
        tv_nsec: pause.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec; no remainder is asked for.
    if unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) } == 0 {
        0
    } else {
        -1
    }
}

/// `usleep(usec)` as a Lua C function: what `ffi.C.usleep` is for a worker that shares
/// its Lua state with the other workers of its event loop (see `loop_state.rs`). The
/// FFI call could not let the others run: another Lua thread of the state may not
/// enter the VM beneath an FFI call.
///
/// # Safety
/// Called by Lua with its argument on `l`'s stack.
pub(crate) unsafe extern "C-unwind" fn lua_usleep(l: *mut mlua::ffi::lua_State) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe {
        let usec = mlua::ffi::lua_tonumber(l, 1);
        let usec = if usec.is_finite() && usec > 0.0 {
            usec.min(f64::from(c_uint::MAX)) as c_uint
        } else {
            0
        };
        mlua::ffi::lua_pushinteger(l, usleep(usec).into());
    }
    1
}
