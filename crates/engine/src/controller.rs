//! The controller loop: what the controlling thread does between the workers' release
//! and the last worker's exit. It sleeps until the next thing due — the end of
//! warm-up, an intermediate report, a checkpoint, the time limit, the forced-shutdown
//! deadline — or until a worker finishes or fails, a signal arrives or the rate
//! scheduler finds its queue full, and hands each report's statistics to the
//! [`Observer`].

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
/// forced shutdown); `stats` collects what they measure, `handles` are their threads.
pub(crate) fn drive(
    shared: &Arc<Shared>,
    stats: &mut Collector,
    observer: &mut dyn Observer,
    interrupt: &AtomicUsize,
    handles: &mut Vec<thread::JoinHandle<()>>,
) -> RunStatus {
    let config = &shared.config;
    let threads = shared.slots.len() as u32;
    let released = shared.now_ns();

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
                }
            }
        }
        if let Some(deadline) = forced_deadline {
            if now >= deadline {
                stats.end_at(now);
                return RunStatus::ForcedShutdown;
            }
        }
        if warming && now >= measure_from {
            warming = false;
            stats.rebase();
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
                forced_deadline = config.forced_shutdown.map(|d| limit + d.as_nanos() as u64);
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
    stats.end_at(shared.now_ns());
    shared.stop();
    for h in handles.drain(..) {
        shared.clock.join(h);
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
    status
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
