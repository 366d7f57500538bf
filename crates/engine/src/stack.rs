//! Giving back the thread-stack pages a worker touched only while it was set up.
//!
//! Setting a worker up (loading a Lua state, connecting) runs much deeper than its
//! event loop does afterwards; the pages it touched stay resident for the life of the
//! thread. With a thousand workers that is several MiB for nothing, so after
//! `create_worker`, and again once its first events (interpreted Lua, JIT compilation)
//! are behind it, a worker releases the stack below its current frame. The memory stays
//! mapped: a page touched again later comes back zero-filled, like any fresh stack page.

/// Bytes kept below this function's frame: the `madvise` call's own frames live there
/// while it runs (they take a few hundred bytes).
const MARGIN: usize = 1024;

thread_local! {
    /// Lowest usable address of the stack of the event-loop coroutine running on this
    /// thread (0 outside one).
    static COROUTINE_STACK_LIMIT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Tells [`release_unused_stack`] that code on this thread now runs on a coroutine's
/// stack whose lowest usable address is `limit` (0: on the thread's own stack again).
pub(crate) fn set_coroutine_stack(limit: usize) {
    COROUTINE_STACK_LIMIT.with(|l| l.set(limit));
}

/// Releases the calling thread's stack pages below its current frame (minus a margin),
/// or those of the event-loop coroutine it runs on.
/// Returns the bytes handed back (0 where the stack bounds are unknown).
#[inline(never)]
pub(crate) fn release_unused_stack() -> usize {
    let here = 0u8;
    let sp = std::hint::black_box(&here) as *const u8 as usize;
    let low = match stack_bounds() {
        Some((low, high)) if (low..high).contains(&sp) => low,
        // On a worker coroutine's stack: the pages below its frame are its own.
        _ => match COROUTINE_STACK_LIMIT.with(|l| l.get()) {
            limit if limit != 0 && limit < sp => limit,
            _ => return 0,
        },
    };
    let page = page_size();
    let end = sp.saturating_sub(MARGIN) & !(page - 1);
    let start = (low + page - 1) & !(page - 1);
    if end <= start {
        return 0;
    }
    // SAFETY: [start, end) lies inside this thread's own stack mapping, below every
    // live frame (the margin covers this function's callees); MADV_DONTNEED on private
    // anonymous memory only makes the pages read back as zero when next touched.
    let rc = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
    if rc == 0 {
        end - start
    } else {
        0
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}

/// The calling thread's stack: lowest usable address and end.
fn stack_bounds() -> Option<(usize, usize)> {
    // SAFETY: pthread_getattr_np fills an attribute object we own and destroy; the
    // stack address and size it reports describe the calling thread's stack.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let rc = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (rc == 0 && !addr.is_null()).then_some((addr as usize, addr as usize + size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn touch_deep(depth: usize) -> u64 {
        let mut buf = [0u8; 4096];
        std::hint::black_box(&mut buf)[depth % 4096] = depth as u8;
        if depth == 0 {
            return buf[0] as u64;
        }
        touch_deep(depth - 1) + std::hint::black_box(&buf)[depth % 4096] as u64
    }

    fn resident_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    #[test]
    fn deep_pages_are_given_back_and_usable_again() {
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(|| {
                // ~2 MiB of stack touched, then released.
                touch_deep(500);
                let before = resident_kib();
                let released = release_unused_stack();
                let after = resident_kib();
                assert!(released >= 1 << 20, "released only {released} bytes");
                // Other test threads allocate meanwhile; the stack's 2 MiB dominates.
                assert!(
                    before.saturating_sub(after) >= 1024,
                    "RSS {before} KiB -> {after} KiB"
                );
                // The released pages work as fresh stack again.
                assert_eq!(touch_deep(500), touch_deep(500));
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
