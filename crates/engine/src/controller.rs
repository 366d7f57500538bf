//! The controller loop: what the controlling thread does between the workers' release
//! and the last worker's exit. It sleeps until the next thing due — the end of
//! warm-up, an intermediate report, a checkpoint, the time limit, the forced-shutdown
//! deadline — or until a worker finishes or fails, a signal arrives or the rate
//! scheduler finds its queue full, and hands each report's statistics to the
//! [`Observer`].
//!
//! A stopping run waits for its workers a bounded time only: a worker stuck in I/O to
//! a server that stopped answering (a frozen server, a cut link) must not keep the run
//! going for as long as TCP retries. After the time limit it waits `--forced-shutdown`,
//! else [`RunConfig::stop_grace`](crate::RunConfig::stop_grace); after a signal
//! [`RunConfig::interrupt_grace`](crate::RunConfig::interrupt_grace); after a failure
//! `stop_grace` again. Then it returns with what was measured, and the workers still
//! busy are counted as abandoned ([`RunOutcome::abandoned`](crate::RunOutcome)).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use crate::arrivals;
use crate::collector::Collector;
use crate::observer::Observer;
use crate::outcome::RunStatus;
use crate::shared::Shared;

/// The controller loop, from the workers' release to the last worker's exit (or to a
/// forced shutdown); `stats` collects what they measure, `handles` are their threads,
/// `released` is the run-clock time of their release, from which the warm-up, the
/// reports' grid and the time limit are counted.
pub(crate) fn drive(
    shared: &Arc<Shared>,
    stats: &mut Collector,
    observer: &mut dyn Observer,
    interrupt: &AtomicUsize,
    handles: &mut Vec<thread::JoinHandle<()>>,
    released: u64,
) -> RunStatus {
    let scheduler = shared.arrivals.as_ref().map(|_| {
        let s = shared.clone();
        let builder = thread::Builder::new().name("bmk-rate".into());
        (shared.clock)
            .spawn(builder, move || run_scheduler(&s))
            .expect("spawn rate scheduler")
    });
    let mut run = Loop {
        shared,
        threads: shared.slots.len() as u32,
        due: Due::new(shared, released),
        status: RunStatus::Completed,
    };
    let status = match run.until_workers_finish(stats, observer, interrupt) {
        Ok(status) => status,
        // Gave up waiting: the workers still busy are left to the process exit.
        Err(status) => return status,
    };
    stats.end_at(shared.measured_end(shared.now_ns()));
    shared.stop();
    join_workers(shared, handles);
    if let Some(s) = scheduler {
        shared.clock.join(s);
    }
    let fatal = std::mem::take(&mut shared.control().fatal);
    if !fatal.is_empty() {
        return RunStatus::Fatal(fatal);
    }
    if matches!(status, RunStatus::Fatal(_)) {
        return RunStatus::Completed;
    }
    // The workers stop as soon as the scheduler finds its queue full, so the loop may
    // have ended on their exit before it saw why.
    if status == RunStatus::Completed && shared.control().queue_full {
        return RunStatus::QueueFull;
    }
    status
}

/// When each thing the loop waits for falls due, in run-clock nanoseconds.
struct Due {
    /// The end of the warm-up: measuring starts, and the reports' grid and the time
    /// limit count from here.
    measure_from: u64,
    warming: bool,
    time_limit: Option<u64>,
    interval: Option<u64>,
    next_report: Option<u64>,
    checkpoints: VecDeque<u64>,
    /// When a run past its time limit gives up waiting for its workers.
    forced_deadline: Option<u64>,
    /// When a run stopped for another reason than its time limit gives up waiting.
    stop_deadline: Option<u64>,
    /// The next read of the workers' recorders.
    next_drain: u64,
}

impl Due {
    fn new(shared: &Shared, released: u64) -> Due {
        let config = &shared.config;
        let measure_from = released + config.warmup.as_nanos() as u64;
        let time_limit = config.time.map(|t| measure_from + t.as_nanos() as u64);
        if let Some(limit) = time_limit {
            shared.time_limit_ns.store(limit, Ordering::Relaxed);
        }
        let interval = config.report_interval.map(|d| d.as_nanos() as u64);
        let mut checkpoints: Vec<u64> = config
            .checkpoints
            .iter()
            .map(|d| measure_from + d.as_nanos() as u64)
            .collect();
        checkpoints.sort_unstable();
        Due {
            measure_from,
            warming: !config.warmup.is_zero(),
            time_limit,
            interval,
            next_report: interval.map(|i| measure_from + i),
            checkpoints: checkpoints.into(),
            forced_deadline: None,
            stop_deadline: None,
            // Workers' 32-bit buckets must be read well before one can wrap.
            next_drain: released + 1_000_000_000,
        }
    }

    /// The earliest time the loop must wake at, at most 50 ms after `now`.
    fn wake_at(&self, now: u64, reporting: bool) -> u64 {
        let mut wake = now + 50_000_000;
        for t in [
            self.time_limit,
            self.next_report.filter(|_| reporting),
            self.checkpoints.front().copied().filter(|_| reporting),
            self.forced_deadline,
            self.stop_deadline,
        ]
        .into_iter()
        .flatten()
        {
            wake = wake.min(t);
        }
        if self.warming {
            wake = wake.min(self.measure_from);
        }
        wake
    }
}

/// The controller loop's state.
struct Loop<'a> {
    shared: &'a Shared,
    threads: u32,
    due: Due,
    status: RunStatus,
}

impl Loop<'_> {
    /// Runs the loop until every worker has finished (`Ok`, the status so far) or the
    /// run gives up waiting for them (`Err`, the run's final status).
    fn until_workers_finish(
        &mut self,
        stats: &mut Collector,
        observer: &mut dyn Observer,
        interrupt: &AtomicUsize,
    ) -> Result<RunStatus, RunStatus> {
        let shared = self.shared;
        loop {
            let (finished, fatal, queue_full) = {
                let ctl = shared.control();
                (ctl.finished, !ctl.fatal.is_empty(), ctl.queue_full)
            };
            let now = shared.now_ns();
            if finished >= self.threads {
                self.last_workers_left(now, stats, observer);
                return Ok(std::mem::replace(&mut self.status, RunStatus::Completed));
            }
            self.note_why_stopping(now, fatal, queue_full, interrupt);
            if let Some(status) = self.give_up(now, finished, stats) {
                return Err(status);
            }
            self.report_what_is_due(now, stats, observer);
            if let Some(limit) = self.due.time_limit.filter(|&l| now >= l) {
                self.due.time_limit = None;
                shared.stop();
                observer.time_limit_reached();
                let grace = shared
                    .config
                    .forced_shutdown
                    .unwrap_or(shared.config.stop_grace);
                self.due.forced_deadline = Some(limit + grace.as_nanos() as u64);
            }
            if now >= self.due.next_drain {
                stats.drain();
                self.due.next_drain = now + 1_000_000_000;
            }
            // A stopping run reports nothing more: a report that fell due meanwhile
            // must not wake the loop over and over while the workers finish (or until
            // the forced shutdown).
            let wake = self.due.wake_at(now, !shared.stop.load(Ordering::Relaxed));
            let ctl = shared.control();
            if ctl.finished < self.threads {
                let _unused = shared.wait(ctl, wake.max(now + 1));
            }
        }
    }

    /// The last worker has left. Workers stop by themselves at the time limit (they
    /// check it before each event), so the last one can leave before this loop woke up
    /// for the limit: what falls due at the limit is done here, or the run would lose
    /// its last interval line.
    fn last_workers_left(&self, now: u64, stats: &mut Collector, observer: &mut dyn Observer) {
        let due = &self.due;
        if let Some(limit) = due.time_limit.filter(|&l| now >= l) {
            if !due.warming && !self.shared.stop.load(Ordering::Relaxed) {
                if let Some(at) = due.next_report.filter(|&at| at <= limit) {
                    let interval_stats = stats.interval(at - due.measure_from);
                    observer.interval(&interval_stats);
                }
            }
            observer.time_limit_reached();
        }
    }

    /// Records the first reason the run stops (a full queue, a fatal error, a signal)
    /// and, once it is stopping, when it gives up waiting for its workers.
    fn note_why_stopping(
        &mut self,
        now: u64,
        fatal: bool,
        queue_full: bool,
        interrupt: &AtomicUsize,
    ) {
        let shared = self.shared;
        if self.status == RunStatus::Completed {
            if queue_full {
                self.status = RunStatus::QueueFull;
            } else if fatal {
                self.status = RunStatus::Fatal(Vec::new());
            } else {
                let sig = interrupt.load(Ordering::Relaxed);
                if sig != 0 {
                    self.status = RunStatus::Interrupted(sig as i32);
                    shared.stop();
                    self.due.stop_deadline =
                        Some(now + shared.config.interrupt_grace.as_nanos() as u64);
                }
            }
        }
        if self.due.stop_deadline.is_none()
            && self.due.forced_deadline.is_none()
            && shared.stop.load(Ordering::Relaxed)
        {
            self.due.stop_deadline = Some(now + shared.config.stop_grace.as_nanos() as u64);
        }
    }

    /// The run's final status when a deadline for the workers to finish has passed.
    fn give_up(&mut self, now: u64, finished: u32, stats: &mut Collector) -> Option<RunStatus> {
        let shared = self.shared;
        if self.due.forced_deadline.is_some_and(|d| now >= d) {
            stats.end_at(now);
            abandon(shared, self.threads - finished);
            return Some(RunStatus::ForcedShutdown);
        }
        if self.due.stop_deadline.is_some_and(|d| now >= d) {
            stats.end_at(now);
            abandon(shared, self.threads - finished);
            let fatal = std::mem::take(&mut shared.control().fatal);
            return Some(
                match std::mem::replace(&mut self.status, RunStatus::Completed) {
                    _ if !fatal.is_empty() => RunStatus::Fatal(fatal),
                    RunStatus::Fatal(_) => RunStatus::Completed,
                    other => other,
                },
            );
        }
        None
    }

    /// Ends the warm-up, and hands out the interval report and the checkpoints that
    /// have fallen due, unless the run is stopping.
    fn report_what_is_due(&mut self, now: u64, stats: &mut Collector, observer: &mut dyn Observer) {
        let shared = self.shared;
        let due = &mut self.due;
        if due.warming && now >= due.measure_from {
            due.warming = false;
            stats.rebase_at(due.measure_from);
            shared.measuring.store(true, Ordering::SeqCst);
            observer.warmup_finished();
        }
        if due.warming || shared.stop.load(Ordering::Relaxed) {
            return;
        }
        if let Some(at) = due.next_report.filter(|&at| now >= at) {
            let interval_stats = stats.interval(at - due.measure_from);
            observer.interval(&interval_stats);
            due.next_report = Some(at + due.interval.expect("set with next_report"));
        }
        while let Some(&c) = due.checkpoints.front().filter(|&&c| now >= c) {
            due.checkpoints.pop_front();
            let span = stats.checkpoint();
            let at = (c - due.measure_from) as f64 / 1e9;
            observer.checkpoint(at, &span);
        }
    }
}

/// Joins the workers' threads. A worker counts as finished before it drops its
/// connection, and closing a connection to a server that broke its protocol can wait
/// for ever: threads still closing after the grace are left to the process exit.
fn join_workers(shared: &Shared, handles: &mut Vec<thread::JoinHandle<()>>) {
    let join_deadline = std::time::Instant::now() + shared.config.stop_grace;
    let mut left = 0;
    for h in handles.drain(..) {
        if shared.clock.is_system() {
            while !h.is_finished() && std::time::Instant::now() < join_deadline {
                thread::sleep(std::time::Duration::from_millis(1));
            }
            if !h.is_finished() {
                left += 1;
                continue;
            }
        }
        shared.clock.join(h);
    }
    if left > 0 {
        abandon(shared, left);
    }
}

/// Records that `workers` still busy are left to the process exit.
fn abandon(shared: &Shared, workers: u32) {
    shared
        .abandoned
        .store(workers, std::sync::atomic::Ordering::Relaxed);
}

/// The rate scheduler thread: arrivals until the run stops, or until the queue is full
/// in strict mode, which stops the run.
fn run_scheduler(shared: &Shared) {
    let queue = shared.arrivals.as_ref().expect("rate mode");
    let config = &shared.config;
    let full = arrivals::schedule(
        queue,
        config.rate,
        config.strict_queue_limit,
        &shared.stop,
        &shared.clock,
    );
    if full {
        shared.control().queue_full = true;
        shared.stop();
    }
}
