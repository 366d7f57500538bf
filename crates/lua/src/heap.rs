//! The memory allocator of every Lua state.
//!
//! With thousands of workers, what a state costs is mostly its many small objects
//! (strings, tables, closures, prototypes). Through the C allocator each pays a chunk
//! header and 16-byte rounding, and whatever a state frees while loading (compiler
//! temporaries, collected garbage) stays cached in its thread's malloc cache, where no
//! other thread can reuse it. Lua tells the allocator the size of every block it
//! frees, so small blocks here carry no header: they come from size classes 8 bytes
//! apart, carved from per-state 4 KiB spans (so states do not share cache lines), and
//! freed blocks go to a small per-state cache and beyond it to process-wide free lists,
//! where the next state to load picks them up. [`StateHeap::trim`] hands a state's
//! cache over once it is loaded. Large blocks use the C allocator.
//!
//! Memory of small blocks is never returned to the system; it is reused by every state
//! for the life of the process.

use std::alloc::{alloc, handle_alloc_error, Layout};
use std::os::raw::c_void;
use std::ptr;
use std::sync::Mutex;

use mlua::ffi;

/// Block sizes are multiples of this. LuaJIT's own allocator guarantees only 8-byte
/// alignment too, and the FFI aligns stricter cdata itself.
const GRANULE: usize = 8;
/// Largest block served by size classes; larger ones go to `malloc`.
const SMALL_MAX: usize = 1024;
const CLASSES: usize = SMALL_MAX / GRANULE;
/// What a state takes from the shared chunk at a time.
const SPAN: usize = 4096;
/// Shared chunks: virtual memory, resident only as spans are used.
const CHUNK: usize = 1 << 20;
/// Per-state cache of freed blocks, so steady-state churn does not take locks.
const CACHE_MAX_BLOCKS: u16 = 32;
const CACHE_MAX_BYTES: usize = 8 * 1024;
/// Classes the per-state cache covers: blocks up to 256 bytes, where nearly all the
/// churn of a running script is (strings, small tables, cdata). Larger blocks go
/// straight to the shared lists; a cache slot for every class would add ~1 KiB to
/// each of thousands of states.
const CACHED_CLASSES: usize = 256 / GRANULE;

/// A free block: its first word links to the next one.
struct FreeBlock {
    next: *mut FreeBlock,
}

/// A free list; raw pointers into chunks that live for the whole process.
struct FreeList(*mut FreeBlock);
// SAFETY: the blocks are plain memory owned by the pool; the list moves between
// threads only under its mutex.
unsafe impl Send for FreeList {}

/// One class's shared free list, on its own cache line so that threads working on
/// different classes do not contend.
#[repr(align(64))]
struct SharedList(Mutex<FreeList>);

struct Pool {
    lists: [SharedList; CLASSES],
    /// Unused part of the current chunk: (next, end).
    chunk: Mutex<(usize, usize)>,
}

static POOL: Pool = Pool {
    lists: [const { SharedList(Mutex::new(FreeList(ptr::null_mut()))) }; CLASSES],
    chunk: Mutex::new((0, 0)),
};

impl Pool {
    fn pop(&self, class: usize) -> *mut u8 {
        let mut list = self.lists[class]
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let block = list.0;
        if !block.is_null() {
            // SAFETY: blocks on the list are free and at least one word long.
            list.0 = unsafe { (*block).next };
        }
        block.cast()
    }

    fn push(&self, class: usize, block: *mut u8) {
        let block = block.cast::<FreeBlock>();
        let mut list = self.lists[class]
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // SAFETY: the caller gives up `block`, a free block of this class.
        unsafe { (*block).next = list.0 };
        list.0 = block;
    }

    /// A fresh span of `SPAN` bytes.
    fn span(&self) -> (usize, usize) {
        let mut chunk = self.chunk.lock().unwrap_or_else(|p| p.into_inner());
        if chunk.1 - chunk.0 < SPAN {
            let layout = Layout::from_size_align(CHUNK, SPAN).expect("constant layout");
            // SAFETY: non-zero size. Never freed: the pool lives as long as the process.
            let base = unsafe { alloc(layout) };
            if base.is_null() {
                handle_alloc_error(layout);
            }
            *chunk = (base as usize, base as usize + CHUNK);
        }
        let span = (chunk.0, chunk.0 + SPAN);
        chunk.0 += SPAN;
        span
    }
}

#[inline]
fn class_of(size: usize) -> usize {
    (size - 1) / GRANULE
}

#[inline]
fn class_size(class: usize) -> usize {
    (class + 1) * GRANULE
}

/// The allocator state of one Lua state: its free-block cache and current span.
///
/// Used only by the thread running that Lua state, like the state itself.
pub(crate) struct StateHeap {
    cache: [*mut FreeBlock; CACHED_CLASSES],
    cached: [u16; CACHED_CLASSES],
    cached_bytes: usize,
    span: (usize, usize),
}

impl StateHeap {
    fn new() -> StateHeap {
        StateHeap {
            cache: [ptr::null_mut(); CACHED_CLASSES],
            cached: [0; CACHED_CLASSES],
            cached_bytes: 0,
            span: (0, 0),
        }
    }

    fn alloc_small(&mut self, class: usize) -> *mut u8 {
        let block = self.cache.get(class).copied().unwrap_or(ptr::null_mut());
        if !block.is_null() {
            // SAFETY: cached blocks are free and at least one word long.
            self.cache[class] = unsafe { (*block).next };
            self.cached[class] -= 1;
            self.cached_bytes -= class_size(class);
            return block.cast();
        }
        let block = POOL.pop(class);
        if !block.is_null() {
            return block;
        }
        let size = class_size(class);
        if self.span.1 - self.span.0 < size {
            // The tail of the old span is too small for this block; hand it out in
            // pieces of the largest classes that fit rather than lose it.
            self.release_span_tail();
            self.span = POOL.span();
        }
        let block = self.span.0 as *mut u8;
        self.span.0 += size;
        block
    }

    fn free_small(&mut self, class: usize, block: *mut u8) {
        let size = class_size(class);
        if class < CACHED_CLASSES
            && self.cached[class] < CACHE_MAX_BLOCKS
            && self.cached_bytes + size <= CACHE_MAX_BYTES
        {
            let block = block.cast::<FreeBlock>();
            // SAFETY: Lua gives up `block`, a block of this class.
            unsafe { (*block).next = self.cache[class] };
            self.cache[class] = block;
            self.cached[class] += 1;
            self.cached_bytes += size;
        } else {
            POOL.push(class, block);
        }
    }

    fn release_span_tail(&mut self) {
        let mut rest = self.span.1 - self.span.0;
        while rest >= GRANULE {
            let size = rest.min(SMALL_MAX);
            POOL.push(class_of(size), self.span.0 as *mut u8);
            self.span.0 += size;
            rest -= size;
        }
        self.span = (0, 0);
    }

    /// Gives the cached free blocks and the unused rest of the current span to the
    /// shared pool, for other states to use.
    pub(crate) fn trim(&mut self) {
        self.release_span_tail();
        for class in 0..CACHED_CLASSES {
            let mut block = std::mem::replace(&mut self.cache[class], ptr::null_mut());
            while !block.is_null() {
                // SAFETY: cached blocks are free; read the link before handing it over.
                let next = unsafe { (*block).next };
                POOL.push(class, block.cast());
                block = next;
            }
            self.cached[class] = 0;
        }
        self.cached_bytes = 0;
    }
}

impl Drop for StateHeap {
    fn drop(&mut self) {
        self.trim();
    }
}

/// The `lua_Alloc` function of every state; `ud` is its [`StateHeap`]. A panic must not
/// unwind into LuaJIT (see `ffi_panic.rs`): it answers null, an allocation failure,
/// which LuaJIT raises as "not enough memory" in the Lua call that asked.
unsafe extern "C" fn lua_alloc(
    ud: *mut c_void,
    block: *mut c_void,
    osize: usize,
    nsize: usize,
) -> *mut c_void {
    // SAFETY: forwarded from LuaJIT, which keeps the lua_Alloc contract.
    crate::ffi_panic::guarded("lua_alloc", || unsafe {
        reallocate(ud, block, osize, nsize)
    })
    .unwrap_or(ptr::null_mut())
}

/// The body of [`lua_alloc`].
///
/// # Safety
/// The `lua_Alloc` contract: `ud` is the state's [`StateHeap`], `block` null or a
/// block of `osize` bytes this heap handed out.
#[inline(always)]
unsafe fn reallocate(
    ud: *mut c_void,
    block: *mut c_void,
    osize: usize,
    nsize: usize,
) -> *mut c_void {
    // SAFETY: `ud` is the StateHeap given to lua_newstate, used by one thread at a time
    // like its state.
    let heap = unsafe { &mut *ud.cast::<StateHeap>() };
    let block = block.cast::<u8>();
    // Lua passes the block's true size as `osize` whenever `block` is not null.
    let old_small = !block.is_null() && osize <= SMALL_MAX;
    if nsize == 0 {
        if old_small {
            heap.free_small(class_of(osize.max(1)), block);
        } else if !block.is_null() {
            // SAFETY: a large block came from malloc.
            unsafe { libc::free(block.cast()) };
        }
        return ptr::null_mut();
    }
    if block.is_null() {
        return if nsize <= SMALL_MAX {
            heap.alloc_small(class_of(nsize)).cast()
        } else {
            // SAFETY: plain malloc; null on failure is what Lua expects.
            unsafe { libc::malloc(nsize) }
        };
    }
    if !old_small && nsize > SMALL_MAX {
        // SAFETY: a large block came from malloc.
        return unsafe { libc::realloc(block.cast(), nsize) };
    }
    if old_small && nsize <= SMALL_MAX && class_of(osize.max(1)) == class_of(nsize) {
        return block.cast();
    }
    let new = if nsize <= SMALL_MAX {
        heap.alloc_small(class_of(nsize))
    } else {
        // SAFETY: plain malloc.
        unsafe { libc::malloc(nsize) }.cast()
    };
    if new.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: both blocks are at least min(osize, nsize) long and distinct.
    unsafe { ptr::copy_nonoverlapping(block, new, osize.min(nsize)) };
    if old_small {
        heap.free_small(class_of(osize.max(1)), block);
    } else {
        // SAFETY: a large block came from malloc.
        unsafe { libc::free(block.cast()) };
    }
    new.cast()
}

/// A raw Lua state using a [`StateHeap`]; closes the state and releases its heap on
/// drop. Every `mlua` handle to the state must be gone by then.
pub(crate) struct OwnedState {
    state: *mut ffi::lua_State,
    heap: *mut StateHeap,
}

impl OwnedState {
    /// A new empty state (no libraries), or `None` if LuaJIT refuses one.
    pub(crate) fn new() -> Option<OwnedState> {
        let heap = Box::into_raw(Box::new(StateHeap::new()));
        // SAFETY: lua_alloc follows the lua_Alloc contract; `heap` outlives the state
        // (freed in Drop after lua_close).
        let state = unsafe { ffi::lua_newstate(lua_alloc, heap.cast()) };
        if state.is_null() {
            // SAFETY: from Box::into_raw above, not shared with anything.
            drop(unsafe { Box::from_raw(heap) });
            return None;
        }
        Some(OwnedState { state, heap })
    }

    pub(crate) fn as_ptr(&self) -> *mut ffi::lua_State {
        self.state
    }

    /// See [`StateHeap::trim`].
    pub(crate) fn trim(&self) {
        // SAFETY: the heap is only used by the thread owning this state, which is the
        // caller: Lua is not running an allocation right now.
        unsafe { (*self.heap).trim() }
    }
}

impl Drop for OwnedState {
    fn drop(&mut self) {
        // SAFETY: the state was made by lua_newstate and is closed once; its heap is
        // released after the last block went back to it.
        unsafe {
            ffi::lua_close(self.state);
            drop(Box::from_raw(self.heap));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_reused_and_realloc_keeps_contents() {
        let mut heap = StateHeap::new();
        let ud = (&mut heap as *mut StateHeap).cast::<c_void>();
        unsafe {
            let a = lua_alloc(ud, ptr::null_mut(), 0, 24).cast::<u8>();
            assert_eq!(a as usize % GRANULE, 0);
            for i in 0..24 {
                *a.add(i) = i as u8;
            }
            // Same class: same block.
            assert_eq!(lua_alloc(ud, a.cast(), 24, 21).cast::<u8>(), a);
            let b = lua_alloc(ud, a.cast(), 21, 4000).cast::<u8>();
            let c = lua_alloc(ud, b.cast(), 4000, 100).cast::<u8>();
            for i in 0..21 {
                assert_eq!(*c.add(i), i as u8);
            }
            lua_alloc(ud, c.cast(), 100, 0);
            let d = lua_alloc(ud, ptr::null_mut(), 0, 97);
            assert_eq!(
                d.cast::<u8>(),
                c,
                "the freed block of the class comes back first"
            );
            lua_alloc(ud, d, 97, 0);
        }
    }
}
