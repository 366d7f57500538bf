//! [`ScriptHost`]: the main Lua state of a run and everything the CLI asks of a script
//! — its options, commands, `init`/`done`, report hooks — plus the [`Workload`] that gives
//! each worker its own state.

use std::sync::{Arc, Once};

use bmk_engine::options::{OptSpec, OptionSet};
use bmk_engine::{CumulativeStats, IntervalStats, Workload};
use mlua::{Table, Value};

use crate::error::{LuaError, LuaErrorKind};
use crate::options;
use crate::report;
use crate::state::{ScriptEnv, ScriptState};
use crate::state_data::StateData;
use crate::worker::ScriptWorkload;
use crate::{HostConfig, ScriptSource};

/// What a script command came to, short of an error in the main state.
#[derive(Debug)]
pub enum CommandOutcome {
    /// It ran to its end.
    Done,
    /// It returned false: it failed and said why itself.
    ReturnedFalse,
    /// Some of the threads of a parallel command failed (each with its error).
    ThreadsFailed(Vec<LuaError>),
}

/// The main Lua state of a script and the configuration its workers are built from.
///
/// Not `Send`: it stays on the thread that loaded it (the CLI's main thread). Worker
/// states are made by the [`Workload`] from [`ScriptHost::workload`] on their own threads.
pub struct ScriptHost {
    env: ScriptEnv,
    main: ScriptState,
}

/// Makes C `stdout` (used by Lua's `print` and `io.write`) line-buffered like Rust's
/// stdout, so their lines interleave in order when output is a pipe.
fn line_buffer_c_stdout() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: glibc's `stdout` is initialised before main; setvbuf before any
        // output has been written to the stream (Lua has not run yet).
        unsafe {
            libc::setvbuf(report::c_stdout(), std::ptr::null_mut(), libc::_IOLBF, 0);
        }
    });
}

impl ScriptHost {
    /// Creates the main state and runs the script's top-level code in it.
    pub fn load(src: ScriptSource, cfg: HostConfig) -> Result<ScriptHost, LuaError> {
        crate::ffi::ensure_ffi_linked();
        line_buffer_c_stdout();
        crate::log::set_verbosity(cfg.options.int("verbosity", 3));
        let version_string = cfg.banner.clone().unwrap_or_else(crate::default_banner);
        let mut env = ScriptEnv {
            src: Arc::new(src),
            argv: Arc::new(cfg.argv),
            command: cfg.command,
            library: cfg.library,
            version_string,
            api: cfg.api,
            opt_view: cfg
                .as_sysbench
                .then(|| crate::sysbench_env::builtin_keys(cfg.api)),
            shipped_modules_only: cfg.as_sysbench,
            script_kinds: Default::default(),
            options: Arc::new(cfg.options),
            threads: cfg.threads.max(1),
            legacy_options: false,
            script_cache: Default::default(),
        };
        let main = ScriptState::new(&env, 0)?;
        // Surface broken option declarations now rather than at help or run time.
        options::declared(&main.lua)?;
        env.legacy_options = !options::has_declarations(&main.lua)?;
        Ok(ScriptHost { env, main })
    }

    /// Whether the script declares options in `sysbench.cmdline.options`. One that
    /// does not (a sysbench 0.5/1.0 style script) takes any `--name=value`, as
    /// sysbench 1.0 does: the value is `sysbench.opt.name` and, like every option, the
    /// global `name`.
    pub fn declares_options(&self) -> bool {
        !self.env.legacy_options
    }

    /// The options the script declares in `sysbench.cmdline.options`, with types
    /// inferred from their defaults when not given.
    pub fn declared_options(&self) -> Vec<OptSpec> {
        options::declared(&self.main.lua)
            .map(|d| d.into_iter().map(|d| d.spec).collect())
            .unwrap_or_default()
    }

    /// Installs the validated option values: fills `sysbench.opt` in the main state
    /// and runs the scripts' option validators. Workers made later by [`test`] see
    /// the same values. Script options missing from `opts` are declared into it.
    ///
    /// [`test`]: ScriptHost::workload
    pub fn set_options(&mut self, mut opts: OptionSet) -> Result<(), LuaError> {
        let declared = options::declared(&self.main.lua)?;
        let missing: Vec<OptSpec> = declared
            .iter()
            .filter(|d| !opts.is_declared(&d.spec.name))
            .map(|d| d.spec.clone())
            .collect();
        opts.declare(missing);
        self.env.script_kinds = Arc::new(
            declared
                .iter()
                .map(|d| (d.spec.key(), d.spec.kind))
                .collect(),
        );
        opts.validate()
            .map_err(|e| LuaError::new(LuaErrorKind::Option, e.to_string()))?;
        crate::log::set_verbosity(opts.int("verbosity", 3));
        self.env.options = Arc::new(opts);
        self.main.set_options(&self.env)?;
        let opt: Table = self.main.sysbench()?.get("opt")?;
        for d in declared {
            let Some(validator) = d.validator else {
                continue;
            };
            let value: Value = opt.get(d.spec.key())?;
            let ok = self.main.pcall(validator, value)?;
            let valid = ok
                .front()
                .is_some_and(|v| !matches!(v, Value::Nil | Value::Boolean(false)));
            if !valid {
                let raw = self.env.options.raw(&d.spec.name).unwrap_or_default();
                return Err(LuaError::new(
                    LuaErrorKind::Option,
                    format!("invalid value '{raw}' for option --{}", d.spec.name),
                ));
            }
        }
        Ok(())
    }

    /// The script's options as `help` prints them (empty when it declares none).
    pub fn options_help(&self) -> String {
        options::format_options_help(&self.declared_options())
    }

    /// Calls the script's `help()` if it defines one (`Ok(None)` when it does not).
    pub fn script_help(&mut self) -> Result<Option<()>, LuaError> {
        Ok(self.main.call_global("help", ())?.map(|_| ()))
    }

    /// Whether the script defines command `name` (in `sysbench.cmdline.commands`, or
    /// as a global function such as `prepare`, `cleanup`, `help`).
    pub fn has_command(&self, name: &str) -> bool {
        self.main.command_info(name).defined
    }

    /// Whether command `name` is declared with `sysbench.cmdline.PARALLEL_COMMAND`.
    pub fn command_is_parallel(&self, name: &str) -> bool {
        self.main.command_info(name).parallel
    }

    /// Whether [`ScriptHost::run_command`] runs command `name` on worker threads: a
    /// parallel command with more than one thread (with one, sysbench runs it in the
    /// main state like any other).
    pub fn command_runs_on_workers(&self, name: &str) -> bool {
        self.command_is_parallel(name) && self.threads() > 1
    }

    /// Number of worker threads (`--threads`, else the configured count).
    pub fn threads(&self) -> u32 {
        let t = self.env.options.int("threads", self.env.threads as i64);
        u32::try_from(t).unwrap_or(1).max(1)
    }

    /// Runs a script command: in the main state, or for a parallel command with more
    /// than one thread in `--threads` fresh worker states at once, each with its own
    /// `sysbench.tid`. A failure in the main state is the error; the workers' failures
    /// are an outcome, as sysbench reports each and goes on.
    pub fn run_command(&mut self, name: &str) -> Result<CommandOutcome, LuaError> {
        if !self.main.command_info(name).defined {
            return Err(LuaError::new(
                LuaErrorKind::UnknownCommand,
                format!("Unknown command: {name}"),
            ));
        }
        if !self.command_runs_on_workers(name) {
            return Ok(match self.main.call_command(name)? {
                true => CommandOutcome::Done,
                false => CommandOutcome::ReturnedFalse,
            });
        }
        let threads = self.threads();
        let env = &self.env;
        let errors: Vec<LuaError> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|tid| {
                    std::thread::Builder::new()
                        .name(format!("bmk-cmd-{tid}"))
                        .stack_size(8 << 20)
                        .spawn_scoped(scope, move || -> Result<bool, LuaError> {
                            bmk_engine::rand::seed_thread(tid);
                            let state = ScriptState::new(env, tid)?;
                            state.call_command(name)
                        })
                        .map_err(|e| {
                            LuaError::new(
                                LuaErrorKind::Internal,
                                format!("failed to create thread {tid}: {e}"),
                            )
                        })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| match h {
                    Ok(h) => match h.join() {
                        Ok(r) => r.err(),
                        Err(_) => Some(LuaError::new(
                            LuaErrorKind::Internal,
                            "a command thread panicked",
                        )),
                    },
                    Err(e) => Some(e),
                })
                .collect()
        });
        Ok(if errors.is_empty() {
            CommandOutcome::Done
        } else {
            CommandOutcome::ThreadsFailed(errors)
        })
    }

    /// Calls the script's `init()` in the main state (before workers start), then
    /// checks, as sysbench does at this point, that the script defines `event()`.
    pub fn init(&mut self) -> Result<(), LuaError> {
        self.main.call_global("init", ())?;
        if self.main.global_function("event").is_none() {
            return Err(LuaError::new(
                LuaErrorKind::Runtime,
                format!(
                    "cannot find the event() function in {}",
                    self.env.src.display_name()
                ),
            ));
        }
        Ok(())
    }

    /// Calls the script's `done()` in the main state (after workers end) and closes a
    /// JSON report array left open.
    pub fn done(&mut self) -> Result<(), LuaError> {
        let r = self.main.call_global("done", ()).map(|_| ());
        self.close_reports();
        r
    }

    /// The script as the engine's workload: each worker gets its own state with the script
    /// loaded and `thread_init(tid)` called, runs `thread_run` (the script's or the
    /// default event loop) and then `thread_done(tid)`.
    pub fn workload(&self) -> Arc<dyn Workload> {
        Arc::new(ScriptWorkload::new(Arc::new(self.env.clone())))
    }

    /// Whether the script set `sysbench.hooks.report_intermediate` (or
    /// `report_cumulative` when `intermediate` is false). When set, the hook replaces
    /// the CLI's own report of that kind.
    pub fn has_report_hook(&self, intermediate: bool) -> bool {
        self.main.hook(hook_name(intermediate)).is_some()
    }

    /// Calls `sysbench.hooks.report_intermediate(stat)` (no-op without the hook).
    pub fn report_intermediate(&mut self, s: &IntervalStats) -> Result<(), LuaError> {
        let Some(hook) = self.main.hook(hook_name(true)) else {
            return Ok(());
        };
        let stat = report::interval_table(&self.main.lua, s, self.percentile())?;
        self.main
            .pcall(hook, stat)
            .map(|_| ())
            .map_err(|e| e.in_function(hook_name(true)))
    }

    /// Calls `sysbench.hooks.report_cumulative(stat)` (no-op without the hook), then
    /// closes a JSON report array left open.
    pub fn report_cumulative(&mut self, s: &CumulativeStats) -> Result<(), LuaError> {
        let Some(hook) = self.main.hook(hook_name(false)) else {
            return Ok(());
        };
        let stat = report::cumulative_table(&self.main.lua, s, self.percentile())?;
        let r = self
            .main
            .pcall(hook, stat)
            .map(|_| ())
            .map_err(|e| e.in_function(hook_name(false)));
        self.close_reports();
        r
    }

    /// Ends a JSON array opened by `sysbench.report_json` (prints `]`). Call before
    /// printing anything else after the intermediate reports; harmless when none is
    /// open.
    pub fn close_reports(&mut self) {
        if let Some(data) = self.main.lua.app_data_ref::<StateData>() {
            report::close_json(&data.reports);
        }
    }

    fn percentile(&self) -> f64 {
        self.env.options.double("percentile", 95.0)
    }
}

fn hook_name(intermediate: bool) -> &'static str {
    if intermediate {
        "report_intermediate"
    } else {
        "report_cumulative"
    }
}
