//! The body of a worker on an OS thread of its own: create the worker (sysbench's
//! `thread_init`), wait for the start, run its events, finish (`thread_done`), and
//! tell the controller how it went. The event-loop counterpart, several workers on one
//! thread, is [`crate::coop`].

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::shared::Shared;
use crate::worker::{WorkerContext, WorkerError, Workload};

/// Runs worker `tid` of `test` on the calling thread, from creation to finish.
pub(crate) fn worker_main(tid: u32, shared: Arc<Shared>, test: Arc<dyn Workload>) {
    crate::rand::seed_thread(tid);
    let ctx = WorkerContext::new(tid, shared.clone());
    let _installed = ctx.install();
    let made = match catch_unwind(AssertUnwindSafe(|| test.create_worker(tid))) {
        Ok(made) => made.map_err(|e| e.message),
        Err(panic) => Err(WorkerError::from_panic(tid, panic).message),
    };
    crate::stack::release_unused_stack();
    let mut worker = match made {
        Ok(worker) => worker,
        Err(message) => {
            // The failure is recorded before the worker counts as initialised, so that
            // the controller sees a failed start rather than a complete one.
            shared.fail(message);
            shared.note_initialized(1);
            shared.note_finished(tid);
            return;
        }
    };
    shared.note_initialized(1);
    if !shared.wait_for_start() {
        // The run never started: like sysbench, no event and no `thread_done`; the
        // worker (and its connection) is dropped on the way out.
        shared.note_finished(tid);
        return;
    }
    let body = catch_unwind(AssertUnwindSafe(|| -> Result<(), WorkerError> {
        let ran = worker.run(&ctx);
        shared.note_events_done();
        ran?;
        worker.finish(&ctx)
    }));
    let failure = match body {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.message),
        Err(panic) => Some(WorkerError::from_panic(tid, panic).message),
    };
    if let Some(message) = failure {
        shared.fail(message);
    }
    shared.note_finished(tid);
}
