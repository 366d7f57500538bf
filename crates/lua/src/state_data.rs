//! What every Lua state carries for the Rust functions it calls back into.
//!
//! Kept apart from [`crate::state`], which installs it, so that the API modules that
//! read it (`sql`, `host`) do not depend on the module that builds the states.

use std::sync::Arc;

use bmk_engine::options::OptionSet;

use crate::report::ReportSettings;

/// Per-state data reachable from Rust callbacks (`Lua::app_data_ref`).
pub(crate) struct StateData {
    /// The validated options of the run, shared by every state.
    pub options: Arc<OptionSet>,
    /// The kinds of the options the script declares, by `sysbench.opt` key.
    pub script_kinds: Arc<std::collections::HashMap<String, bmk_engine::options::OptKind>>,
    /// How the `sysbench.report_*` printers format their lines.
    pub reports: ReportSettings,
    /// The general option keys `sysbench.opt` is limited to (invoked as sysbench).
    pub opt_view: Option<&'static [&'static str]>,
}
