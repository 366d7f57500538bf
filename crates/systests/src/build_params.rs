//! The general run settings a system test needs when it is built.

use std::path::PathBuf;

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
    /// `memory`: split `--memory-total-size` into equal per-thread shares, each
    /// `total / block size / threads` events (the remainder is never run), each thread
    /// stopping after its own, as sysbench counts. Otherwise (the default) the threads
    /// draw from one total, which then runs to the last block.
    pub memory_shares_per_thread: bool,
}

impl Default for BuildParams {
    fn default() -> Self {
        BuildParams {
            threads: 1,
            events: 0,
            file_dir: None,
            memory_shares_per_thread: false,
        }
    }
}
