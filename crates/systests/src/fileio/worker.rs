//! One `fileio` worker thread: picks the next request, issues it in the configured
//! I/O mode, counts it, and flushes when the fsync options say so.

use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bmk_engine::{Counter, EventFlow, Worker, WorkerContext, WorkerError};

use super::aio::{AioQueue, Completion};
use super::config::{FileIoConfig, FileIoMode, IoMode};
use super::files::{fill_pattern, OpenFiles};
use crate::aligned::AlignedBuf;

/// One block request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Request {
    file: usize,
    offset: u64,
    len: usize,
    write: bool,
}

enum Engine {
    /// Blocking calls (sync) or memory copies (mmap) through one buffer.
    Direct(AlignedBuf),
    Async(AioQueue),
}

pub(crate) struct FileWorker {
    config: Arc<FileIoConfig>,
    mode: FileIoMode,
    files: Arc<OpenFiles>,
    position: Arc<AtomicU64>,
    engine: Engine,
    /// Requests issued by this thread, for `--file-fsync-freq`.
    requests: u64,
    /// Probability that an `rndrw` request is a read.
    read_share: f64,
}

impl FileWorker {
    pub(crate) fn new(
        config: Arc<FileIoConfig>,
        mode: FileIoMode,
        files: Arc<OpenFiles>,
        position: Arc<AtomicU64>,
    ) -> Result<FileWorker, WorkerError> {
        let request_max = if mode.is_sequential() {
            config.block_size * config.blocks_per_request()
        } else {
            config.block_size
        } as usize;
        let engine = if config.io == IoMode::Async {
            Engine::Async(
                AioQueue::new(config.backlog as usize, request_max, fill_pattern).map_err(|e| {
                    WorkerError::new(format!(
                        "cannot set up asynchronous I/O for {} requests: {e}; lower \
                         --file-async-backlog or raise fs.aio-max-nr",
                        config.backlog
                    ))
                })?,
            )
        } else {
            let mut buf = AlignedBuf::zeroed(request_max)
                .map_err(|e| WorkerError::new(format!("cannot allocate the I/O buffer: {e}")))?;
            fill_pattern(buf.bytes_mut());
            Engine::Direct(buf)
        };
        let read_share = config.rw_ratio / (1.0 + config.rw_ratio);
        Ok(FileWorker {
            config,
            mode,
            files,
            position,
            engine,
            requests: 0,
            read_share,
        })
    }

    fn next_request(&self) -> Request {
        let c = &*self.config;
        let blocks = c.blocks_per_file();
        if self.mode.is_sequential() {
            let per_request = c.blocks_per_request();
            let requests_per_file = blocks.div_ceil(per_request);
            let n = self.position.fetch_add(1, Ordering::Relaxed)
                % (requests_per_file * u64::from(c.num));
            let first = (n % requests_per_file) * per_request;
            Request {
                file: (n / requests_per_file) as usize,
                offset: first * c.block_size,
                len: ((blocks - first).min(per_request) * c.block_size) as usize,
                write: self.mode != FileIoMode::SeqRd,
            }
        } else {
            let file = bmk_engine::rand::uniform(0, c.num - 1) as usize;
            let block = bmk_engine::rand::uniform_u64() % blocks;
            let write = match self.mode {
                FileIoMode::RndRd => false,
                FileIoMode::RndWr => true,
                _ => bmk_engine::rand::uniform_double() >= self.read_share,
            };
            Request {
                file,
                offset: block * c.block_size,
                len: c.block_size as usize,
                write,
            }
        }
    }

    fn issue(&mut self, ctx: &WorkerContext, req: Request) -> Result<(), WorkerError> {
        let file = &self.files.files[req.file];
        match &mut self.engine {
            Engine::Direct(buf) => {
                let data = &mut buf.bytes_mut()[..req.len];
                let result = match (self.config.io, req.write) {
                    (IoMode::Mmap, false) => {
                        self.files.maps[req.file].read(req.offset, data);
                        Ok(())
                    }
                    (IoMode::Mmap, true) => {
                        self.files.maps[req.file].write(req.offset, data);
                        Ok(())
                    }
                    (_, false) => file.read_exact_at(data, req.offset),
                    (_, true) => file.write_all_at(data, req.offset),
                };
                result.map_err(|e| io_failure(req, e))?;
                count(ctx, req.write, req.len as u64);
            }
            Engine::Async(queue) => {
                if queue.is_full() {
                    reap(queue, ctx, 1)?;
                }
                queue
                    .submit(file.as_raw_fd(), req.write, req.offset, req.len)
                    .map_err(|e| io_failure(req, e))?;
            }
        }
        Ok(())
    }

    /// Flushes one file (`which`) or all of them.
    fn flush(&self, ctx: &WorkerContext, which: Option<usize>) -> Result<(), WorkerError> {
        let range = match which {
            Some(i) => i..i + 1,
            None => 0..self.files.files.len(),
        };
        for i in range {
            let result = if self.config.io == IoMode::Mmap {
                self.files.maps[i].sync()
            } else if self.config.fdatasync {
                self.files.files[i].sync_data()
            } else {
                self.files.files[i].sync_all()
            };
            result.map_err(|e| WorkerError::new(format!("cannot flush test_file.{i}: {e}")))?;
            ctx.count(Counter::Other);
        }
        Ok(())
    }
}

fn count(ctx: &WorkerContext, write: bool, bytes: u64) {
    if write {
        ctx.count(Counter::Write);
        ctx.count_n(Counter::BytesWritten, bytes);
    } else {
        ctx.count(Counter::Read);
        ctx.count_n(Counter::BytesRead, bytes);
    }
}

/// Waits for at least `min` asynchronous requests and counts them; a failed request
/// stops the run with its reason.
fn reap(queue: &mut AioQueue, ctx: &WorkerContext, min: usize) -> Result<(), WorkerError> {
    let mut failed: Option<Completion> = None;
    queue
        .reap(min, |c| {
            if c.result == c.requested as i64 {
                count(ctx, c.write, c.requested);
            } else {
                failed.get_or_insert(c);
            }
        })
        .map_err(|e| WorkerError::new(format!("waiting for asynchronous I/O failed: {e}")))?;
    match failed {
        None => Ok(()),
        Some(c) => {
            let what = if c.write { "write" } else { "read" };
            Err(WorkerError::new(if c.result < 0 {
                format!(
                    "asynchronous {what} of {} bytes failed: {}",
                    c.requested,
                    std::io::Error::from_raw_os_error(-c.result as i32)
                )
            } else {
                format!(
                    "asynchronous {what} transferred {} of {} bytes",
                    c.result, c.requested
                )
            }))
        }
    }
}

fn io_failure(req: Request, e: std::io::Error) -> WorkerError {
    WorkerError::new(format!(
        "{} of {} bytes at offset {} of test_file.{} failed: {e}",
        if req.write { "write" } else { "read" },
        req.len,
        req.offset,
        req.file
    ))
}

impl Worker for FileWorker {
    fn event(&mut self, ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        let req = self.next_request();
        self.issue(ctx, req)?;
        if self.mode.writes() {
            if self.config.fsync_all {
                if req.write {
                    self.flush(ctx, Some(req.file))?;
                }
            } else if self.config.fsync_freq > 0 {
                self.requests += 1;
                if self.requests % self.config.fsync_freq == 0 {
                    self.flush(ctx, None)?;
                }
            }
        }
        Ok(EventFlow::Continue)
    }

    fn finish(&mut self, ctx: &WorkerContext) -> Result<(), WorkerError> {
        if let Engine::Async(queue) = &mut self.engine {
            while queue.in_flight() > 0 {
                reap(queue, ctx, 1)?;
            }
        }
        if self.mode.writes() && self.config.fsync_end {
            self.flush(ctx, None)?;
        }
        Ok(())
    }
}
