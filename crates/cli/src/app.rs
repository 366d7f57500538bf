//! The application: from the argument vector to an exit code.
//!
//! Order of work, as sysbench does it: split the arguments, print the banner, find the
//! test (which declares its own options), reject options nothing declared, validate
//! values, then dispatch the command.

use std::io::{IsTerminal, Write as _};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use bmk_engine::options::{OptKind, OptSpec, OptionSet};
use bmk_lua::{CommandOutcome, HostConfig, ScriptHost, ScriptSource};
use bmk_systests::{BuildParams, SystemTestKind};
use bmk_workloads::native::Choice;
use bmk_workloads::BuiltinLibrary;

use crate::args::{self, GivenOption, RawArgs};
use crate::banner;
use crate::benchmark::Benchmark;
use crate::compat::{self, Compat};
use crate::defs;
use crate::execution;
use crate::help;
use crate::option_pipeline;
use crate::own_commands::{self, Request};
use crate::run_settings::RunSettings;
use crate::runner;
use crate::script_benchmark::ScriptBenchmark;
use crate::settings;
use crate::signals;
use crate::start_barrier;
use crate::sysbench_wording;
use crate::system_test_benchmark::SystemTestBenchmark;
use crate::user_error::{on_stdout, user_error};
use crate::verbosity::{Level, Verbosity};

/// How the binary was invoked.
pub struct Invocation {
    /// Invoked as `sysbench`: behave exactly like it.
    pub strict: bool,
    /// Arguments after the program name.
    pub args: Vec<String>,
    /// The full argument vector (for `sysbench.cmdline.argv` and results files).
    pub argv: Vec<String>,
    /// The sysbench release reproduced; known once the arguments are split.
    pub compat: Compat,
}

impl Invocation {
    /// From the process's argument vector.
    pub fn from_argv(argv: Vec<String>) -> Invocation {
        let prog = argv.first().map(String::as_str).unwrap_or("bmk");
        let strict = Path::new(prog)
            .file_name()
            .is_some_and(|n| n.to_string_lossy() == "sysbench");
        Invocation {
            strict,
            args: argv.iter().skip(1).cloned().collect(),
            argv,
            compat: Compat::default(),
        }
    }

    /// The program name used in messages (`sysbench cpu help`).
    fn program(&self) -> &'static str {
        if self.strict {
            "sysbench"
        } else {
            "bmk"
        }
    }
}

/// The test named on the command line.
enum Target {
    System(SystemTestKind),
    Script(ScriptSource),
}

/// Runs the program; `Ok(code)` for every outcome that was already reported.
pub fn run(mut inv: Invocation) -> Result<i32> {
    signals::quiet_sigpipe_on_stdout();
    if !inv.strict && inv.args.first().map(String::as_str) == Some("kit") {
        return run_kit(&inv);
    }
    if !inv.strict {
        if let Some(outcome) = own_command(&mut inv) {
            return outcome;
        }
    }
    let statics = option_pipeline::static_options();
    let takes_value = |name: &str| -> bool {
        !inv.strict && statics.spec(name).is_some_and(|s| s.kind != OptKind::Bool)
    };
    // Invoked as `sysbench`, only the environment picks the level: sysbench itself
    // takes no option of bmk's.
    let env_level = std::env::var(compat::ENV_VAR).ok();
    // sysbench 1.1 has no `--test=NAME`; 1.0 and bmk keep it.
    let test_option =
        !inv.strict || Compat::select(&[], env_level.as_deref()).is_ok_and(|level| level.is_1_0());
    // sysbench rejects a third positional word before it prints anything.
    let raw = args::parse_with(&inv.args, &takes_value, test_option)
        .map_err(|e| user_error(e.to_string()))?;
    let raw = crate::target_options::expand(raw).map_err(|e| user_error(e.to_string()))?;
    let level_options: &[GivenOption] = if inv.strict { &[] } else { &raw.options };
    inv.compat = Compat::select(level_options, env_level.as_deref()).map_err(user_error)?;
    // As in sysbench, --help wins over --version, and neither prints the banner.
    if raw.options.iter().any(|o| is_on(o, "help")) {
        print_help(&inv);
        return Ok(0);
    }
    if raw.options.iter().any(|o| is_on(o, "version")) {
        println!("{}", banner::version_line(inv.strict, inv.compat));
        return Ok(0);
    }
    let verbosity = Verbosity::given(&raw.options);
    if inv.strict {
        sysbench_before_banner(&inv, &raw)?;
    }
    // A bare `bmk` on a terminal prints bmk's help (below), without a run's banner.
    let bare_help = raw.test.is_none() && !inv.strict && std::io::stdin().is_terminal();
    if !bare_help {
        print_banner(&inv, verbosity);
    }
    if !inv.strict && verbosity.shows(Level::Warning) {
        for w in &raw.warnings {
            eprintln!("{w}");
        }
    }
    if inv.strict && !inv.compat.is_1_0() {
        if let Some(message) = sysbench_wording::removed_old_name(&raw.options) {
            return Err(user_error(message));
        }
    }

    let mut opts = option_pipeline::base_options_at(inv.compat, inv.strict);
    option_pipeline::apply_given(&mut opts, &raw.options, inv.strict).map_err(|e| {
        let strict = match &e {
            option_pipeline::GivenError::Value(v) if inv.strict => {
                sysbench_wording::option_error(v, &opts, &raw.options)
            }
            _ => None,
        };
        user_error(strict.unwrap_or_else(|| e.to_string()))
    })?;
    option_pipeline::keep_old_names(&mut opts, &raw.options, inv.strict);

    if opts.string("db-driver").as_deref() == Some("help") {
        print_drivers();
        return Ok(0);
    }
    if !inv.strict {
        check_driver(&opts)?;
    }
    if bare_help {
        print_help(&inv);
        return Ok(0);
    }

    // Scripts may draw random numbers at load time, so the generators are set first.
    bmk_engine::rand::configure(settings::rand_config(&opts));
    let target = resolve_target(&inv, raw.test.as_deref())?;
    match target {
        Target::System(test) => run_system(&inv, test, opts, &raw),
        Target::Script(src) => run_script(&inv, src, opts, &raw),
    }
}

/// bmk's own commands (`report`, `compare`, ..., `version`, `help`), when the command
/// line is one; `bmk help TEST` becomes `bmk TEST help`.
fn own_command(inv: &mut Invocation) -> Option<Result<i32>> {
    if let Some(outcome) = crate::analysis_commands::dispatch(&inv.args) {
        return Some(outcome);
    }
    match own_commands::request(&inv.args) {
        Some(Request::Version) => {
            println!("{}", banner::version_line(false, inv.compat));
            Some(Ok(0))
        }
        Some(Request::Help(None)) => {
            print_help(inv);
            Some(Ok(0))
        }
        Some(Request::Help(Some(command))) => {
            if let Some(text) = own_commands::help_of(&command) {
                print!("{text}");
                return Some(Ok(0));
            }
            inv.args = vec![command, "help".to_string()];
            None
        }
        None => None,
    }
}

/// What sysbench warns about and checks before its banner, at any `--verbosity`.
fn sysbench_before_banner(inv: &Invocation, raw: &RawArgs) -> Result<()> {
    for w in &raw.warnings {
        eprintln!("{w}");
    }
    if inv.compat.is_1_0() {
        for w in sysbench_wording::old_name_warnings(&raw.options) {
            println!("{w}");
        }
    }
    if let Some(message) = sysbench_wording::before_banner(&raw.options, inv.compat) {
        // sysbench logs its FATAL lines on stdout; a number it cannot parse is
        // refused on stderr by its option parser.
        let fatal = message.starts_with("FATAL:");
        let err = user_error(message);
        return Err(if fatal { on_stdout(err) } else { err });
    }
    Ok(())
}

/// `bmk kit ...`: the kit's own commands.
fn run_kit(inv: &Invocation) -> Result<i32> {
    let interrupt = signals::install().context("cannot install signal handlers")?;
    if inv.args.get(1).map(String::as_str) == Some("ssh") {
        return bmk_kit::ssh::main(&inv.args[2..], &interrupt)
            .map_err(|e| user_error(e.to_string()));
    }
    let ctx = bmk_kit::command::KitContext {
        program: std::env::current_exe().context("cannot find the bmk binary")?,
        version: banner::bmk_version().to_string(),
        argv: inv.argv.clone(),
        interrupt,
        checks: crate::analysis_commands::check_lines,
        live_page: crate::report_server::live_page,
        probe_checks: crate::analysis_commands::probe_rejections,
    };
    bmk_kit::command::main(&inv.args[1..], &ctx).map_err(|e| user_error(e.to_string()))
}

fn is_on(o: &GivenOption, name: &str) -> bool {
    o.name == name
        && o.value
            .as_deref()
            .is_none_or(|v| bmk_engine::options::parse_bool(v).unwrap_or(false))
}

fn print_banner(inv: &Invocation, verbosity: Verbosity) {
    if verbosity.shows(Level::Notice) {
        println!("{}\n", banner::banner(inv.strict, inv.compat));
    }
}

/// The `--verbosity` of validated options.
fn verbosity_of(opts: &OptionSet) -> Verbosity {
    Verbosity::new(opts.int("verbosity", 3).clamp(0, i64::from(u8::MAX)) as u8)
}

/// Fails on options that nothing declared, naming the argument as typed, and on
/// values their declaration refuses (in sysbench's words when `strict`).
fn reject_undeclared(opts: &OptionSet, given: &[GivenOption], strict: bool) -> Result<()> {
    let undeclared = opts.undeclared_given();
    if let Some(first) = given
        .iter()
        .find(|g| undeclared.contains(&bmk_engine::options::canonical(&g.name)))
    {
        let mut message = format!(
            "invalid option: {}",
            bmk_report::redact::shown_argument(&first.original)
        );
        // sysbench says no more; bmk names the option probably meant.
        if let Some(meant) = (!strict)
            .then(|| own_commands::option_suggestion(opts, &first.name))
            .flatten()
        {
            message.push_str(&format!("; did you mean {meant}?"));
        }
        return Err(user_error(message));
    }
    validate(opts, given, strict)
}

/// Checks every given value against its declaration.
fn validate(opts: &OptionSet, given: &[GivenOption], strict: bool) -> Result<()> {
    opts.validate().map_err(|e| {
        let worded = strict
            .then(|| sysbench_wording::option_error(&e, opts, given))
            .flatten();
        user_error(worded.unwrap_or_else(|| e.to_string()))
    })
}

fn resolve_target(inv: &Invocation, test: Option<&str>) -> Result<Target> {
    let name = test.unwrap_or("-");
    if let Some(t) = SystemTestKind::by_name(name) {
        return Ok(Target::System(t));
    }
    let src = ScriptSource::resolve(name, &BuiltinLibrary).map_err(|e| {
        if inv.strict && e.kind == bmk_lua::LuaErrorKind::NotFound && name != "-" {
            on_stdout(user_error(format!(
                "FATAL: Cannot find benchmark '{name}': no such built-in test, file or module"
            )))
        } else if e.kind == bmk_lua::LuaErrorKind::NotFound && !name.contains(['/', '.']) {
            let meant = own_commands::command_suggestion(name)
                .map(|m| format!("; did you mean 'bmk {m}'?"))
                .unwrap_or_else(|| "; 'bmk --help' lists the commands and tests".to_string());
            user_error(format!("{e}{meant}"))
        } else {
            user_error(e.to_string())
        }
    })?;
    Ok(Target::Script(src))
}

fn require_command<'a>(inv: &Invocation, raw: &'a RawArgs, test: &str) -> Result<&'a str> {
    raw.command.as_deref().ok_or_else(|| {
        user_error(format!(
            "The '{test}' test requires a command argument. See '{} {test} help'",
            inv.program()
        ))
    })
}

fn run_system(
    inv: &Invocation,
    test: SystemTestKind,
    mut opts: OptionSet,
    raw: &RawArgs,
) -> Result<i32> {
    opts.declare(test.options());
    reject_undeclared(&opts, &raw.options, inv.strict)?;
    let command = require_command(inv, raw, test.name())?;
    if command == "help" {
        println!("{} options:", test.name());
        println!("{}", help::option_lines(&test.options()));
        return Ok(0);
    }
    if !test.commands().contains(&command) && command != "prepare" && command != "cleanup" {
        return Err(user_error(format!(
            "Unknown command: {command}. '{}' supports: {}",
            test.name(),
            test.commands().join(", ")
        )));
    }
    let params = BuildParams {
        threads: opts.int("threads", 1) as u32,
        events: opts.int("events", 0) as u64,
        file_dir: None,
        memory_shares_per_thread: inv.strict,
    };
    let bench = bmk_systests::build(test, &opts, &params).map_err(|e| {
        let worded = match &e {
            bmk_systests::SystemTestError::Option(v) if inv.strict => {
                sysbench_wording::option_error(v, &opts, &raw.options)
            }
            _ => None,
        };
        user_error(worded.unwrap_or_else(|| e.to_string()))
    })?;
    // What prepare and cleanup say are notices, as in sysbench.
    let mut out: Box<dyn std::io::Write> = if verbosity_of(&opts).shows(Level::Notice) {
        Box::new(std::io::stdout().lock())
    } else {
        Box::new(std::io::sink())
    };
    match command {
        "prepare" => {
            bench
                .prepare(&mut out)
                .map_err(|e| user_error(e.to_string()))?;
            Ok(0)
        }
        "cleanup" => {
            bench
                .cleanup(&mut out)
                .map_err(|e| user_error(e.to_string()))?;
            Ok(0)
        }
        _ => {
            drop(out);
            let workload = match bench.workload() {
                Ok(w) => w,
                // sysbench logs this one on stdout, with the test's options after it.
                Err(bmk_systests::SystemTestError::MissingOption(name)) if inv.strict => {
                    println!("FATAL: Missing required argument: --{name}\n");
                    if verbosity_of(&opts).shows(Level::Notice) {
                        println!("{} options:", test.name());
                        println!("{}", help::option_lines(&test.options()));
                    }
                    return Ok(1);
                }
                Err(e) => {
                    let worded = inv
                        .strict
                        .then(|| sysbench_wording::not_prepared(&e))
                        .flatten();
                    return Err(user_error(worded.unwrap_or_else(|| e.to_string())));
                }
            };
            let mut adapter = SystemTestBenchmark::new(bench, workload);
            let settings = run_settings(inv, &opts, test.name(), command)?;
            let interrupt = signals::install().context("cannot install signal handlers")?;
            runner::run(&mut adapter, settings, &interrupt)
        }
    }
}

/// A script failure: a syntax error or a located runtime error is a FATAL one, as
/// sysbench words it (`FATAL: x.lua:3: ...`, which people grep logs for); a message
/// raised for the user is printed as it is.
fn lua_error(e: bmk_lua::LuaError) -> anyhow::Error {
    if e.is_located() || e.kind == bmk_lua::LuaErrorKind::Syntax {
        user_error(format!("FATAL: {e}"))
    } else {
        user_error(e.to_string())
    }
}

/// [`lua_error`], in sysbench's words when invoked as `sysbench`.
fn script_error(strict: bool) -> impl Fn(bmk_lua::LuaError) -> anyhow::Error {
    move |e| {
        let worded = strict.then(|| sysbench_wording::lua_error(&e)).flatten();
        match worded {
            Some(m) if e.kind == bmk_lua::LuaErrorKind::Declaration || m.starts_with("FATAL:") => {
                user_error(m)
            }
            Some(m) => user_error(format!("FATAL: {m}")),
            None => lua_error(e),
        }
    }
}

/// A script command's failures, on stdout with the rest of its output as sysbench
/// prints them (`FATAL: ...`, a message repeated right after itself once).
fn print_command_failures(messages: &[String], as_sysbench: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let mut last: Option<&str> = None;
    let mut repeated = 0;
    for m in messages {
        let text = crate::script_failure::failure_text(m, as_sysbench).trim_end();
        if last == Some(text) {
            repeated += 1;
            continue;
        }
        if repeated > 0 {
            writeln!(out, "(last message repeated {repeated} times)")?;
            repeated = 0;
        }
        writeln!(out, "{text}")?;
        last = Some(text);
    }
    // As sysbench's log, a repeat is told only before the next different message.
    out.flush()?;
    Ok(())
}

fn run_script(
    inv: &Invocation,
    src: ScriptSource,
    mut opts: OptionSet,
    raw: &RawArgs,
) -> Result<i32> {
    // sysbench names a script test by its file name alone (`x.lua options:`).
    let name = match &src.path {
        Some(p) => p
            .file_name()
            .map_or_else(|| src.display_name(), |n| n.to_string_lossy().into_owned()),
        None => src.display_name(),
    };
    // A built-in workload by name (not a file that happens to share its name).
    let builtin = src.path.is_none().then(|| src.name.clone());
    let from_stdin = src.path.is_none() && src.name == "stdin";
    // sysbench logs a script that fails to load on stdout, after its banner.
    let mut host = ScriptHost::load(src, host_config(inv, &opts, raw))
        .map_err(script_error(inv.strict))
        .map_err(|e| if inv.strict { on_stdout(e) } else { e })?;
    // As in sysbench: a script read from standard input, or named without a command,
    // is a plain Lua program: loading it ran its body, and there is nothing more to do.
    if from_stdin || raw.command.is_none() {
        return Ok(0);
    }
    let script_options =
        declare_script_options(&host, &mut opts, raw, inv.strict, builtin.is_some())?;
    let command = require_command(inv, raw, &name)?;
    // `prepare` builds indexes and `cleanup` drops tables: single statements that may
    // rightly take longer than any read timeout, so there it is off unless asked for.
    if command != "run" && !opts.is_given("db-timeout") {
        opts.set("db-timeout", "0")
            .map_err(|e| user_error(e.to_string()))?;
    }
    host.set_options(opts.clone())
        .map_err(script_error(inv.strict))?;
    if command != "run" || host.has_command("run") {
        return run_script_command(inv, &mut host, &opts, &name, command, builtin.is_some());
    }
    run_script_benchmark(
        inv,
        &mut host,
        &opts,
        &name,
        builtin.as_deref(),
        &script_options,
    )
}

/// What the Lua host of a script run needs to know of the command line.
fn host_config(inv: &Invocation, opts: &OptionSet, raw: &RawArgs) -> HostConfig {
    HostConfig {
        argv: inv.argv.clone(),
        command: raw.command.clone().unwrap_or_default(),
        options: opts.clone(),
        library: Arc::new(BuiltinLibrary),
        threads: opts.int("threads", 1) as u32,
        banner: Some(banner::version_line(inv.strict, inv.compat)),
        api: match inv.compat {
            Compat::V1_1 => bmk_lua::ApiLevel::V1_1,
            Compat::V1_0 => bmk_lua::ApiLevel::V1_0,
        },
        as_sysbench: inv.strict,
    }
}

/// Declares the options the script declares (with the built-in workloads' limits) and
/// checks the given ones against them. Returns the script's option names.
fn declare_script_options(
    host: &ScriptHost,
    opts: &mut OptionSet,
    raw: &RawArgs,
    strict: bool,
    builtin: bool,
) -> Result<Vec<String>> {
    let declared = host.declared_options();
    let script_options: Vec<String> = declared.iter().map(|s| s.key()).collect();
    if builtin {
        opts.declare(
            declared
                .into_iter()
                .map(bmk_workloads::option_limits::with_limits),
        );
    } else {
        opts.declare(declared);
    }
    if host.declares_options() {
        reject_undeclared(opts, &raw.options, strict)?;
    } else {
        // A script without `sysbench.cmdline.options` takes any option, as in
        // sysbench 1.0: 0.5-era scripts read theirs as globals.
        validate(opts, &raw.options, strict)?;
    }
    if builtin {
        bmk_workloads::option_limits::check(opts).map_err(user_error)?;
    }
    Ok(script_options)
}

/// A script command other than a benchmark run (`prepare`, `cleanup`, `help`, its own
/// commands, or a `run` the script defines itself).
fn run_script_command(
    inv: &Invocation,
    host: &mut ScriptHost,
    opts: &OptionSet,
    name: &str,
    command: &str,
    builtin: bool,
) -> Result<i32> {
    let not_implemented = || {
        user_error(format!(
            "'{name}' test does not implement the '{command}' command."
        ))
    };
    if command == "help" && !host.has_command("help") {
        let options = host.options_help();
        if options.is_empty() {
            return Err(not_implemented());
        }
        println!("{name} options:");
        print!("{options}");
        return Ok(0);
    }
    if !host.has_command(command) {
        return Err(match command {
            "prepare" | "cleanup" | "help" => not_implemented(),
            _ => user_error(format!("Unknown command: {command}")),
        });
    }
    if host.command_runs_on_workers(command) && verbosity_of(opts).shows(Level::Notice) {
        println!("Initializing worker threads...\n");
    }
    match host.run_command(command) {
        Ok(CommandOutcome::Done) => {}
        Ok(CommandOutcome::ReturnedFalse) => return Ok(1),
        // Each thread's failure, on stdout as sysbench prints them; sysbench then
        // exits 0 all the same, bmk says the command failed.
        Ok(CommandOutcome::ThreadsFailed(errors)) => {
            let messages: Vec<String> = errors
                .into_iter()
                .map(|e| lua_error(e).to_string())
                .collect();
            print_command_failures(&messages, inv.strict)?;
            return Ok(if inv.strict { 0 } else { 1 });
        }
        Err(e) if e.kind == bmk_lua::LuaErrorKind::Runtime => {
            print_command_failures(&[lua_error(e).to_string()], inv.strict)?;
            return Ok(1);
        }
        Err(e) => return Err(lua_error(e)),
    }
    // The start barrier's table goes with the rest: always for the built-in
    // workloads (they live in a database), for other scripts when they name a
    // barrier (a script may not use a database at all).
    if command == "cleanup" && (builtin || opts.string("barrier").is_some()) {
        start_barrier::drop_table(opts).map_err(user_error)?;
    }
    if command == "cleanup" && builtin {
        remove_empty_sqlite_file(opts).map_err(user_error)?;
    }
    Ok(0)
}

/// The benchmark run of a script: on native workers when the built-in workload and
/// its options allow, else on Lua workers.
fn run_script_benchmark(
    inv: &Invocation,
    host: &mut ScriptHost,
    opts: &OptionSet,
    name: &str,
    builtin: Option<&str>,
    script_options: &[String],
) -> Result<i32> {
    let mut settings = run_settings(inv, opts, name, "run")?;
    let interrupt = signals::install().context("cannot install signal handlers")?;
    let choice = match builtin {
        Some(w) => bmk_workloads::native::choose(w, opts, script_options),
        None => Choice::Lua("not a built-in workload".to_string()),
    };
    let (mut bench, lua_reason) = match choice {
        Choice::Native(workload) => {
            if verbosity_of(opts).shows(Level::Debug) {
                println!("DEBUG: '{name}' runs on native workers");
            }
            (ScriptBenchmark::with_native_workload(host, workload), None)
        }
        Choice::Lua(reason) => (ScriptBenchmark::new(host), Some(reason)),
    };
    let execution = execution::record(
        opts,
        &settings.config,
        bench.workload().cooperative(),
        lua_reason,
    );
    // bmk's own detail: sysbench prints no such line at any level.
    if !inv.strict && verbosity_of(opts).shows(Level::Info) {
        println!("{}", execution::line(&execution));
    }
    settings.execution = Some(execution);
    runner::run(&mut bench, settings, &interrupt)
}

fn run_settings(
    inv: &Invocation,
    opts: &OptionSet,
    test_name: &str,
    command: &str,
) -> Result<RunSettings> {
    let config = settings::run_config(opts, inv.strict).map_err(|e| user_error(e.to_string()))?;
    let report = settings::report_options(opts).map_err(|e| user_error(e.to_string()))?;
    settings::non_empty_path(opts, "results-dir").map_err(|e| user_error(e.to_string()))?;
    let rand = settings::rand_config(opts);
    let seed = (rand.seed != 0).then_some(rand.seed);
    Ok(RunSettings {
        config,
        report,
        options: opts.clone(),
        argv: inv.argv.clone(),
        test_name: test_name.to_string(),
        command: command.to_string(),
        seed,
        verbosity: verbosity_of(opts),
        compat: inv.compat,
        as_sysbench: inv.strict,
        barrier: start_barrier::settings(opts).map_err(|e| user_error(e.to_string()))?,
        execution: None,
        metrics: crate::metrics_options::MetricsOptions::from_options(opts)
            .map_err(|e| user_error(e.to_string()))?,
    })
}

/// After a built-in workload's `cleanup` on SQLite: the database file goes too when
/// nothing is left in it (no table, index, view or trigger), as a server's database
/// would hold nothing any more. A file with anything else in it stays.
fn remove_empty_sqlite_file(opts: &OptionSet) -> std::result::Result<(), String> {
    use bmk_sql::{Driver, DriverConfig, DriverKind};
    let kind: DriverKind = opts
        .string("db-driver")
        .unwrap_or_else(|| "mysql".into())
        .parse()?;
    if kind != DriverKind::Sqlite {
        return Ok(());
    }
    let path = std::path::PathBuf::from(opts.string("sqlite-db").unwrap_or_default());
    if !path.is_file() {
        return Ok(());
    }
    let config = DriverConfig::from_options(kind, &|n| opts.raw(n)).map_err(|e| e.message)?;
    let objects = {
        let mut conn = Driver::new(config)
            .connect(0)
            .map_err(|e| format!("cannot check {}: {e}", path.display()))?;
        let rs = conn
            .query("SELECT count(*) FROM sqlite_master")
            .map_err(|e| format!("cannot check {}: {e}", path.display()))?;
        conn.disconnect();
        rs.and_then(|rs| {
            rs.rows()
                .next()
                .and_then(|row| row.first().copied().flatten().map(<[u8]>::to_vec))
        })
    };
    if objects.as_deref() == Some(b"0".as_slice()) {
        std::fs::remove_file(&path)
            .map_err(|e| format!("cannot remove the empty {}: {e}", path.display()))?;
        // SQLite's journal files of the database, if a crash left any.
        for suffix in ["-journal", "-wal", "-shm"] {
            let mut side = path.clone().into_os_string();
            side.push(suffix);
            let _ = std::fs::remove_file(side);
        }
    }
    Ok(())
}

/// Refuses a `--db-driver` that names no driver, in one line, before a script could
/// fail on it with a Lua error.
fn check_driver(opts: &OptionSet) -> Result<()> {
    let Some(name) = opts.string("db-driver") else {
        return Ok(());
    };
    if name.parse::<bmk_sql::DriverKind>().is_ok() {
        return Ok(());
    }
    let valid: Vec<&str> = bmk_sql::DriverKind::ALL.iter().map(|k| k.name()).collect();
    let meant = own_commands::driver_suggestion(&name)
        .map(|m| format!("; did you mean '{m}'?"))
        .unwrap_or_default();
    Err(user_error(format!(
        "invalid database driver name: '{name}' (valid: {}){meant}",
        valid.join(", ")
    )))
}

fn print_drivers() {
    println!("Available database drivers:");
    for kind in bmk_sql::DriverKind::ALL {
        println!("  {} - {}", kind.name(), kind.description());
    }
}

fn print_help(inv: &Invocation) {
    if inv.strict {
        print!(
            "{}",
            crate::sysbench_help::text(
                inv.compat,
                &defs::general_specs(),
                &option_pipeline::driver_specs()
            )
        );
        return;
    }
    let mut text = own_commands::overview();
    text.push_str(&format!(
        "Usage:\n  {} [options]... [testname] [command]\n\nCommands implemented by most tests: prepare run cleanup help\n\n",
        inv.program()
    ));
    for group in defs::general_groups() {
        text.push_str(group.title);
        text.push('\n');
        let specs: Vec<OptSpec> = (group.specs.into_iter())
            .map(|spec| option_pipeline::general_spec_at(spec, inv.compat))
            .collect();
        text.push_str(&help::option_lines(&specs));
        text.push('\n');
    }
    text.push_str("Compiled-in database drivers:\n");
    for kind in bmk_sql::DriverKind::ALL {
        text.push_str(&format!("  {} - {}\n", kind.name(), kind.description()));
    }
    text.push('\n');
    let drivers = option_pipeline::driver_specs();
    for (prefix, title) in [
        ("mysql-", "mysql"),
        ("pgsql-", "pgsql"),
        ("sqlite-", "sqlite"),
    ] {
        let specs: Vec<OptSpec> = drivers
            .iter()
            .filter(|s| s.name.starts_with(prefix))
            .cloned()
            .collect();
        text.push_str(&format!("{title} options:\n"));
        text.push_str(&help::option_lines(&specs));
        text.push('\n');
    }
    text.push_str("Compiled-in tests:\n");
    for t in SystemTestKind::ALL {
        text.push_str(&format!("  {} - {}\n", t.name(), t.description()));
    }
    text.push_str("\nBuilt-in workloads (Lua, also usable with require):\n");
    for name in bmk_workloads::workload_names() {
        text.push_str(&format!("  {name}\n"));
    }
    text.push_str(&format!(
        "\nSee '{} <testname> help' for a list of options for each test.\n",
        inv.program()
    ));
    print!("{text}");
}
