//! Event loops: several workers multiplexed on one OS thread as coroutines.
//!
//! A worker that waits for a database answers in a blocking `read`: with one OS thread
//! per worker every query costs the client two context switches (sleep, wake-up),
//! which is most of a thin client's CPU per query and all of its memory per worker
//! beyond the connection. A [`Workload`] that says so
//! ([`Workload::cooperative`](crate::Workload::cooperative)) instead gets a few loop threads,
//! each running its share of the workers as stackful coroutines: a worker whose socket
//! has no data yet calls [`wait_readable`], which suspends it until `epoll` reports
//! the descriptor readable, and the thread meanwhile runs the workers whose answers
//! have arrived — one wake-up serves several queries. `--event-loops` sets how many
//! loops there are (default: one per CPU, or one per
//! [`WORKERS_PER_LOOP`](crate::WORKERS_PER_LOOP) workers when that is more).
//!
//! A worker lives its whole life in its coroutine: created there (so that a slow
//! `thread_init` — connecting, a start barrier — waits as events do), then, once every
//! worker of the loop is created, released with the run, and finished there.
//!
//! Each worker keeps what is its own on a thread of its own: its [`WorkerContext`]
//! (counters, latency, fairness) and its random generator, which the loop makes the
//! thread's while the worker runs, so a `--rand-seed` run draws the same numbers per
//! worker as with a thread each. The worker code is the same as on a thread of its
//! own: only code that calls [`wait_readable`] (the drivers' socket reads), [`sleep`]
//! or [`yield_if_due`] yields; anything else that blocks holds up the loop's other
//! workers for that long. The loop notices a worker that kept it for
//! [`HELD_LOOP_BOUND`] or more when the worker gives the thread back, and tells the
//! workload ([`Workload::held_its_loop`]). Rate mode (`--rate`) always uses a thread
//! per worker, as its workers block on the arrival queue.

use std::cell::Cell;
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::rand::WorkerRand;
use crate::shared::Shared;
use crate::worker::{WorkerContext, WorkerError, WorkerPhase, Workload};

/// Stack of one coroutine, at least: the worker is created there (its Lua state
/// loaded, its connection opened) and runs its events there. As large as a worker
/// thread's stack (`--thread-stack-size`, at least 1 MiB): LuaJIT and the drivers
/// reach the same depth either way. Virtual memory; only touched pages are resident,
/// and those touched only while the worker was created are given back.
const COROUTINE_STACK: usize = 1 << 20;

/// How long a worker may keep its loop's thread without waiting or yielding before
/// the workload is told ([`Workload::held_its_loop`]): the loop's other workers wait
/// that long.
pub const HELD_LOOP_BOUND: Duration = Duration::from_secs(1);

/// How long a worker that never waits (a script that computes, SQLite) runs before
/// [`yield_if_due`] lets the other workers of its loop have their turn.
const TIME_SLICE_NS: u64 = 5_000_000;

thread_local! {
    /// The yielder of the coroutine running on this thread (null outside one).
    static YIELDER: Cell<*const Yielder<(), Suspend>> = const { Cell::new(std::ptr::null()) };
    /// When the loop last resumed the running coroutine (coarse clock, ns).
    static RESUMED_AT: Cell<u64> = const { Cell::new(0) };
}

/// Whether this code runs in a worker coroutine of an event loop, where
/// [`wait_readable`] suspends instead of returning `false`.
#[inline]
pub fn active() -> bool {
    YIELDER.with(|y| !y.get().is_null())
}

/// What a suspended worker waits for: descriptor `fd` of the socket numbered
/// `socket` to become readable.
#[derive(Debug, Clone, Copy)]
struct Wait {
    fd: RawFd,
    socket: u64,
}

/// Why a worker's coroutine gave its loop the thread back.
#[derive(Debug, Clone, Copy)]
enum Suspend {
    /// It waits for a descriptor.
    Readable(Wait),
    /// It is created and waits for the run's start.
    Created,
    /// It has had its time slice: it goes on once the loop has looked for others.
    Slice,
}

/// Suspends the calling coroutine with `why`; `false` (nothing done) outside one.
fn suspend(why: Suspend) -> bool {
    let y = YIELDER.with(|y| y.get());
    if y.is_null() {
        return false;
    }
    // SAFETY: the pointer was set by this coroutine's own body (below) from the
    // yielder it was given, which lives as long as the coroutine; the scheduler clears
    // it whenever control is back on the loop's stack, so it is only non-null here,
    // inside the coroutine that owns it.
    let yielder = unsafe { &*y };
    yielder.suspend(why);
    // Other coroutines ran meanwhile and set their own yielder.
    YIELDER.with(|c| c.set(y));
    true
}

/// Suspends the calling worker until `fd` may be readable and returns `true`;
/// returns `false` at once when not called from a worker coroutine (the caller then
/// blocks as usual). `socket` identifies the connection behind `fd` — a number the
/// caller never reuses for another connection — because a reconnected socket may get
/// the same descriptor number and must be registered again. Wake-ups may be spurious:
/// callers read non-blockingly and wait again when there is nothing.
pub fn wait_readable(fd: RawFd, socket: u64) -> bool {
    suspend(Suspend::Readable(Wait { fd, socket }))
}

/// Whether the calling worker has run for a time slice without waiting, so that
/// [`yield_if_due`] would yield: for callers that must not switch where they check
/// (LuaJIT's compiled code) and yield elsewhere. Costs a read of the coarse clock.
#[inline]
pub fn slice_due() -> bool {
    active() && coarse_now_ns().saturating_sub(RESUMED_AT.with(|r| r.get())) >= TIME_SLICE_NS
}

/// Lets the other workers of the calling worker's loop run when it has run for a
/// time slice without waiting: a worker whose events never wait (a script that only
/// computes, or works on SQLite) would otherwise run all its events in one go.
/// Meant for event boundaries; costs a read of the coarse clock. Returns whether the
/// worker yielded (never outside an event loop).
#[inline]
pub fn yield_if_due() -> bool {
    slice_due() && suspend(Suspend::Slice)
}

/// The monotonic clock at tick resolution (a few ms), which costs no more than a
/// memory read: enough for time slices and [`HELD_LOOP_BOUND`], and cheap on every
/// switch.
#[inline]
fn coarse_now_ns() -> u64 {
    crate::clock::clock_ns(libc::CLOCK_MONOTONIC_COARSE)
}

/// Pauses the calling worker for `d`. On an event loop only this worker waits: it is
/// suspended on a timer descriptor (through [`wait_readable`], so the loop needs no
/// timers of its own and its `epoll_wait` keeps no timeout) while the loop runs the
/// others. Elsewhere, or should the timer not be available, the thread sleeps.
pub fn sleep(d: Duration) {
    if d.is_zero() {
        return;
    }
    if !active() || !sleep_on_timer(d) {
        std::thread::sleep(d);
    }
}

/// Waits for a one-shot timer of `d` through [`wait_readable`]; `false` when no timer
/// could be made (nothing waited).
fn sleep_on_timer(d: Duration) -> bool {
    // SAFETY: plain syscall; the descriptor is owned below.
    let fd = unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
        )
    };
    if fd < 0 {
        return false;
    }
    // SAFETY: a new descriptor nothing else owns; closing it unregisters it from epoll.
    let timer = unsafe { OwnedFd::from_raw_fd(fd) };
    let expiry = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        },
    };
    // SAFETY: `expiry` is a valid itimerspec; no old value is asked for.
    if unsafe { libc::timerfd_settime(fd, 0, &expiry, std::ptr::null_mut()) } != 0 {
        return false;
    }
    let socket = new_socket_id();
    let mut expirations = [0u8; 8];
    loop {
        wait_readable(timer.as_raw_fd(), socket);
        // Wake-ups may be spurious: the timer has fired when its count can be read.
        // SAFETY: `expirations` is writable for its 8 bytes, the size a timer read needs.
        let n = unsafe { libc::read(fd, expirations.as_mut_ptr().cast(), expirations.len()) };
        let again = n < 0
            && matches!(
                std::io::Error::last_os_error().kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
            );
        if !again {
            return true;
        }
    }
}

/// A number for a new connection, for [`wait_readable`].
pub fn new_socket_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

type WorkerCoroutine = Coroutine<(), Suspend, Result<(), WorkerError>, DefaultStack>;

/// One worker of a loop: its coroutine, what it waits for, and what the loop swaps in
/// for it while it runs.
struct Task {
    tid: u32,
    co: WorkerCoroutine,
    ctx: Rc<WorkerContext>,
    /// Its random generator, while another worker has the thread's.
    rand: WorkerRand,
    /// Lowest usable address of its stack.
    stack_limit: usize,
    phase: Rc<Cell<WorkerPhase>>,
    /// The socket registered with epoll for this task, if any.
    registered: Option<u64>,
    /// Suspended in `wait_readable` (an epoll event makes it ready again).
    waiting: bool,
}

/// How a loop's wake-ups went, for tests: with several workers, one wake-up should
/// serve several of them when their answers arrive together.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct LoopTally {
    /// Returns of `epoll_wait`.
    pub(crate) wakeups: u64,
    /// The most workers one of them made ready.
    pub(crate) most_woken: usize,
}

/// Body of a loop thread: runs the workers `tids` from creation to finish.
///
/// Each worker is created in its coroutine, so that its creation (sysbench's
/// `thread_init`: loading a script, connecting, waiting for other workers at a start
/// barrier) waits as its events do, while the loop creates the others. Once every
/// worker of the loop is created (or failed), the loop waits for the run's start on
/// its own stack, then runs them.
pub(crate) fn loop_main(tids: Vec<u32>, shared: Arc<Shared>, test: Arc<dyn Workload>) -> LoopTally {
    let stack_size = shared.config.thread_stack_size.max(COROUTINE_STACK);
    let mut tasks = Vec::with_capacity(tids.len());
    for &tid in &tids {
        match new_task(tid, &shared, &test, stack_size) {
            Ok(task) => tasks.push(Some(task)),
            Err(e) => {
                // As a worker whose creation failed.
                shared.fail(format!("cannot allocate the stack of worker {tid}: {e}"));
                shared.note_initialized(1);
                shared.note_finished(tid);
            }
        }
    }
    run_loop(tasks, &shared, &*test)
}

/// Worker `tid`'s coroutine, not started yet.
fn new_task(
    tid: u32,
    shared: &Arc<Shared>,
    test: &Arc<dyn Workload>,
    stack_size: usize,
) -> std::io::Result<Task> {
    let stack = DefaultStack::new(stack_size)?;
    let stack_limit = stack.limit().get();
    let ctx = Rc::new(WorkerContext::new(tid, shared.clone()));
    let phase = Rc::new(Cell::new(WorkerPhase::Creating));
    let (body_ctx, body_phase, test) = (ctx.clone(), phase.clone(), test.clone());
    let co = Coroutine::with_stack(stack, move |yielder: &Yielder<(), Suspend>, ()| {
        YIELDER.with(|y| y.set(yielder as *const _));
        let shared = &body_ctx.shared;
        let made = catch_unwind(AssertUnwindSafe(|| test.create_worker(tid)));
        // Creating runs deeper than the events do (see `stack.rs`).
        crate::stack::release_unused_stack();
        let made = match made {
            Ok(made) => made.map_err(|e| e.message),
            Err(panic) => Err(WorkerError::from_panic(tid, panic).message),
        };
        let mut worker = match made {
            Ok(worker) => worker,
            Err(message) => {
                // Recorded before the worker counts as initialised, so that the
                // controller sees a failed start rather than a complete one.
                shared.fail(message);
                shared.note_initialized(1);
                YIELDER.with(|y| y.set(std::ptr::null()));
                return Ok(());
            }
        };
        drop(test);
        shared.note_initialized(1);
        suspend(Suspend::Created);
        body_phase.set(WorkerPhase::Running);
        let ran = worker.run(&body_ctx);
        shared.note_events_done();
        body_phase.set(WorkerPhase::Finishing);
        let result = ran.and_then(|()| worker.finish(&body_ctx));
        YIELDER.with(|y| y.set(std::ptr::null()));
        result
    });
    Ok(Task {
        tid,
        co,
        ctx,
        rand: WorkerRand::new(tid),
        stack_limit,
        phase,
        registered: None,
        waiting: false,
    })
}

type Step = std::thread::Result<CoroutineResult<Suspend, Result<(), WorkerError>>>;

/// Runs `task` until it next suspends or returns, with its context, generator and
/// stack bounds as the thread's; tells `test` when it kept the thread too long.
fn resume(task: &mut Task, test: &dyn Workload) -> Step {
    let _installed = task.ctx.install();
    task.rand.swap();
    crate::stack::set_coroutine_stack(task.stack_limit);
    let resumed = coarse_now_ns();
    RESUMED_AT.with(|r| r.set(resumed));
    let step = catch_unwind(AssertUnwindSafe(|| task.co.resume(())));
    let held = coarse_now_ns().saturating_sub(resumed);
    YIELDER.with(|y| y.set(std::ptr::null()));
    crate::stack::set_coroutine_stack(0);
    task.rand.swap();
    if held >= HELD_LOOP_BOUND.as_nanos() as u64 {
        test.held_its_loop(task.tid, task.phase.get(), Duration::from_nanos(held));
    }
    step
}

fn run_loop(mut tasks: Vec<Option<Task>>, shared: &Shared, test: &dyn Workload) -> LoopTally {
    let mut tally = LoopTally::default();
    let epoll = Epoll::new();
    let mut ready: VecDeque<usize> = (0..tasks.len()).collect();
    let mut live = tasks.iter().filter(|t| t.is_some()).count();
    // Created workers waiting for the start, until all are.
    let mut created: Vec<usize> = Vec::new();
    let mut starting = true;
    // Workers that had their time slice, to run again after the next look at epoll.
    let mut sliced: Vec<usize> = Vec::new();
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
    while live > 0 {
        while let Some(i) = ready.pop_front() {
            let Some(task) = tasks[i].as_mut() else {
                continue;
            };
            match resume(task, test) {
                Ok(CoroutineResult::Yield(Suspend::Readable(wait))) => {
                    task.waiting = true;
                    if task.registered != Some(wait.socket) {
                        if let Err(e) = epoll.watch(wait.fd, i) {
                            shared.fail(format!("event loop cannot wait for a socket: {e}"));
                            finish(shared, &mut tasks[i], &mut live);
                            continue;
                        }
                        task.registered = Some(wait.socket);
                    }
                }
                Ok(CoroutineResult::Yield(Suspend::Created)) => created.push(i),
                Ok(CoroutineResult::Yield(Suspend::Slice)) => sliced.push(i),
                Ok(CoroutineResult::Return(result)) => {
                    if let Err(e) = result {
                        shared.fail(e.message);
                    }
                    finish(shared, &mut tasks[i], &mut live);
                }
                Err(panic) => {
                    shared.fail(WorkerError::from_panic(task.tid, panic).message);
                    finish(shared, &mut tasks[i], &mut live);
                }
            }
        }
        if live == 0 {
            break;
        }
        if starting && created.len() == live {
            starting = false;
            if !shared.wait_for_start() {
                // The run never started: like a worker thread, no event and no
                // finish; the workers (and their connections) are dropped.
                for task in tasks.iter_mut() {
                    finish(shared, task, &mut live);
                }
                break;
            }
            ready.extend(created.drain(..));
            continue;
        }
        // No timeout: nothing but a socket event can make a task ready, and a timer
        // armed for every sleep costs measurably (7% of the client's CPU per query
        // on a 2-core VM, where programming the timer exits to the hypervisor). With
        // workers waiting for their next slice, only a look.
        let timeout = if sliced.is_empty() { -1 } else { 0 };
        match epoll.wait(&mut events, timeout) {
            Ok(n) => {
                tally.wakeups += 1;
                let woken = ready.len();
                for e in &events[..n] {
                    let i = e.u64 as usize;
                    // Edge-triggered events may be stale (data the task already read):
                    // only a waiting task is woken, and it waits again if need be.
                    if let Some(t) = tasks[i].as_mut().filter(|t| t.waiting) {
                        t.waiting = false;
                        ready.push_back(i);
                    }
                }
                tally.most_woken = tally.most_woken.max(ready.len() - woken);
            }
            Err(e) => {
                shared.fail(format!("event loop wait failed: {e}"));
                for t in tasks.iter_mut() {
                    finish(shared, t, &mut live);
                }
            }
        }
        ready.extend(sliced.drain(..));
        // A worker whose server never answers keeps the loop waiting here, as a
        // blocked thread would; the forced shutdown still ends the process.
    }
    tally
}

/// Marks a task finished and drops its coroutine (unwinding it if suspended).
fn finish(shared: &Shared, task: &mut Option<Task>, live: &mut usize) {
    if let Some(t) = task.take() {
        shared.note_finished(t.tid);
        *live -= 1;
        // Dropping a suspended coroutine unwinds its stack; a panic there is the
        // worker's own and must not take the loop down.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(t)));
    }
}

/// A small epoll wrapper: edge-triggered read interest, registered once per socket,
/// so that waiting costs no system call beyond the shared `epoll_wait`.
struct Epoll(RawFd);

impl Epoll {
    fn new() -> Epoll {
        // SAFETY: plain syscall; a failure (-1) shows up in the first `watch`.
        Epoll(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })
    }

    /// Reports `fd` as task `index` whenever data arrives on it (and now, if some
    /// already has).
    fn watch(&self, fd: RawFd, index: usize) -> std::io::Result<()> {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLET | libc::EPOLLRDHUP) as u32,
            u64: index as u64,
        };
        let ctl = |op: i32, ev: &mut libc::epoll_event| {
            // SAFETY: `ev` is a valid epoll_event; the kernel checks the descriptors.
            if unsafe { libc::epoll_ctl(self.0, op, fd, ev) } == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        };
        // A descriptor number still registered from an earlier socket (closed while
        // duplicated elsewhere) is re-pointed at this task.
        match ctl(libc::EPOLL_CTL_ADD, &mut ev) {
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => ctl(libc::EPOLL_CTL_MOD, &mut ev),
            other => other,
        }
    }

    fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> std::io::Result<usize> {
        loop {
            // SAFETY: `events` is a writable buffer of `events.len()` entries.
            let n = unsafe {
                libc::epoll_wait(self.0, events.as_mut_ptr(), events.len() as i32, timeout_ms)
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        if self.0 >= 0 {
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(self.0) };
        }
    }
}

#[cfg(test)]
mod tests {
    //! The event loop without a database: workers as coroutines on the test's thread,
    //! each talking to a peer thread over a socketpair.

    use std::io::{ErrorKind, Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::{channel, Receiver, Sender};
    use std::sync::{Arc, Mutex};
    use std::thread;
    use std::time::{Duration, Instant};

    use super::{active, loop_main, new_socket_id, wait_readable, LoopTally};
    use crate::clock::RunClock;
    use crate::config::RunConfig;
    use crate::shared::Shared;
    use crate::stats::Counter;
    use crate::worker::{EventFlow, Worker, WorkerContext, WorkerError, Workload};

    const WORKERS: u32 = 4;
    const EVENTS: u32 = 25;

    /// Sends a request, tells the peer which worker sent it and waits for its receipt
    /// (blocking the loop briefly), then waits for the echo as a driver waits for an
    /// answer: non-blocking reads, suspended in `wait_readable` while there is none.
    struct EchoWorker {
        tid: u32,
        sock: UnixStream,
        socket: u64,
        sent: Sender<u32>,
        receipt: Receiver<()>,
        done: u32,
    }

    impl Worker for EchoWorker {
        fn event(&mut self, ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
            assert!(active(), "a worker of an event loop runs as a coroutine");
            let request = [self.tid.to_le_bytes(), self.done.to_le_bytes()].concat();
            (&self.sock)
                .write_all(&request)
                .map_err(|e| WorkerError::new(e.to_string()))?;
            self.sent.send(self.tid).expect("peer alive");
            self.receipt.recv().expect("peer alive");
            let mut echo = [0u8; 8];
            let mut got = 0;
            while got < echo.len() {
                match (&self.sock).read(&mut echo[got..]) {
                    Ok(0) => return Err(WorkerError::new("peer closed the socket")),
                    Ok(n) => got += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        assert!(wait_readable(self.sock.as_raw_fd(), self.socket));
                    }
                    Err(e) => return Err(WorkerError::new(e.to_string())),
                }
            }
            if echo[..] != request[..] {
                return Err(WorkerError::new(format!(
                    "worker {} got {echo:?}",
                    self.tid
                )));
            }
            ctx.count(Counter::Read);
            self.done += 1;
            Ok(if self.done == EVENTS {
                EventFlow::StopWorker
            } else {
                EventFlow::Continue
            })
        }
    }

    struct EchoTest(Mutex<Vec<Option<EchoWorker>>>);

    impl Workload for EchoTest {
        fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
            let worker = self.0.lock().unwrap()[tid as usize].take();
            Ok(Box::new(worker.expect("one worker per tid")))
        }
        fn cooperative(&self) -> bool {
            true
        }
    }

    /// The peer: reads each request as its worker reports it, and once it has one
    /// from every worker waits a little (a slower query every few rounds) and echoes
    /// them all before it confirms the last receipt. The loop thread is held in that
    /// last worker meanwhile, so the other workers' echoes are all waiting when it
    /// next calls `epoll_wait`.
    fn peer(mut ends: Vec<UnixStream>, sent: Receiver<u32>, receipts: Vec<Sender<()>>) {
        for round in 0..EVENTS {
            let mut requests = vec![[0u8; 8]; ends.len()];
            for received in 1..=ends.len() {
                let tid = sent.recv().expect("workers alive") as usize;
                ends[tid].read_exact(&mut requests[tid]).unwrap();
                if received == ends.len() {
                    thread::sleep(Duration::from_micros(200 + 800 * u64::from(round % 3)));
                    for (end, request) in ends.iter_mut().zip(&requests) {
                        end.write_all(request).unwrap();
                    }
                }
                receipts[tid].send(()).unwrap();
            }
        }
    }

    /// Worker 0 sleeps in its one event; worker 1, on the same loop, notes whether
    /// worker 0 was asleep when it ran its own.
    struct SleepWorker {
        tid: u32,
        asleep: Arc<AtomicBool>,
        seen_asleep: Arc<AtomicBool>,
        slept: Arc<Mutex<Option<Duration>>>,
    }

    const NAP: Duration = Duration::from_millis(30);

    impl Worker for SleepWorker {
        fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
            if self.tid == 0 {
                self.asleep.store(true, Ordering::SeqCst);
                let start = Instant::now();
                super::sleep(NAP);
                *self.slept.lock().unwrap() = Some(start.elapsed());
                self.asleep.store(false, Ordering::SeqCst);
            } else {
                self.seen_asleep
                    .store(self.asleep.load(Ordering::SeqCst), Ordering::SeqCst);
            }
            Ok(EventFlow::StopWorker)
        }
    }

    #[test]
    fn a_sleeping_worker_lets_the_others_of_its_loop_run() {
        let asleep = Arc::new(AtomicBool::new(false));
        let seen_asleep = Arc::new(AtomicBool::new(false));
        let slept = Arc::new(Mutex::new(None));
        let workers = (0..2)
            .map(|tid| {
                Some(SleepWorker {
                    tid,
                    asleep: asleep.clone(),
                    seen_asleep: seen_asleep.clone(),
                    slept: slept.clone(),
                })
            })
            .collect();
        struct SleepTest(Mutex<Vec<Option<SleepWorker>>>);
        impl Workload for SleepTest {
            fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
                let worker = self.0.lock().unwrap()[tid as usize].take();
                Ok(Box::new(worker.expect("one worker per tid")))
            }
            fn cooperative(&self) -> bool {
                true
            }
        }
        let config = RunConfig {
            threads: 2,
            time: None,
            ..RunConfig::default()
        };
        let shared = Arc::new(Shared::new(config, 2, RunClock::system()));
        shared.measuring.store(true, Ordering::SeqCst);
        shared.release(shared.control());
        loop_main(
            vec![0, 1],
            shared.clone(),
            Arc::new(SleepTest(Mutex::new(workers))),
        );

        let ctl = shared.control();
        assert!(ctl.fatal.is_empty(), "{:?}", ctl.fatal);
        assert_eq!(ctl.finished, 2);
        assert!(
            seen_asleep.load(Ordering::SeqCst),
            "worker 1 ran while worker 0 slept"
        );
        let slept = slept.lock().unwrap().expect("worker 0 slept");
        assert!(slept >= NAP, "slept {slept:?}");
        // Outside a loop the thread sleeps.
        let start = Instant::now();
        super::sleep(NAP);
        assert!(start.elapsed() >= NAP);
    }

    /// Worker 0 is created only once worker 1 is: it polls, sleeping, as a start
    /// barrier in `thread_init` does. Sequential creation would never get there.
    struct BarrierTest {
        created: Arc<Mutex<Vec<u32>>>,
        polls: Arc<Mutex<u32>>,
    }

    struct Idle;

    impl Worker for Idle {
        fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
            Ok(EventFlow::StopWorker)
        }
    }

    impl Workload for BarrierTest {
        fn create_worker(&self, tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
            assert!(active(), "created in its coroutine");
            if tid == 0 {
                while !self.created.lock().unwrap().contains(&1) {
                    *self.polls.lock().unwrap() += 1;
                    if *self.polls.lock().unwrap() > 200 {
                        return Err(WorkerError::new("worker 1 never got created"));
                    }
                    super::sleep(Duration::from_millis(5));
                }
            }
            self.created.lock().unwrap().push(tid);
            Ok(Box::new(Idle))
        }
        fn cooperative(&self) -> bool {
            true
        }
    }

    #[test]
    fn a_worker_waiting_in_its_creation_lets_the_loop_create_the_others() {
        let config = RunConfig {
            threads: 2,
            time: None,
            ..RunConfig::default()
        };
        let shared = Arc::new(Shared::new(config, 2, RunClock::system()));
        shared.measuring.store(true, Ordering::SeqCst);
        shared.release(shared.control());
        let created = Arc::new(Mutex::new(Vec::new()));
        let polls = Arc::new(Mutex::new(0));
        let test = BarrierTest {
            created: created.clone(),
            polls: polls.clone(),
        };
        loop_main(vec![0, 1], shared.clone(), Arc::new(test));
        let ctl = shared.control();
        assert!(ctl.fatal.is_empty(), "{:?}", ctl.fatal);
        assert_eq!((ctl.initialized, ctl.finished), (2, 2));
        assert_eq!(*created.lock().unwrap(), [1, 0]);
        assert!(*polls.lock().unwrap() >= 1);
    }

    #[test]
    fn coroutine_workers_on_one_thread_complete_their_events_over_socketpairs() {
        let (sent_tx, sent_rx) = channel();
        let mut workers = Vec::new();
        let mut ends = Vec::new();
        let mut receipts = Vec::new();
        for tid in 0..WORKERS {
            let (sock, end) = UnixStream::pair().unwrap();
            sock.set_nonblocking(true).unwrap();
            let (receipt_tx, receipt_rx) = channel();
            workers.push(Some(EchoWorker {
                tid,
                sock,
                socket: new_socket_id(),
                sent: sent_tx.clone(),
                receipt: receipt_rx,
                done: 0,
            }));
            ends.push(end);
            receipts.push(receipt_tx);
        }
        let peer = thread::spawn(move || peer(ends, sent_rx, receipts));

        let config = RunConfig {
            threads: WORKERS,
            time: None,
            ..RunConfig::default()
        };
        let shared = Arc::new(Shared::new(config, WORKERS, RunClock::system()));
        shared.measuring.store(true, Ordering::SeqCst);
        shared.release(shared.control());
        let test = Arc::new(EchoTest(Mutex::new(workers)));
        let tally = loop_main((0..WORKERS).collect(), shared.clone(), test);
        peer.join().expect("the peer saw every request");

        let ctl = shared.control();
        assert!(ctl.fatal.is_empty(), "{:?}", ctl.fatal);
        assert_eq!(ctl.finished, WORKERS);
        for slot in &shared.slots {
            assert_eq!(slot.events.load(Ordering::Relaxed), u64::from(EVENTS));
            assert_eq!(slot.counters().get(Counter::Read), u64::from(EVENTS));
        }
        // Each round ends with one wake-up that brings the echoes of every worker but
        // the one whose echo was already there when it looked (the kernel does not
        // report a socket whose data was read meanwhile).
        let expected = LoopTally {
            wakeups: u64::from(EVENTS),
            most_woken: WORKERS as usize - 1,
        };
        assert_eq!(tally, expected);
    }
}
