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
//! Each subcommand's own options (declared in [`crate::args`], which parses them with
//! clap) are taken out; every other option goes to the level's command line after the
//! scenario's own, so it wins. `--target` and `--config` go there too, and the kit
//! reads the same target for its own server connection.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use bmk_results::results_dir::{
    Continuation, LevelInfo, ProbeVerdict, RunManifest, RunStart, SearchAnswer, SearchPlan,
    ANSWER_ROW,
};
use bmk_results::results_file::ResultsFile;
use clap::FromArgMatches;

use crate::args::{K8sArgs, KitCommand};
use crate::catalog::{self, Action, Scenario, CATALOG, DEFAULT_LOADERS, DEFAULT_SOCKET, TOKENS};
use crate::continuation::{self, Mode};
use crate::data_size::DataClaim;
use crate::error::KitError;
use crate::objective::Objective;
use crate::progress::{self, PrepareScreen, PrepareWork};
use crate::run_dir::{default_parent, RunDir};
use crate::sampler::DEFAULT_INTERVAL_S;
use crate::search::{self, load_text, By, Figures, Probe, Spec, Step};
use crate::server;
use crate::sweep::{self, Level, SweepEnd, SweepJob};
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
    /// The sanity checks of a finished results directory, one line each (the analysis
    /// lives above the kit, so the binary passes it in); `Err` says why they could not
    /// run.
    pub checks: fn(&Path) -> Result<Vec<String>, String>,
    /// `--live=ADDR`: the report page served while the run goes (the page is the
    /// analysis's, above the kit). Called before the results directory exists, it
    /// listens on ADDR or says why it cannot; what it returns starts serving a results
    /// directory, until the process exits.
    pub live_page: fn(&str) -> Result<LivePage, String>,
    /// The sanity checks' findings that make one level of a results directory (by its
    /// 1-based index) untrustworthy as a search probe, one line each.
    pub probe_checks: fn(&Path, u32) -> Result<Vec<String>, String>,
}

/// Starts serving the live page of a results directory (see [`KitContext::live_page`]).
pub type LivePage = Box<dyn FnOnce(&Path)>;

/// The kit's options, taken out of the arguments.
#[derive(Debug, Default)]
struct KitArgs {
    positional: Vec<String>,
    /// `--name=value` of the kit's own options.
    own: BTreeMap<String, String>,
    /// Everything else, as `--name=value` (or `--name` for a bare switch).
    passed: Vec<String>,
}

impl KitArgs {
    fn new(positional: impl IntoIterator<Item = Option<String>>, passed: Vec<String>) -> KitArgs {
        KitArgs {
            positional: positional.into_iter().flatten().collect(),
            own: BTreeMap::new(),
            passed,
        }
    }

    /// Records `--name=value` when the option was given.
    fn own(mut self, name: &str, value: Option<String>) -> KitArgs {
        if let Some(v) = value {
            self.own.insert(name.to_string(), v);
        }
        self
    }

    fn capture(self, c: crate::args::CaptureArgs) -> KitArgs {
        self.own("results-dir", c.results_dir)
            .own("capture-interval", c.capture_interval)
            .own("capture-target", c.capture_target)
            .own("live", c.live)
    }

    fn again(self, g: crate::args::AgainArgs) -> KitArgs {
        self.own("resume", g.resume).own("only-level", g.only_level)
    }
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

/// The kit's arguments parsed by [`crate::args`]: the subcommand with its own options,
/// and the options passed on to the runs. `Err(Ok(0))` when a help text was printed.
pub fn parse(args: &[String]) -> Result<(KitCommand, Vec<String>), Result<i32, KitError>> {
    let mut cmd = crate::args::command();
    // A bare `bmk kit` (or `bmk kit help`) is a request for the overview.
    if args.is_empty() || args[0] == "help" {
        let sub = args.get(1).map(String::as_str);
        return Err(match crate::args::help(sub) {
            Some(text) => {
                print!("{text}");
                Ok(0)
            }
            None => Err(KitError::Usage(format!(
                "unknown kit command '{}' (see 'bmk kit --help')",
                sub.unwrap_or_default()
            ))),
        });
    }
    let split = crate::args::split(&cmd, args);
    let argv = std::iter::once("kit".to_string()).chain(split.own);
    // Where a mistake in a known subcommand's arguments is explained.
    let sub = cmd
        .find_subcommand(&args[0])
        .map(|c| c.get_name().to_string());
    let failure = |cmd: &mut clap::Command, e: &clap::Error| clap_failure(cmd, e, sub.as_deref());
    match crate::args::KitCli::from_arg_matches_mut(&mut match cmd.try_get_matches_from_mut(argv) {
        Ok(m) => m,
        Err(e) => return Err(failure(&mut cmd, &e)),
    }) {
        Ok(cli) => Ok((cli.command, split.passed)),
        Err(e) => Err(failure(&mut cmd, &e)),
    }
}

fn clap_failure(
    cmd: &mut clap::Command,
    e: &clap::Error,
    sub: Option<&str>,
) -> Result<i32, KitError> {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            print!("{}", e.render());
            Ok(0)
        }
        _ => {
            let line = crate::args::usage_line(cmd, e);
            Err(KitError::Usage(match sub {
                Some(sub) => line.replace(
                    "(see 'bmk kit --help')",
                    &format!("(see 'bmk kit {sub} --help')"),
                ),
                None => line,
            }))
        }
    }
}

/// Runs `bmk kit ARGS`; returns the exit code.
pub fn main(args: &[String], ctx: &KitContext) -> Result<i32, KitError> {
    let (command, passed) = match parse(args) {
        Ok(parsed) => parsed,
        Err(done) => return done,
    };
    match command {
        KitCommand::List => {
            list(&mut std::io::stdout().lock());
            Ok(0)
        }
        KitCommand::Show(s) => {
            let words = std::iter::once(Some(s.name)).chain(s.numbers.into_iter().map(Some));
            show(&KitArgs::new(words, passed))
        }
        KitCommand::Prepare(p) => prepare(&KitArgs::new([Some(p.name), p.loaders], passed), ctx),
        KitCommand::Run(r) => run(
            &KitArgs::new([Some(r.name), r.users, r.seconds], passed).capture(r.capture),
            ctx,
        ),
        KitCommand::Sweep(s) => sweep_cmd(
            &KitArgs::new([Some(s.name)], passed)
                .own("users", s.users)
                .own("time", s.time)
                .own("warmup", s.warmup)
                .own("pause", s.pause)
                .own("repeat", s.repeat)
                .capture(s.capture)
                .again(s.again),
            ctx,
        ),
        KitCommand::Search(s) => {
            let slo = s.slo.clone();
            search_cmd(
                &KitArgs::new([Some(s.name)], passed)
                    .own("by", s.by)
                    .own("start", s.start)
                    .own("max-users", s.max_users)
                    .own("max-rate", s.max_rate)
                    .own("precision", s.precision)
                    .own("users", s.users)
                    .own("time", s.time)
                    .own("warmup", s.warmup)
                    .own("pause", s.pause)
                    .capture(s.capture)
                    .again(s.again),
                &slo,
                ctx,
            )
        }
        KitCommand::K8s(k) => k8s_cmd(k, passed, ctx),
        // `kit ssh` parses its own arguments through `parse` (`crate::ssh::main`, which
        // the binary calls); reaching here means it was not given the chance.
        KitCommand::Ssh(_) => Err(KitError::Usage(
            "'bmk kit ssh' is run by the bmk binary".into(),
        )),
    }
}

/// The options of `bmk kit sweep`, which mean nothing to `bmk kit k8s`: refused rather
/// than passed to the pods' runs.
const SWEEP_ONLY: [&str; 8] = [
    "users",
    "time",
    "pause",
    "repeat",
    "warmup",
    "results-dir",
    "capture-interval",
    "capture-target",
];

fn k8s_cmd(k: K8sArgs, passed: Vec<String>, ctx: &KitContext) -> Result<i32, KitError> {
    let usage = || {
        KitError::Usage(
            "usage: bmk kit k8s NAME USERS SECONDS --clients=N [--image=IMAGE] [--job=NAME] [--secret=NAME] [--secret-key=KEY] [--results-claim=NAME] [--cpu=Q] [--memory=Q] [--barrier-timeout=S] [options]".into(),
        )
    };
    let (name, Some(users), Some(secs)) = (&k.name, &k.users, &k.seconds) else {
        return Err(usage());
    };
    if let Some(opt) = passed.iter().find(|p| {
        let n = p.trim_start_matches("--").replace('_', "-");
        SWEEP_ONLY.contains(&n.split('=').next().unwrap_or(&n))
    }) {
        return Err(KitError::Usage(format!(
            "{} is not an option of 'bmk kit k8s' (USERS and SECONDS are given as words)",
            opt.split('=').next().unwrap_or(opt)
        )));
    }
    let clients = k.clients.as_ref().ok_or_else(|| {
        KitError::Usage("'bmk kit k8s' needs --clients=N (the client pods)".into())
    })?;
    let get = |v: &Option<String>, default: &str| v.clone().unwrap_or_else(|| default.to_string());
    let users: u32 = number("USERS", users)?;
    let seconds: u64 = number("SECONDS", secs)?;
    let stamp: String = bmk_report::host::now_rfc3339()
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
        job: k
            .job
            .clone()
            .unwrap_or_else(|| crate::k8s::default_job_name(name, users, &stamp)),
        image: get(&k.image, &crate::k8s::default_image(&ctx.version)),
        secret: get(&k.secret, "bmk-db"),
        secret_key: get(&k.secret_key, "password"),
        results_claim: get(&k.results_claim, "bmk-results"),
        cpu: get(&k.cpu, "2"),
        memory: get(&k.memory, "2Gi"),
        barrier_timeout: number("--barrier-timeout", &get(&k.barrier_timeout, "600"))?,
        passed,
    };
    let manifest = crate::k8s::manifest(&job)?;
    let text = serde_json::to_string_pretty(&manifest)
        .map_err(|e| KitError::Usage(format!("cannot print the manifest: {e}")))?;
    println!("{text}");
    Ok(0)
}

/// Names wider than this get their description on the next line, so one long token
/// does not push every other row's description far right.
const LIST_NAME_WIDTH: usize = 48;

/// Rows of `name  description`, the name column as wide as the longest name of the
/// section that fits [`LIST_NAME_WIDTH`]; a longer name stands alone on its line with
/// the description below, in the column. No row runs into its description.
fn list_rows(out: &mut dyn Write, rows: &[(&str, &str)]) {
    let width = rows
        .iter()
        .map(|(name, _)| name.chars().count())
        .filter(|w| *w <= LIST_NAME_WIDTH)
        .max()
        .unwrap_or(0);
    for (name, what) in rows {
        if name.chars().count() > width {
            let _ = writeln!(out, "  {name}\n  {:width$}  {what}", "");
        } else {
            let _ = writeln!(out, "  {name:<width$}  {what}");
        }
    }
}

/// Prints the catalog.
pub fn list(out: &mut dyn Write) {
    let _ = writeln!(
        out,
        "Scenario names: a head and '-'-separated tokens (the BMK kit's script names):"
    );
    list_rows(out, TOKENS);
    let _ = writeln!(
        out,
        "\nCatalog ('bmk kit show NAME' prints the plain command line):"
    );
    list_rows(out, CATALOG);
}

fn scenario_of(a: &KitArgs) -> Result<Scenario, KitError> {
    let name = a.positional.first().ok_or_else(|| {
        KitError::Usage(
            "a scenario name is needed; 'bmk kit list' shows them (see 'bmk kit --help')".into(),
        )
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
    // The file the prepare reports rows and index builds to; without it the bar counts
    // the units started.
    let report = tempfile::NamedTempFile::new().ok();
    let reader = report.as_ref().and_then(|f| f.reopen().ok());
    if let Some(f) = &report {
        cmd.env(progress::LOAD_PROGRESS_ENV, f.path());
    }
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| KitError::io(&ctx.program, e))?;
    let mut screen = PrepareScreen::new(work, indicatif::ProgressDrawTarget::stderr(), reader);
    // The child's lines arrive on a thread, so the bar also moves between lines (an
    // index build prints nothing until it ends).
    let (lines, arrived) = std::sync::mpsc::channel();
    let reader = child.stdout.take().map(|out| {
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        })
    });
    loop {
        match arrived.recv_timeout(Duration::from_millis(250)) {
            Ok(line) => screen.line(&line),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => screen.tick(),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    if let Some(r) = reader {
        let _ = r.join();
    }
    let status = child.wait().map_err(|e| KitError::io(&ctx.program, e))?;
    // The bar ends with the work: the process has exited.
    screen.finish();
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
    execute(&s, plan, None, a, ctx, "bmk kit run")
}

/// The per-level timing options shared by `sweep` and `search`.
fn timing(a: &KitArgs, what: &str) -> Result<(f64, f64, f64), KitError> {
    let time = a
        .own
        .get("time")
        .ok_or_else(|| KitError::Usage(format!("{what} needs --time=SECONDS (per level)")))?;
    let get = |name: &str| -> Result<f64, KitError> {
        a.own
            .get(name)
            .map(|v| seconds(&format!("--{name}"), v))
            .transpose()
            .map(|v| v.unwrap_or(0.0))
    };
    Ok((
        seconds("--time", time)?.round(),
        get("warmup")?.round(),
        get("pause")?,
    ))
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
    let (time_s, warmup_s, pause_s) = timing(a, "a sweep")?;
    let plan = bmk_results::results_dir::SweepPlan {
        users: sweep::parse_users(users)?,
        time_s,
        warmup_s,
        pause_s,
        repeat: a
            .own
            .get("repeat")
            .map(|v| number::<u32>("--repeat", v))
            .transpose()?
            .unwrap_or(1)
            .max(1),
        max_users_per_process: 0,
    };
    execute(&s, plan, None, a, ctx, "bmk kit sweep")
}

/// `--precision=5%` or `--precision=0.05`.
fn precision(text: &str) -> Result<f64, KitError> {
    let bad = || {
        KitError::Usage(format!(
            "--precision: '{text}' is not a precision between 0 and 100 % (e.g. --precision=5%)"
        ))
    };
    let v = match text.trim().strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
        None => text.trim().parse::<f64>().map_err(|_| bad())?,
    };
    if !(v > 0.0 && v < 1.0) {
        return Err(bad());
    }
    Ok(v)
}

fn search_cmd(a: &KitArgs, slo: &[String], ctx: &KitContext) -> Result<i32, KitError> {
    let s = run_scenario(a, "search")?;
    if a.positional.len() > 1 {
        return Err(KitError::Usage(format!(
            "unexpected '{}': a search finds its levels itself",
            a.positional[1]
        )));
    }
    if slo.is_empty() {
        return Err(KitError::Usage(
            "a search needs at least one objective: --slo='p99<=20ms' (see 'bmk kit search --help')"
                .into(),
        ));
    }
    let objectives = slo
        .iter()
        .map(|t| Objective::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    let by = match a.own.get("by").map(String::as_str) {
        None | Some("users") => By::Users,
        Some("rate") => By::Rate,
        Some(other) => {
            return Err(KitError::Usage(format!(
                "--by: '{other}' is neither users nor rate"
            )))
        }
    };
    let positive = |name: &str, v: &String| -> Result<f64, KitError> {
        let n: f64 = number(name, v)?;
        if !(n > 0.0 && n.is_finite()) {
            return Err(KitError::Usage(format!("{name}: '{v}' must be above 0")));
        }
        Ok(n)
    };
    let (wrong_max, max) = match by {
        By::Users => (
            "max-rate",
            a.own.get("max-users").map(|v| positive("--max-users", v)),
        ),
        By::Rate => (
            "max-users",
            a.own.get("max-rate").map(|v| positive("--max-rate", v)),
        ),
    };
    if a.own.contains_key(wrong_max) {
        return Err(KitError::Usage(format!(
            "--{wrong_max} does not apply to a search by {}",
            by.name()
        )));
    }
    if by == By::Users && a.own.contains_key("users") {
        return Err(KitError::Usage(
            "--users sets the users of a search by rate; a search by users varies them (--start, --max-users)".into(),
        ));
    }
    if by == By::Rate && option_map(&a.passed)?.contains_key("rate") {
        return Err(KitError::Usage(
            "--rate is what a search by rate varies: give --start and --max-rate instead".into(),
        ));
    }
    let max = max.transpose()?.unwrap_or(match by {
        By::Users => 1024.0,
        By::Rate => 1_000_000.0,
    });
    let start = a
        .own
        .get("start")
        .map(|v| positive("--start", v))
        .transpose()?
        .unwrap_or(match by {
            By::Users => 1.0,
            By::Rate => 10.0,
        });
    if start > max {
        return Err(KitError::Usage(format!(
            "--start={} is above the highest load allowed ({})",
            load_text(start),
            load_text(max)
        )));
    }
    let users = match by {
        By::Users => 0,
        By::Rate => a
            .own
            .get("users")
            .map(|v| number::<u32>("--users", v))
            .transpose()?
            .unwrap_or(8)
            .max(1),
    };
    let (time_s, warmup_s, pause_s) = timing(a, "a search")?;
    let spec = Spec {
        by,
        objectives,
        start,
        max,
        precision: a
            .own
            .get("precision")
            .map(|v| precision(v))
            .transpose()?
            .unwrap_or(0.10),
    };
    let plan = bmk_results::results_dir::SweepPlan {
        users: if users > 0 { vec![users] } else { Vec::new() },
        time_s,
        warmup_s,
        pause_s,
        repeat: 1,
        max_users_per_process: 0,
    };
    execute(&s, plan, Some((spec, users)), a, ctx, "bmk kit search")
}

/// How `--resume` and `--only-level` were given.
fn continuation_of(a: &KitArgs) -> Result<Option<(PathBuf, Mode)>, KitError> {
    let only = a
        .own
        .get("only-level")
        .map(|v| {
            number::<u32>("--only-level", v).and_then(|k| {
                if k == 0 {
                    Err(KitError::Usage("--only-level: levels count from 1".into()))
                } else {
                    Ok(k)
                }
            })
        })
        .transpose()?;
    match (a.own.get("resume"), only) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(KitError::Usage(
            "--only-level needs --resume=DIR (the results directory of the level)".into(),
        )),
        (Some(dir), only) => {
            if a.own.contains_key("results-dir") {
                return Err(KitError::Usage(
                    "--resume writes into the directory it names: leave out --results-dir".into(),
                ));
            }
            let dir = PathBuf::from(dir);
            if !dir.join(bmk_results::results_dir::RUN_FILE).is_file() {
                return Err(KitError::Usage(format!(
                    "--resume: '{}' is not a results directory (no run.json)",
                    dir.display()
                )));
            }
            Ok(Some((dir, only.map_or(Mode::Resume, Mode::OnlyLevel))))
        }
    }
}

fn execute(
    s: &Scenario,
    mut plan: bmk_results::results_dir::SweepPlan,
    search: Option<(Spec, u32)>,
    a: &KitArgs,
    ctx: &KitContext,
    what: &str,
) -> Result<i32, KitError> {
    // Each level's process splits itself when it has more users than this; the plan
    // records it for run.json.
    if let Some(v) = option_map(&a.passed)?.get("max-users-per-process") {
        plan.max_users_per_process = number("--max-users-per-process", v)?;
    }
    let again = continuation_of(a)?;
    let socket = socket_path(&a.passed);
    let mut passed = a.passed.clone();
    if plan.warmup_s > 0.0 {
        passed.insert(0, format!("--warmup-time={}", plan.warmup_s));
    }
    let time = plan.time_s as u64;
    let level_args = |l: &Level| {
        let mut p = passed.clone();
        if let Some(r) = l.rate {
            p.push(format!("--rate={}", load_text(r)));
        }
        s.args(l.users, time, &socket, &p)
    };
    // The options every level shares, for run.json: the scenario's and the passed ones.
    let shared = s.args(1, time, &socket, &passed);
    let options = option_map(&shared)?;
    let driver = if s.test.is_empty() {
        None
    } else {
        Some(server::driver_config(&|k| options.get(k).cloned())?)
    };
    // The tables the levels will read, as the options claim them (OLTP workloads).
    let data_claim = DataClaim::of(&s.test, &|k| options.get(k).cloned());
    let interval = match a.own.get("capture-interval") {
        Some(v) => seconds("--capture-interval", v)?,
        None => DEFAULT_INTERVAL_S,
    };
    let capture_driver = match a.own.get("capture-target") {
        Some(target) => Some(capture_target(target, options.get("config"))?),
        None => driver.clone(),
    };
    let target = options.get("target").filter(|t| !t.is_empty()).cloned();
    // A level line the binary refuses is refused here, before any folder exists.
    let first = match &search {
        Some((spec, users)) => Level {
            index: 1,
            users: if spec.by == By::Users {
                spec.start.round() as u32
            } else {
                *users
            },
            repeat: 1,
            rate: (spec.by == By::Rate).then_some(spec.start),
        },
        None => sweep::levels(&plan)[0],
    };
    crate::line_check::check(&ctx.program, &level_args(&first), what)?;
    // Listening first: an address in use is refused before a results directory exists.
    let live = a
        .own
        .get("live")
        .map(|addr| (ctx.live_page)(addr))
        .transpose()
        .map_err(KitError::Usage)?;
    let mut manifest = RunManifest::starting(RunStart {
        version: ctx.version.clone(),
        scenario: Some(s.name.clone()),
        target: target.clone(),
        test: s.test.clone(),
        argv: ctx.argv.clone(),
        options: options.into_iter().collect(),
        sweep: Some(plan.clone()),
        capture_interval_s: interval,
    });
    manifest.search = search.as_ref().map(|(spec, users)| SearchPlan {
        by: spec.by.name().to_string(),
        objectives: spec.objectives.iter().map(Objective::record).collect(),
        start: spec.start,
        max: spec.max,
        precision: spec.precision,
        users: *users,
    });
    let (mut dir, mode) = match &again {
        Some((path, mode)) => {
            let mut dir = RunDir::reopen(path)?;
            let diff = continuation::differences(dir.manifest(), &manifest);
            if !diff.is_empty() {
                return Err(KitError::Usage(format!(
                    "--resume: '{}' was run with other options: {}",
                    path.display(),
                    diff.join("; ")
                )));
            }
            let planned = match &search {
                Some(_) => None,
                None => Some(sweep::levels(&plan).len() as u32),
            };
            let (from, kept_aside) = match mode {
                Mode::Resume => {
                    let from = continuation::completed_levels(path).len() as u32 + 1;
                    (from, continuation::move_aside_from(path, from)?)
                }
                Mode::OnlyLevel(k) => {
                    let exists = dir
                        .level_path(*k)
                        .join(bmk_results::results_dir::LEVEL_FILE);
                    if planned.is_some_and(|n| *k > n) || (planned.is_none() && !exists.is_file()) {
                        return Err(KitError::Usage(format!(
                            "--only-level={k}: '{}' has no level {k}",
                            path.display()
                        )));
                    }
                    (
                        *k,
                        continuation::move_aside(path, *k)?.into_iter().collect(),
                    )
                }
            };
            for m in &kept_aside {
                println!("[kit] kept aside: {m}");
            }
            let continued = Continuation {
                kind: mode.name().to_string(),
                time: bmk_report::host::now_rfc3339(),
                from_level: from,
                kept_aside,
            };
            dir.update_manifest(|m| {
                m.status = "running".into();
                m.end_time = None;
                m.reason = None;
                m.answer = None;
                m.continuations.push(continued);
            })?;
            dir.reload_summary()?;
            (dir, Some((mode.clone(), from)))
        }
        None => {
            let dir = match a.own.get("results-dir") {
                Some(d) => RunDir::create_at(Path::new(d), manifest)?,
                None => RunDir::create_new(
                    &default_parent(),
                    &folder_name(&s.name, target.as_deref()),
                    manifest,
                )?,
            };
            (dir, None)
        }
    };
    // A server the kit cannot reach is the level's business to report, not a reason
    // to refuse the sweep.
    if let (Some(cfg), None) = (driver.as_ref(), &mode) {
        dir.record_server(cfg)?;
    }
    println!("[kit] results: {}", dir.path().display());
    if let Some(start) = live {
        start(dir.path());
    }
    let job = SweepJob {
        program: &ctx.program,
        plan,
        level_args: &level_args,
        driver: capture_driver,
        data: driver.clone().zip(data_claim),
        capture_interval: Duration::from_secs_f64(interval),
        interrupt: ctx.interrupt.clone(),
        live: true,
    };
    let end = match &search {
        Some((spec, users)) => {
            let only = match mode {
                Some((Mode::OnlyLevel(k), _)) => Some(k),
                _ => None,
            };
            search_run(&job, &mut dir, spec, *users, only, ctx)?
        }
        None => {
            let all = sweep::levels(&job.plan);
            let todo: Vec<Level> = match mode {
                None => all.clone(),
                Some((Mode::Resume, from)) => {
                    all.iter().filter(|l| l.index >= from).copied().collect()
                }
                Some((Mode::OnlyLevel(k), _)) => {
                    all.iter().filter(|l| l.index == k).copied().collect()
                }
            };
            if todo.is_empty() {
                println!("[kit] every level of the sweep had completed: nothing left to run");
            }
            let end = sweep::run_levels(&job, &mut dir, &todo, all.len(), mode.is_some())?;
            if mode.is_some() {
                dir.reload_summary()?;
            }
            end
        }
    };
    dir.finish(end.status())?;
    print_summary(&dir);
    print_checks(&dir, ctx.checks);
    Ok(match end {
        SweepEnd::Completed => 0,
        SweepEnd::Interrupted(sig) => 128 + sig,
        SweepEnd::Failed(code) => code,
    })
}

/// The level a search probes at `load`.
fn probe_level(spec: &Spec, users: u32, index: u32, load: f64) -> Level {
    match spec.by {
        By::Users => Level {
            index,
            users: load as u32,
            repeat: 1,
            rate: None,
        },
        By::Rate => Level {
            index,
            users,
            repeat: 1,
            rate: Some(load),
        },
    }
}

/// Judges the finished level `index` of `dir` as a probe at `load`, after `before`,
/// and records the verdict in its `level.json` and `summary.csv`.
fn judge_level(
    dir: &mut RunDir,
    spec: &Spec,
    before: &[Probe],
    index: u32,
    load: f64,
    ctx: &KitContext,
) -> Result<Probe, KitError> {
    let path = dir.level_path(index);
    let name = bmk_results::results_dir::level_dir_name(index);
    let result = ResultsFile::read(path.join(bmk_results::results_dir::RESULT_FILE)).ok();
    let mut rejected = match (ctx.probe_checks)(dir.path(), index) {
        Ok(lines) => lines,
        Err(e) => vec![format!("the checks could not run: {e}")],
    };
    let (figures, values) = match &result {
        Some(r) => {
            let f = &r.final_stats;
            let pct = |p: f64| f.latency.percentile_ms(p).unwrap_or(0.0);
            (
                Figures {
                    tps: f.events_per_sec,
                    avg_ms: f.latency.avg_ms,
                    p95_ms: pct(95.0),
                    p99_ms: pct(99.0),
                    events: f.events,
                },
                spec.objectives.iter().map(|o| o.value(f)).collect(),
            )
        }
        None => {
            if rejected.is_empty() {
                rejected.push("the level has no result.json".into());
            }
            (Figures::default(), vec![None; spec.objectives.len()])
        }
    };
    let probe = spec.judge(before, &name, load, figures, &values, &rejected);
    let level_file = path.join(bmk_results::results_dir::LEVEL_FILE);
    if let Ok(mut info) = bmk_results::results_dir::read_json::<LevelInfo>(&level_file) {
        info.probe = Some(ProbeVerdict {
            verdict: probe.verdict.name().to_string(),
            why: probe.why.clone(),
        });
        bmk_results::dir_writer::write_level_info(&path, &info)?;
    }
    dir.set_probe(&name, probe.verdict.name())?;
    Ok(probe)
}

/// The load a finished level ran, from its `level.json`.
fn load_of(dir: &RunDir, spec: &Spec, index: u32) -> Option<f64> {
    let info: LevelInfo = bmk_results::results_dir::read_json(
        &dir.level_path(index)
            .join(bmk_results::results_dir::LEVEL_FILE),
    )
    .ok()?;
    match spec.by {
        By::Users => Some(info.users as f64),
        By::Rate => info.rate,
    }
}

/// Runs a capacity search into `dir`: the levels already there (a resumed search)
/// are judged again in order, then probes run until the rules say it is over.
/// With `only`, level `only` has been moved aside and runs again at its load, and the
/// answer is what the levels then say.
fn search_run(
    job: &SweepJob,
    dir: &mut RunDir,
    spec: &Spec,
    users: u32,
    only: Option<u32>,
    ctx: &KitContext,
) -> Result<SweepEnd, KitError> {
    let mut probes: Vec<Probe> = Vec::new();
    let mut index = 1;
    // A rerun level's load comes from the folder kept aside (the first copy).
    let rerun_load = only.and_then(|k| {
        let aside = dir
            .path()
            .join(format!("{}.1", bmk_results::results_dir::level_dir_name(k)));
        let info: LevelInfo =
            bmk_results::results_dir::read_json(&aside.join(bmk_results::results_dir::LEVEL_FILE))
                .ok()?;
        match spec.by {
            By::Users => Some(info.users as f64),
            By::Rate => info.rate,
        }
    });
    let mut end = SweepEnd::Completed;
    loop {
        if only == Some(index) {
            let load = rerun_load.ok_or_else(|| {
                KitError::Usage(format!("--only-level={index}: its load could not be read"))
            })?;
            end = sweep::run_levels(job, dir, &[probe_level(spec, users, index, load)], 0, false)?;
            dir.reload_summary()?;
        }
        let done_already = dir
            .level_path(index)
            .join(bmk_results::results_dir::RESULT_FILE)
            .is_file();
        if done_already {
            let Some(load) = load_of(dir, spec, index) else {
                break;
            };
            let probe = judge_level(dir, spec, &probes, index, load, ctx)?;
            probes.push(probe);
            index += 1;
            continue;
        }
        if end != SweepEnd::Completed || only.is_some() {
            break;
        }
        match spec.next(&probes) {
            Step::Done(_) => break,
            Step::Run(load) => {
                let level = probe_level(spec, users, index, load);
                end = sweep::run_levels(job, dir, &[level], 0, index > 1)?;
                if end == SweepEnd::Completed
                    || dir
                        .level_path(index)
                        .join(bmk_results::results_dir::RESULT_FILE)
                        .is_file()
                {
                    let probe = judge_level(dir, spec, &probes, index, load, ctx)?;
                    println!(
                        "[kit] probe {index} ({}, {}): {}: {}",
                        probe.level,
                        spec.load_words(load),
                        probe.verdict.name(),
                        probe.why
                    );
                    probes.push(probe);
                }
                index += 1;
                if end != SweepEnd::Completed {
                    break;
                }
            }
        }
    }
    let answer = match spec.next(&probes) {
        Step::Done(a) => *a,
        Step::Run(next) => {
            let (lo, hi) = search::bounds(&probes);
            search::Answer {
                found: lo.cloned(),
                bound: hi.cloned(),
                reason: format!(
                    "the search stopped before its end (it would probe {} next; --resume goes on)",
                    spec.load_words(next)
                ),
            }
        }
    };
    record_answer(dir, spec, &answer, probes.len() as u32)?;
    Ok(end)
}

/// Writes the answer into `run.json` and as the last row of `summary.csv`, and prints it.
fn record_answer(
    dir: &mut RunDir,
    spec: &Spec,
    answer: &search::Answer,
    probes: u32,
) -> Result<(), KitError> {
    let found = answer.found.as_ref();
    let bound = answer.bound.as_ref();
    let record = SearchAnswer {
        load: found.map(|p| p.load),
        level: found.map(|p| p.level.clone()),
        tps: found.map(|p| p.figures.tps),
        avg_ms: found.map(|p| p.figures.avg_ms),
        p95_ms: found.map(|p| p.figures.p95_ms),
        p99_ms: found.map(|p| p.figures.p99_ms),
        upper_load: bound.map(|p| p.load),
        upper_level: bound.map(|p| p.level.clone()),
        reason: answer.reason.clone(),
        probes,
    };
    dir.update_manifest(|m| m.answer = Some(record))?;
    if let Some(p) = found {
        let row = dir.summary().iter().find(|r| r.level == p.level).cloned();
        if let Some(mut row) = row {
            row.level = ANSWER_ROW.to_string();
            row.status = "answer".to_string();
            row.probe = format!(
                "{}..{}",
                p.level,
                bound.map(|b| b.level.as_str()).unwrap_or("")
            );
            dir.push_summary(row)?;
        }
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "\n[kit] search: {}", answer.reason);
    match found {
        Some(p) => {
            let _ = writeln!(
                out,
                "[kit] answer: {} ({}): {:.2} TPS, avg {:.3} ms, p95 {:.3} ms, p99 {:.3} ms{}",
                spec.load_words(p.load),
                p.level,
                p.figures.tps,
                p.figures.avg_ms,
                p.figures.p95_ms,
                p.figures.p99_ms,
                bound
                    .map(|b| format!(
                        "; above it: {} ({}, {}: {})",
                        spec.load_words(b.load),
                        b.level,
                        b.verdict.name(),
                        b.why
                    ))
                    .unwrap_or_default()
            );
        }
        None => {
            let _ = writeln!(out, "[kit] answer: none; no level met every objective");
        }
    }
    let _ = out.flush();
    Ok(())
}

/// The results folder's name after its time stamp: the scenario, and the target when
/// one was given (`OLTP_RW_10M_8tab-uniform-ps-trx@maria`), so that runs of one
/// scenario against several servers are told apart by name.
fn folder_name(scenario: &str, target: Option<&str>) -> String {
    match target {
        Some(t) => format!("{scenario}@{t}"),
        None => scenario.to_string(),
    }
}

/// The sweep's sanity checks, one line each, after its table: a bad run is said so
/// where it was started, not only in `bmk report`.
fn print_checks(dir: &RunDir, checks: fn(&Path) -> Result<Vec<String>, String>) {
    let mut out = std::io::stdout().lock();
    match checks(dir.path()) {
        Ok(lines) if lines.is_empty() => {
            let _ = writeln!(out, "[kit] checks: no check triggered");
        }
        Ok(lines) => {
            let _ = writeln!(out, "[kit] checks ({} triggered):", lines.len());
            for l in lines {
                let _ = writeln!(out, "  {l}");
            }
        }
        Err(e) => {
            let _ = writeln!(out, "[kit] checks: could not run: {e}");
        }
    }
    let _ = out.flush();
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
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_list_row_keeps_its_name_apart_from_its_description() {
        let mut out = Vec::new();
        list(&mut out);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (name, what) in TOKENS.iter().chain(CATALOG.iter()) {
            let same_line = lines
                .iter()
                .any(|l| l.starts_with(&format!("  {name}  ")) && l.ends_with(what));
            let next_line = lines.windows(2).any(|w| {
                w[0] == format!("  {name}")
                    && w[1].trim_start() == *what
                    && w[1].len() > what.len() + 4
            });
            assert!(
                same_line || next_line,
                "no row for {name} with its description apart:\n{text}"
            );
        }
        // A name too long for the column has its own line.
        assert!(
            lines
                .iter()
                .all(|l| l.chars().count() <= 4 + LIST_NAME_WIDTH + 100),
            "{text}"
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
