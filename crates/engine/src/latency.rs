//! Lock-free per-thread latency recording and its merge into HdrHistograms.
//!
//! A [`LatencyRecorder`] belongs to one worker thread, which is its only writer: a
//! sample is a relaxed load and store of one bucket (no read-modify-write, no lock).
//! The reporting thread reads the buckets concurrently and turns the growth since its
//! previous read into an [`hdrhistogram::Histogram`] with [`LatencyRecorder::drain_into`].
//! Buckets follow HdrHistogram's layout at 3 significant digits over nanoseconds, so the
//! merged histogram is as exact as one recorded directly, from 1 ns up to one hour.
//!
//! The bucket array is allocated zeroed and only touched where samples land, so a
//! thread costs a few pages of resident memory even though its array spans 1 ns–1 h.
//! Buckets are 32-bit so that each power of two of latency costs one page, not two;
//! the reader takes differences with wrapping arithmetic, which stays exact as long as
//! it looks more often than every 2^32 samples of one bucket (the engine drains every
//! second).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use hdrhistogram::Histogram;

/// Largest latency recorded exactly: one hour, in nanoseconds. Longer ones are clamped.
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;
/// Significant digits kept.
pub const SIGNIFICANT_DIGITS: u8 = 3;

// HdrHistogram geometry for lowest value 1 and 3 significant digits:
// 2048 sub-buckets (2 * 10^3 rounded up to a power of two), half of them per bucket
// after the first, one bucket per power of two above 2048.
const SUB_BUCKET_COUNT_MAGNITUDE: u32 = 11;
const SUB_BUCKET_HALF_COUNT_MAGNITUDE: u32 = SUB_BUCKET_COUNT_MAGNITUDE - 1;
const SUB_BUCKET_HALF_COUNT: u64 = 1 << SUB_BUCKET_HALF_COUNT_MAGNITUDE;
const SUB_BUCKET_MASK: u64 = (1 << SUB_BUCKET_COUNT_MAGNITUDE) - 1;
const LEADING_ZERO_COUNT_BASE: u32 = 64 - SUB_BUCKET_COUNT_MAGNITUDE;

#[inline]
fn index_of(value: u64) -> usize {
    let bucket = LEADING_ZERO_COUNT_BASE - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = value >> bucket;
    (((bucket as u64 + 1) << SUB_BUCKET_HALF_COUNT_MAGNITUDE) + sub_bucket - SUB_BUCKET_HALF_COUNT)
        as usize
}

/// The lowest value that lands in bucket `index`.
#[inline]
fn value_of(index: usize) -> u64 {
    let index = index as u64;
    let mut bucket = (index >> SUB_BUCKET_HALF_COUNT_MAGNITUDE) as i64 - 1;
    let mut sub_bucket = (index & (SUB_BUCKET_HALF_COUNT - 1)) + SUB_BUCKET_HALF_COUNT;
    if bucket < 0 {
        sub_bucket -= SUB_BUCKET_HALF_COUNT;
        bucket = 0;
    }
    sub_bucket << bucket
}

fn bucket_len() -> usize {
    index_of(MAX_LATENCY_NS) + 1
}

/// A fresh, empty histogram with the geometry every bmk latency histogram uses.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGNIFICANT_DIGITS)
        .expect("constant bounds are valid")
}

/// Latency buckets written by one thread, or (made with
/// [`new_shared`](LatencyRecorder::new_shared)) by several.
pub struct LatencyRecorder {
    buckets: *mut AtomicU32,
    len: usize,
    /// Several writers: buckets are bumped with atomic adds instead of load+store.
    shared: bool,
    /// Lowest and highest bucket index ever written, so readers scan only that span.
    lowest: AtomicUsize,
    highest: AtomicUsize,
}

// SAFETY: the bucket array is only accessed through atomics; the raw pointer is owned
// by the recorder and freed in Drop, so sharing the recorder across threads is sound.
unsafe impl Send for LatencyRecorder {}
unsafe impl Sync for LatencyRecorder {}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyRecorder {
    /// An empty recorder for a single writer thread.
    pub fn new() -> LatencyRecorder {
        Self::with_writers(false)
    }

    /// An empty recorder several threads may write at once.
    pub fn new_shared() -> LatencyRecorder {
        Self::with_writers(true)
    }

    fn with_writers(shared: bool) -> LatencyRecorder {
        let len = bucket_len();
        let layout = Layout::array::<AtomicU32>(len).expect("small constant layout");
        // SAFETY: layout has non-zero size; zeroed memory is a valid AtomicU32 array.
        // Zeroed allocation (calloc/mmap) leaves untouched pages non-resident.
        let buckets = unsafe { alloc_zeroed(layout) } as *mut AtomicU32;
        if buckets.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        LatencyRecorder {
            buckets,
            len,
            shared,
            lowest: AtomicUsize::new(usize::MAX),
            highest: AtomicUsize::new(0),
        }
    }

    #[inline]
    fn bucket(&self, index: usize) -> &AtomicU32 {
        debug_assert!(index < self.len);
        // SAFETY: index < len (clamped by callers) and the array lives as long as self.
        unsafe { &*self.buckets.add(index) }
    }

    /// Records one latency. A recorder made with [`new`](LatencyRecorder::new) must
    /// only be written by its owning thread.
    #[inline]
    pub fn record(&self, nanos: u64) {
        let index = index_of(nanos.min(MAX_LATENCY_NS));
        let bucket = self.bucket(index);
        if self.shared {
            bucket.fetch_add(1, Ordering::Relaxed);
            if index < self.lowest.load(Ordering::Relaxed) {
                self.lowest.fetch_min(index, Ordering::Relaxed);
            }
            if index > self.highest.load(Ordering::Relaxed) {
                self.highest.fetch_max(index, Ordering::Relaxed);
            }
            return;
        }
        // Single writer: a plain load+store is enough and avoids a locked instruction.
        bucket.store(
            bucket.load(Ordering::Relaxed).wrapping_add(1),
            Ordering::Relaxed,
        );
        if index < self.lowest.load(Ordering::Relaxed) {
            self.lowest.store(index, Ordering::Relaxed);
        }
        if index > self.highest.load(Ordering::Relaxed) {
            self.highest.store(index, Ordering::Relaxed);
        }
    }

    /// Adds to `into` every sample recorded since the previous call with the same
    /// `mark` (which remembers what was already taken; a shared recorder hands its
    /// counts over instead and leaves `mark` untouched), and returns how many.
    pub fn drain_into(&self, mark: &mut DrainMark, into: &mut Histogram<u64>) -> u64 {
        let lowest = self.lowest.load(Ordering::Relaxed);
        let highest = self.highest.load(Ordering::Relaxed);
        if lowest == usize::MAX {
            return 0;
        }
        let mut total = 0;
        if self.shared {
            // Writers of a shared recorder use atomic adds, so taking each bucket's count
            // with a swap to zero counts every sample exactly once and needs no copy of
            // the counts: with thousands of workers the copies cost more than the
            // recorders themselves.
            for index in lowest..=highest {
                let bucket = self.bucket(index);
                if bucket.load(Ordering::Relaxed) == 0 {
                    continue;
                }
                let delta = bucket.swap(0, Ordering::Relaxed) as u64;
                if delta > 0 {
                    into.record_n(value_of(index), delta)
                        .expect("value within histogram bounds");
                    total += delta;
                }
            }
            return total;
        }
        mark.cover(lowest, highest);
        let base = mark.base;
        for (offset, seen) in mark.seen.iter_mut().enumerate().skip(lowest - base) {
            let index = base + offset;
            if index > highest {
                break;
            }
            let now = self.bucket(index).load(Ordering::Relaxed);
            let delta = now.wrapping_sub(*seen) as u64;
            if delta > 0 {
                *seen = now;
                into.record_n(value_of(index), delta)
                    .expect("value within histogram bounds");
                total += delta;
            }
        }
        total
    }
}

/// What a drainer has already taken from one recorder: the bucket counts it saw last,
/// kept only for the recorder's touched index range `[base, base + seen.len())` — with
/// thousands of workers a full-size copy per recorder would cost more memory than the
/// workers themselves.
#[derive(Debug, Default, Clone)]
pub struct DrainMark {
    base: usize,
    seen: Vec<u32>,
}

impl DrainMark {
    /// Extends the covered range to `[lowest, highest]`. Buckets newly covered were
    /// never drained, so their last-seen count is 0.
    fn cover(&mut self, lowest: usize, highest: usize) {
        if self.seen.is_empty() {
            self.base = lowest;
            self.seen.resize(highest - lowest + 1, 0);
            return;
        }
        if lowest < self.base {
            let extra = self.base - lowest;
            self.seen.splice(0..0, std::iter::repeat_n(0, extra));
            self.base = lowest;
        }
        let end = highest + 1 - self.base;
        if self.seen.len() < end {
            self.seen.resize(end, 0);
        }
    }
}

impl Drop for LatencyRecorder {
    fn drop(&mut self) {
        let layout = Layout::array::<AtomicU32>(self.len).expect("same layout as alloc");
        // SAFETY: allocated in `new` with this exact layout.
        unsafe { dealloc(self.buckets as *mut u8, layout) }
    }
}

/// The value at `percentile` (0–100) in nanoseconds, clamped to the exact `[min, max]`
/// so a percentile never reads below the minimum or above the maximum.
pub fn percentile_ns(hist: &Histogram<u64>, percentile: f64, min: u64, max: u64) -> u64 {
    if hist.is_empty() {
        return 0;
    }
    let v = hist.value_at_quantile((percentile / 100.0).clamp(0.0, 1.0));
    v.clamp(min, max.max(min))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_hdrhistogram_precision() {
        let mut h = new_histogram();
        for v in [
            1u64,
            999,
            1000,
            1001,
            2047,
            2048,
            123_456,
            9_999_999,
            MAX_LATENCY_NS,
        ] {
            let i = index_of(v);
            let low = value_of(i);
            assert!(low <= v, "{v}: bucket starts at {low}");
            assert!(h.equivalent(low, v), "{v} and {low} not equivalent");
            h.record(low).unwrap();
        }
    }

    #[test]
    fn drain_takes_only_new_samples() {
        let r = LatencyRecorder::new();
        let mut seen = DrainMark::default();
        let mut h = new_histogram();
        for v in [1_000u64, 2_000, 2_000, 1_000_000] {
            r.record(v);
        }
        assert_eq!(r.drain_into(&mut seen, &mut h), 4);
        assert_eq!(h.len(), 4);
        let mut h2 = new_histogram();
        assert_eq!(r.drain_into(&mut seen, &mut h2), 0);
        r.record(5_000);
        assert_eq!(r.drain_into(&mut seen, &mut h2), 1);
        assert!(h2.equivalent(h2.max(), 5_000));
        // A sample below everything seen so far widens the mark downwards.
        r.record(10);
        r.record(3_000_000);
        let mut h3 = new_histogram();
        assert_eq!(r.drain_into(&mut seen, &mut h3), 2);
        assert_eq!(r.drain_into(&mut seen, &mut h3), 0);
        assert_eq!(h3.len(), 2);
    }

    #[test]
    fn a_wrapped_bucket_still_yields_the_right_delta() {
        let r = LatencyRecorder::new();
        r.record(1_000);
        r.record(1_000);
        // Pretend the reader last saw this bucket just below the 32-bit limit: the
        // counter has since wrapped to 2, so 3 samples are new.
        let mut seen = DrainMark {
            base: index_of(1_000),
            seen: vec![u32::MAX],
        };
        let mut h = new_histogram();
        assert_eq!(r.drain_into(&mut seen, &mut h), 3);
    }

    #[test]
    fn a_shared_recorder_counts_every_writer() {
        let r = std::sync::Arc::new(LatencyRecorder::new_shared());
        let writers: Vec<_> = (0..4)
            .map(|i| {
                let r = r.clone();
                std::thread::spawn(move || {
                    for n in 0..10_000u64 {
                        r.record(1_000 + (n % 7) * 1_000 * (i + 1));
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        let mut h = new_histogram();
        assert_eq!(r.drain_into(&mut DrainMark::default(), &mut h), 40_000);
    }

    #[test]
    fn draining_a_shared_recorder_while_it_is_written_counts_each_sample_once() {
        let r = std::sync::Arc::new(LatencyRecorder::new_shared());
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writers: Vec<_> = (0..3)
            .map(|i| {
                let r = r.clone();
                std::thread::spawn(move || {
                    for n in 0..200_000u64 {
                        r.record(500 + (n % 13) * 700 * (i + 1));
                    }
                })
            })
            .collect();
        let drainer = {
            let (r, done) = (r.clone(), done.clone());
            std::thread::spawn(move || {
                let mut h = new_histogram();
                let mut mark = DrainMark::default();
                let mut total = 0;
                while !done.load(Ordering::Relaxed) {
                    total += r.drain_into(&mut mark, &mut h);
                }
                total += r.drain_into(&mut mark, &mut h);
                assert!(mark.seen.is_empty(), "a shared recorder keeps no copy");
                (total, h.len())
            })
        };
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        let (total, recorded) = drainer.join().unwrap();
        assert_eq!(total, 600_000);
        assert_eq!(recorded, 600_000);
    }

    #[test]
    fn percentiles_are_clamped_to_min_and_max() {
        let mut h = new_histogram();
        h.record(1_234_567).unwrap();
        let p = percentile_ns(&h, 95.0, 1_234_567, 1_234_567);
        assert_eq!(p, 1_234_567);
    }
}
