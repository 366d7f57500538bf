//! `memory`: every event reads or writes one block of memory.
//!
//! Scope `global` gives all threads one shared block-sized buffer; scope `local` gives
//! each thread its own. Writes to the shared buffer go through relaxed atomics, since
//! threads race on it by design; everything else (own buffers, and a shared buffer that
//! only gets read) uses plain loops the compiler can vectorise. Access mode `seq` walks the
//! block's words in order; `rnd` touches as many words as the block holds, each at a
//! random position. The run ends after `--memory-total-size` bytes in total, which the
//! CLI turns into an event limit through [`MemoryTest::event_limit`]; or, as sysbench
//! counts ([`BuildParams::memory_shares_per_thread`]), after each thread has done its
//! equal share of whole blocks.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bmk_engine::options::{OptKind, OptSpec, OptionSet};
use bmk_engine::{EventFlow, Worker, WorkerContext, WorkerError, Workload};

use crate::aligned::{AlignedBuf, FrozenBuf};
use crate::build_params::BuildParams;
use crate::error::SystemTestError;
use crate::sizes;

pub(crate) fn options() -> Vec<OptSpec> {
    vec![
        OptSpec::new(
            "memory-block-size",
            OptKind::Size,
            Some("1K"),
            "bytes read or written by one event (a power of two, at least 8)",
        )
        .with_range(8.0, (1u64 << 40) as f64),
        OptSpec::new(
            "memory-total-size",
            OptKind::Size,
            Some("100G"),
            "stop after this many bytes in total have been read or written (0 = no limit)",
        ),
        OptSpec::new(
            "memory-scope",
            OptKind::String,
            Some("global"),
            "one buffer shared by all threads (global) or one per thread (local)",
        )
        .with_choices(&["global", "local"]),
        OptSpec::new(
            "memory-hugetlb",
            OptKind::Bool,
            Some("off"),
            "take the buffers from the huge page pool",
        ),
        OptSpec::new(
            "memory-oper",
            OptKind::String,
            Some("write"),
            "what each event does with the block",
        )
        .with_choices(&["read", "write", "none"]),
        OptSpec::new(
            "memory-access-mode",
            OptKind::String,
            Some("seq"),
            "walk the block in order (seq) or touch random words of it (rnd)",
        )
        .with_choices(&["seq", "rnd"]),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Oper {
    Read,
    Write,
    None,
}

/// The configured test.
pub(crate) struct MemoryTest {
    block_size: u64,
    total_size: u64,
    local: bool,
    hugetlb: bool,
    oper: Oper,
    random: bool,
    /// The shared buffer of scope `global`.
    global: Option<Shared>,
    /// Events each thread runs before it stops, when the total is split per thread.
    thread_share: Option<u64>,
}

impl MemoryTest {
    pub(crate) fn from_options(
        opts: &OptionSet,
        params: &BuildParams,
    ) -> Result<MemoryTest, SystemTestError> {
        let block_size = opts.int("memory-block-size", 1024).max(0) as u64;
        if block_size < 8 || !block_size.is_power_of_two() {
            return Err(SystemTestError::bad_value(
                "memory-block-size",
                opts.raw("memory-block-size").unwrap_or_default(),
                "a power of two of at least 8 bytes (8, 16, ..., 1K, 2K, ...)",
            ));
        }
        let total_size = opts.int("memory-total-size", 100 << 30).max(0) as u64;
        if total_size != 0 && total_size < block_size {
            return Err(SystemTestError::bad_value(
                "memory-total-size",
                opts.raw("memory-total-size").unwrap_or_default(),
                "0 (no limit) or at least one block (--memory-block-size)",
            ));
        }
        let string = |name: &str, default: &str| {
            opts.string(name)
                .unwrap_or_else(|| default.to_string())
                .to_ascii_lowercase()
        };
        let oper = match string("memory-oper", "write").as_str() {
            "read" => Oper::Read,
            "none" => Oper::None,
            _ => Oper::Write,
        };
        let mut test = MemoryTest {
            block_size,
            total_size,
            local: string("memory-scope", "global") == "local",
            hugetlb: opts.flag("memory-hugetlb"),
            oper,
            random: string("memory-access-mode", "seq") == "rnd",
            global: None,
            thread_share: (params.memory_shares_per_thread && total_size > 0)
                .then(|| total_size / block_size / u64::from(params.threads.max(1))),
        };
        if !test.local {
            let buf = test.allocate().map_err(|e| SystemTestError::Allocation {
                bytes: block_size as usize,
                from: if test.hugetlb {
                    " from the HugeTLB pool"
                } else {
                    ""
                },
                source: e,
                hint: if test.hugetlb {
                    "; reserve huge pages (sysctl vm.nr_hugepages) or drop --memory-hugetlb"
                } else {
                    ""
                },
            })?;
            test.global = Some(if test.oper == Oper::Write {
                Shared::Written(Arc::new(buf))
            } else {
                Shared::ReadOnly(Arc::new(buf.freeze()))
            });
        }
        Ok(test)
    }

    fn allocate(&self) -> std::io::Result<AlignedBuf> {
        if self.hugetlb {
            AlignedBuf::huge_pages(self.block_size as usize)
        } else {
            AlignedBuf::zeroed(self.block_size as usize)
        }
    }

    pub(crate) fn block_size(&self) -> u64 {
        self.block_size
    }

    /// Events in the whole run: the total size in whole blocks (none for size 0, and
    /// none when each thread stops after its own share).
    pub(crate) fn event_limit(&self) -> Option<u64> {
        (self.total_size > 0 && self.thread_share.is_none())
            .then(|| self.total_size / self.block_size)
    }

    pub(crate) fn header_lines(&self) -> Vec<String> {
        let oper = match self.oper {
            Oper::Read => "read",
            Oper::Write => "write",
            Oper::None => "none",
        };
        vec![
            "Running memory speed test with the following options:".to_string(),
            format!("  block size: {}", sizes::kib(self.block_size)),
            format!("  total size: {}", sizes::whole_mib(self.total_size)),
            format!("  operation: {oper}"),
            format!("  scope: {}", if self.local { "local" } else { "global" }),
            String::new(),
        ]
    }
}

impl Workload for MemoryTest {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        let buffer = match &self.global {
            Some(Shared::Written(buf)) => Buffer::SharedWritten(buf.clone()),
            Some(Shared::ReadOnly(buf)) => Buffer::SharedReadOnly(buf.clone()),
            None => Buffer::Local(self.allocate().map_err(|e| {
                WorkerError::new(format!(
                    "cannot allocate the {}-byte memory buffer{}: {e}",
                    self.block_size,
                    if self.hugetlb {
                        " from the HugeTLB pool"
                    } else {
                        ""
                    }
                ))
            })?),
        };
        Ok(Box::new(MemoryWorker {
            buffer,
            oper: self.oper,
            random: self.random,
            // Seeded from the thread's generator, so --rand-seed repeats the positions.
            rng: bmk_engine::rand::uniform_u64() | 1,
            value: 0,
            xor_words: xor_words_kernel(),
            share_left: self.thread_share,
        }))
    }
}

/// The buffer of scope `global`, by what the run does with it.
enum Shared {
    /// Written by every thread at once.
    Written(Arc<AlignedBuf>),
    /// Only read (or not touched at all), so no access can race.
    ReadOnly(Arc<FrozenBuf>),
}

enum Buffer {
    Local(AlignedBuf),
    SharedWritten(Arc<AlignedBuf>),
    SharedReadOnly(Arc<FrozenBuf>),
}

struct MemoryWorker {
    buffer: Buffer,
    oper: Oper,
    random: bool,
    /// xorshift64* state for random word positions.
    rng: u64,
    /// What writes store; changes every event so no write is redundant.
    value: u64,
    /// The sequential read loop, chosen once for this CPU.
    xor_words: fn(&[u64]) -> u64,
    /// Events this thread may still run, when the total is split per thread.
    share_left: Option<u64>,
}

impl Worker for MemoryWorker {
    /// The engine's loop, ending also when this thread's share is done (before the
    /// first event for a share of 0, as sysbench checks its counter first).
    fn run(&mut self, ctx: &WorkerContext) -> Result<(), WorkerError> {
        loop {
            if let Some(left) = &mut self.share_left {
                if *left == 0 {
                    return Ok(());
                }
                *left -= 1;
            }
            if !ctx.more_events() {
                return Ok(());
            }
            ctx.event_start();
            self.event(ctx)?;
            ctx.event_stop();
        }
    }

    #[inline]
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        self.value = self.value.wrapping_add(1);
        // The scope and the operation together pick the buffer kind (see
        // `MemoryTest::from_options`): a shared buffer is read-only exactly when the
        // operation does not write.
        match (&mut self.buffer, self.oper) {
            (_, Oper::None) => {}
            (Buffer::Local(buf), Oper::Read) => {
                black_box(read(
                    buf.words_mut(),
                    self.random,
                    &mut self.rng,
                    self.xor_words,
                ));
            }
            (Buffer::SharedReadOnly(buf), _) => {
                black_box(read(
                    buf.words(),
                    self.random,
                    &mut self.rng,
                    self.xor_words,
                ));
            }
            (Buffer::Local(buf), _) => {
                write(buf.words_mut(), self.random, &mut self.rng, self.value);
            }
            (Buffer::SharedWritten(buf), _) => {
                write(
                    &mut buf.atomic_words(),
                    self.random,
                    &mut self.rng,
                    self.value,
                );
            }
        }
        Ok(EventFlow::Continue)
    }
}

/// The XOR of all words, as the fastest loop this CPU runs: the block is read with the
/// widest loads available, several accumulators in flight, so the loop is limited by
/// the memory hierarchy rather than by instruction throughput.
fn xor_words_kernel() -> fn(&[u64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return xor_words_avx2;
    }
    xor_words
}

#[inline]
fn xor_words(words: &[u64]) -> u64 {
    words.iter().fold(0, |a, w| a ^ w)
}

#[cfg(target_arch = "x86_64")]
fn xor_words_avx2(words: &[u64]) -> u64 {
    #[target_feature(enable = "avx2")]
    fn kernel(words: &[u64]) -> u64 {
        // Compiled for AVX2: 32-byte loads, four accumulators.
        words.iter().fold(0, |a, w| a ^ w)
    }
    // SAFETY: only chosen by `xor_words_kernel` after AVX2 was detected.
    unsafe { kernel(words) }
}

/// Word writes to a buffer, plain or atomic.
trait Words {
    fn word_count(&self) -> usize;
    fn write_all(&mut self, value: u64);
    fn write_at(&mut self, i: usize, value: u64);
}

impl Words for [u64] {
    #[inline]
    fn word_count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn write_all(&mut self, value: u64) {
        self.fill(value);
        black_box(self.as_mut_ptr());
    }
    #[inline]
    fn write_at(&mut self, i: usize, value: u64) {
        self[i] = value;
    }
}

impl Words for &[AtomicU64] {
    #[inline]
    fn word_count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn write_all(&mut self, value: u64) {
        for w in self.iter() {
            w.store(value, Ordering::Relaxed);
        }
    }
    #[inline]
    fn write_at(&mut self, i: usize, value: u64) {
        self[i].store(value, Ordering::Relaxed);
    }
}

/// One event's read of one block; returns what was read, for `black_box`.
#[inline]
fn read(words: &[u64], random: bool, rng: &mut u64, xor_words: fn(&[u64]) -> u64) -> u64 {
    if !random {
        return xor_words(words);
    }
    let mask = words.len() - 1; // a power of two
    let mut acc = 0;
    for _ in 0..words.len() {
        acc ^= words[next_random(rng) as usize & mask];
    }
    acc
}

/// One event's write of one block.
#[inline]
fn write<W: Words + ?Sized>(words: &mut W, random: bool, rng: &mut u64, value: u64) {
    if !random {
        words.write_all(value);
        return;
    }
    let n = words.word_count();
    let mask = n - 1; // a power of two
    for _ in 0..n {
        words.write_at(next_random(rng) as usize & mask, value);
    }
}

/// xorshift64*: cheap, good enough to scatter positions over a block.
#[inline]
fn next_random(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_reach_every_word_and_reads_see_them() {
        let mut buf = AlignedBuf::zeroed(1024).unwrap();
        let mut rng = 1;
        write(buf.words_mut(), false, &mut rng, 7);
        assert!(buf.words_mut().iter().all(|&w| w == 7));
        for kernel in [xor_words, xor_words_kernel()] {
            assert_eq!(read(buf.words_mut(), false, &mut rng, kernel), 0); // 128 equal words cancel out
        }
        buf.words_mut()[3] = 5;
        buf.words_mut()[127] = 1;
        for kernel in [xor_words, xor_words_kernel()] {
            assert_eq!(
                read(buf.words_mut(), false, &mut rng, kernel),
                7 ^ 5 ^ 7 ^ 1
            );
        }
        let mut shared = buf.atomic_words();
        write(&mut shared, true, &mut rng, 9);
        assert!(shared.iter().any(|w| w.load(Ordering::Relaxed) == 9));
        let frozen = buf.freeze();
        read(frozen.words(), true, &mut rng, xor_words);
    }
}
