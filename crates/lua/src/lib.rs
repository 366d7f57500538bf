//! bmk's sysbench-compatible Lua runtime.
//!
//! This crate runs sysbench Lua scripts unchanged on LuaJIT 2.1. It owns the
//! Lua states (one main state for `init`/`done`, commands and report hooks; one per OS
//! thread that runs workers — an event loop's, or a worker thread's — whose workers are
//! Lua threads of it with globals of their own: see `loop_state.rs` and `worker.rs`),
//! the whole `sysbench` table (`opt`, `cmdline`, `hooks`, `rand`, `histogram`, `sql`,
//! the report printers), the event loop (written in Lua over LuaJIT FFI so it compiles
//! into one trace), the `sb_*` C entry points that scripts call through `ffi.C` (and
//! the `usleep` they sleep with), and the Lua C functions through which a worker waits
//! (`sql_waits.rs`). It does not parse the command line, print the
//! standard reports or talk to databases itself: the CLI, `bmk-report` and `bmk-sql`
//! do.
//!
//! Main types: [`ScriptHost`] (the main state and everything the CLI asks of a
//! script), [`ScriptSource`] (a script's text and where it came from), [`HostConfig`],
//! [`ModuleLibrary`] (the built-in scripts `require` can load) and [`LuaError`].
//!
//! # How the CLI drives a script
//! 1. [`ScriptSource::resolve`] (or build a [`ScriptSource`] from stdin), then
//!    [`ScriptHost::load`] — runs the script's top-level code in the main state.
//! 2. [`ScriptHost::declared_options`] → declare them in the `OptionSet`, parse and
//!    validate the command line, then [`ScriptHost::set_options`].
//! 3. `help`: print [`ScriptHost::options_help`] / call [`ScriptHost::script_help`].
//!    A command the script defines ([`ScriptHost::has_command`]) wins over a built-in
//!    one: [`ScriptHost::run_command`].
//! 4. `run`: [`ScriptHost::init`], `bmk_engine::run` with [`ScriptHost::workload`] (an
//!    observer that calls [`ScriptHost::report_intermediate`] /
//!    [`ScriptHost::report_cumulative`] instead of its own printing when
//!    [`ScriptHost::has_report_hook`]), [`ScriptHost::close_reports`], then
//!    [`ScriptHost::done`].
//!
//! The executable must export the `sb_*` symbols: link it with `-rdynamic` (for
//! example `println!("cargo:rustc-link-arg-bins=-rdynamic")` in its build script).
//! [`ScriptHost::load`] references them through [`ensure_ffi_linked`] so the linker
//! keeps them (check with `nm -D <binary> | grep sb_`).
//!
//! # Output and errors
//! Lua's `print` is replaced by a version that writes each call with one `fwrite` to C
//! `stdout`, which [`ScriptHost::load`] makes line-buffered, so lines from several
//! workers never interleave and stay in order with Rust's `println!`. SQL failures
//! print sysbench's `FATAL: ...` lines to stdout themselves; every other failure comes
//! back as a [`LuaError`] (or, from workers, a `bmk_engine::WorkerError` in
//! `RunStatus::Fatal`) whose message is complete — `file:line: message`, plus a stack
//! traceback for runtime errors — for the CLI to print before exiting 1.
//!
//! The `bmk-lua-host` binary in this crate is a minimal runner over this API used by
//! the crate's tests and for quick experiments; it is not the CLI.
//!
//! ```
//! use std::sync::{atomic::AtomicUsize, Arc};
//! use bmk_lua::{HostConfig, NoModules, ScriptHost, ScriptSource};
//!
//! let src = ScriptSource::from_text("example", "function event() end");
//! let cfg = HostConfig::new(vec!["bmk".into()], "run", Arc::new(NoModules));
//! let mut host = ScriptHost::load(src, cfg).unwrap();
//! host.set_options(Default::default()).unwrap();
//! host.init().unwrap();
//! // `host.workload()` goes to `bmk_engine::run` (in an executable linked with -rdynamic).
//! host.done().unwrap();
//! ```
#![deny(missing_docs)]

mod error;
mod ffi;
mod ffi_panic;
mod generated_rows;
mod heap;
mod histogram;
mod host;
mod load_progress;
mod log;
mod loop_state;
mod options;
mod report;
mod sql;
mod sql_waits;
mod state;
mod state_data;
mod sysbench_env;
mod usleep;
mod worker;
mod worker_slots;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bmk_engine::bounded_file;
use bmk_engine::options::OptionSet;

pub use error::{LuaError, LuaErrorKind};
pub use ffi::ensure_ffi_linked;
pub use ffi::{
    sb_counter_inc, sb_event_start, sb_event_stop, sb_more_events, sb_rand_default,
    sb_rand_gaussian, sb_rand_pareto, sb_rand_special, sb_rand_str, sb_rand_uniform,
    sb_rand_uniform_double, sb_rand_uniform_uint64, sb_rand_unique, sb_rand_varstr,
    sb_rand_zipfian,
};
pub use host::{CommandOutcome, ScriptHost};
pub use log::{end_repeats, log_fatal};
pub use options::format_options_help;
pub use sql::driver_made;

/// The sysbench version scripts see as `sysbench.version` by default.
pub const SYSBENCH_VERSION: &str = "1.1.0";

/// Which sysbench release's Lua API scripts see. They differ in a few values and
/// errors that scripts and their tests observe: `sysbench.version`, and
/// `sysbench.rand.special`, which 1.1 removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApiLevel {
    /// sysbench 1.1.
    #[default]
    V1_1,
    /// sysbench 1.0.20.
    V1_0,
}

impl ApiLevel {
    /// `sysbench.version` at this level.
    pub fn version(self) -> &'static str {
        match self {
            ApiLevel::V1_1 => SYSBENCH_VERSION,
            ApiLevel::V1_0 => "1.0.20",
        }
    }
}

fn default_banner() -> String {
    format!(
        "bmk {} (sysbench {SYSBENCH_VERSION} compatible)",
        env!("CARGO_PKG_VERSION")
    )
}

/// The built-in script library: module name → embedded Lua source. `require(name)`
/// finds a module here after looking next to the script and in `LUA_PATH`.
pub trait ModuleLibrary: Send + Sync {
    /// The source of module `name` (as passed to `require`), if built in.
    fn module(&self, name: &str) -> Option<&'static str>;
}

/// A library with no modules.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoModules;

impl ModuleLibrary for NoModules {
    fn module(&self, _name: &str) -> Option<&'static str> {
        None
    }
}

/// A script's text and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSource {
    /// Name used in messages when there is no path (`stdin`, a built-in's name).
    pub name: String,
    /// The file it was read from; its directory is searched by `require`.
    pub path: Option<PathBuf>,
    /// The Lua source.
    pub text: String,
}

impl ScriptSource {
    /// A script given as text (stdin, a built-in).
    pub fn from_text(name: &str, text: &str) -> ScriptSource {
        ScriptSource {
            name: name.to_string(),
            path: None,
            text: text.to_string(),
        }
    }

    /// Reads a script file: a regular file of at most [`bounded_file::SCRIPT_FILE`].
    pub fn from_file(path: &Path) -> Result<ScriptSource, LuaError> {
        let text = bounded_file::read_to_string(path, bounded_file::SCRIPT_FILE).map_err(|e| {
            LuaError::new(
                LuaErrorKind::NotFound,
                format!("cannot read script '{}': {e}", path.display()),
            )
        })?;
        Ok(ScriptSource {
            name: path.display().to_string(),
            path: Some(path.to_path_buf()),
            text,
        })
    }

    /// Reads a script from standard input (test name omitted or `-`).
    pub fn from_stdin() -> Result<ScriptSource, LuaError> {
        use std::io::Read;
        let mut text = String::new();
        let limit = bounded_file::SCRIPT_FILE;
        let read = std::io::stdin()
            .take(limit.bytes + 1)
            .read_to_string(&mut text)
            .and_then(|n| {
                if n as u64 > limit.bytes {
                    Err(bounded_file::too_large(limit))
                } else {
                    Ok(n)
                }
            });
        read.map_err(|e| {
            LuaError::new(
                LuaErrorKind::NotFound,
                format!("cannot read a script from standard input: {e}"),
            )
        })?;
        Ok(ScriptSource::from_text("stdin", &text))
    }

    /// Finds the script a test name refers to: `-` is stdin, then the file `name`, the
    /// file `name.lua`, then the built-in script `name`. The error says where it
    /// looked.
    pub fn resolve(name: &str, library: &dyn ModuleLibrary) -> Result<ScriptSource, LuaError> {
        if name == "-" {
            return ScriptSource::from_stdin();
        }
        let path = Path::new(name);
        if path.is_file() {
            return ScriptSource::from_file(path);
        }
        // A module name found through LUA_PATH, as sysbench finds its scripts; the
        // path found is the script's name in messages.
        if let Some(found) = find_in_lua_path(name) {
            return ScriptSource::from_file(&found);
        }
        let with_ext = PathBuf::from(format!("{name}.lua"));
        if !name.ends_with(".lua") && with_ext.is_file() {
            return ScriptSource::from_file(&with_ext);
        }
        let module = name.strip_suffix(".lua").unwrap_or(name);
        if let Some(text) = library.module(module) {
            return Ok(ScriptSource::from_text(module, text));
        }
        Err(LuaError::new(
            LuaErrorKind::NotFound,
            format!(
                "Cannot find script '{name}': no file '{name}', no file '{}', and no \
                 built-in script '{module}'",
                with_ext.display()
            ),
        ))
    }

    /// The name used in error messages (`file:line:`) and `sysbench.cmdline.script_path`.
    pub fn display_name(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => self.name.clone(),
        }
    }
}

/// The first file that a `LUA_PATH` template (`dir/?.lua;...`) names for module
/// `name`; `;;` (Lua's default path) and templates without `?` name nothing.
fn find_in_lua_path(name: &str) -> Option<PathBuf> {
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let lua_path = std::env::var("LUA_PATH").ok()?;
    let module = name.replace('.', "/");
    lua_path
        .split(';')
        .filter(|t| t.contains('?'))
        .map(|t| PathBuf::from(t.replace('?', &module)))
        .find(|p| p.is_file())
}

/// What the CLI tells a script host.
#[derive(Clone)]
pub struct HostConfig {
    /// The raw command line (`sysbench.cmdline.argv`; index 0 is the program).
    pub argv: Vec<String>,
    /// The command being run (`run`, `prepare`, ...).
    pub command: String,
    /// General and driver options, declared, with the values given so far (script
    /// options given on the command line may be present undeclared).
    pub options: OptionSet,
    /// The built-in script library.
    pub library: Arc<dyn ModuleLibrary>,
    /// Worker threads (`--threads`).
    pub threads: u32,
    /// `sysbench.version_string`; defaults to `bmk <version> (sysbench 1.1.0
    /// compatible)`.
    pub banner: Option<String>,
    /// The sysbench release whose API the script sees.
    pub api: ApiLevel,
    /// Invoked as `sysbench`: `sysbench.opt` shows exactly the general options
    /// sysbench of `api` has (no bmk extras, unset strings as `""`), and a user's
    /// script `require`s from bmk's library only the modules sysbench ships (others
    /// fail as missing files do).
    pub as_sysbench: bool,
}

impl HostConfig {
    /// A configuration with no options given and one thread.
    pub fn new(argv: Vec<String>, command: &str, library: Arc<dyn ModuleLibrary>) -> HostConfig {
        HostConfig {
            argv,
            command: command.to_string(),
            options: OptionSet::new(),
            library,
            threads: 1,
            banner: None,
            api: ApiLevel::V1_1,
            as_sysbench: false,
        }
    }
}
