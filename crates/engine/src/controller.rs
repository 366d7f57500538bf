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
    let config = &shared.config;
    let threads = shared.slots.len() as u32;

    let scheduler = shared.arrivals.as_ref().map(|_| {
        let s = shared.clone();
        let builder = thread::Builder::new().name("bmk-rate".into());
        (shared.clock)
            .spawn(builder, move || run_scheduler(&s))
            .expect("spawn rate scheduler")
    });

    let measure_from = released + config.warmup.as_nanos() as u64;
    let mut warming = !config.warmup.is_zero();
    let mut time_limit = config.time.map(|t| measure_from + t.as_nanos() as u64);
    if let Some(limit) = time_limit {
        shared.time_limit_ns.store(limit, Ordering::Relaxed);
    }
    let interval = config.report_interval.map(|d| d.as_nanos() as u64);
    let mut next_report = interval.map(|i| measure_from + i);
    let mut checkpoints: VecDeque<u64> = {
        let mut c: Vec<u64> = config
            .checkpoints
            .iter()
            .map(|d| measure_from + d.as_nanos() as u64)
            .collect();
        c.sort_unstable();
        c.into()
    };
    let mut forced_deadline: Option<u64> = None;
    // When a run stopped for another reason than its time limit gives up waiting.
    let mut stop_deadline: Option<u64> = None;
    // Workers' 32-bit buckets must be read well before one can wrap.
    let mut next_drain = released + 1_000_000_000;
    let mut status = RunStatus::Completed;

    loop {
        let (finished, fatal, queue_full) = {
            let ctl = shared.control();
            (ctl.finished, !ctl.fatal.is_empty(), ctl.queue_full)
        };
        let now = shared.now_ns();
        if finished >= threads {
            // Workers stop by themselves at the time limit (they check it before each
            // event), so the last one can leave before this loop woke up for the limit:
            // what falls due at the limit is done here, or the run would lose its last
            // interval line.
            if let Some(limit) = time_limit.filter(|&l| now >= l) {
                if !warming && !shared.stop.load(Ordering::Relaxed) {
                    if let Some(at) = next_report.filter(|&at| at <= limit) {
                        let interval_stats = stats.interval(at - measure_from);
                        observer.interval(&interval_stats);
                    }
                }
                observer.time_limit_reached();
            }
            break;
        }
        if status == RunStatus::Completed {
            if queue_full {
                status = RunStatus::QueueFull;
            } else if fatal {
                status = RunStatus::Fatal(Vec::new());
            } else {
                let sig = interrupt.load(Ordering::Relaxed);
                if sig != 0 {
                    status = RunStatus::Interrupted(sig as i32);
                    shared.stop();
                    stop_deadline = Some(now + config.interrupt_grace.as_nanos() as u64);
                }
            }
        }
        if stop_deadline.is_none()
            && forced_deadline.is_none()
            && shared.stop.load(Ordering::Relaxed)
        {
            stop_deadline = Some(now + config.stop_grace.as_nanos() as u64);
        }
        if let Some(deadline) = forced_deadline {
            if now >= deadline {
                stats.end_at(now);
                abandon(shared, threads - finished);
                return RunStatus::ForcedShutdown;
            }
        }
        if let Some(deadline) = stop_deadline {
            if now >= deadline {
                stats.end_at(now);
                abandon(shared, threads - finished);
                let fatal = std::mem::take(&mut shared.control().fatal);
                return match status {
                    _ if !fatal.is_empty() => RunStatus::Fatal(fatal),
                    RunStatus::Fatal(_) => RunStatus::Completed,
                    other => other,
                };
            }
        }
        if warming && now >= measure_from {
            warming = false;
            stats.rebase_at(measure_from);
            shared.measuring.store(true, Ordering::SeqCst);
            observer.warmup_finished();
        }
        if !warming && !shared.stop.load(Ordering::Relaxed) {
            if let Some(at) = next_report {
                if now >= at {
                    let interval_stats = stats.interval(at - measure_from);
                    observer.interval(&interval_stats);
                    next_report = Some(at + interval.expect("set with next_report"));
                }
            }
            while let Some(&c) = checkpoints.front().filter(|&&c| now >= c) {
                checkpoints.pop_front();
                let span = stats.checkpoint();
                let at = (c - measure_from) as f64 / 1e9;
                observer.checkpoint(at, &span);
            }
        }
        if let Some(limit) = time_limit {
            if now >= limit {
                time_limit = None;
                shared.stop();
                observer.time_limit_reached();
                let grace = config.forced_shutdown.unwrap_or(config.stop_grace);
                forced_deadline = Some(limit + grace.as_nanos() as u64);
            }
        }

        if now >= next_drain {
            stats.drain();
            next_drain = now + 1_000_000_000;
        }
        let mut wake = now + 50_000_000;
        // A stopping run reports nothing more: a report that fell due meanwhile must not
        // wake the loop over and over while the workers finish (or until the forced
        // shutdown).
        let reporting = !shared.stop.load(Ordering::Relaxed);
        for t in [
            time_limit,
            next_report.filter(|_| reporting),
            checkpoints.front().copied().filter(|_| reporting),
            forced_deadline,
            stop_deadline,
        ]
        .into_iter()
        .flatten()
        {
            wake = wake.min(t);
        }
        if warming {
            wake = wake.min(measure_from);
        }
        let ctl = shared.control();
        if ctl.finished < threads {
            let _unused = shared.wait(ctl, wake.max(now + 1));
        }
    }
    stats.end_at(shared.measured_end(shared.now_ns()));
    shared.stop();
    // A worker counts as finished before it drops its connection, and closing a
    // connection to a server that broke its protocol can wait for ever: threads still
    // closing after the grace are left to the process exit.
    let join_deadline = std::time::Instant::now() + config.stop_grace;
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
