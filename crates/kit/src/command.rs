//! `bmk kit ...`: the kit's commands, from their arguments to an exit code.
//!
//! ```text
//! bmk kit list
//! bmk kit show NAME [USERS [SECONDS] | LOADERS] [options]
//! bmk kit prepare NAME [LOADERS] [options]
//! bmk kit run NAME USERS SECONDS [options]
//! bmk kit sweep NAME --users=1,2,4,... --time=S [--pause=S] [--repeat=N] [--warmup=S] [options]
//! bmk kit k8s NAME USERS SECONDS --clients=N [--image=I] [--job=J] [--secret=S] [--results-claim=C] [options]
//! ```
//!
//! The kit's own options (`--users`, `--time`, `--pause`, `--repeat`, `--warmup`,
//! `--results-dir`, `--capture-interval`, `--capture-target`) are taken out; every other option goes to the
//! level's command line after the scenario's own, so it wins. `--target` and `--config`
//! go there too, and the kit reads the same target for its own server connection.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use bmk_report::host::{now_rfc3339, HostInfo};
use bmk_report::redact::{redact_args, redact_options};
use bmk_report::results::ToolInfo;
use bmk_report::results_dir::{RunManifest, DIR_SCHEMA_VERSION, RUN_SCHEMA_NAME};

use crate::catalog::{self, Action, Scenario, CATALOG, DEFAULT_LOADERS, DEFAULT_SOCKET, TOKENS};
use crate::error::KitError;
use crate::progress::{self, PrepareScreen, PrepareWork};
use crate::run_dir::{default_parent, RunDir};
use crate::sampler::DEFAULT_INTERVAL_S;
use crate::server;
use crate::sweep::{self, SweepEnd, SweepJob};
use crate::target::Targets;

/// What the binary hands the kit.
pub struct KitContext {
    /// The `bmk` binary (to run levels and prepares).
    pub program: PathBuf,
    /// bmk's version, for `run.json`.
    pub version: String,
    /// The whole argument vector, for `run.json` (redacted there).
    pub argv: Vec<String>,
    /// Set to a signal number by the binary's SIGINT/SIGTERM handlers.
    pub interrupt: Arc<AtomicUsize>,
}

/// The kit's own options, for `bmk kit help` (every other option goes to the runs).
const OPTIONS_HELP: &str = "kit options (every other option is passed to the runs):
  --target=NAME                 connection profile from bmk.toml
  --results-dir=DIR             the run's results directory, new or empty
                                (default: $BMK_HOME/results/<time>-<scenario>)
  --capture-interval=S          seconds between capture samples, 0 = no capture [5]
  --capture-target=NAME         sample another bmk.toml target's server instead
  --max-users-per-process=N     split a level with more users over several processes
  --users=LIST --time=S --warmup=S --pause=S --repeat=N
                                a sweep's levels, each level's length and warm-up,
                                the pause between levels, repeats of each level
See docs/kit.md.";

const USAGE: &str = "usage: bmk kit list | show NAME | prepare NAME [LOADERS] | run NAME USERS SECONDS | sweep NAME --users=1,2,4 --time=S [--pause=S] [--repeat=N] | k8s NAME USERS SECONDS --clients=N [--image=I] | ssh HOST... -- NAME USERS SECONDS";

/// The kit's options, taken out of the arguments.
#[derive(Debug, Default)]
struct KitArgs {
    positional: Vec<String>,
    /// `--name=value` of the kit's own options.
    own: BTreeMap<String, String>,
    /// Everything else, as `--name=value` (or `--name` for a bare switch).
    passed: Vec<String>,
}

const OWN: [&str; 8] = [
    "users",
    "time",
    "pause",
    "repeat",
    "warmup",
    "results-dir",
    "capture-interval",
    "capture-target",
];

fn split_args(args: &[String]) -> KitArgs {
    let mut out = KitArgs::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let Some(body) = a.strip_prefix("--").filter(|b| !b.is_empty()) else {
            out.positional.push(a.clone());
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => {
                // `--name value`: the kit's positional words all come before options.
                let v = args
                    .get(i)
                    .filter(|n| !n.starts_with("--") && !out.positional.is_empty())
                    .cloned();
                if v.is_some() {
                    i += 1;
                }
                (body.to_string(), v)
            }
        };
        let canon = name.replace('_', "-");
        if OWN.contains(&canon.as_str()) {
            out.own.insert(canon, value.unwrap_or_default());
        } else {
            out.passed.push(match value {
                Some(v) => format!("--{name}={v}"),
                None => format!("--{name}"),
            });
        }
    }
    out
}

fn number<T: std::str::FromStr>(what: &str, text: &str) -> Result<T, KitError> {
    text.trim()
        .parse()
        .map_err(|_| KitError::Usage(format!("{what}: '{text}' is not a valid number")))
}

fn seconds(what: &str, text: &str) -> Result<f64, KitError> {
    let v: f64 = number(what, text)?;
    if !(v >= 0.0 && v.is_finite()) {
        return Err(KitError::Usage(format!(
            "{what}: '{text}' is not a valid number of seconds"
        )));
    }
    Ok(v)
}

/// The option values the level's command line sets, `name` → value (later wins),
/// with the target's in front, for the kit's own server connection.
fn option_map(args: &[String]) -> Result<BTreeMap<String, String>, KitError> {
    let mut map = BTreeMap::new();
    let mut pairs: Vec<(String, String)> = args
        .iter()
        .filter_map(|a| a.strip_prefix("--"))
        .map(|b| match b.split_once('=') {
            Some((n, v)) => (n.replace('_', "-"), v.to_string()),
            None => (b.replace('_', "-"), "on".to_string()),
        })
        .collect();
    let get = |k: &str| {
        pairs
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    if let Some(target) = get("target") {
        let home = std::env::var_os("BMK_HOME").map(PathBuf::from);
        let file = Targets::locate(get("config").map(PathBuf::from).as_deref(), home.as_deref())?;
        let targets = Targets::load(&file)?;
        let mut t = targets.options(&target, &|v| std::env::var(v).ok())?;
        t.append(&mut pairs);
        pairs = t;
    }
    for (k, v) in pairs {
        map.insert(k, v);
    }
    Ok(map)
}

/// The server `--capture-target=NAME` names: the one to sample when the benchmark's
/// connections reach it through something else (a proxy, a load balancer), or another
/// server whose status matters during the run.
fn capture_target(
    target: &str,
    config: Option<&String>,
) -> Result<bmk_sql::DriverConfig, KitError> {
    if target.is_empty() {
        return Err(KitError::Usage(
            "--capture-target needs the name of a bmk.toml target".into(),
        ));
    }
    let mut args = vec![format!("--target={target}")];
    args.extend(config.map(|c| format!("--config={c}")));
    let options = option_map(&args)?;
    server::driver_config(&|k| options.get(k).cloned())
}

/// The socket a `socket` scenario uses: the target's, else the usual MariaDB one.
fn socket_path(passed: &[String]) -> String {
    option_map(passed)
        .ok()
        .and_then(|m| m.get("mysql-socket").cloned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_SOCKET.to_string())
}

/// A command line as a shell would take it back.
pub fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=./,:@%+".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `bmk kit ARGS`; returns the exit code.
pub fn main(args: &[String], ctx: &KitContext) -> Result<i32, KitError> {
    let Some((cmd, rest)) = args.split_first() else {
        return Err(KitError::Usage(USAGE.into()));
    };
    let a = split_args(rest);
    match cmd.as_str() {
        "list" => {
            list(&mut std::io::stdout().lock());
            Ok(0)
        }
        "show" => show(&a),
        "prepare" => prepare(&a, ctx),
        "run" => run(&a, ctx),
        "sweep" => sweep_cmd(&a, ctx),
        "k8s" => k8s_cmd(a, ctx),
        "help" | "--help" => {
            println!("{USAGE}\n\n{OPTIONS_HELP}");
            Ok(0)
        }
        other => Err(KitError::Usage(format!(
            "unknown kit command '{other}' (use list, show, prepare, run, sweep, k8s or ssh)"
        ))),
    }
}

/// The options of `bmk kit k8s` that shape the manifest rather than the clients' runs.
const K8S_OWN: [&str; 9] = [
    "clients",
    "image",
    "job",
    "secret",
    "secret-key",
    "results-claim",
    "cpu",
    "memory",
    "barrier-timeout",
];

fn k8s_cmd(mut a: KitArgs, ctx: &KitContext) -> Result<i32, KitError> {
    let usage = || {
        KitError::Usage(
            "usage: bmk kit k8s NAME USERS SECONDS --clients=N [--image=IMAGE] [--job=NAME] [--secret=NAME] [--secret-key=KEY] [--results-claim=NAME] [--cpu=Q] [--memory=Q] [--barrier-timeout=S] [options]".into(),
        )
    };
    let [name, users, secs] = a.positional.as_slice() else {
        return Err(usage());
    };
    let mut own = BTreeMap::new();
    a.passed.retain(|arg| {
        let body = arg.trim_start_matches("--");
        let (n, v) = body.split_once('=').unwrap_or((body, ""));
        let n = n.replace('_', "-");
        if K8S_OWN.contains(&n.as_str()) {
            own.insert(n, v.to_string());
            false
        } else {
            true
        }
    });
    // The kit's sweep options mean nothing here; they are refused rather than lost.
    if let Some(k) = a.own.keys().next() {
        return Err(KitError::Usage(format!(
            "--{k} is not an option of 'bmk kit k8s' (USERS and SECONDS are given as words)"
        )));
    }
    let clients = own.get("clients").ok_or_else(|| {
        KitError::Usage("'bmk kit k8s' needs --clients=N (the client pods)".into())
    })?;
    let get = |k: &str, default: &str| own.get(k).cloned().unwrap_or_else(|| default.to_string());
    let users: u32 = number("USERS", users)?;
    let seconds: u64 = number("SECONDS", secs)?;
    let stamp: String = now_rfc3339()
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .take(15)
        .collect::<String>()
        .to_ascii_lowercase();
    let job = crate::k8s::K8sJob {
        scenario: name.clone(),
        users,
        seconds,
        clients: number("--clients", clients)?,
        job: own
            .get("job")
            .cloned()
            .unwrap_or_else(|| crate::k8s::default_job_name(name, users, &stamp)),
        image: get("image", &crate::k8s::default_image(&ctx.version)),
        secret: get("secret", "bmk-db"),
        secret_key: get("secret-key", "password"),
        results_claim: get("results-claim", "bmk-results"),
        cpu: get("cpu", "2"),
        memory: get("memory", "2Gi"),
        barrier_timeout: number("--barrier-timeout", &get("barrier-timeout", "600"))?,
        passed: a.passed.clone(),
    };
    let manifest = crate::k8s::manifest(&job)?;
    let text = serde_json::to_string_pretty(&manifest)
        .map_err(|e| KitError::Usage(format!("cannot print the manifest: {e}")))?;
    println!("{text}");
    Ok(0)
}

/// Prints the catalog.
pub fn list(out: &mut dyn Write) {
    let _ = writeln!(
        out,
        "Scenario names: a head and '-'-separated tokens (the BMK kit's script names):"
    );
    for (t, m) in TOKENS {
        let _ = writeln!(out, "  {t:<48} {m}");
    }
    let _ = writeln!(
        out,
        "\nCatalog ('bmk kit show NAME' prints the plain command line):"
    );
    for (n, m) in CATALOG {
        let _ = writeln!(out, "  {n:<48} {m}");
    }
}

fn scenario_of(a: &KitArgs) -> Result<Scenario, KitError> {
    let name = a.positional.first().ok_or_else(|| {
        KitError::Usage(format!(
            "a scenario name is needed; 'bmk kit list' shows them. {USAGE}"
        ))
    })?;
    catalog::parse(name)
}

fn show(a: &KitArgs) -> Result<i32, KitError> {
    let s = scenario_of(a)?;
    let pos = |i: usize| a.positional.get(i);
    let words = match s.action {
        Action::Prepare => {
            let loaders = pos(1)
                .map(|v| number::<u32>("LOADERS", v))
                .transpose()?
                .unwrap_or(DEFAULT_LOADERS);
            s.args(loaders, 0, &socket_path(&a.passed), &a.passed)
        }
        Action::Run => {
            let users = pos(1)
                .map(|v| number::<u32>("USERS", v))
                .transpose()?
                .unwrap_or(1);
            let secs = pos(2)
                .map(|v| number::<u64>("SECONDS", v))
                .transpose()?
                .unwrap_or(300);
            s.args(users, secs, &socket_path(&a.passed), &a.passed)
        }
    };
    println!("bmk {}", shell_line(&words));
    Ok(0)
}

fn prepare(a: &KitArgs, ctx: &KitContext) -> Result<i32, KitError> {
    let s = scenario_of(a)?;
    if s.action != Action::Prepare {
        return Err(KitError::Usage(format!(
            "'{}' is a run scenario: use 'bmk kit run {} USERS SECONDS'",
            s.name, s.name
        )));
    }
    let loaders = match a.positional.get(1) {
        Some(v) => number::<u32>("LOADERS", v)?,
        None => DEFAULT_LOADERS,
    };
    let words = s.args(loaders, 0, &socket_path(&a.passed), &a.passed);
    let mut cmd = std::process::Command::new(&ctx.program);
    cmd.args(&words);
    let work = PrepareWork::of(&words).filter(|_| progress::live_terminal());
    let Some(work) = work else {
        // Not on a terminal: the prepare's output passes through untouched.
        let status = cmd.status().map_err(|e| KitError::io(&ctx.program, e))?;
        return Ok(status.code().unwrap_or(1));
    };
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| KitError::io(&ctx.program, e))?;
    let mut screen = PrepareScreen::new(work, indicatif::ProgressDrawTarget::stderr());
    if let Some(out) = child.stdout.take() {
        use std::io::BufRead;
        for line in std::io::BufReader::new(out).lines() {
            match line {
                Ok(l) => screen.line(&l),
                Err(_) => break,
            }
        }
    }
    screen.finish();
    let status = child.wait().map_err(|e| KitError::io(&ctx.program, e))?;
    Ok(status.code().unwrap_or(1))
}

fn run_scenario(a: &KitArgs, what: &str) -> Result<Scenario, KitError> {
    let s = scenario_of(a)?;
    if s.action != Action::Run {
        return Err(KitError::Usage(format!(
            "'{}' is a prepare scenario: use 'bmk kit prepare {} [LOADERS]', not '{what}'",
            s.name, s.name
        )));
    }
    Ok(s)
}

fn run(a: &KitArgs, ctx: &KitContext) -> Result<i32, KitError> {
    let s = run_scenario(a, "run")?;
    let (Some(users), Some(secs)) = (a.positional.get(1), a.positional.get(2)) else {
        return Err(KitError::Usage(format!(
            "usage: bmk kit run {} USERS SECONDS [options]",
            s.name
        )));
    };
    let users: u32 = number("USERS", users)?;
    let secs: u64 = number("SECONDS", secs)?;
    if users == 0 {
        return Err(KitError::Usage("USERS: at least 1".into()));
    }
    let plan = sweep::single(users, secs);
    execute(&s, plan, a, ctx)
}

fn sweep_cmd(a: &KitArgs, ctx: &KitContext) -> Result<i32, KitError> {
    let s = run_scenario(a, "sweep")?;
    if a.positional.len() > 1 {
        return Err(KitError::Usage(format!(
            "unexpected '{}': a sweep takes its levels as --users=1,2,4,...",
            a.positional[1]
        )));
    }
    let users = a.own.get("users").ok_or_else(|| {
        KitError::Usage("a sweep needs --users=1,2,4,... (the load levels)".into())
    })?;
    let time = a
        .own
        .get("time")
        .ok_or_else(|| KitError::Usage("a sweep needs --time=SECONDS (per level)".into()))?;
    let plan = bmk_report::results_dir::SweepPlan {
        users: sweep::parse_users(users)?,
        time_s: seconds("--time", time)?.round(),
        warmup_s: a
            .own
            .get("warmup")
            .map(|v| seconds("--warmup", v))
            .transpose()?
            .unwrap_or(0.0)
            .round(),
        pause_s: a
            .own
            .get("pause")
            .map(|v| seconds("--pause", v))
            .transpose()?
            .unwrap_or(0.0),
        repeat: a
            .own
            .get("repeat")
            .map(|v| number::<u32>("--repeat", v))
            .transpose()?
            .unwrap_or(1)
            .max(1),
        max_users_per_process: 0,
    };
    execute(&s, plan, a, ctx)
}

fn execute(
    s: &Scenario,
    mut plan: bmk_report::results_dir::SweepPlan,
    a: &KitArgs,
    ctx: &KitContext,
) -> Result<i32, KitError> {
    // Each level's process splits itself when it has more users than this; the plan
    // records it for run.json.
    if let Some(v) = option_map(&a.passed)?.get("max-users-per-process") {
        plan.max_users_per_process = number("--max-users-per-process", v)?;
    }
    let socket = socket_path(&a.passed);
    let mut passed = a.passed.clone();
    if plan.warmup_s > 0.0 {
        passed.insert(0, format!("--warmup-time={}", plan.warmup_s));
    }
    let time = plan.time_s as u64;
    let level_args = |users: u32| s.args(users, time, &socket, &passed);
    // The options every level shares, for run.json: the scenario's and the passed ones.
    let shared = s.args(1, time, &socket, &passed);
    let options = option_map(&shared)?;
    let driver = if s.test.is_empty() {
        None
    } else {
        Some(server::driver_config(&|k| options.get(k).cloned())?)
    };
    let interval = match a.own.get("capture-interval") {
        Some(v) => seconds("--capture-interval", v)?,
        None => DEFAULT_INTERVAL_S,
    };
    let capture_driver = match a.own.get("capture-target") {
        Some(target) => Some(capture_target(target, options.get("config"))?),
        None => driver.clone(),
    };
    let manifest = RunManifest {
        schema: RUN_SCHEMA_NAME.into(),
        schema_version: DIR_SCHEMA_VERSION,
        tool: ToolInfo {
            name: "bmk".into(),
            version: ctx.version.clone(),
        },
        scenario: Some(s.name.clone()),
        test: s.test.clone(),
        command_line: redact_args(&ctx.argv),
        options: redact_options(options.into_iter().filter(|(k, _)| k != "threads"))
            .into_iter()
            .collect(),
        sweep: Some(plan.clone()),
        host: HostInfo::collect(),
        server: None,
        capture_interval_s: interval,
        start_time: now_rfc3339(),
        end_time: None,
        status: "running".into(),
    };
    let mut dir = match a.own.get("results-dir") {
        Some(d) => RunDir::create_at(Path::new(d), manifest)?,
        None => RunDir::create_new(&default_parent(), &s.name, manifest)?,
    };
    // The server's facts at the start; a server the kit cannot reach is the level's
    // business to report, not a reason to refuse the sweep.
    if let Some(cfg) = driver.as_ref() {
        if let Ok(mut conn) = server::connect(cfg) {
            if let Ok((info, _)) = server::describe(cfg, conn.as_mut()) {
                dir.update_manifest(|m| m.server = Some(info))?;
            }
            conn.disconnect();
        }
    }
    println!("[kit] results: {}", dir.path().display());
    let job = SweepJob {
        program: &ctx.program,
        plan,
        level_args: &level_args,
        driver: capture_driver,
        capture_interval: Duration::from_secs_f64(interval),
        interrupt: ctx.interrupt.clone(),
        live: true,
    };
    let end = sweep::run(&job, &mut dir)?;
    dir.finish(end.status())?;
    print_summary(&dir);
    Ok(match end {
        SweepEnd::Completed => 0,
        SweepEnd::Interrupted(sig) => 128 + sig,
        SweepEnd::Failed(code) => code,
    })
}

fn print_summary(dir: &RunDir) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "\n[kit] summary ({}):", dir.path().display());
    let _ = writeln!(
        out,
        "{:>6} {:>6} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10} {:>8}  status",
        "users", "repeat", "tps", "qps", "avg ms", "p95 ms", "p99 ms", "max ms", "errors"
    );
    for r in dir.summary() {
        let _ = writeln!(
            out,
            "{:>6} {:>6} {:>12.2} {:>12.2} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>8}  {}",
            r.users,
            r.repeat,
            r.tps,
            r.qps,
            r.avg_ms,
            r.p95_ms,
            r.p99_ms,
            r.max_ms,
            r.errors,
            r.status
        );
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_help_names_every_option_of_the_kit() {
        for name in OWN.iter().chain(["target", "max-users-per-process"].iter()) {
            assert!(
                OPTIONS_HELP.contains(&format!("--{name}=")),
                "kit help does not mention --{name}"
            );
        }
    }

    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn kit_options_are_taken_out_and_the_rest_passed_on() {
        let a = split_args(&v("OLTP_RW_1M_1tab-trx --users 1,2 --time=3 --db-driver sqlite --sqlite-db=x.db --verbose --capture_interval=1"));
        assert_eq!(a.positional, ["OLTP_RW_1M_1tab-trx"]);
        assert_eq!(a.own["users"], "1,2");
        assert_eq!(a.own["time"], "3");
        assert_eq!(a.own["capture-interval"], "1");
        assert_eq!(
            a.passed,
            ["--db-driver=sqlite", "--sqlite-db=x.db", "--verbose"]
        );
    }

    #[test]
    fn shell_lines_quote_what_needs_it() {
        assert_eq!(
            shell_line(&v("oltp_read_write --tables=8")),
            "oltp_read_write --tables=8"
        );
        assert_eq!(
            shell_line(&["--mysql-session-options=SET a=1; SET b='x'".to_string()]),
            "'--mysql-session-options=SET a=1; SET b='\\''x'\\'''"
        );
    }
}
