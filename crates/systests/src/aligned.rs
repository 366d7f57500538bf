//! Page-aligned byte buffers: I/O buffers that `O_DIRECT` accepts, and memory-test
//! buffers from the heap or from the HugeTLB pool.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

/// The alignment of every buffer: a page, which satisfies `O_DIRECT` on any device.
pub(crate) const ALIGN: usize = 4096;

/// A zero-initialised, [`ALIGN`]-aligned buffer that owns its memory.
pub(crate) struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    source: Source,
}

enum Source {
    Heap(Layout),
    /// An anonymous mapping of this many bytes.
    Mapping(usize),
}

// SAFETY: the buffer owns its memory exclusively, like a `Box<[u8]>`; shared access
// goes through `&self` methods that only hand out atomics or read-only views.
unsafe impl Send for AlignedBuf {}
// SAFETY: see `Send`; `&AlignedBuf` gives no unsynchronised mutable access.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// `len` zero bytes from the heap (at least one byte is allocated).
    pub(crate) fn zeroed(len: usize) -> io::Result<AlignedBuf> {
        let layout = Layout::from_size_align(len.max(1), ALIGN)
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        Ok(AlignedBuf {
            ptr,
            len,
            source: Source::Heap(layout),
        })
    }

    /// `len` zero bytes backed by huge pages (the mapping is rounded up to 2 MiB).
    pub(crate) fn huge_pages(len: usize) -> io::Result<AlignedBuf> {
        const HUGE: usize = 2 << 20;
        let mapped = len.max(1).div_ceil(HUGE) * HUGE;
        // SAFETY: an anonymous private mapping with no address hint; the result is
        // checked before use and unmapped with the same length in `drop`.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(AlignedBuf {
            ptr: NonNull::new(ptr.cast()).expect("mmap never returns null on success"),
            len,
            source: Source::Mapping(mapped),
        })
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Start address, for system calls that fill the buffer.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `len` initialised (zeroed) bytes owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutably.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `len` initialised bytes owned exclusively through `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The whole 8-byte words of the buffer, mutably.
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: the start is 4096-aligned, the memory is initialised and owned
        // exclusively through `&mut self`; any bit pattern is a valid u64.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), self.len / 8) }
    }

    /// The whole 8-byte words as atomics, for a buffer that several threads use.
    pub(crate) fn atomic_words(&self) -> &[AtomicU64] {
        // SAFETY: AtomicU64 has u64's size and (on 64-bit targets) alignment, the start
        // is 4096-aligned, and shared access only ever goes through these atomics.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast(), self.len / 8) }
    }
}

/// An [`AlignedBuf`] that nothing writes any more: with no writer to race with, any
/// number of threads may read it with plain (vectorisable) loads.
pub(crate) struct FrozenBuf(AlignedBuf);

impl AlignedBuf {
    /// Gives up write access for good.
    pub(crate) fn freeze(self) -> FrozenBuf {
        FrozenBuf(self)
    }
}

impl FrozenBuf {
    /// The whole 8-byte words of the buffer.
    pub(crate) fn words(&self) -> &[u64] {
        let buf = &self.0;
        // SAFETY: the start is 4096-aligned and the memory initialised; `FrozenBuf`
        // owns the buffer and offers no way to write it, so shared plain reads cannot
        // race with a write.
        unsafe { std::slice::from_raw_parts(buf.ptr.as_ptr().cast(), buf.len / 8) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        match self.source {
            // SAFETY: allocated in `zeroed` with this layout.
            Source::Heap(layout) => unsafe { dealloc(self.ptr.as_ptr(), layout) },
            // SAFETY: mapped in `huge_pages` with this length.
            Source::Mapping(mapped) => unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), mapped);
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned_and_zeroed() {
        let mut b = AlignedBuf::zeroed(10_000).unwrap();
        assert_eq!(b.as_mut_ptr() as usize % ALIGN, 0);
        assert!(b.bytes().iter().all(|&x| x == 0));
        b.bytes_mut()[9_999] = 7;
        assert_eq!(b.words_mut().len(), 1250);
        assert_eq!(b.len(), 10_000);
        b.words_mut()[1] = 9;
        let frozen = b.freeze();
        assert_eq!(frozen.words().len(), 1250);
        assert_eq!(frozen.words()[1], 9);
    }
}
