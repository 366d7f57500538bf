//! Values the C entry points keep between calls, one per worker of the calling thread.
//!
//! The workers of an event loop share their thread, so a plain thread-local would mix
//! their failures; each value is keyed by the worker running at the time (`None`
//! outside a run, on the main state's thread). A thread holds a handful of workers'
//! values at the most, and most of the time none, so a short vector searched in order
//! is all it takes.

use std::cell::RefCell;

use bmk_engine::with_current;

/// The worker running on this thread (`None` outside a run).
#[inline]
pub(crate) fn current_worker() -> Option<u32> {
    with_current(|ctx| ctx.thread_id())
}

/// One `T` per worker of a thread, in a `thread_local!`.
pub(crate) struct WorkerSlots<T>(RefCell<Vec<(Option<u32>, T)>>);

impl<T> WorkerSlots<T> {
    pub(crate) const fn new() -> Self {
        WorkerSlots(RefCell::new(Vec::new()))
    }

    /// Whether no worker of this thread holds a value (a cheap test before the
    /// worker is looked up).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }

    /// Takes `worker`'s value, leaving none.
    pub(crate) fn take(&self, worker: Option<u32>) -> Option<T> {
        let mut slots = self.0.borrow_mut();
        let at = slots.iter().position(|(w, _)| *w == worker)?;
        Some(slots.swap_remove(at).1)
    }

    /// Sets `worker`'s value, replacing the one it had.
    pub(crate) fn put(&self, worker: Option<u32>, value: T) {
        let mut slots = self.0.borrow_mut();
        slots.retain(|(w, _)| *w != worker);
        slots.push((worker, value));
    }

    /// Sets `worker`'s value, or changes the one it has with `change`.
    pub(crate) fn set_or_change(&self, worker: Option<u32>, value: T, change: impl FnOnce(&mut T)) {
        let mut slots = self.0.borrow_mut();
        match slots.iter_mut().find(|(w, _)| *w == worker) {
            Some((_, held)) => change(held),
            None => slots.push((worker, value)),
        }
    }

    /// Sets `worker`'s value unless it has one already (the first one counts).
    pub(crate) fn keep_first(&self, worker: Option<u32>, value: T) {
        self.set_or_change(worker, value, |_first| {});
    }
}
