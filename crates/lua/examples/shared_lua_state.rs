//! Experiment behind the shared-state design of docs/ARCHITECTURE.md ("Memory of a Lua
//! worker"): can the workers of an event loop be Lua threads of **one** LuaJIT state,
//! each with its own global table, each on a stackful coroutine of its own that is
//! switched out *in the middle of a call into the host* (where a real worker waits for
//! its socket), in any order, while LuaJIT compiles their loops and collects garbage?
//!
//! bmk's workers today have a state each, so nothing of LuaJIT is shared between two
//! coroutines. With one state per loop, a worker suspended inside a host call leaves
//! that state's VM mid-call while another thread of it runs. LuaJIT allows entering its
//! VM again from a host function only in some cases, so this program runs the two
//! kinds of host call a worker could wait in:
//!
//! * `--wait=cfunction` (default): the script calls a classic Lua C function
//!   (`lua_CFunction`). The JIT compiler ends a trace before such a call and the
//!   interpreter makes it, with every register of the VM saved in the thread; when it
//!   returns, the VM reloads the running thread into the global state.
//! * `--wait=ffi`: the script calls the same host function through the FFI, which a
//!   trace calls directly from compiled code. Switching to another thread of the state
//!   there re-enters the VM beneath a running trace, which LuaJIT does not allow: this
//!   mode shows what happens then (run it in a process you can lose).
//!
//! What it checks (exit 1 on a wrong answer): every worker's count of events and of
//! waits is exact, its globals are its own (`tid`, `event`, its closures' upvalues) and
//! the shared globals got none of them; the traces compiled; one worker's Lua error,
//! raised while the others are suspended mid-call, fails that worker alone with the
//! script's line, and so does another's error raised by the host function after the
//! wait (`--wait=cfunction` only: an FFI function cannot raise one). What it measures: Lua heap and resident memory per worker, the
//! workers sharing one state against a state each, and the resident memory of the
//! workers' coroutines once they ran.
//!
//! `--call-cost N` measures instead what the first kind costs against the second where
//! nothing waits: N calls of a host function that returns its argument plus one, from a
//! loop LuaJIT compiles, in one state.
//!
//! ```text
//! cargo run --release -p bmk-lua --example shared_lua_state -- [--workers N]
//!     [--events N] [--wait cfunction|ffi] [--call-cost N]
//! ```

use std::cell::Cell;
use std::ffi::{c_int, CStr, CString};
use std::process::ExitCode;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use mlua::ffi::*;

/// The worker's script: a point-select worker in miniature. Its statement table, its
/// counters and its id are per worker; every event waits in the host once per
/// "query", builds a string (garbage for the collector), calls a libc function through
/// the FFI without waiting (compiled into the trace), and checks what the host
/// returned.
const SCRIPT: &str = r#"local ffi = require("ffi")
ffi.cdef[[int abs(int);]]
local stmts = {}
local events, waits = 0, 0
function thread_init(id)
  tid = id
  for i = 1, 10 do
    stmts[i] = { sql = "SELECT c FROM sbtest" .. i .. " WHERE id=%d", runs = 0 }
  end
end
function event()
  for i = 1, 4 do
    local s = stmts[(waits % 10) + 1]
    local q = string.format(s.sql, ffi.C.abs(-waits))
    s.runs = s.runs + #q - #q + 1
    local r = wait(waits)
    if r ~= waits + 1 then error("worker " .. tid .. ": wait returned " .. r .. " for " .. waits) end
    waits = r
  end
  events = events + 1
  if tid == fail_tid and events == fail_at then error("worker failed on purpose") end
  if tid == fail_tid + 1 and events == fail_at then wait(-1) end
end
function totals()
  local runs = 0
  for i = 1, #stmts do runs = runs + stmts[i].runs end
  return tid, events, waits, runs
end
"#;

/// The line of `SCRIPT` whose `error` fails a worker on purpose.
const FAIL_LINE: usize = 21;

thread_local! {
    /// The yielder of the worker coroutine running on this thread (null outside one).
    static YIELDER: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
}

/// Suspends the running worker coroutine until the scheduler resumes it.
fn suspend() {
    let y = YIELDER.with(|y| y.get());
    assert!(!y.is_null(), "wait called outside a worker");
    // SAFETY: set by the running coroutine from the yielder it was given, which lives
    // as long as the coroutine; the scheduler clears it between resumes.
    unsafe { &*y }.suspend(());
    YIELDER.with(|c| c.set(y));
}

/// `wait(n)` as a Lua C function: suspends the worker, returns `n + 1`; for a negative
/// `n` raises a Lua error once resumed, as a driver does when the server's answer is
/// an error.
unsafe extern "C-unwind" fn wait_cfunction(l: *mut lua_State) -> c_int {
    let n = lua_tointeger(l, 1);
    suspend();
    if n < 0 {
        lua_pushstring(l, c"the host failed after the wait".as_ptr());
        lua_error(l);
    }
    lua_pushinteger(l, n + 1);
    1
}

/// `add_one(n)` as a Lua C function: `n + 1`, no wait.
unsafe extern "C-unwind" fn add_one_cfunction(l: *mut lua_State) -> c_int {
    lua_pushinteger(l, lua_tointeger(l, 1) + 1);
    1
}

/// `add_one(n)` as an FFI function: `n + 1`, no wait.
extern "C" fn add_one_ffi(n: c_int) -> c_int {
    n + 1
}

/// Nanoseconds per call of a host function from a compiled loop of `calls` calls:
/// through a Lua C function, through the FFI, and of a Lua function for the loop itself.
unsafe fn call_cost(calls: i64) -> Result<(), String> {
    let l = luaL_newstate();
    if l.is_null() {
        return Err("no memory for a Lua state".into());
    }
    luaL_openlibs(l);
    lua_pushcfunction(l, add_one_cfunction);
    lua_setglobal(l, c"add_one_c".as_ptr());
    let addr = add_one_ffi as extern "C" fn(c_int) -> c_int as usize;
    run(
        l,
        &format!(
            "local ffi = require('ffi')\n\
             add_one_ffi = ffi.cast('int (*)(int)', ffi.cast('uintptr_t', {addr}ULL))\n\
             add_one_lua = function(n) return n + 1 end\n\
             function calls(f, n) local x = 0 for i = 1, n do x = f(x) end return x end"
        ),
    )?;
    let mut line = Vec::new();
    for (what, global) in [
        ("a Lua C function", c"add_one_c"),
        ("an FFI function", c"add_one_ffi"),
        ("a Lua function", c"add_one_lua"),
    ] {
        // Twice: the first run compiles the loop.
        let mut ns = 0.0;
        for _ in 0..2 {
            lua_getglobal(l, c"calls".as_ptr());
            lua_getglobal(l, global.as_ptr());
            // Within an int: the FFI function takes and returns one.
            lua_pushinteger(l, calls.min(i32::MAX as i64));
            let started = std::time::Instant::now();
            if lua_pcall(l, 2, 1, 0) != 0 {
                return Err(pop_message(l));
            }
            ns = started.elapsed().as_nanos() as f64 / calls as f64;
            if lua_tointeger(l, -1) != calls.min(i32::MAX as i64) {
                return Err(format!("{what}: wrong sum"));
            }
            lua_pop(l, 1);
        }
        line.push(format!("{what} {ns:.1} ns"));
    }
    println!("per call from a compiled loop: {}", line.join(", "));
    lua_close(l);
    Ok(())
}

/// `wait(n)` as an FFI function (`int (*)(int)`): suspends the worker, returns `n + 1`.
extern "C" fn wait_ffi(n: c_int) -> c_int {
    suspend();
    n + 1
}

struct Args {
    workers: usize,
    events: i64,
    ffi: bool,
    call_cost: Option<i64>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        workers: 1000,
        events: 2000,
        ffi: false,
        call_cost: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let number = || value.parse::<i64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--workers" => a.workers = number()?.max(1) as usize,
            "--events" => a.events = number()?.max(1),
            "--wait" => a.ffi = value == "ffi",
            "--call-cost" => a.call_cost = Some(number()?.max(1)),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(a)
}

/// Resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4
}

/// Lua heap of the state `l` belongs to, in bytes.
unsafe fn heap_bytes(l: *mut lua_State) -> u64 {
    lua_gc(l, LUA_GCCOUNT, 0) as u64 * 1024 + lua_gc(l, LUA_GCCOUNTB, 0) as u64
}

/// The message on top of `l`'s stack, popped.
unsafe fn pop_message(l: *mut lua_State) -> String {
    let p = lua_tostring(l, -1);
    let m = if p.is_null() {
        "(not a string)".to_string()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    };
    lua_pop(l, 1);
    m
}

/// Runs `code` in `l`'s globals, or says why it failed.
unsafe fn run(l: *mut lua_State, code: &str) -> Result<(), String> {
    let c = CString::new(code).map_err(|e| e.to_string())?;
    if luaL_loadbuffer(l, c.as_ptr(), code.len(), c"=setup".as_ptr()) != 0
        || lua_pcall(l, 0, 0, 0) != 0
    {
        return Err(pop_message(l));
    }
    Ok(())
}

/// A new state with the standard libraries and `wait`.
unsafe fn new_state(ffi_wait: bool) -> Result<*mut lua_State, String> {
    let l = luaL_newstate();
    if l.is_null() {
        return Err("no memory for a Lua state".into());
    }
    luaL_openlibs(l);
    if ffi_wait {
        // The host function as a C function pointer of the FFI, so that the script's
        // calls go through it (compiled into traces) rather than through the interpreter.
        let addr = wait_ffi as extern "C" fn(c_int) -> c_int as usize;
        run(
            l,
            &format!(
                "local ffi = require('ffi')\n\
                 wait = ffi.cast('int (*)(int)', ffi.cast('uintptr_t', {addr}ULL))"
            ),
        )?;
    } else {
        lua_pushcfunction(l, wait_cfunction);
        lua_setglobal(l, c"wait".as_ptr());
    }
    Ok(l)
}

/// The script compiled once in `l` as the body of a function: each call of the
/// function left on the stack returns a new closure of the script's own prototype
/// (shared code, new upvalues and constants tables made by the run).
unsafe fn compile_factory(l: *mut lua_State, name: &str, text: &str) -> Result<(), String> {
    // On the first line, so that the script's line numbers are unchanged.
    let wrapped = format!("return function(...) {text}\nend");
    let chunk = CString::new(format!("@{name}")).map_err(|e| e.to_string())?;
    if luaL_loadbuffer(l, wrapped.as_ptr().cast(), wrapped.len(), chunk.as_ptr()) != 0 {
        return Err(pop_message(l));
    }
    Ok(())
}

/// One worker's coroutine (its Lua thread is anchored in the state's registry) and
/// how it ended.
struct Worker {
    co: Coroutine<(), (), Result<[i64; 4], String>, DefaultStack>,
    finished: Option<Result<[i64; 4], String>>,
}

/// Makes worker `tid`'s thread in `l` (factory on top of `l`'s stack, left there):
/// its own global table whose misses fall through to the state's globals, the
/// script's top level run in it, `thread_init(tid)` called.
unsafe fn new_thread(l: *mut lua_State, tid: i64) -> Result<*mut lua_State, String> {
    let t = lua_newthread(l);
    // Anchor: a thread is collected once nothing refers to it.
    luaL_ref(l, LUA_REGISTRYINDEX);
    // The worker's globals: { } with __index = the shared globals.
    lua_createtable(t, 0, 8);
    lua_createtable(t, 0, 1);
    lua_pushvalue(t, LUA_GLOBALSINDEX);
    lua_setfield(t, -2, c"__index".as_ptr());
    lua_setmetatable(t, -2);
    lua_replace(t, LUA_GLOBALSINDEX);
    // A new closure of the script's body, run with the worker's globals.
    lua_pushvalue(l, -1);
    lua_xmove(l, t, 1);
    if lua_pcall(t, 0, 1, 0) != 0 {
        return Err(pop_message(t));
    }
    lua_pushvalue(t, LUA_GLOBALSINDEX);
    lua_setfenv(t, -2);
    if lua_pcall(t, 0, 0, 0) != 0 {
        return Err(pop_message(t));
    }
    lua_getfield(t, LUA_GLOBALSINDEX, c"thread_init".as_ptr());
    if lua_type(t, -1) == LUA_TFUNCTION {
        lua_pushinteger(t, tid);
        if lua_pcall(t, 1, 0, 0) != 0 {
            return Err(pop_message(t));
        }
    } else {
        lua_pop(t, 1);
    }
    Ok(t)
}

/// The body of worker `tid`'s coroutine: `events` calls of `event`, then `totals()`.
unsafe fn run_worker(t: *mut lua_State, events: i64) -> Result<[i64; 4], String> {
    for _ in 0..events {
        lua_getfield(t, LUA_GLOBALSINDEX, c"event".as_ptr());
        if lua_pcall(t, 0, 0, 0) != 0 {
            return Err(pop_message(t));
        }
    }
    lua_getfield(t, LUA_GLOBALSINDEX, c"totals".as_ptr());
    if lua_pcall(t, 0, 4, 0) != 0 {
        return Err(pop_message(t));
    }
    let mut out = [0i64; 4];
    for (i, v) in out.iter_mut().enumerate() {
        *v = lua_tointeger(t, i as c_int - 4);
    }
    lua_pop(t, 4);
    Ok(out)
}

/// A small deterministic generator for the resume order; the order only has to
/// differ from round to round, so nothing heavier is needed.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Traces LuaJIT compiled in `l`'s state.
unsafe fn trace_count(l: *mut lua_State) -> i64 {
    let probe = "local u = require('jit.util') local n = 0 \
                 for i = 1, 100000 do if not u.traceinfo(i) then break end n = i end \
                 trace_count = n";
    if run(l, probe).is_err() {
        return -1;
    }
    lua_getglobal(l, c"trace_count".as_ptr());
    let n = lua_tointeger(l, -1);
    lua_pop(l, 1);
    n
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("shared_lua_state: {e}");
            return ExitCode::from(1);
        }
    };
    // SAFETY: the Lua API is used on one thread, on states made here, with the stack
    // discipline each function's comment states.
    let result = match args.call_cost {
        Some(calls) => unsafe { call_cost(calls) },
        None => unsafe { experiment(&args) },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("shared_lua_state: {e}");
            ExitCode::from(1)
        }
    }
}

unsafe fn experiment(args: &Args) -> Result<(), String> {
    let (name, text) = ("worker.lua", SCRIPT);

    // One state per worker, as bmk has today: the baseline for the memory figures.
    let rss0 = rss_kib();
    let mut separate = Vec::with_capacity(args.workers);
    let mut separate_heap = 0;
    for tid in 0..args.workers {
        let l = new_state(args.ffi)?;
        compile_factory(l, name, text)?;
        new_thread(l, tid as i64)?;
        lua_gc(l, LUA_GCCOLLECT, 0);
        separate_heap += heap_bytes(l);
        separate.push(l);
    }
    let separate_rss = rss_kib().saturating_sub(rss0);
    for l in separate {
        lua_close(l);
    }

    // The workers as threads of one state.
    let l = new_state(args.ffi)?;
    // Collect often, so that collections run while workers are suspended mid-call.
    lua_gc(l, LUA_GCSETPAUSE, 110);
    let fail_tid = args.workers / 2;
    run(
        l,
        &format!("fail_tid = {fail_tid} fail_at = {}", args.events / 2),
    )?;
    compile_factory(l, name, text)?;
    lua_gc(l, LUA_GCCOLLECT, 0);
    let base_heap = heap_bytes(l);
    let rss1 = rss_kib();
    let mut threads = Vec::with_capacity(args.workers);
    for tid in 0..args.workers {
        threads.push(new_thread(l, tid as i64)?);
    }
    lua_gc(l, LUA_GCCOLLECT, 0);
    let shared_heap = heap_bytes(l) - base_heap;
    let shared_rss = rss_kib().saturating_sub(rss1);
    let per = |total: u64| total as f64 / args.workers as f64 / 1024.0;
    println!(
        "workers: {}; Lua heap per worker: {:.1} KiB with a state each, {:.1} KiB as threads \
         of one state; resident per worker: {:.1} KiB and {:.1} KiB",
        args.workers,
        per(separate_heap),
        per(shared_heap),
        separate_rss as f64 / args.workers as f64,
        shared_rss as f64 / args.workers as f64
    );
    let events = args.events;
    let mut workers: Vec<Worker> = threads
        .iter()
        .map(|&t| Worker {
            co: Coroutine::with_stack(
                DefaultStack::new(256 * 1024).expect("coroutine stack"),
                move |y: &Yielder<(), ()>, ()| {
                    YIELDER.with(|c| c.set(y));
                    // SAFETY: `t` is a thread of the state, anchored in its registry
                    // for the whole run; only this coroutine runs Lua code on it.
                    unsafe { run_worker(t, events) }
                },
            ),
            finished: None,
        })
        .collect();

    // Resume the workers in a new random order each round: a worker suspended in
    // `wait` returns into the VM after others entered and left it in any order.
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut order: Vec<usize> = (0..workers.len()).collect();
    let mut switches = 0u64;
    let started = std::time::Instant::now();
    loop {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
        let mut running = 0;
        for &i in &order {
            let w = &mut workers[i];
            if w.finished.is_some() {
                continue;
            }
            running += 1;
            switches += 1;
            let r = w.co.resume(());
            YIELDER.with(|c| c.set(std::ptr::null()));
            if let CoroutineResult::Return(done) = r {
                w.finished = Some(done);
            }
        }
        if running == 0 {
            break;
        }
    }
    let elapsed = started.elapsed();
    let ran_rss = rss_kib().saturating_sub(rss1);

    // Check every worker's answer.
    let mut wrong = Vec::new();
    for (tid, w) in workers.iter().enumerate() {
        let done = w.finished.as_ref().expect("every worker finished");
        if tid == fail_tid + 1 && !args.ffi {
            if !matches!(done, Err(e) if e == "the host failed after the wait") {
                wrong.push(format!("worker {tid}: {done:?}, not the host's error"));
            }
            continue;
        }
        match (tid == fail_tid, done) {
            (false, Ok(totals)) => {
                let want = [tid as i64, events, events * 4, events * 4];
                if *totals != want {
                    wrong.push(format!("worker {tid}: {totals:?}, not {want:?}"));
                }
            }
            (false, Err(e)) => wrong.push(format!("worker {tid} failed: {e}")),
            (true, Ok(t)) => wrong.push(format!("worker {tid} should have failed: {t:?}")),
            (true, Err(e)) => {
                let at = format!("{name}:{FAIL_LINE}: worker failed on purpose");
                if !e.ends_with(&at) {
                    wrong.push(format!("worker {tid}'s error is '{e}', not at '{at}'"));
                }
            }
        }
    }
    for global in ["tid", "event", "thread_init", "totals"] {
        let g = CString::new(global).expect("no NUL");
        lua_getglobal(l, g.as_ptr());
        if lua_type(l, -1) != LUA_TNIL {
            wrong.push(format!("the shared globals got '{global}'"));
        }
        lua_pop(l, 1);
    }
    let traces = trace_count(l);
    if traces < 1 {
        wrong.push(format!("no trace compiled ({traces})"));
    }
    println!(
        "{} switches inside a host call in {:.2} s ({:.0} ns each, Lua work included); \
         {traces} traces compiled",
        switches,
        elapsed.as_secs_f64(),
        elapsed.as_nanos() as f64 / switches as f64
    );
    println!(
        "resident per worker after the run, its coroutine's stack pages included: {:.1} KiB",
        ran_rss as f64 / args.workers as f64
    );
    drop(workers);
    lua_close(l);
    if wrong.is_empty() {
        println!(
            "every worker's counts and globals are its own; workers {fail_tid} and {} failed \
             alone, with their errors",
            fail_tid + 1
        );
        Ok(())
    } else {
        Err(wrong.join("\n"))
    }
}
