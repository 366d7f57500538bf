//! bmk's built-in system tests: `cpu`, `memory`, `threads`, `mutex` and `fileio`.
//!
//! This crate owns what those five tests do per event, the options they declare (with
//! sysbench's names and defaults), the test-specific header lines, and `fileio`'s
//! `prepare` and `cleanup` commands. It does not parse the command line, run the event
//! loop or format final reports: the CLI declares [`SystemTest::options`] in its option
//! set, calls [`build`], and hands [`SystemBenchmark::test`] to [`bmk_engine::run`].
//!
//! Main types: [`SystemTest`] names a test; [`SystemBenchmark`] is one configured test,
//! ready to prepare, run or clean up; [`SystemTestError`] is every failure, worded for
//! the user (the CLI prints it after `FATAL: `).
//!
//! ```
//! use std::sync::{atomic::AtomicUsize, Arc};
//! use bmk_engine::{options::OptionSet, run, Observer, RunConfig};
//! use bmk_systests::{build, BuildParams, SystemTest};
//!
//! let test = SystemTest::by_name("cpu").unwrap();
//! let mut opts = OptionSet::new();
//! opts.declare(test.options());
//! opts.set("cpu-max-prime", "1000").unwrap();
//! let bench = build(test, &opts, &BuildParams { events: 10, ..BuildParams::default() }).unwrap();
//! assert_eq!(bench.header_lines(), ["Prime numbers limit: 1000", ""]);
//!
//! struct Quiet;
//! impl Observer for Quiet {}
//! let config = RunConfig { threads: 1, events: 10, time: None, ..RunConfig::default() };
//! let outcome = run(config, bench.test().unwrap(), &mut Quiet, &AtomicUsize::new(0));
//! assert_eq!(outcome.stats.events, 10);
//! ```
#![deny(missing_docs)]

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use bmk_engine::options::{OptSpec, OptionSet};
use bmk_engine::Test;

mod aligned;
mod cpu;
mod error;
mod fileio;
mod memory;
mod mutex;
mod sizes;
mod threads;

pub use error::SystemTestError;
pub use fileio::FileIoMode;

/// One of the five built-in tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SystemTest {
    /// Prime counting by trial division.
    Cpu,
    /// Memory block reads and writes.
    Memory,
    /// Lock, yield, unlock, many times.
    Threads,
    /// Mutex contention after busy loops.
    Mutex,
    /// File I/O.
    FileIo,
}

impl SystemTest {
    /// Every built-in test, in the order sysbench lists them.
    pub const ALL: [SystemTest; 5] = [
        SystemTest::FileIo,
        SystemTest::Cpu,
        SystemTest::Memory,
        SystemTest::Threads,
        SystemTest::Mutex,
    ];

    /// The test with this command-line name (`cpu`, `memory`, `threads`, `mutex`,
    /// `fileio`).
    pub fn by_name(name: &str) -> Option<SystemTest> {
        SystemTest::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            SystemTest::Cpu => "cpu",
            SystemTest::Memory => "memory",
            SystemTest::Threads => "threads",
            SystemTest::Mutex => "mutex",
            SystemTest::FileIo => "fileio",
        }
    }

    /// A one-line description for the list of built-in tests in `--help`.
    pub fn description(&self) -> &'static str {
        match self {
            SystemTest::Cpu => "CPU performance test",
            SystemTest::Memory => "Memory functions speed test",
            SystemTest::Threads => "Threads subsystem performance test",
            SystemTest::Mutex => "Mutex performance test",
            SystemTest::FileIo => "File I/O test",
        }
    }

    /// Every option the test declares, with sysbench's names, types and defaults, in
    /// the order `bmk <test> help` lists them.
    pub fn options(&self) -> Vec<OptSpec> {
        match self {
            SystemTest::Cpu => cpu::options(),
            SystemTest::Memory => memory::options(),
            SystemTest::Threads => threads::options(),
            SystemTest::Mutex => mutex::options(),
            SystemTest::FileIo => fileio::options(),
        }
    }

    /// The commands the test implements. `fileio` has `prepare`, `run` and `cleanup`;
    /// the others only `run` (sysbench answers any other command with
    /// `'<test>' test does not implement the '<command>' command.` and exit 1).
    pub fn commands(&self) -> &'static [&'static str] {
        match self {
            SystemTest::FileIo => &["prepare", "run", "cleanup"],
            _ => &["run"],
        }
    }
}

/// General run settings a test needs to know when it is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildParams {
    /// `--threads`.
    pub threads: u32,
    /// `--events` (0 = no limit); `fileio` shows it as "Number of IO requests".
    pub events: u64,
    /// Where `fileio` keeps its files; `None` (the default, and sysbench's behaviour)
    /// is the current directory. Tests and embedders point it elsewhere.
    pub file_dir: Option<PathBuf>,
}

impl Default for BuildParams {
    fn default() -> Self {
        BuildParams {
            threads: 1,
            events: 0,
            file_dir: None,
        }
    }
}

/// Builds `test` from option values the CLI has already parsed and checked against
/// [`SystemTest::options`]. Checks the constraints that span options or go beyond a
/// range (a power-of-two memory block, direct-I/O alignment, ...) and allocates shared
/// state such as the global memory buffer.
///
/// A missing `--file-test-mode` is not an error here (`prepare` and `cleanup` do not
/// need it); [`SystemBenchmark::test`] reports it.
pub fn build(
    test: SystemTest,
    opts: &OptionSet,
    params: &BuildParams,
) -> Result<SystemBenchmark, SystemTestError> {
    let kind = match test {
        SystemTest::Cpu => Kind::Cpu(Arc::new(cpu::CpuTest::from_options(opts)?)),
        SystemTest::Memory => {
            Kind::Memory(Arc::new(memory::MemoryTest::from_options(opts, params)?))
        }
        SystemTest::Threads => Kind::Threads(Arc::new(threads::ThreadsTest::from_options(opts)?)),
        SystemTest::Mutex => Kind::Mutex(Arc::new(mutex::MutexTest::from_options(opts)?)),
        SystemTest::FileIo => {
            Kind::FileIo(Arc::new(fileio::FileIoTest::from_options(opts, params)?))
        }
    };
    Ok(SystemBenchmark { kind })
}

/// A built-in test configured from its options: what the CLI prepares, runs and
/// cleans up.
pub struct SystemBenchmark {
    kind: Kind,
}

enum Kind {
    Cpu(Arc<cpu::CpuTest>),
    Memory(Arc<memory::MemoryTest>),
    Threads(Arc<threads::ThreadsTest>),
    Mutex(Arc<mutex::MutexTest>),
    FileIo(Arc<fileio::FileIoTest>),
}

impl SystemBenchmark {
    /// Which test this is.
    pub fn system_test(&self) -> SystemTest {
        match &self.kind {
            Kind::Cpu(_) => SystemTest::Cpu,
            Kind::Memory(_) => SystemTest::Memory,
            Kind::Threads(_) => SystemTest::Threads,
            Kind::Mutex(_) => SystemTest::Mutex,
            Kind::FileIo(_) => SystemTest::FileIo,
        }
    }

    /// The test-specific header lines of `run`, each to be printed with a newline.
    /// They go after `Initializing random number generator ...` and the two empty
    /// lines that follow it, and right before `Initializing worker threads...`:
    ///
    /// ```text
    /// Initializing random number generator from current time
    ///
    ///
    /// Prime numbers limit: 10000
    ///
    /// Initializing worker threads...
    /// ```
    ///
    /// An empty string is an empty line (`cpu` and `memory` end with one, `fileio`
    /// does not, as in the reference); `threads` and `mutex` have no lines.
    pub fn header_lines(&self) -> Vec<String> {
        match &self.kind {
            Kind::Cpu(t) => t.header_lines(),
            Kind::Memory(t) => t.header_lines(),
            Kind::Threads(_) | Kind::Mutex(_) => Vec::new(),
            Kind::FileIo(t) => t.header_lines(),
        }
    }

    /// The lines sysbench prints before [`header_lines`](Self::header_lines) at
    /// `--verbosity` 4 and up (its info level):
    ///
    /// ```text
    /// Doing CPU performance benchmark
    ///
    /// Prime numbers limit: 10000
    /// ```
    pub fn info_lines(&self) -> Vec<String> {
        match &self.kind {
            Kind::Cpu(_) => vec!["Doing CPU performance benchmark".into(), String::new()],
            Kind::Threads(t) => vec![
                "Doing thread subsystem performance test".into(),
                t.settings_line(),
            ],
            Kind::Mutex(_) => vec!["Doing mutex performance test".into()],
            Kind::Memory(_) | Kind::FileIo(_) => Vec::new(),
        }
    }

    /// The number of events the test itself limits the run to, if any: `memory` runs
    /// `--memory-total-size / --memory-block-size` events in total (no limit when the
    /// total size is 0). The CLI sets the engine's `RunConfig::events` to the smaller
    /// of this and a non-zero `--events`.
    pub fn event_limit(&self) -> Option<u64> {
        match &self.kind {
            Kind::Memory(t) => t.event_limit(),
            _ => None,
        }
    }

    /// The memory block size in bytes (`memory` only): the final report shows
    /// `events * block size` as "MiB transferred".
    pub fn memory_block_size(&self) -> Option<u64> {
        match &self.kind {
            Kind::Memory(t) => Some(t.block_size()),
            _ => None,
        }
    }

    /// The `fileio` test mode, when given.
    pub fn fileio_mode(&self) -> Option<FileIoMode> {
        match &self.kind {
            Kind::FileIo(t) => t.mode(),
            _ => None,
        }
    }

    /// `prepare`: `fileio` creates its files in the current directory and prints its
    /// progress to `out`. Other tests have no `prepare` (see [`SystemTest::commands`])
    /// and return [`SystemTestError::NoCommand`].
    pub fn prepare(&self, out: &mut dyn Write) -> Result<(), SystemTestError> {
        match &self.kind {
            Kind::FileIo(t) => t.prepare(out),
            _ => Err(self.no_command("prepare")),
        }
    }

    /// `cleanup`: `fileio` removes `test_file.0 .. test_file.N-1` from the current
    /// directory, and nothing else. Other tests return [`SystemTestError::NoCommand`].
    pub fn cleanup(&self, out: &mut dyn Write) -> Result<(), SystemTestError> {
        match &self.kind {
            Kind::FileIo(t) => t.cleanup(out),
            _ => Err(self.no_command("cleanup")),
        }
    }

    /// The benchmark to hand to [`bmk_engine::run`] for `run`. Checks what `run` needs
    /// before any header is printed: `fileio` fails without `--file-test-mode` or when
    /// its files are missing or too small (run `prepare` first).
    pub fn test(&self) -> Result<Arc<dyn Test>, SystemTestError> {
        Ok(match &self.kind {
            Kind::Cpu(t) => t.clone(),
            Kind::Memory(t) => t.clone(),
            Kind::Threads(t) => t.clone(),
            Kind::Mutex(t) => t.clone(),
            Kind::FileIo(t) => {
                t.check_ready()?;
                t.clone()
            }
        })
    }

    fn no_command(&self, command: &str) -> SystemTestError {
        SystemTestError::NoCommand {
            test: self.system_test().name(),
            command: command.to_string(),
        }
    }
}
