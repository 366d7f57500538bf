//! Panics in the C entry points that LuaJIT calls (`sb_*` in `ffi.rs`, `bmk_*` in
//! `sql.rs`, the allocator in `heap.rs`).
//!
//! A panic must not unwind into LuaJIT's frames: Rust aborts the process when one
//! reaches an `extern "C"` function, which would take every worker and the report
//! with it. Each entry point runs its body in [`guarded`] instead, which stops the
//! panic there and makes it that call's failure: an entry point with an error status
//! returns it (the `bmk_*` ones with the panic as the fatal SQL error the prelude then
//! raises as a Lua error). The panic is also kept for the Lua call from Rust that was
//! running ([`take_panic`]): `ScriptState::pcall` fails with it even when the entry
//! point had no status to say so, or the script caught the error, so that a panic
//! always ends the worker (or command) with its message.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::worker_slots::{current_worker, WorkerSlots};

thread_local! {
    /// The first panic caught for each worker of this thread (`None` outside a run)
    /// and not yet taken: the workers of an event loop share the thread.
    static CAUGHT: WorkerSlots<String> = const { WorkerSlots::new() };
}

/// Runs `body`, the body of entry point `entry`; a panic in it comes back as `Err`
/// with its message (and is kept for [`take_panic`]).
#[inline]
pub(crate) fn guarded<T>(entry: &'static str, body: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(body)).map_err(|payload| caught(entry, payload.as_ref()))
}

/// Keeps a caught panic for [`take_panic`]; its message.
#[cold]
fn caught(entry: &str, payload: &(dyn Any + Send)) -> String {
    let cause = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".into());
    let message = format!("internal error: {entry} panicked: {cause}");
    CAUGHT.with(|c| c.keep_first(current_worker(), message.clone()));
    message
}

/// The first panic an entry point caught for the calling worker (or, outside a run,
/// on this thread) since the last call, if any; forgets it and any later ones.
pub(crate) fn take_panic() -> Option<String> {
    CAUGHT.with(|c| {
        if c.is_empty() {
            return None;
        }
        c.take(current_worker())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_the_calls_error_and_is_kept_once() {
        assert_eq!(guarded("ok_entry", || 7), Ok(7));
        assert_eq!(take_panic(), None);
        let r: Result<i32, String> = guarded("bad_entry", || panic!("boom"));
        let message = "internal error: bad_entry panicked: boom";
        assert_eq!(r, Err(message.to_string()));
        let _ = guarded("worse_entry", || -> i32 { panic!("{}", 2) });
        assert_eq!(take_panic().as_deref(), Some(message));
        assert_eq!(take_panic(), None);
    }
}
