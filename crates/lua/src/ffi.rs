//! The C entry points that Lua code reaches through LuaJIT's `ffi.C`, with the names
//! and signatures sysbench exports (`sb_*`), so scripts that declare them run unchanged.
//!
//! Each function acts on the calling thread: the engine's current [`WorkerContext`]
//! (event start/stop, counters) and the thread's random generator. Called outside a
//! run (the main state, parallel commands) the event and counter functions do nothing
//! and `sb_more_events` answers `false`. The thread id arguments exist for signature
//! compatibility; the calling thread is authoritative. Each runs its body in
//! [`guarded`]: a panic must not unwind into LuaJIT (see `ffi_panic.rs`); the call
//! then answers a harmless value and the Lua call that made it fails.
//!
//! LuaJIT resolves `ffi.C.name` with `dlsym` in the running executable, so the
//! executable must export these symbols: link it with `-rdynamic` and reference
//! [`ensure_ffi_linked`] so the linker keeps them.
//!
//! [`WorkerContext`]: bmk_engine::WorkerContext

use std::os::raw::{c_char, c_int};

use bmk_engine::rand::{self, Distribution};
use bmk_engine::{with_current, Counter};

use crate::ffi_panic::guarded;

/// `void sb_counter_inc(int thread_id, sb_counter_type type)`.
#[no_mangle]
pub extern "C" fn sb_counter_inc(_thread_id: c_int, counter: c_int) {
    let _ = guarded("sb_counter_inc", || {
        if let Some(c) = u32::try_from(counter).ok().and_then(Counter::from_raw) {
            with_current(|ctx| ctx.count(c));
        }
    });
}

/// `void sb_event_start(int thread_id)`.
#[no_mangle]
pub extern "C" fn sb_event_start(_thread_id: c_int) {
    let _ = guarded("sb_event_start", || with_current(|ctx| ctx.event_start()));
}

/// `void sb_event_stop(int thread_id)`.
#[no_mangle]
pub extern "C" fn sb_event_stop(_thread_id: c_int) {
    let _ = guarded("sb_event_stop", || with_current(|ctx| ctx.event_stop()));
}

/// `bool sb_more_events(int thread_id)`: blocks for the next arrival in rate mode.
/// It never lets the other workers of an event loop run: compiled code calls it, where
/// no other Lua thread may run (the prelude's event loop yields after the event, see
/// `bmk_slice_due`).
#[no_mangle]
pub extern "C" fn sb_more_events(_thread_id: c_int) -> bool {
    guarded("sb_more_events", || with_current(|ctx| ctx.more_events()))
        .ok()
        .flatten()
        .unwrap_or(false)
}

/// `bool bmk_slice_due(void)`: whether the calling worker has run for a time slice
/// without waiting ([`bmk_engine::coop::slice_due`]); the prelude's event loop then
/// calls `yield_slice`, a Lua C function, where switching workers is allowed.
#[no_mangle]
pub extern "C" fn bmk_slice_due() -> bool {
    guarded("bmk_slice_due", bmk_engine::coop::slice_due).unwrap_or(false)
}

/// `sb_more_events(thread_id)` as a Lua C function, which a worker sharing its state
/// gets for `ffi.C.sb_more_events` (`shared_state.lua`): a script's own event loop then
/// lets the other workers of its event loop run after a time slice, as the prelude's
/// does, where the FFI call may not switch workers.
pub(crate) unsafe extern "C-unwind" fn lua_more_events(l: *mut mlua::ffi::lua_State) -> c_int {
    let _ = guarded("sb_more_events", bmk_engine::coop::yield_if_due);
    // SAFETY: called by Lua on `l`, with room for the one result.
    unsafe { mlua::ffi::lua_pushboolean(l, c_int::from(sb_more_events(0))) };
    1
}

/// `yield_slice()`, a Lua C function: lets the other workers of the calling worker's
/// event loop run ([`bmk_engine::coop::yield_if_due`]).
pub(crate) unsafe extern "C-unwind" fn yield_slice(_l: *mut mlua::ffi::lua_State) -> c_int {
    let _ = guarded("yield_slice", bmk_engine::coop::yield_if_due);
    0
}

/// `uint64_t sb_rand_uniform_uint64(void)`.
#[no_mangle]
pub extern "C" fn sb_rand_uniform_uint64() -> u64 {
    guarded("sb_rand_uniform_uint64", rand::uniform_u64).unwrap_or(0)
}

/// `uint32_t sb_rand_default(uint32_t, uint32_t)`: the `--rand-type` distribution.
#[no_mangle]
pub extern "C" fn sb_rand_default(a: u32, b: u32) -> u32 {
    guarded("sb_rand_default", || rand::default(a, b)).unwrap_or(a)
}

/// `uint32_t sb_rand_uniform(uint32_t, uint32_t)`.
#[no_mangle]
pub extern "C" fn sb_rand_uniform(a: u32, b: u32) -> u32 {
    guarded("sb_rand_uniform", || rand::uniform(a, b)).unwrap_or(a)
}

/// `uint32_t sb_rand_gaussian(uint32_t, uint32_t)`.
#[no_mangle]
pub extern "C" fn sb_rand_gaussian(a: u32, b: u32) -> u32 {
    guarded("sb_rand_gaussian", || {
        rand::draw(Distribution::Gaussian, a, b)
    })
    .unwrap_or(a)
}

/// `uint32_t sb_rand_pareto(uint32_t, uint32_t)`.
#[no_mangle]
pub extern "C" fn sb_rand_pareto(a: u32, b: u32) -> u32 {
    guarded("sb_rand_pareto", || rand::draw(Distribution::Pareto, a, b)).unwrap_or(a)
}

/// `uint32_t sb_rand_zipfian(uint32_t, uint32_t)`.
#[no_mangle]
pub extern "C" fn sb_rand_zipfian(a: u32, b: u32) -> u32 {
    guarded("sb_rand_zipfian", || {
        rand::draw(Distribution::Zipfian, a, b)
    })
    .unwrap_or(a)
}

/// `uint32_t sb_rand_special(uint32_t, uint32_t)` (bmk addition backing
/// `sysbench.rand.special`).
#[no_mangle]
pub extern "C" fn sb_rand_special(a: u32, b: u32) -> u32 {
    guarded("sb_rand_special", || {
        rand::draw(Distribution::Special, a, b)
    })
    .unwrap_or(a)
}

/// `uint32_t sb_rand_unique(void)`: unique across all threads for the whole run.
#[no_mangle]
pub extern "C" fn sb_rand_unique() -> u32 {
    guarded("sb_rand_unique", rand::unique).unwrap_or(0)
}

/// `double sb_rand_uniform_double(void)`: in `[0, 1)`.
#[no_mangle]
pub extern "C" fn sb_rand_uniform_double() -> f64 {
    guarded("sb_rand_uniform_double", rand::uniform_double).unwrap_or(0.0)
}

/// `void sb_rand_str(const char *fmt, char *buf)`: writes `strlen(fmt)` bytes to `buf`,
/// each `#` of `fmt` replaced by a random digit and each `@` by a random lowercase
/// letter. No terminating NUL is written.
///
/// # Safety
/// `fmt` must be a NUL-terminated string and `buf` must have room for `strlen(fmt)`
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn sb_rand_str(fmt: *const c_char, buf: *mut c_char) {
    if fmt.is_null() || buf.is_null() {
        return;
    }
    // SAFETY: the caller guarantees a NUL-terminated `fmt` and a buffer of its length.
    let (template, out) = unsafe {
        let template = std::ffi::CStr::from_ptr(fmt).to_bytes();
        let out = std::slice::from_raw_parts_mut(buf.cast::<u8>(), template.len());
        (template, out)
    };
    let _ = guarded("sb_rand_str", || rand::fill_template(template, out));
}

/// `uint32_t sb_rand_varstr(char *buf, uint32_t min, uint32_t max)`: writes a random
/// `0-9a-z` string of length uniform in `[min, max]` to `buf` and returns the length.
/// No terminating NUL is written.
///
/// # Safety
/// `buf` must have room for `max` bytes. Nothing beyond `max` bytes is written, even when
/// `min > max` (a negative length from Lua arrives as a huge unsigned one).
#[no_mangle]
pub unsafe extern "C" fn sb_rand_varstr(buf: *mut c_char, min: u32, max: u32) -> u32 {
    if buf.is_null() {
        return 0;
    }
    // SAFETY: the caller guarantees room for `max` bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), max as usize) };
    guarded("sb_rand_varstr", || {
        rand::fill_varstring(out, min, max) as u32
    })
    .unwrap_or(0)
}

/// Keeps every `sb_*` entry point (and the prelude's own `bmk_*` ones, see
/// `sql.rs`, and the `usleep` of `usleep.rs`) in the final executable.
///
/// Nothing in Rust calls these functions, so without a reference the linker may drop
/// them; LuaJIT looks them up by name at run time. [`crate::ScriptHost::load`] calls
/// this, so any program that hosts scripts keeps them. Returns a checksum of their
/// addresses (meaningless, but it makes the reference observable).
pub fn ensure_ffi_linked() -> usize {
    let table: [usize; 17] = [
        sb_counter_inc as *const () as usize,
        bmk_slice_due as *const () as usize,
        sb_event_start as *const () as usize,
        sb_event_stop as *const () as usize,
        sb_more_events as *const () as usize,
        sb_rand_uniform_uint64 as *const () as usize,
        sb_rand_default as *const () as usize,
        sb_rand_uniform as *const () as usize,
        sb_rand_gaussian as *const () as usize,
        sb_rand_pareto as *const () as usize,
        sb_rand_zipfian as *const () as usize,
        sb_rand_special as *const () as usize,
        sb_rand_unique as *const () as usize,
        sb_rand_uniform_double as *const () as usize,
        sb_rand_str as *const () as usize,
        sb_rand_varstr as *const () as usize,
        crate::usleep::usleep as *const () as usize,
    ];
    let bmk = crate::sql::entry_points();
    std::hint::black_box(&table)
        .iter()
        .chain(std::hint::black_box(&bmk).iter())
        .fold(0, |a, b| a ^ b)
}
