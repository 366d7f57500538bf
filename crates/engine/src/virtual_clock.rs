//! A virtual clock for testing whole runs: time moves only when every thread of the run
//! waits for it, so that a run of minutes takes milliseconds and repeats exactly.
//!
//! The threads of a run on a [`VirtualClock`] (the controller, which is the thread that
//! made the clock, the workers and the rate scheduler) take turns: one runs at a time,
//! and it runs until it waits for the clock (a timed wait, a sleep, a join). Then the
//! next turn goes to the thread due first, in virtual time, ties going to the thread
//! started first; when that is in the future, the clock moves there. A test's events
//! take time by sleeping on the clock ([`VirtualClock::sleep`]), so each latency is
//! exactly what the test says, every report falls due at its exact time, and the
//! same test gives the same statistics, byte for byte, however busy the machine is.
//!
//! Every event of a virtual run must take virtual time (a worker that never waits
//! never lets the clock move), and nothing in a run may block on anything but the
//! clock while others wait for it (event loops are therefore not used, see
//! [`run_with_clock`](crate::run_with_clock)).
//!
//! ```
//! use std::sync::atomic::AtomicUsize;
//! use std::sync::Arc;
//! use std::time::Duration;
//! use bmk_engine::virtual_clock::VirtualClock;
//! use bmk_engine::{EventFlow, Observer, RunConfig, Workload, Worker, WorkerContext, WorkerError};
//!
//! /// Each event takes 10 ms of virtual time.
//! struct Sleeper(Arc<VirtualClock>);
//! impl Worker for Sleeper {
//!     fn event(&mut self, _: &WorkerContext) -> Result<EventFlow, WorkerError> {
//!         self.0.sleep(Duration::from_millis(10));
//!         Ok(EventFlow::Continue)
//!     }
//! }
//! struct SleeperTest(Arc<VirtualClock>);
//! impl Workload for SleeperTest {
//!     fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
//!         Ok(Box::new(Sleeper(self.0.clone())))
//!     }
//! }
//! struct Quiet;
//! impl Observer for Quiet {}
//!
//! let clock = VirtualClock::new();
//! let config = RunConfig { threads: 2, time: Some(Duration::from_secs(60)), ..RunConfig::default() };
//! let test = Arc::new(SleeperTest(clock.clone()));
//! let outcome = clock.run(config, test, &mut Quiet, &AtomicUsize::new(0));
//! // A minute of two workers doing 100 events a second each, exactly.
//! assert_eq!(outcome.stats.events, 12_000);
//! assert_eq!(outcome.stats.time_total, 60.0);
//! ```

use std::cell::Cell;
use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::config::RunConfig;
use crate::observer::Observer;
use crate::outcome::RunOutcome;
use crate::worker::Workload;

/// How long a thread waits for its turn, in real time, before it concludes that the
/// thread holding the turn blocks on something other than the clock.
const STALL_LIMIT: Duration = Duration::from_secs(20);

/// Waits in a row that return at once without the clock moving, after which a thread
/// is taken to be spinning (it waits for something that cannot happen before the
/// clock moves, and never lets it move).
const SPIN_LIMIT: u64 = 10_000_000;

thread_local! {
    /// The participant number of this thread on the virtual clock it belongs to.
    static PARTICIPANT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// What a thread of the run is doing, as the clock sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Part {
    /// It has the turn.
    Running,
    /// It waits for the turn, due now.
    Ready,
    /// It waits for the clock to reach `until`; a notification makes a `notifiable`
    /// wait due now.
    Waiting { until: u64, notifiable: bool },
    /// It blocks on something else (a join) and takes no turn until it is back.
    Outside,
}

struct State {
    now: u64,
    holder: Option<usize>,
    parts: BTreeMap<usize, Part>,
    next_participant: usize,
    /// Set by [`VirtualClock::release`]: no more turns, time jumps to each deadline.
    released: bool,
    /// Waits in a row that returned without the clock moving.
    spins: u64,
}

/// A clock whose time moves only when every thread of the run waits for it (see the
/// module documentation). Made by the thread that will run the run.
pub struct VirtualClock {
    state: Mutex<State>,
    turn: Condvar,
    this: Weak<VirtualClock>,
}

impl VirtualClock {
    /// A clock at time 0, whose only thread so far is the calling one, which has the
    /// turn: it is the one to call [`VirtualClock::run`].
    pub fn new() -> Arc<VirtualClock> {
        PARTICIPANT.with(|p| p.set(Some(0)));
        Arc::new_cyclic(|this| VirtualClock {
            state: Mutex::new(State {
                now: 0,
                holder: Some(0),
                parts: BTreeMap::from([(0, Part::Running)]),
                next_participant: 1,
                released: false,
                spins: 0,
            }),
            turn: Condvar::new(),
            this: this.clone(),
        })
    }

    /// The virtual time since the clock was made.
    pub fn now(&self) -> Duration {
        Duration::from_nanos(self.now_ns())
    }

    /// Lets `duration` of virtual time pass for the calling thread: what a test's
    /// event does to take that long.
    pub fn sleep(&self, duration: Duration) {
        let deadline = self.now_ns() + duration.as_nanos() as u64;
        self.sleep_until(deadline);
    }

    /// Runs `test` under `config` on this clock
    /// ([`run_with_clock`](crate::run_with_clock)), then
    /// [releases](VirtualClock::release) the threads the run leaves behind (after a
    /// forced shutdown or an initialisation timeout). Called by the thread that made
    /// the clock, once.
    pub fn run(
        &self,
        config: RunConfig,
        test: Arc<dyn Workload>,
        observer: &mut dyn Observer,
        interrupt: &AtomicUsize,
    ) -> RunOutcome {
        let clock = self.this.upgrade().expect("the clock is alive");
        let outcome = crate::run::run_with_clock(config, test, observer, interrupt, clock);
        self.release();
        outcome
    }

    /// Ends the turns: from now on every thread runs freely, and a wait returns at
    /// once, moving the clock to its deadline if that is later. Threads that a run
    /// left behind then see the stop and end.
    pub fn release(&self) {
        let mut st = self.lock();
        st.released = true;
        st.holder = None;
        self.turn.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The calling thread's participant number.
    fn me() -> usize {
        PARTICIPANT
            .with(|p| p.get())
            .expect("only the threads of a virtual run may wait for its clock")
    }

    /// Gives the turn to the thread due first, moving the clock to when it is due.
    fn dispatch(&self, st: &mut State) {
        if st.holder.is_some() || st.released {
            return;
        }
        let now = st.now;
        let next = (st.parts.iter())
            .filter_map(|(&id, part)| match *part {
                Part::Ready => Some((now, id)),
                Part::Waiting { until, .. } => Some((until.max(now), id)),
                Part::Running | Part::Outside => None,
            })
            .min();
        if let Some((at, id)) = next {
            if at > st.now {
                st.now = at;
                st.spins = 0;
            }
            st.parts.insert(id, Part::Running);
            st.holder = Some(id);
            self.turn.notify_all();
        }
    }

    /// Blocks until participant `me` has the turn (or the clock is released).
    fn await_turn(&self, mut st: MutexGuard<'_, State>, me: usize) {
        let since = Instant::now();
        while !st.released && st.holder != Some(me) {
            st = (self.turn)
                .wait_timeout(st, Duration::from_secs(1))
                .unwrap_or_else(|p| p.into_inner())
                .0;
            assert!(
                since.elapsed() < STALL_LIMIT,
                "virtual clock: participant {me} got no turn for {STALL_LIMIT:?}: \
                 participant {:?} blocks on something other than the clock",
                st.holder
            );
        }
    }

    /// Waits until `deadline_ns` as the caller's turn ends (`notifiable`: or until a
    /// notification).
    fn wait(&self, deadline_ns: u64, notifiable: bool) {
        let mut st = self.lock();
        if st.released {
            st.now = st.now.max(deadline_ns);
            return;
        }
        if deadline_ns <= st.now {
            st.spins += 1;
            assert!(
                st.spins < SPIN_LIMIT,
                "virtual clock: a thread waits again and again for a time already past"
            );
            return;
        }
        let me = Self::me();
        debug_assert_eq!(st.holder, Some(me), "a thread waits without the turn");
        st.parts.insert(
            me,
            Part::Waiting {
                until: deadline_ns,
                notifiable,
            },
        );
        st.holder = None;
        self.dispatch(&mut st);
        self.await_turn(st, me);
    }
}

impl Clock for VirtualClock {
    fn now_ns(&self) -> u64 {
        self.lock().now
    }

    fn sleep_until(&self, deadline_ns: u64) {
        self.wait(deadline_ns, false);
    }

    fn wait_until(&self, deadline_ns: u64) {
        self.wait(deadline_ns, true);
    }

    fn notify(&self) {
        let mut st = self.lock();
        let now = st.now;
        for part in st.parts.values_mut() {
            if let Part::Waiting {
                until,
                notifiable: true,
            } = part
            {
                *until = (*until).min(now);
            }
        }
    }

    fn spawn(
        &self,
        builder: thread::Builder,
        body: Box<dyn FnOnce() + Send>,
    ) -> io::Result<JoinHandle<()>> {
        let id = {
            let mut st = self.lock();
            if st.released {
                return builder.spawn(body);
            }
            let id = st.next_participant;
            st.next_participant += 1;
            st.parts.insert(id, Part::Ready);
            id
        };
        let clock = self.this.upgrade().expect("the clock is alive");
        let spawned = builder.spawn(move || {
            PARTICIPANT.with(|p| p.set(Some(id)));
            let _leave = Leave {
                clock: clock.clone(),
                id,
            };
            clock.await_turn(clock.lock(), id);
            body();
        });
        if spawned.is_err() {
            self.lock().parts.remove(&id);
        }
        spawned
    }

    fn block_on(&self, blocking: &mut dyn FnMut()) {
        let me = Self::me();
        {
            let mut st = self.lock();
            if !st.released {
                st.parts.insert(me, Part::Outside);
                st.holder = None;
                self.dispatch(&mut st);
            }
        }
        blocking();
        let mut st = self.lock();
        if !st.released {
            st.parts.insert(me, Part::Ready);
            self.dispatch(&mut st);
            self.await_turn(st, me);
        }
    }
}

/// Takes a thread off the clock when it ends (also by a panic), passing its turn on.
struct Leave {
    clock: Arc<VirtualClock>,
    id: usize,
}

impl Drop for Leave {
    fn drop(&mut self) {
        let mut st = self.clock.lock();
        st.parts.remove(&self.id);
        if st.holder == Some(self.id) {
            st.holder = None;
            self.clock.dispatch(&mut st);
        }
    }
}
