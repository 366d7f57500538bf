//! Adapts a built-in system test to the `run` command.

use std::sync::Arc;

use bmk_engine::Test;
use bmk_report::Layout;
use bmk_systests::{SystemBenchmark, SystemTest};

use crate::runner::Bench;

/// A configured system test ready to run.
pub struct SystemBench {
    bench: SystemBenchmark,
    test: Arc<dyn Test>,
}

impl SystemBench {
    /// Wraps a built test and its engine-facing half.
    pub fn new(bench: SystemBenchmark, test: Arc<dyn Test>) -> SystemBench {
        SystemBench { bench, test }
    }
}

impl Bench for SystemBench {
    fn test(&self) -> Arc<dyn Test> {
        self.test.clone()
    }

    fn header_lines(&self) -> Vec<String> {
        self.bench.header_lines()
    }

    fn info_lines(&self) -> Vec<String> {
        self.bench.info_lines()
    }

    fn layout(&self) -> Layout {
        match self.bench.system_test() {
            SystemTest::Cpu => Layout::Cpu,
            SystemTest::Memory => Layout::Memory {
                block_size: self.bench.memory_block_size().unwrap_or(0),
                transfers: true,
            },
            SystemTest::FileIo => Layout::FileIo,
            SystemTest::Threads | SystemTest::Mutex => Layout::Events,
        }
    }

    fn implied_event_limit(&self) -> Option<u64> {
        self.bench.event_limit()
    }
}
