//! `memory`: every event reads or writes one block of memory.
//!
//! Scope `global` gives all threads one shared block-sized buffer (accessed through
//! relaxed atomics, since threads race on it by design); scope `local` gives each
//! thread its own buffer, accessed with plain wide loops. Access mode `seq` walks the
//! block's words in order; `rnd` touches as many words as the block holds, each at a
//! random position. The run ends after `--memory-total-size` bytes in total, which the
//! CLI turns into an event limit through [`MemoryTest::event_limit`].

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bmk_engine::options::{OptKind, OptSpec, OptionSet};
use bmk_engine::{EventFlow, Test, Worker, WorkerContext, WorkerError};

use crate::aligned::AlignedBuf;
use crate::{sizes, BuildParams, SystemTestError};

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
    global: Option<Arc<AlignedBuf>>,
}

impl MemoryTest {
    pub(crate) fn from_options(
        opts: &OptionSet,
        _params: &BuildParams,
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
        };
        if !test.local {
            test.global = Some(Arc::new(test.allocate().map_err(|e| {
                SystemTestError::Allocation {
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
                }
            })?));
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

    /// Events in the whole run: the total size in whole blocks (none for size 0).
    pub(crate) fn event_limit(&self) -> Option<u64> {
        (self.total_size > 0).then(|| self.total_size / self.block_size)
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

impl Test for MemoryTest {
    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        let buffer = match &self.global {
            Some(shared) => Buffer::Global(shared.clone()),
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
        }))
    }
}

enum Buffer {
    Global(Arc<AlignedBuf>),
    Local(AlignedBuf),
}

struct MemoryWorker {
    buffer: Buffer,
    oper: Oper,
    random: bool,
    /// xorshift64* state for random word positions.
    rng: u64,
    /// What writes store; changes every event so no write is redundant.
    value: u64,
}

impl Worker for MemoryWorker {
    #[inline]
    fn event(&mut self, _ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        self.value = self.value.wrapping_add(1);
        match &mut self.buffer {
            Buffer::Local(buf) => access(
                buf.words_mut(),
                self.oper,
                self.random,
                &mut self.rng,
                self.value,
            ),
            Buffer::Global(buf) => {
                let mut words = buf.atomic_words();
                access(
                    &mut words,
                    self.oper,
                    self.random,
                    &mut self.rng,
                    self.value,
                )
            }
        }
        Ok(EventFlow::Continue)
    }
}

/// Word access to a buffer, plain or atomic.
trait Words {
    fn word_count(&self) -> usize;
    fn read_all(&self) -> u64;
    fn write_all(&mut self, value: u64);
    fn read_at(&self, i: usize) -> u64;
    fn write_at(&mut self, i: usize, value: u64);
}

impl Words for [u64] {
    #[inline]
    fn word_count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn read_all(&self) -> u64 {
        // Four independent accumulators let the loop run as wide vector loads.
        let mut acc = [0u64; 4];
        let mut chunks = self.chunks_exact(4);
        for c in &mut chunks {
            for (a, w) in acc.iter_mut().zip(c) {
                *a ^= *w;
            }
        }
        let tail = chunks.remainder().iter().fold(0, |a, w| a ^ w);
        acc[0] ^ acc[1] ^ acc[2] ^ acc[3] ^ tail
    }
    #[inline]
    fn write_all(&mut self, value: u64) {
        self.fill(value);
        black_box(self.as_mut_ptr());
    }
    #[inline]
    fn read_at(&self, i: usize) -> u64 {
        self[i]
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
    fn read_all(&self) -> u64 {
        self.iter().fold(0, |a, w| a ^ w.load(Ordering::Relaxed))
    }
    #[inline]
    fn write_all(&mut self, value: u64) {
        for w in self.iter() {
            w.store(value, Ordering::Relaxed);
        }
    }
    #[inline]
    fn read_at(&self, i: usize) -> u64 {
        self[i].load(Ordering::Relaxed)
    }
    #[inline]
    fn write_at(&mut self, i: usize, value: u64) {
        self[i].store(value, Ordering::Relaxed);
    }
}

/// One event's access to one block.
#[inline]
fn access<W: Words + ?Sized>(words: &mut W, oper: Oper, random: bool, rng: &mut u64, value: u64) {
    let n = words.word_count();
    match (oper, random) {
        (Oper::None, _) => {}
        (Oper::Read, false) => {
            black_box(words.read_all());
        }
        (Oper::Write, false) => words.write_all(value),
        (Oper::Read, true) => {
            let mask = n - 1; // n is a power of two
            let mut acc = 0;
            for _ in 0..n {
                acc ^= words.read_at(next_random(rng) as usize & mask);
            }
            black_box(acc);
        }
        (Oper::Write, true) => {
            let mask = n - 1;
            for _ in 0..n {
                words.write_at(next_random(rng) as usize & mask, value);
            }
        }
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
        access(buf.words_mut(), Oper::Write, false, &mut rng, 7);
        assert!(buf.words_mut().iter().all(|&w| w == 7));
        assert_eq!(buf.words_mut().read_all(), 0); // 128 equal words cancel out
        buf.words_mut()[3] = 5;
        assert_eq!(buf.words_mut().read_all(), 7 ^ 5);
        let mut shared = buf.atomic_words();
        access(&mut shared, Oper::Write, true, &mut rng, 9);
        assert!(shared.iter().any(|w| w.load(Ordering::Relaxed) == 9));
    }
}
