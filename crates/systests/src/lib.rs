//! bmk's built-in system tests: `cpu`, `memory`, `threads`, `mutex` and `fileio`.
//!
//! This crate owns what those five tests do per event, the options they declare (with
//! sysbench's names and defaults), the test-specific header lines, and `fileio`'s
//! `prepare` and `cleanup` commands. It does not parse the command line, run the event
//! loop or format final reports: the CLI declares [`SystemTestKind::options`] in its option
//! set, calls [`build`], and hands [`ConfiguredSystemTest::workload`] to [`bmk_engine::run`].
//!
//! Main types: [`SystemTestKind`] names a test; [`ConfiguredSystemTest`] is one configured test,
//! ready to prepare, run or clean up; [`SystemTestError`] is every failure, worded for
//! the user (the CLI prints it after `FATAL: `).
//!
//! ```
//! use std::sync::{atomic::AtomicUsize, Arc};
//! use bmk_engine::{options::OptionSet, run, Observer, RunConfig};
//! use bmk_systests::{build, BuildParams, SystemTestKind};
//!
//! let test = SystemTestKind::by_name("cpu").unwrap();
//! let mut opts = OptionSet::new();
//! opts.declare(test.options());
//! opts.set("cpu-max-prime", "1000").unwrap();
//! let bench = build(test, &opts, &BuildParams { events: 10, ..BuildParams::default() }).unwrap();
//! assert_eq!(bench.header_lines(), ["Prime numbers limit: 1000", ""]);
//!
//! struct Quiet;
//! impl Observer for Quiet {}
//! let config = RunConfig { threads: 1, events: 10, time: None, ..RunConfig::default() };
//! let outcome = run(config, bench.workload().unwrap(), &mut Quiet, &AtomicUsize::new(0));
//! assert_eq!(outcome.stats.events, 10);
//! ```
#![deny(missing_docs)]

use std::io::Write;
use std::sync::Arc;

use bmk_engine::options::{OptSpec, OptionSet};
use bmk_engine::Workload;

mod aligned;
mod build_params;
mod cpu;
mod error;
mod fileio;
mod memory;
mod mutex;
mod sizes;
mod threads;

pub use build_params::BuildParams;
pub use error::SystemTestError;
pub use fileio::FileIoMode;
pub use sizes::human as human_size;

/// One of the five built-in tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SystemTestKind {
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

impl SystemTestKind {
    /// Every built-in test, in the order sysbench lists them.
    pub const ALL: [SystemTestKind; 5] = [
        SystemTestKind::FileIo,
        SystemTestKind::Cpu,
        SystemTestKind::Memory,
        SystemTestKind::Threads,
        SystemTestKind::Mutex,
    ];

    /// The test with this command-line name (`cpu`, `memory`, `threads`, `mutex`,
    /// `fileio`).
    pub fn by_name(name: &str) -> Option<SystemTestKind> {
        SystemTestKind::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            SystemTestKind::Cpu => "cpu",
            SystemTestKind::Memory => "memory",
            SystemTestKind::Threads => "threads",
            SystemTestKind::Mutex => "mutex",
            SystemTestKind::FileIo => "fileio",
        }
    }

    /// A one-line description for the list of built-in tests in `--help`.
    pub fn description(&self) -> &'static str {
        match self {
            SystemTestKind::Cpu => "CPU performance test",
            SystemTestKind::Memory => "Memory functions speed test",
            SystemTestKind::Threads => "Threads subsystem performance test",
            SystemTestKind::Mutex => "Mutex performance test",
            SystemTestKind::FileIo => "File I/O test",
        }
    }

    /// Every option the test declares, with sysbench's names, types and defaults, in
    /// the order `bmk <test> help` lists them.
    pub fn options(&self) -> Vec<OptSpec> {
        match self {
            SystemTestKind::Cpu => cpu::options(),
            SystemTestKind::Memory => memory::options(),
            SystemTestKind::Threads => threads::options(),
            SystemTestKind::Mutex => mutex::options(),
            SystemTestKind::FileIo => fileio::options(),
        }
    }

    /// The commands the test implements. `fileio` has `prepare`, `run` and `cleanup`;
    /// the others only `run` (sysbench answers any other command with
    /// `'<test>' test does not implement the '<command>' command.` and exit 1).
    pub fn commands(&self) -> &'static [&'static str] {
        match self {
            SystemTestKind::FileIo => &["prepare", "run", "cleanup"],
            _ => &["run"],
        }
    }
}

/// Builds `test` from option values the CLI has already parsed and checked against
/// [`SystemTestKind::options`]. Checks the constraints that span options or go beyond a
/// range (a power-of-two memory block, direct-I/O alignment, ...) and allocates shared
/// state such as the global memory buffer.
///
/// A missing `--file-test-mode` is not an error here (`prepare` and `cleanup` do not
/// need it); [`ConfiguredSystemTest::workload`] reports it.
pub fn build(
    test: SystemTestKind,
    opts: &OptionSet,
    params: &BuildParams,
) -> Result<ConfiguredSystemTest, SystemTestError> {
    let kind = match test {
        SystemTestKind::Cpu => Kind::Cpu(Arc::new(cpu::CpuTest::from_options(opts)?)),
        SystemTestKind::Memory => {
            Kind::Memory(Arc::new(memory::MemoryTest::from_options(opts, params)?))
        }
        SystemTestKind::Threads => {
            Kind::Threads(Arc::new(threads::ThreadsTest::from_options(opts)?))
        }
        SystemTestKind::Mutex => Kind::Mutex(Arc::new(mutex::MutexTest::from_options(opts)?)),
        SystemTestKind::FileIo => {
            Kind::FileIo(Arc::new(fileio::FileIoTest::from_options(opts, params)?))
        }
    };
    Ok(ConfiguredSystemTest { kind })
}

/// A built-in test configured from its options: what the CLI prepares, runs and
/// cleans up.
pub struct ConfiguredSystemTest {
    kind: Kind,
}

enum Kind {
    Cpu(Arc<cpu::CpuTest>),
    Memory(Arc<memory::MemoryTest>),
    Threads(Arc<threads::ThreadsTest>),
    Mutex(Arc<mutex::MutexTest>),
    FileIo(Arc<fileio::FileIoTest>),
}

impl ConfiguredSystemTest {
    /// Which test this is.
    pub fn kind(&self) -> SystemTestKind {
        match &self.kind {
            Kind::Cpu(_) => SystemTestKind::Cpu,
            Kind::Memory(_) => SystemTestKind::Memory,
            Kind::Threads(_) => SystemTestKind::Threads,
            Kind::Mutex(_) => SystemTestKind::Mutex,
            Kind::FileIo(_) => SystemTestKind::FileIo,
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
    /// progress to `out`. Other tests have no `prepare` (see [`SystemTestKind::commands`])
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

    /// The workload to hand to [`bmk_engine::run`] for `run`. Checks what `run` needs
    /// before any header is printed: `fileio` fails without `--file-test-mode` or when
    /// its files are missing or too small (run `prepare` first).
    pub fn workload(&self) -> Result<Arc<dyn Workload>, SystemTestError> {
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
            test: self.kind().name(),
            command: command.to_string(),
        }
    }
}
