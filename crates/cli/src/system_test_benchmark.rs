//! Adapts a built-in system test to the `run` command.

use std::sync::Arc;

use bmk_engine::Workload;
use bmk_report::Layout;
use bmk_systests::{ConfiguredSystemTest, SystemTestKind};

use crate::benchmark::Benchmark;

/// A configured system test ready to run.
pub struct SystemTestBenchmark {
    test: ConfiguredSystemTest,
    workload: Arc<dyn Workload>,
}

impl SystemTestBenchmark {
    /// Wraps a built test and its engine-facing half.
    pub fn new(test: ConfiguredSystemTest, workload: Arc<dyn Workload>) -> SystemTestBenchmark {
        SystemTestBenchmark { test, workload }
    }
}

impl Benchmark for SystemTestBenchmark {
    fn workload(&self) -> Arc<dyn Workload> {
        self.workload.clone()
    }

    fn header_lines(&self) -> Vec<String> {
        self.test.header_lines()
    }

    fn info_lines(&self) -> Vec<String> {
        self.test.info_lines()
    }

    fn layout(&self) -> Layout {
        match self.test.kind() {
            SystemTestKind::Cpu => Layout::Cpu,
            SystemTestKind::Memory => Layout::Memory {
                block_size: self.test.memory_block_size().unwrap_or(0),
                transfers: true,
            },
            SystemTestKind::FileIo => Layout::FileIo,
            SystemTestKind::Threads | SystemTestKind::Mutex => Layout::Events,
        }
    }

    fn implied_event_limit(&self) -> Option<u64> {
        self.test.event_limit()
    }

    fn ignores_event_option(&self) -> bool {
        self.test.kind() == SystemTestKind::Memory
    }
}
