//! bmk's kit: what people run around the engine, built into the binary.
//!
//! This crate owns named connection targets (`bmk.toml`, [`target`]), the scenario
//! catalog ([`catalog`]: the BMK script names as data), load-level sweeps ([`sweep`],
//! with [`progress`]), the results directory writer ([`run_dir`], [`level_writer`]),
//! the live status capture ([`sampler`], through [`server`]), the tables an OLTP level
//! will read ([`data_size`]), the Kubernetes manifest
//! of a run from several client pods ([`k8s`]) and the `bmk kit` commands
//! ([`command`], parsed by [`args`]). It sits above the workloads and beside the command line: the `bmk`
//! binary calls into it, and it never depends on the binary. It must not measure
//! (the engine does), format reports (`bmk-report` does) or parse the sysbench
//! command line (the binary does).
//!
//! ```
//! use bmk_kit::target::Targets;
//! let t = Targets::parse(
//!     std::path::Path::new("bmk.toml"),
//!     "[targets.lite]\ndriver = \"sqlite\"\ndatabase = \"sb.db\"\n".to_string(),
//! )
//! .unwrap();
//! let opts = t.options("lite", &|_| None).unwrap();
//! assert_eq!(opts[1], ("sqlite-db".to_string(), "sb.db".to_string()));
//! ```
#![deny(missing_docs)]

pub mod args;
pub mod catalog;
pub mod child_process;
pub mod command;
pub mod continuation;
pub mod data_size;
pub mod error;
pub mod host_cpu;
pub mod k8s;
pub mod level_writer;
pub mod line_check;
pub mod objective;
pub mod progress;
pub mod run_dir;
pub mod sampler;
pub mod search;
pub mod server;
pub mod split_gate;
pub mod split_run;
pub mod ssh;
pub mod start_barrier;
pub mod sweep;
pub mod target;
pub mod whole_second;
pub mod workload_results;

pub use error::KitError;
