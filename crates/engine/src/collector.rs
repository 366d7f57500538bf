//! The controller's side of the statistics: what it has already taken from the
//! workers' recorders and slots, and the differences that make an interval's report, a
//! checkpoint's and the final one.
//!
//! Statistics are pulled from the workers' [`ThreadSlot`]s and latency recorders
//! without stopping them; a checkpoint ends one span and starts the next in the same
//! drain, so that nothing done while its report prints is lost between the two.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use hdrhistogram::Histogram;

use crate::latency::{new_histogram, DrainMark};
use crate::shared::{Shared, ThreadSlot};
use crate::stats::{Counters, CumulativeStats, IntervalStats, LagStats, ThreadTotals};

/// Snapshot of one worker's cumulative counters, for differences.
#[derive(Clone, Copy, Default)]
struct SlotMark {
    events: u64,
    latency_sum: u64,
    lag_sum: u64,
    counters: Counters,
}

impl SlotMark {
    fn of(slot: &ThreadSlot) -> SlotMark {
        SlotMark {
            events: slot.events.load(Ordering::Relaxed),
            latency_sum: slot.latency_sum.load(Ordering::Relaxed),
            lag_sum: slot.lag_sum.load(Ordering::Relaxed),
            counters: slot.counters(),
        }
    }
}

/// The controller's side of the statistics: what it has already taken from workers.
pub(crate) struct Collector {
    shared: Arc<Shared>,
    /// Per-recorder bucket counts already drained.
    seen: Vec<DrainMark>,
    /// Samples drained since the last interval report.
    pending: Histogram<u64>,
    /// Scratch for one drain.
    fresh: Histogram<u64>,
    /// Per-recorder number of samples drained so far, and its value at the cumulative
    /// baseline. Cumulative event counts come from these rather than from the workers'
    /// event counters, so that a report's event count and its histogram always agree
    /// even when an event ends while a checkpoint resets the statistics.
    drained: Vec<u64>,
    base_drained: Vec<u64>,
    /// Marks at the last interval report and at the cumulative baseline.
    interval_marks: Vec<SlotMark>,
    base_marks: Vec<SlotMark>,
    cumulative: Histogram<u64>,
    base_ns: u64,
    last_interval_ns: u64,
    /// Arrivals dropped (rate mode) before the cumulative baseline.
    base_dropped: u64,
    /// When the run ended, once it has: later statistics end there.
    end_ns: Option<u64>,
}

impl Collector {
    /// A collector of `shared`'s statistics, its baseline now.
    pub(crate) fn new(shared: Arc<Shared>) -> Collector {
        let n = shared.slots.len();
        let r = shared.recorders.len();
        Collector {
            seen: vec![DrainMark::default(); r],
            drained: vec![0; r],
            base_drained: vec![0; r],
            interval_marks: vec![SlotMark::default(); n],
            base_marks: vec![SlotMark::default(); n],
            cumulative: new_histogram(),
            pending: new_histogram(),
            fresh: new_histogram(),
            base_ns: shared.now_ns(),
            last_interval_ns: shared.now_ns(),
            end_ns: None,
            base_dropped: 0,
            shared,
        }
    }

    /// Moves new samples from every worker into the pending interval histogram and
    /// the cumulative one.
    pub(crate) fn drain(&mut self) {
        for ((recorder, seen), drained) in self
            .shared
            .recorders
            .iter()
            .zip(self.seen.iter_mut())
            .zip(self.drained.iter_mut())
        {
            *drained += recorder.drain_into(seen, &mut self.fresh);
        }
        self.pending
            .add(&self.fresh)
            .expect("same histogram geometry");
        self.cumulative
            .add(&self.fresh)
            .expect("same histogram geometry");
        self.fresh.reset();
    }

    /// Starts a new measured span, dropping what came before (the warm-up): the same
    /// restart as a checkpoint's, whose statistics nobody reports. The measured time
    /// counts from `at` (the nominal end of the warm-up, which a busy machine wakes up
    /// to a little late).
    pub(crate) fn rebase_at(&mut self, at: u64) {
        self.span(true);
        self.base_ns = self.base_ns.min(at);
    }

    /// Starts measuring at the workers' release, run-clock time `released`, like
    /// [`Collector::rebase_at`] except that what the workers counted before it (the
    /// queries of a script's `thread_init`) stays in the first interval and the totals,
    /// as sysbench counts it. The measured time counts from `released` itself, the
    /// instant the time limit and the report ticks count from: taken from the moment
    /// this runs (a little later), a run of `--time=1` measured 0.9998 s.
    pub(crate) fn start_at_release(&mut self, released: u64) {
        let before: Vec<Counters> = self.base_marks.iter().map(|m| m.counters).collect();
        self.span(true);
        self.base_ns = self.base_ns.min(released);
        self.last_interval_ns = self.base_ns;
        for (i, counters) in before.into_iter().enumerate() {
            self.base_marks[i].counters = counters;
            self.interval_marks[i].counters = counters;
        }
    }

    /// Statistics since the previous interval; `nominal_ns` is the report's scheduled
    /// time since the measured start, printed instead of the wake-up time so that a
    /// late wake-up on a busy machine does not show as `[ 0.51s ]`.
    pub(crate) fn interval(&mut self, nominal_ns: u64) -> IntervalStats {
        self.drain();
        let hist = std::mem::replace(&mut self.pending, new_histogram());
        let now = self.shared.now_ns();
        // An interval's event count is the number of latency samples it drained (one
        // per event), not the workers' event counters read a moment later: an event
        // ending between the two reads would otherwise count here but sit in the next
        // interval's histogram, and intervals merged from several clients must have
        // counts and histograms that agree.
        let events = hist.len();
        let mut counters = Counters::default();
        let mut running = 0;
        for (i, slot) in self.shared.slots.iter().enumerate() {
            let mark = SlotMark::of(slot);
            counters.add(&mark.counters.since(&self.interval_marks[i].counters));
            self.interval_marks[i] = mark;
            if !slot.is_finished() {
                running += 1;
            }
        }
        let stats = IntervalStats {
            time_total: nominal_ns as f64 / 1e9,
            time_interval: (now - self.last_interval_ns) as f64 / 1e9,
            threads_running: running,
            events,
            counters,
            histogram: hist,
            queue_length: self.shared.arrivals.as_ref().map_or(0, |q| q.len() as u64),
            concurrency: self.shared.concurrency.load(Ordering::Relaxed),
            rate_mode: self.shared.arrivals.is_some(),
        };
        self.last_interval_ns = now;
        stats
    }

    /// The statistics since the baseline (the measured start or the last checkpoint).
    pub(crate) fn cumulative(&mut self) -> CumulativeStats {
        self.span(false)
    }

    /// The statistics of the span since the last checkpoint, and a new span started
    /// exactly where they end — the same drain, the same counter marks, the extremes
    /// taken and reset in one swap — so that nothing done while the report prints is
    /// lost between the two spans.
    pub(crate) fn checkpoint(&mut self) -> CumulativeStats {
        self.span(true)
    }

    /// The statistics since the baseline; with `restart`, the baseline then moves to
    /// the point they were taken at.
    fn span(&mut self, restart: bool) -> CumulativeStats {
        self.drain();
        let now = self.end_ns.unwrap_or_else(|| self.shared.now_ns());
        let mut stats = CumulativeStats {
            time_total: now.saturating_sub(self.base_ns) as f64 / 1e9,
            events: 0,
            counters: Counters::default(),
            histogram: self.cumulative.clone(),
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            threads: Vec::with_capacity(self.shared.slots.len()),
            lag: None,
        };
        let mut lag_sum = 0;
        let mut lag_max = 0;
        let own_recorders = self.shared.recorder_per_worker();
        if !own_recorders {
            stats.events = (self.drained.iter())
                .zip(&self.base_drained)
                .map(|(d, b)| d - b)
                .sum();
        }
        for (i, slot) in self.shared.slots.iter().enumerate() {
            let mark = SlotMark::of(slot);
            let base = self.base_marks[i];
            let (min, max, slot_lag_max) = if restart {
                self.base_marks[i] = mark;
                self.interval_marks[i] = mark;
                (
                    slot.latency_min.swap(u64::MAX, Ordering::Relaxed),
                    slot.latency_max.swap(0, Ordering::Relaxed),
                    slot.lag_max.swap(0, Ordering::Relaxed),
                )
            } else {
                (
                    slot.latency_min.load(Ordering::Relaxed),
                    slot.latency_max.load(Ordering::Relaxed),
                    slot.lag_max.load(Ordering::Relaxed),
                )
            };
            // With shared recorders a worker's own event counter gives its share; the
            // total still comes from the histograms so that count and percentiles agree.
            let events = if own_recorders {
                let e = self.drained[i] - self.base_drained[i];
                stats.events += e;
                e
            } else {
                mark.events - base.events
            };
            let busy = mark.latency_sum - base.latency_sum;
            stats.sum_ns += busy;
            stats.counters.add(&mark.counters.since(&base.counters));
            stats.threads.push(ThreadTotals {
                events,
                busy_ns: busy,
            });
            if events > 0 {
                stats.min_ns = stats.min_ns.min(min);
                stats.max_ns = stats.max_ns.max(max);
            }
            lag_sum += mark.lag_sum - base.lag_sum;
            lag_max = lag_max.max(slot_lag_max);
        }
        let dropped = self.shared.arrivals.as_ref().map_or(0, |q| q.dropped());
        let span_dropped = dropped.saturating_sub(self.base_dropped);
        if restart {
            self.base_dropped = dropped;
            self.pending.reset();
            self.cumulative.reset();
            self.base_drained.clone_from(&self.drained);
            self.base_ns = now;
            self.last_interval_ns = now;
        }
        if stats.events == 0 {
            stats.min_ns = 0;
        } else if !stats.histogram.is_empty() {
            // A sample racing a checkpoint can miss the exact extremes; the histogram
            // bounds them to within its precision.
            if stats.min_ns == u64::MAX {
                stats.min_ns = stats.histogram.min();
            }
            if stats.max_ns == 0 {
                stats.max_ns = stats.histogram.max();
            }
        }
        if self.shared.arrivals.is_some() {
            stats.lag = Some(LagStats {
                mean_ns: if stats.events > 0 {
                    lag_sum as f64 / stats.events as f64
                } else {
                    0.0
                },
                max_ns: lag_max,
                dropped: span_dropped,
            });
        }
        stats
    }

    /// Ends the measured time at `end_ns`: statistics taken later (the final report's)
    /// cover the time up to there, not up to when they are taken.
    pub(crate) fn end_at(&mut self, end_ns: u64) {
        self.end_ns = Some(end_ns);
    }
}
