//! One Lua state with the whole sysbench API installed, and the script loaded in it.
//!
//! The API is registered from the parts here: standard libraries (with `ffi`, `bit`,
//! `jit`, [`new_lua`]), `package.path`, the built-in module searcher and `print`
//! ([`prepare_state`]), the Rust-backed functions ([`shared_host`], [`lazy_libs`]), then
//! the Lua prelude ([`prelude`]) that builds the `sysbench` table on top of them. The
//! main state and a parallel command's states are made by [`ScriptState::new`]
//! ([`install`]); the state a thread's workers share, by `loop_state.rs` from the same
//! parts. States are not `Send` and live on the thread that made them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use bmk_engine::options::{OptKind, OptionSet};
use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, MultiValue, StdLib, Table, Value};

use crate::error::LuaError;
use crate::heap::OwnedState;
use crate::histogram::UserHistogram;
use crate::options;
use crate::report::{self, ReportSettings};
use crate::state_data::StateData;
use crate::{ModuleLibrary, ScriptSource};

const PRELUDE: &str = include_str!("../lua/prelude.lua");

/// The parts of the API the prelude makes on first use (`host.section(name)`): chunk
/// name and source.
fn section(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "cmdline" => ("@<bmk>/cmdline.lua", include_str!("../lua/cmdline.lua")),
        "rand" => ("@<bmk>/rand.lua", include_str!("../lua/rand.lua")),
        "sql" => ("@<bmk>/sql.lua", include_str!("../lua/sql.lua")),
        "commands" => ("@<bmk>/commands.lua", include_str!("../lua/commands.lua")),
        "errors" => ("@<bmk>/errors.lua", include_str!("../lua/errors.lua")),
        "legacy" => ("@<bmk>/legacy.lua", include_str!("../lua/legacy.lua")),
        "luajit_cmd" => (
            "@<bmk>/luajit_cmd.lua",
            include_str!("../lua/luajit_cmd.lua"),
        ),
        _ => return None,
    })
}

/// The Rust-made values of the `sysbench` table the prelude asks for on first use
/// (`host.api(name)`).
fn api(lua: &Lua, name: &str, argv: &[String]) -> mlua::Result<Value> {
    let report = |print: fn(&Table, &ReportSettings) -> mlua::Result<()>| {
        lua.create_function(move |lua, stat: Table| {
            let data = lua
                .app_data_ref::<StateData>()
                .expect("state data installed");
            print(&stat, &data.reports)
        })
    };
    let f = match name {
        "report_default" => report(report::print_text)?,
        "report_csv" => report(report::print_csv)?,
        "report_json" => report(report::print_json)?,
        "read_cmdline_options" => {
            lua.create_function(|lua, ()| read_cmdline_options(lua).map(|_| true))?
        }
        "print_test_options" => lua.create_function(|lua, ()| {
            let specs: Vec<_> = options::declared(lua)
                .map_err(|e| mlua::Error::RuntimeError(e.message))?
                .into_iter()
                .map(|d| d.spec)
                .collect();
            report::emit(&options::format_options_help(&specs));
            Ok(())
        })?,
        "shown_value" => lua.create_function(|lua, (name, value): (String, Value)| {
            if bmk_report::redact::is_secret(&name) {
                Ok(Value::String(
                    lua.create_string(bmk_report::redact::REDACTED)?,
                ))
            } else {
                Ok(value)
            }
        })?,
        "histogram" => {
            let histogram = lua.create_table()?;
            histogram.set(
                "new",
                lua.create_function(|_, (size, min, max): (f64, f64, f64)| {
                    UserHistogram::new(size.max(0.0) as usize, min, max)
                        .map_err(mlua::Error::RuntimeError)
                })?,
            )?;
            return Ok(Value::Table(histogram));
        }
        "argv" => {
            let t = lua.create_table()?;
            for (i, a) in argv.iter().enumerate() {
                t.raw_set(i as i64, a.as_str())?;
            }
            return Ok(Value::Table(t));
        }
        "sql_raw" => return Ok(Value::Table(crate::sql::raw_api(lua)?)),
        "sql_waits" => return Ok(Value::Table(crate::sql_waits::table(lua)?)),
        // SAFETY: a Lua C function that takes and returns nothing.
        "yield_slice" => unsafe { lua.create_c_function(crate::ffi::yield_slice)? },
        "abandon_event_if_stopping" => lua.create_function(|_, ()| {
            Ok(bmk_engine::with_current(|ctx| ctx.abandon_event_if_stopping()).unwrap_or(false))
        })?,
        "rand_uniq" => {
            lua.create_function(|_, (a, b): (u32, u32)| Ok(bmk_engine::rand::unique_in(a, b)))?
        }
        _ => return Err(mlua::Error::RuntimeError(format!("no host value '{name}'"))),
    };
    Ok(Value::Function(f))
}

/// Compiles Lua source once per process and loads the bytecode everywhere else.
///
/// Parsing is the largest transient allocation of a new state, and LuaJIT's allocator
/// keeps that peak resident; loading bytecode instead keeps each worker state small
/// (and starts it faster). Scripts keep their debug information, so error messages
/// still name the file and line.
#[derive(Default)]
pub(crate) struct BytecodeCache {
    chunks: Mutex<HashMap<String, Arc<Vec<u8>>>>,
    /// Drop debug information from the cached bytecode: for bmk's own chunks, whose
    /// line tables and local names would otherwise be a tenth of every worker state.
    strip: bool,
}

impl BytecodeCache {
    /// The function of chunk `name` with source `text`, from cached bytecode when
    /// another state compiled it already.
    pub(crate) fn load(&self, lua: &Lua, name: &str, text: &str) -> mlua::Result<Function> {
        let cached = self
            .chunks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned();
        if let Some(bc) = cached {
            return lua
                .load(&bc[..])
                .set_name(name)
                .set_mode(ChunkMode::Binary)
                .into_function();
        }
        let f = lua
            .load(strip_shebang(text).as_ref())
            .set_name(name)
            .set_mode(ChunkMode::Text)
            .into_function()?;
        self.chunks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), Arc::new(f.dump(self.strip)));
        Ok(f)
    }
}

/// Bytecode of bmk's own chunks (prelude, `sql.lua`), stripped, shared by every state.
pub(crate) fn shared_cache() -> &'static BytecodeCache {
    static CACHE: OnceLock<BytecodeCache> = OnceLock::new();
    CACHE.get_or_init(|| BytecodeCache {
        strip: true,
        ..BytecodeCache::default()
    })
}

/// Bytecode of the built-in script library's modules, shared by every state; unlike
/// [`shared_cache`] with debug information, as user scripts run through them.
fn module_cache() -> &'static BytecodeCache {
    static CACHE: OnceLock<BytecodeCache> = OnceLock::new();
    CACHE.get_or_init(BytecodeCache::default)
}

/// Standard libraries a state opens on first use (a global of that name, or
/// `require`), through the `_G` metatable and `package.preload` entries the prelude
/// sets up. Together they are a sixth of a fresh state's heap, and most scripts touch
/// few of them in a worker; `string`, `package`, `ffi` and the base library are
/// always open.
const LAZY_LIBS: [(&str, mlua::ffi::lua_CFunction); 7] = [
    ("table", mlua::ffi::luaopen_table),
    ("math", mlua::ffi::luaopen_math),
    ("io", mlua::ffi::luaopen_io),
    ("os", mlua::ffi::luaopen_os),
    ("debug", mlua::ffi::luaopen_debug),
    ("bit", mlua::ffi::luaopen_bit),
    ("jit", mlua::ffi::luaopen_jit),
];

/// Everything needed to build a state; shared by the main state and the workers.
#[derive(Clone)]
pub(crate) struct ScriptEnv {
    pub src: Arc<ScriptSource>,
    pub argv: Arc<Vec<String>>,
    pub command: String,
    pub library: Arc<dyn ModuleLibrary>,
    pub version_string: String,
    pub api: crate::ApiLevel,
    /// The general option keys `sysbench.opt` is limited to (invoked as sysbench).
    pub opt_view: Option<&'static [&'static str]>,
    /// A user's script may `require` only the built-in modules sysbench ships.
    pub shipped_modules_only: bool,
    /// The kinds of the options the script declares, by `sysbench.opt` key: one
    /// declared without a default reads as its type's empty value.
    pub script_kinds: Arc<HashMap<String, OptKind>>,
    pub options: Arc<OptionSet>,
    pub threads: u32,
    /// The script declares no `sysbench.cmdline.options` (a sysbench 0.5/1.0 style
    /// script): every option is also a global of its states, from the worker states'
    /// start and from the main state's command on.
    pub legacy_options: bool,
    /// The script's bytecode, compiled by the first state that loads it.
    pub script_cache: Arc<BytecodeCache>,
}

impl ScriptEnv {
    /// Whether states have sysbench 1.0's legacy API (`sb_rand`, `db_query`,
    /// `thread_id`, options as globals, ...): `"on"` at the 1.0 level, `"off"` invoked
    /// as sysbench 1.1, which has none of it, and `"notice"` as bmk at 1.1, where an
    /// old script still runs and is told once that it uses a removed API.
    pub(crate) fn legacy_api(&self) -> &'static str {
        match (self.api, self.opt_view.is_some()) {
            (crate::ApiLevel::V1_0, _) => "on",
            (crate::ApiLevel::V1_1, true) => "off",
            (crate::ApiLevel::V1_1, false) => "notice",
        }
    }

    pub(crate) fn report_settings(&self) -> ReportSettings {
        let rate = self
            .options
            .double("rate", 0.0)
            .max(self.options.double("tx_rate", 0.0));
        ReportSettings::new(
            self.options.double("percentile", 95.0),
            self.options.double("report_interval", 0.0),
            rate > 0.0,
        )
    }
}

/// How a script defines a command.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CommandInfo {
    /// The script implements it.
    pub defined: bool,
    /// Its threads run it at once (`sysbench.cmdline.PARALLEL_COMMAND`).
    pub parallel: bool,
    /// An entry of `sysbench.cmdline.commands`, not a global function.
    pub custom: bool,
}

/// A Lua state with the API installed and the script loaded.
pub(crate) struct ScriptState {
    pub lua: Lua,
    internal: Table,
    /// Declared last: closes the state after the handles above are dropped.
    _raw: OwnedState,
}

impl ScriptState {
    /// Creates a state for thread `tid` and runs the script's top-level code in it.
    pub(crate) fn new(env: &ScriptEnv, tid: u32) -> Result<ScriptState, LuaError> {
        let (raw, lua) = new_lua()?;
        let internal = install(&lua, env, tid)?;
        let state = ScriptState {
            lua,
            internal,
            _raw: raw,
        };
        state.load_script(env)?;
        if env.legacy_options && env.legacy_api() != "off" {
            state.export_options()?;
        }
        Ok(state)
    }

    fn load_script(&self, env: &ScriptEnv) -> Result<(), LuaError> {
        let name = format!("@{}", env.src.display_name());
        let chunk = env
            .script_cache
            .load(&self.lua, &name, &env.src.text)
            .map_err(LuaError::from)?;
        self.pcall(chunk, ())?;
        Ok(())
    }

    /// Calls `f` protected: a Lua error comes back as its message plus traceback.
    pub(crate) fn pcall(
        &self,
        f: Function,
        args: impl mlua::IntoLuaMulti,
    ) -> Result<MultiValue, LuaError> {
        let call: Function = self.internal.get("call")?;
        let mut args = args.into_lua_multi(&self.lua)?;
        args.push_front(Value::Function(f));
        let mut ret: MultiValue = call.call(args)?;
        // A panic an entry point caught fails the call: the Lua error it raised says
        // where, else (no status to raise it from, or the script caught it) the panic
        // itself.
        let panic = crate::ffi_panic::take_panic();
        match ret.pop_front() {
            Some(Value::Boolean(true)) => match panic {
                Some(message) => Err(LuaError::runtime(message)),
                None => Ok(ret),
            },
            _ => {
                let msg = match ret.pop_front() {
                    Some(Value::String(s)) => s.to_string_lossy(),
                    Some(other) => format!("{other:?}"),
                    None => "unknown error".into(),
                };
                Err(LuaError::runtime(msg))
            }
        }
    }

    /// A global function of the script, if it defines one.
    pub(crate) fn global_function(&self, name: &str) -> Option<Function> {
        match self.lua.globals().raw_get::<Value>(name) {
            Ok(Value::Function(f)) => Some(f),
            _ => None,
        }
    }

    /// Calls global function `name` with `args` if the script defines it.
    pub(crate) fn call_global(
        &self,
        name: &str,
        args: impl mlua::IntoLuaMulti,
    ) -> Result<Option<MultiValue>, LuaError> {
        match self.global_function(name) {
            Some(f) => self
                .pcall(f, args)
                .map(Some)
                .map_err(|e| e.in_function(name)),
            None => Ok(None),
        }
    }

    /// How the script defines a command name.
    pub(crate) fn command_info(&self, name: &str) -> CommandInfo {
        let f: Function = match self.internal.get("command_info") {
            Ok(f) => f,
            Err(_) => return CommandInfo::default(),
        };
        let (defined, parallel, custom) = f.call::<(bool, bool, bool)>(name).unwrap_or_default();
        CommandInfo {
            defined,
            parallel,
            custom,
        }
    }

    /// Runs command `name` in this state: whether it succeeded (a command fails
    /// quietly by returning false).
    pub(crate) fn call_command(&self, name: &str) -> Result<bool, LuaError> {
        let f: Function = self.internal.get("call_command")?;
        // sysbench names the function that failed: its command dispatcher for the
        // script's own commands, the command itself for global prepare()/cleanup().
        let failed_in = if self.command_info(name).custom {
            "sysbench.cmdline.call_command"
        } else {
            name
        };
        let ret = self.pcall(f, name).map_err(|e| e.in_function(failed_in))?;
        Ok(!matches!(ret.front(), Some(Value::Boolean(false))))
    }

    /// The `sysbench` table.
    pub(crate) fn sysbench(&self) -> Result<Table, LuaError> {
        Ok(self.lua.globals().get("sysbench")?)
    }

    /// A hook function from `sysbench.hooks`, if set.
    pub(crate) fn hook(&self, name: &str) -> Option<Function> {
        let hooks: Table = self.sysbench().ok()?.get("hooks").ok()?;
        match hooks.get::<Value>(name) {
            Ok(Value::Function(f)) => Some(f),
            _ => None,
        }
    }

    /// Makes `sysbench.opt` (and the data callbacks see) read `env.options` from now on.
    pub(crate) fn set_options(&self, env: &ScriptEnv) -> Result<(), LuaError> {
        if let Some(mut data) = self.lua.app_data_mut::<StateData>() {
            data.options = env.options.clone();
            data.script_kinds = env.script_kinds.clone();
            let json_open = data.reports.json_open.take();
            data.reports = env.report_settings();
            data.reports.json_open.replace(json_open);
        }
        let reset: Function = self.internal.get("reset_opt")?;
        reset.call::<()>(())?;
        if env.legacy_options && env.legacy_api() != "off" {
            self.export_options()?;
        }
        Ok(())
    }

    /// Makes every option that has a value readable as a global (underscore
    /// spelling, fetched on first read), as sysbench 1.0 does for scripts that
    /// declare no options.
    fn export_options(&self) -> Result<(), LuaError> {
        let export: Function = self.internal.get("export_options")?;
        export.call::<()>(())?;
        Ok(())
    }
}

/// A state on a [`StateHeap`](crate::heap::StateHeap) with every standard library,
/// as `Lua::unsafe_new_with(StdLib::ALL, ..)` would make it on the C allocator.
pub(crate) fn new_lua() -> Result<(OwnedState, Lua), LuaError> {
    let raw = OwnedState::new().ok_or_else(|| LuaError::runtime("cannot create a Lua state"))?;
    // SAFETY: a fresh state that lives until `raw` is dropped, which the caller does
    // after every handle derived from the returned Lua.
    let lua = unsafe {
        mlua::ffi::luaL_requiref(raw.as_ptr(), c"_G".as_ptr(), mlua::ffi::luaopen_base, 1);
        mlua::ffi::lua_pop(raw.as_ptr(), 1);
        Lua::get_or_init_from_ptr(raw.as_ptr()).clone()
    };
    // Scripts need `ffi` and `debug` (sysbench's own scripts use both); they are
    // trusted code, as in sysbench.
    // The libraries of LAZY_LIBS open on first use; `jit` is opened here once because
    // opening it is what switches the compiler on, and its table dropped until used.
    lua.load_std_libs(StdLib::PACKAGE | StdLib::STRING | StdLib::FFI | StdLib::JIT)?;
    let loaded: Table = lua
        .globals()
        .raw_get::<Table>("package")?
        .raw_get("loaded")?;
    for name in ["jit", "jit.util", "jit.opt"] {
        loaded.raw_set(name, Value::Nil)?;
    }
    lua.globals().raw_set("jit", Value::Nil)?;
    Ok((raw, lua))
}

/// `#!...` first lines are comments for sysbench scripts; keep the line count.
fn strip_shebang(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with("#!") || text.starts_with('#') {
        let rest = text.find('\n').map_or("", |i| &text[i..]);
        std::borrow::Cow::Owned(format!("--{rest}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Registers the whole API in `lua` and returns the prelude's internal functions.
fn install(lua: &Lua, env: &ScriptEnv, tid: u32) -> Result<Table, LuaError> {
    prepare_state(lua, env)?;
    let host = shared_host(lua, env)?;
    host.set("tid", tid)?;
    // `sysbench.opt` holds a value once a script reads it (the prelude's __index asks
    // `opt_source`): every option of the command line as a Lua value in every worker
    // state would be a tenth of the state, and scripts read a handful.
    host.set("opt", lua.create_table()?)?;
    host.set("lazy_libs", lazy_libs(lua)?)?;
    let internal: Table = prelude(lua)?.call(host)?;
    Ok(internal)
}

/// The prelude's function, which makes a worker's (or the state's) API from a `host`
/// table.
pub(crate) fn prelude(lua: &Lua) -> mlua::Result<Function> {
    shared_cache().load(lua, "@<bmk>/prelude.lua", PRELUDE)
}

/// What a state holds before any prelude runs in it, the same for all its workers:
/// the data the Rust callbacks read, `package.path` and the built-in module searcher,
/// and `print`.
pub(crate) fn prepare_state(lua: &Lua, env: &ScriptEnv) -> Result<(), LuaError> {
    lua.set_app_data(StateData {
        options: env.options.clone(),
        script_kinds: env.script_kinds.clone(),
        reports: env.report_settings(),
        opt_view: env.opt_view,
    });
    set_package_path(lua, env.src.path.as_deref())?;
    let restrict = env.shipped_modules_only.then(|| {
        // A built-in workload run by name may use the whole library.
        let builtin_main = env.src.path.is_none() && env.library.module(&env.src.name).is_some();
        builtin_main.then(|| format!("@{}", env.src.display_name()))
    });
    install_searcher(lua, env.library.clone(), restrict)?;
    lua.globals()
        .set("print", lua.create_function(report::print)?)?;
    Ok(())
}

/// The state's openers of the libraries a state opens on first use ([`LAZY_LIBS`]).
pub(crate) fn lazy_libs(lua: &Lua) -> mlua::Result<Table> {
    let lazy_libs = lua.create_table()?;
    for (name, open) in LAZY_LIBS {
        // SAFETY: `luaopen_*` are LuaJIT's own library openers, valid C functions.
        lazy_libs.raw_set(name, unsafe { lua.create_c_function(open) }?)?;
    }
    Ok(lazy_libs)
}

/// The `host` table the prelude builds on, but for what is a worker's own (`tid`,
/// `opt`, `lazy_libs`): the same for every worker of a state.
pub(crate) fn shared_host(lua: &Lua, env: &ScriptEnv) -> Result<Table, LuaError> {
    let host = lua.create_table()?;
    host.set("version", env.api.version())?;
    host.set("api_1_0", env.api == crate::ApiLevel::V1_0)?;
    host.set("version_string", env.version_string.as_str())?;
    // No command (a script run as a plain program) reads as nil.
    if !env.command.is_empty() {
        host.set("command", env.command.as_str())?;
    }
    host.set("script_path", env.src.display_name())?;
    host.set("legacy", env.legacy_api())?;
    host.set(
        "legacy_notice",
        lua.create_function(|_, ()| {
            legacy_notice();
            Ok(())
        })?,
    )?;
    host.set(
        "opt_source",
        lua.create_function(|lua, key: Option<String>| {
            let (options, kinds, view) = lua
                .app_data_ref::<StateData>()
                .map(|d| (d.options.clone(), d.script_kinds.clone(), d.opt_view))
                .unwrap_or_default();
            match key {
                Some(key) => options::opt_value(lua, &options, &kinds, view, &key),
                None => Ok(Value::Table(
                    lua.create_sequence_from(options::opt_keys(&options, &kinds, view))?,
                )),
            }
        })?,
    )?;
    host.set(
        "section",
        lua.create_function(|lua, name: String| {
            let (chunk, text) = section(&name)
                .ok_or_else(|| mlua::Error::RuntimeError(format!("no prelude section '{name}'")))?;
            shared_cache().load(lua, chunk, text)
        })?,
    )?;
    let argv = env.argv.clone();
    host.set(
        "api",
        lua.create_function(move |lua, name: String| api(lua, &name, &argv))?,
    )?;
    Ok(host)
}

/// `sysbench.cmdline.read_cmdline_options()`: fills `sysbench.opt` for the options the
/// script declared, from the values given (else their defaults).
pub(crate) fn read_cmdline_options(lua: &Lua) -> mlua::Result<()> {
    let declared = options::declared(lua).map_err(|e| mlua::Error::RuntimeError(e.message))?;
    let given = lua
        .app_data_ref::<StateData>()
        .map(|d| d.options.clone())
        .unwrap_or_default();
    let opt: Table = lua.globals().get::<Table>("sysbench")?.get("opt")?;
    for d in declared {
        let key = d.spec.key();
        let raw = given.raw(&key).or_else(|| d.spec.default.clone());
        let Some(raw) = raw else { continue };
        let value = d
            .spec
            .parse(&raw)
            .map_err(|e| mlua::Error::RuntimeError(e.to_string()))?;
        opt.raw_set(key, options::lua_value(lua, &value)?)?;
    }
    Ok(())
}

fn set_package_path(lua: &Lua, script: Option<&Path>) -> mlua::Result<()> {
    let package: Table = lua.globals().get("package")?;
    let current: String = package.get("path")?;
    let mut path = String::new();
    if let Some(dir) = script.and_then(Path::parent) {
        let dir = if dir.as_os_str().is_empty() {
            ".".to_string()
        } else {
            dir.display().to_string()
        };
        path.push_str(&format!("{dir}/?.lua;{dir}/?/init.lua;"));
    }
    if let Ok(dir) = std::env::var("SBTEST_SCRIPTDIR") {
        if !dir.is_empty() {
            path.push_str(&format!("{dir}/?.lua;"));
        }
    }
    path.push_str(&current);
    package.set("path", path)
}

/// Adds a `package.loaders` searcher for the built-in library, after the file searcher
/// so that a module next to the user's script takes precedence.
/// The chunk names of bmk's built-in modules start with this.
const BUILTIN_CHUNK: &str = "@[built-in]/";

/// Whether the Lua function that called `require` (the first Lua frame above the
/// searcher that is not bmk's own `require` of a worker sharing its state) is one of
/// bmk's built-in scripts.
fn required_by_builtin(lua: &Lua, builtin_main: Option<&str>) -> bool {
    for level in 1..10 {
        let Some(source) = lua.inspect_stack(level, |d| {
            let s = d.source();
            (s.what != "C").then(|| s.source.map(|x| x.to_string()).unwrap_or_default())
        }) else {
            return false;
        };
        match source {
            Some(source) if source.starts_with(OWN_CHUNK) => continue,
            Some(source) => {
                return source.starts_with(BUILTIN_CHUNK)
                    || builtin_main.is_some_and(|m| source == m)
            }
            None => {}
        }
    }
    false
}

/// The chunk names of bmk's own Lua code (prelude, API sections) start with this.
const OWN_CHUNK: &str = "@<bmk>/";

fn install_searcher(
    lua: &Lua,
    library: Arc<dyn ModuleLibrary>,
    restrict: Option<Option<String>>,
) -> mlua::Result<()> {
    let searcher = lua.create_function(move |lua, name: String| {
        // Invoked as sysbench, a user's script gets only what sysbench ships from the
        // library: bmk's own modules must not stand in for a file the user lacks.
        let allowed = match &restrict {
            Some(main) => {
                crate::sysbench_env::ships_module(&name)
                    || required_by_builtin(lua, main.as_deref())
            }
            None => true,
        };
        match library.module(&name).filter(|_| allowed) {
            Some(src) => {
                let f = module_cache().load(lua, &format!("@[built-in]/{name}.lua"), src)?;
                Ok(Value::Function(f))
            }
            // As sysbench, whose message lists only the files it tried.
            None if restrict.is_some() => Ok(Value::Nil),
            None => Ok(Value::String(lua.create_string(format!(
                "\n\tno module '{name}' in bmk's built-in script library"
            ))?)),
        }
    })?;
    let package: Table = lua.globals().get("package")?;
    let loaders: Table = package.get("loaders")?;
    // table.insert(loaders, 3, searcher), without opening the (lazy) table library.
    let len = loaders.raw_len();
    let at = 3.min(len + 1);
    for i in (at..=len).rev() {
        loaders.raw_set(i + 1, loaders.raw_get::<Value>(i)?)?;
    }
    loaders.raw_set(at, searcher)
}

/// Prints, once per process however many states ask, that the script uses sysbench
/// 1.0's legacy API.
fn legacy_notice() {
    static PRINTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !PRINTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "NOTE: this script uses sysbench 1.0's legacy API (sb_rand, db_query, thread_id, ...), which sysbench 1.1 removed; sysbench.rand, sysbench.sql and sysbench.tid replace it"
        );
    }
}
