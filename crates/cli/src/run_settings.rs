//! The settings of one `run` besides the benchmark itself, shared by the runner and
//! the results file it writes.

use bmk_engine::options::OptionSet;
use bmk_engine::RunConfig;
use bmk_results::results_file::Execution;

use crate::compat::Compat;
use crate::metrics_options::MetricsOptions;
use crate::settings::ReportOptions;
use crate::verbosity::Verbosity;
use bmk_kit::start_barrier::BarrierSettings;

/// Everything `run` needs besides the benchmark.
pub struct RunSettings {
    /// Engine limits.
    pub config: RunConfig,
    /// Report look.
    pub report: ReportOptions,
    /// Validated options (for the results file).
    pub options: OptionSet,
    /// The original argument vector (for the results file).
    pub argv: Vec<String>,
    /// Test name or script path.
    pub test_name: String,
    /// The command being run.
    pub command: String,
    /// Whether the seed came from the user.
    pub seed: Option<u64>,
    /// Which of the run's messages are printed.
    pub verbosity: Verbosity,
    /// The sysbench release whose wording and report layout to follow.
    pub compat: Compat,
    /// Invoked as `sysbench`: failures read as sysbench prints them (no traceback).
    pub as_sysbench: bool,
    /// `--barrier`: start together with other processes.
    pub barrier: Option<BarrierSettings>,
    /// How a script's events run (for the results file); `None` for system tests.
    pub execution: Option<Execution>,
    /// `--metrics-addr` and `--metrics-push`.
    pub metrics: MetricsOptions,
}
