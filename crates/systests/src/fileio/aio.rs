//! Linux native asynchronous I/O (`io_setup`, `io_submit`, `io_getevents`), called
//! through raw system calls with the kernel's own structure layouts.
//!
//! One [`AioQueue`] belongs to one worker thread. It owns a buffer per request slot,
//! so the kernel never sees a buffer that is being reused, and it waits for every
//! request still in flight before it goes away.

use std::io;
use std::os::fd::RawFd;

use crate::aligned::AlignedBuf;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

/// `struct iocb` of `<linux/aio_abi.h>` (64 bytes; little-endian field order).
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: i32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

#[cfg(not(target_endian = "little"))]
compile_error!("the native AIO layout here is written for little-endian targets");

/// A finished request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Completion {
    /// Whether it was a write.
    pub(crate) write: bool,
    /// Bytes asked for.
    pub(crate) requested: u64,
    /// The kernel's result: bytes transferred, or a negative errno.
    pub(crate) result: i64,
}

/// A per-thread AIO context with a fixed number of request slots.
pub(crate) struct AioQueue {
    ctx: libc::c_ulong,
    iocbs: Box<[Iocb]>,
    buffers: Vec<AlignedBuf>,
    /// (write, length) of the request in each busy slot.
    busy: Vec<Option<(bool, u64)>>,
    free: Vec<usize>,
    events: Box<[IoEvent]>,
}

impl AioQueue {
    /// A context for `depth` requests, each with its own `buffer_size`-byte buffer
    /// filled by `fill`.
    pub(crate) fn new(
        depth: usize,
        buffer_size: usize,
        fill: impl Fn(&mut [u8]),
    ) -> io::Result<AioQueue> {
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context id into `ctx`.
        let rc = unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut buffers = Vec::with_capacity(depth);
        for _ in 0..depth {
            let mut b = AlignedBuf::zeroed(buffer_size)?;
            fill(b.bytes_mut());
            buffers.push(b);
        }
        Ok(AioQueue {
            ctx,
            iocbs: vec![Iocb::default(); depth].into_boxed_slice(),
            buffers,
            busy: vec![None; depth],
            free: (0..depth).rev().collect(),
            events: vec![IoEvent::default(); depth].into_boxed_slice(),
        })
    }

    /// Requests in flight.
    pub(crate) fn in_flight(&self) -> usize {
        self.iocbs.len() - self.free.len()
    }

    /// Whether every slot is busy.
    pub(crate) fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    /// Submits one read or write of `len` bytes at `offset`. The queue must not be
    /// full: wait for completions first.
    pub(crate) fn submit(
        &mut self,
        fd: RawFd,
        write: bool,
        offset: u64,
        len: usize,
    ) -> io::Result<()> {
        let slot = self.free.pop().expect("submit on a full queue");
        let buffer = &mut self.buffers[slot];
        debug_assert!(len <= buffer.len());
        self.iocbs[slot] = Iocb {
            data: slot as u64,
            opcode: if write {
                IOCB_CMD_PWRITE
            } else {
                IOCB_CMD_PREAD
            },
            fildes: fd as u32,
            buf: buffer.as_mut_ptr() as u64,
            nbytes: len as u64,
            offset: offset as i64,
            ..Iocb::default()
        };
        let mut ptr: *mut Iocb = &mut self.iocbs[slot];
        loop {
            // SAFETY: one valid iocb whose buffer (owned by `self`) stays alive and
            // untouched until its completion is reaped.
            let rc = unsafe {
                libc::syscall(libc::SYS_io_submit, self.ctx, 1 as libc::c_long, &mut ptr)
            };
            if rc == 1 {
                self.busy[slot] = Some((write, len as u64));
                return Ok(());
            }
            let err = if rc < 0 {
                io::Error::last_os_error()
            } else {
                io::Error::from(io::ErrorKind::WouldBlock)
            };
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            self.free.push(slot);
            return Err(err);
        }
    }

    /// Waits until at least `min` requests have finished (0 = do not wait) and hands
    /// each finished one to `done`.
    pub(crate) fn reap(
        &mut self,
        min: usize,
        mut done: impl FnMut(Completion),
    ) -> io::Result<usize> {
        let min = min.min(self.in_flight());
        let mut total = 0;
        while total < min || (min == 0 && total == 0) {
            let max = self.in_flight();
            if max == 0 {
                break;
            }
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let timeout: *const libc::timespec = if min == 0 { &zero } else { std::ptr::null() };
            // SAFETY: `events` has room for `max` <= depth entries.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    (min - total) as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    timeout,
                )
            };
            if rc < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(err);
            }
            for ev in &self.events[..rc as usize] {
                let slot = ev.data as usize;
                if let Some((write, requested)) = self.busy[slot].take() {
                    self.free.push(slot);
                    done(Completion {
                        write,
                        requested,
                        result: ev.res,
                    });
                }
            }
            total += rc as usize;
            if min == 0 {
                break;
            }
        }
        Ok(total)
    }
}

impl Drop for AioQueue {
    fn drop(&mut self) {
        // The kernel may still write into our buffers: wait for everything first.
        while self.in_flight() > 0 {
            if self.reap(1, |_| {}).is_err() {
                break;
            }
        }
        // SAFETY: destroys the context created in `new`.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;

    #[test]
    fn writes_then_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("aio");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.set_len(8192).unwrap();
        let mut q = AioQueue::new(2, 4096, |b| b.fill(0xab)).unwrap();
        q.submit(file.as_raw_fd(), true, 4096, 4096).unwrap();
        q.submit(file.as_raw_fd(), false, 0, 4096).unwrap();
        assert!(q.is_full());
        let mut seen = Vec::new();
        while q.in_flight() > 0 {
            q.reap(1, |c| seen.push(c)).unwrap();
        }
        seen.sort_by_key(|c| c.write);
        assert_eq!(
            seen,
            [
                Completion {
                    write: false,
                    requested: 4096,
                    result: 4096
                },
                Completion {
                    write: true,
                    requested: 4096,
                    result: 4096
                },
            ]
        );
        let mut back = [0u8; 4096];
        file.read_exact_at(&mut back, 4096).unwrap();
        assert!(back.iter().all(|&b| b == 0xab));
    }
}
