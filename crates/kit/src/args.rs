//! The kit's command line: one clap definition per `bmk kit` subcommand, with the help
//! texts `bmk kit --help` and `bmk kit SUBCOMMAND --help` print.
//!
//! Only the kit's own options are declared here. Every other option goes to the
//! scenario's plain command line (a level's `bmk` process), so it cannot be known in
//! advance; [`split`] takes the declared ones out before clap sees the arguments.
//! Values stay text: the commands check them and say which one is wrong in the kit's
//! usual words.

use clap::{CommandFactory, Parser, Subcommand};

/// What every subcommand that runs something passes on, for the help texts.
const PASSED: &str =
    "Every other option is passed to the scenario's bmk command line, after the scenario's own \
options, so it wins: connection options (--mysql-host=db1, --pgsql-port=5433), --target=NAME (a \
bmk.toml connection profile, also used for the kit's server capture), --config=FILE, \
--max-users-per-process=N, or any option of the test.";

/// `bmk kit`.
#[derive(Parser, Debug)]
#[command(
    name = "bmk kit",
    bin_name = "bmk kit",
    about = "The benchmarking kit: named scenarios (the BMK kit's script names), prepares, \
             runs and load-level sweeps with server status capture, written to results \
             directories that 'bmk report' reads",
    long_about = None,
    disable_version_flag = true,
    term_width = 100,
    after_help = "Examples:\n  bmk kit list\n  bmk kit show OLTP_RW_10M_8tab-uniform-ps-trx 64 300\n  bmk kit prepare Prepare_10M_8tab-InnoDB 32 --target=maria\n  bmk kit sweep OLTP_RW_10M_8tab-uniform-ps-trx --users=1,2,4,8 --time=300 --target=maria\n\n'bmk kit COMMAND --help' explains a command's options; see docs/kit.md."
)]
pub struct KitCli {
    /// The kit command.
    #[command(subcommand)]
    pub command: KitCommand,
}

/// The kit's subcommands.
#[derive(Subcommand, Debug)]
pub enum KitCommand {
    /// Lists the tokens of scenario names and the catalog of named scenarios
    #[command(after_help = "Example:\n  bmk kit list")]
    List,
    /// Prints the plain bmk command line a scenario stands for
    Show(ShowArgs),
    /// Creates and loads a prepare scenario's tables, with a progress bar on a terminal
    Prepare(PrepareArgs),
    /// Runs a scenario at one load level into a new results directory
    Run(RunArgs),
    /// Runs a scenario at each load level in turn into one results directory
    Sweep(SweepArgs),
    /// Finds the highest load that meets latency and error objectives, in few levels
    Search(SearchArgs),
    /// Prints a Kubernetes Indexed Job that runs a scenario from several client pods at once
    K8s(K8sArgs),
    /// Runs a scenario from several client hosts at once over ssh and merges their results
    Ssh(SshArgs),
}

/// `bmk kit show`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  bmk kit show OLTP_RW_10M_8tab-uniform-ps-trx 64 300\n  bmk kit show Prepare_10M_8tab-InnoDB 16\n\nOptions given are added to the command line, as for 'run'."
)]
pub struct ShowArgs {
    /// The scenario name ('bmk kit list' shows the grammar and the catalog)
    pub name: String,
    /// USERS [SECONDS] for a run scenario (default 1 user, 300 s), LOADERS for a prepare
    /// scenario (default 32)
    #[arg(value_name = "USERS [SECONDS] | LOADERS")]
    pub numbers: Vec<String>,
}

/// `bmk kit prepare`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  bmk kit prepare Prepare_500_2tab 2 --db-driver=sqlite\n  bmk kit prepare Prepare_10M_8tab-InnoDB 32 --target=maria"
)]
pub struct PrepareArgs {
    /// A prepare scenario (Prepare_<rows>_<N>tab[-engine], TPCC_..., dbSTRESS_...)
    pub name: String,
    /// The number of threads that load the tables [default: 32]
    pub loaders: Option<String>,
}

/// The results directory and capture options of `run` and `sweep`.
#[derive(clap::Args, Debug)]
pub struct CaptureArgs {
    /// The run's results directory, new or empty [default:
    /// $BMK_HOME/results/<UTC time>-<scenario>]. Example: --results-dir=results/rw-before
    #[arg(long = "results-dir", value_name = "DIR")]
    pub results_dir: Option<String>,
    /// Seconds between two samples of the server's status, 0 = no capture [default: 1].
    /// Example: --capture-interval=1
    #[arg(long = "capture-interval", value_name = "S")]
    pub capture_interval: Option<String>,
    /// Sample another bmk.toml target's server (e.g. the database behind a proxy the
    /// benchmark connects to). Example: --capture-target=maria-direct
    #[arg(long = "capture-target", value_name = "NAME")]
    pub capture_target: Option<String>,
    /// Serve the report page of the results directory at http://ADDR/ while the run
    /// goes, as 'bmk report' renders it and reloading itself; PORT listens on 127.0.0.1.
    /// Example: --live=8080
    #[arg(long, value_name = "[HOST:]PORT")]
    pub live: Option<String>,
}

/// `bmk kit run`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example:\n  bmk kit run OLTP_RW_10M_8tab-uniform-ps-trx 64 300 --target=maria"
)]
pub struct RunArgs {
    /// A run scenario ('bmk kit list')
    pub name: String,
    /// The number of users (client threads)
    pub users: Option<String>,
    /// How long the level runs, in seconds
    pub seconds: Option<String>,
    /// The results directory and the capture.
    #[command(flatten)]
    pub capture: CaptureArgs,
}

/// `bmk kit sweep`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example:\n  bmk kit sweep OLTP_RW_10M_8tab-uniform-ps-trx --users=1,2,4,8,16,32,64 --time=300 --pause=15"
)]
pub struct SweepArgs {
    /// A run scenario ('bmk kit list')
    pub name: String,
    /// The load levels: the numbers of users, in the order run. Example: --users=1,2,4,8
    #[arg(long, value_name = "LIST")]
    pub users: Option<String>,
    /// Each level's measured time in seconds. Example: --time=300
    #[arg(long, value_name = "S")]
    pub time: Option<String>,
    /// Seconds of warm-up before each level's measured time, not counted [default: 0].
    /// Example: --warmup=30
    #[arg(long, value_name = "S")]
    pub warmup: Option<String>,
    /// Seconds of pause between two levels [default: 0]. Example: --pause=15
    #[arg(long, value_name = "S")]
    pub pause: Option<String>,
    /// Run the whole list of levels N times, so slow drift spreads over all levels
    /// [default: 1]. Example: --repeat=3
    #[arg(long, value_name = "N")]
    pub repeat: Option<String>,
    /// The results directory and the capture.
    #[command(flatten)]
    pub capture: CaptureArgs,
    /// Taking an earlier run up again.
    #[command(flatten)]
    pub again: AgainArgs,
}

// --- Taking a results directory up again (sweep and search) ---

/// `--resume` and `--only-level` of `sweep` and `search`.
#[derive(clap::Args, Debug)]
pub struct AgainArgs {
    /// Go on with the interrupted run in DIR from its first level that did not complete;
    /// the other options must be those DIR's run.json recorded. Example: --resume=bmk-home/results/20261128T150000Z-OLTP_RW_500_2tab
    #[arg(long, value_name = "DIR")]
    pub resume: Option<String>,
    /// With --resume: run only level K again, keeping the old folder beside it as
    /// level-NNNN.1. Example: --only-level=3
    #[arg(long = "only-level", value_name = "K")]
    pub only_level: Option<String>,
}

// --- The capacity search ---

/// `bmk kit search`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  bmk kit search OLTP_RO_10M_8tab-uniform-ps-p_sel1 --slo='p99<=20ms' --time=60 --target=maria\n  bmk kit search OLTP_RW_10M_8tab-uniform-ps-trx --by=rate --users=64 --time=60 \\\n      --slo='p99<=50ms' --slo='errors<=0.1%' --target=maria\n\nThe search doubles the load until an objective fails or throughput stops growing, then bisects to the precision. See docs/kit.md."
)]
pub struct SearchArgs {
    /// A run scenario ('bmk kit list')
    pub name: String,
    /// An objective every level must meet, repeatable: avg, p50..p99.9 or max latency
    /// (us, ms, s), or errors in % of attempts. Example: --slo='p99<=20ms' --slo='errors<=0.1%'
    #[arg(long, value_name = "OBJECTIVE")]
    pub slo: Vec<String>,
    /// What the search varies: users (closed loop) or rate (open loop: Poisson arrivals
    /// per second, queueing counted in latency) [default: users]. Example: --by=rate
    #[arg(long, value_name = "users|rate")]
    pub by: Option<String>,
    /// The first load probed [default: 1 user, or 10 arrivals/s]. Example: --start=8
    #[arg(long, value_name = "LOAD")]
    pub start: Option<String>,
    /// The most users a search by users probes [default: 1024]. Example: --max-users=256
    #[arg(long = "max-users", value_name = "N")]
    pub max_users: Option<String>,
    /// The highest rate a search by rate probes [default: 1000000]. Example: --max-rate=50000
    #[arg(long = "max-rate", value_name = "R")]
    pub max_rate: Option<String>,
    /// Stop when the load that meets and the one above it that does not are this close,
    /// relative to the first [default: 10%]. Example: --precision=5%
    #[arg(long, value_name = "P")]
    pub precision: Option<String>,
    /// Users of every level of a search by rate [default: 8]. Example: --users=64
    #[arg(long, value_name = "N")]
    pub users: Option<String>,
    /// Each level's measured time in seconds. Example: --time=60
    #[arg(long, value_name = "S")]
    pub time: Option<String>,
    /// Seconds of warm-up before each level's measured time [default: 0]. Example: --warmup=30
    #[arg(long, value_name = "S")]
    pub warmup: Option<String>,
    /// Seconds of pause between two levels [default: 0]. Example: --pause=15
    #[arg(long, value_name = "S")]
    pub pause: Option<String>,
    /// The results directory and the capture.
    #[command(flatten)]
    pub capture: CaptureArgs,
    /// Taking an earlier search up again.
    #[command(flatten)]
    pub again: AgainArgs,
}

// --- end of the capacity search ---

/// `bmk kit k8s`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example:\n  bmk kit k8s OLTP_RO_10M_8tab-uniform-ps-trx 64 300 --clients=4 \\\n      --mysql-host=db.example --image=registry.example/bmk:0.1.0 > job.json\n\nSee docs/distributed.md."
)]
pub struct K8sArgs {
    /// A run scenario ('bmk kit list')
    pub name: String,
    /// The number of users of each client pod
    pub users: Option<String>,
    /// How long the run lasts, in seconds
    pub seconds: Option<String>,
    /// The number of client pods, each on its own node. Example: --clients=4
    #[arg(long, value_name = "N")]
    pub clients: Option<String>,
    /// The container image with bmk [default: bmk:<version>]. Example: --image=registry.example/bmk:0.1.0
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// The Job's name [default: from the scenario, users and time]. Example: --job=rw-64
    #[arg(long, value_name = "NAME")]
    pub job: Option<String>,
    /// The Secret that holds the database password [default: bmk-db]. Example: --secret=maria-pw
    #[arg(long, value_name = "NAME")]
    pub secret: Option<String>,
    /// The key of the password in the Secret [default: password]. Example: --secret-key=pw
    #[arg(long = "secret-key", value_name = "KEY")]
    pub secret_key: Option<String>,
    /// The ReadWriteMany PersistentVolumeClaim the results files go to [default: bmk-results].
    /// Example: --results-claim=bench-results
    #[arg(long = "results-claim", value_name = "NAME")]
    pub results_claim: Option<String>,
    /// Each pod's CPU request and limit [default: 2]. Example: --cpu=4
    #[arg(long, value_name = "Q")]
    pub cpu: Option<String>,
    /// Each pod's memory request and limit [default: 2Gi]. Example: --memory=4Gi
    #[arg(long, value_name = "Q")]
    pub memory: Option<String>,
    /// Seconds a pod waits at the start barrier for the others [default: 600]. Example: --barrier-timeout=900
    #[arg(long = "barrier-timeout", value_name = "S")]
    pub barrier_timeout: Option<String>,
}

/// `bmk kit ssh`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example:\n  bmk kit ssh client1 client2 -- OLTP_RO_10M_8tab-uniform-ps-trx 64 300 \\\n      --mysql-host=db.example --target=maria\n\n--clients, --results and --config are set for each client and refused. See docs/distributed.md."
)]
pub struct SshArgs {
    /// The client hosts, as ssh takes them (user@host works)
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
    /// After '--': the run scenario, the users of each host and the time in seconds
    #[arg(last = true, value_name = "NAME USERS SECONDS")]
    pub run: Vec<String>,
    /// The ssh program and its options, split on spaces; it gets the host and the
    /// remote command line last [default: ssh]. Example: --ssh-command="ssh -p 2222"
    #[arg(long = "ssh-command", value_name = "CMD")]
    pub ssh_command: Option<String>,
    /// bmk on the hosts [default: bmk, on the remote PATH]. Example: --remote-bmk=/opt/bmk/bmk
    #[arg(long = "remote-bmk", value_name = "PATH")]
    pub remote_bmk: Option<String>,
    /// Where the hosts write their results files [default: /tmp]. Example: --remote-dir=/var/tmp
    #[arg(long = "remote-dir", value_name = "DIR")]
    pub remote_dir: Option<String>,
    /// The start barrier's name [default: ssh-TIMESTAMP-PID]. Example: --barrier=rw-64
    #[arg(long, value_name = "NAME")]
    pub barrier: Option<String>,
    /// Seconds a host waits at the barrier for the others [default: 300]. Example: --barrier-timeout=600
    #[arg(long = "barrier-timeout", value_name = "S")]
    pub barrier_timeout: Option<String>,
    /// The merged results directory, new or empty [default: ./bmk-BARRIER].
    /// Example: --results-dir=results/rw-3hosts
    #[arg(long = "results-dir", value_name = "DIR")]
    pub results_dir: Option<String>,
}

/// The kit's command definition with the pass-through note on each running subcommand.
pub fn command() -> clap::Command {
    KitCli::command().mut_subcommands(|sub| match sub.get_name() {
        "list" => sub,
        _ => {
            let after = sub
                .get_after_help()
                .map(|h| format!("{h}\n\n{PASSED}"))
                .unwrap_or_else(|| PASSED.to_string());
            sub.after_help(after)
        }
    })
}

/// The arguments of one kit subcommand, split into what clap parses and what is passed on.
#[derive(Debug)]
pub struct Split {
    /// The subcommand and its own options and positional words, for clap.
    pub own: Vec<String>,
    /// Every other option, as `--name=value` (or `--name` for a bare switch).
    pub passed: Vec<String>,
}

/// Splits `args` (the subcommand name first): the options the subcommand declares (and
/// `--help`, `-h`) and every word that is not an option go to clap; every other option
/// is passed on. `--name value` is taken as `--name=value` once a positional word has
/// been seen (the kit's words come before its options), as `--name` alone otherwise.
pub fn split(cmd: &clap::Command, args: &[String]) -> Split {
    let Some((name, rest)) = args.split_first() else {
        return Split {
            own: Vec::new(),
            passed: Vec::new(),
        };
    };
    let declared: Vec<String> = cmd
        .find_subcommand(name)
        .map(|sub| {
            sub.get_arguments()
                .filter_map(|a| a.get_long().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    // Options first: clap takes every word after `--` as a word, whatever it looks like.
    let mut options = Vec::new();
    let mut words = Vec::new();
    let mut passed = Vec::new();
    let mut positional = false;
    let mut after_dashes = false;
    let mut i = 0;
    while i < rest.len() {
        let a = &rest[i];
        i += 1;
        if a == "--" && !after_dashes {
            after_dashes = true;
            words.push(a.clone());
            continue;
        }
        if a == "-h" {
            options.push(a.clone());
            continue;
        }
        let Some(body) = a.strip_prefix("--").filter(|b| !b.is_empty()) else {
            positional = true;
            words.push(a.clone());
            continue;
        };
        let (opt, value) = match body.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => {
                let v = rest
                    .get(i)
                    .filter(|n| !n.starts_with("--") && positional && *n != "-h")
                    .cloned();
                (body.to_string(), v)
            }
        };
        let canon = opt.replace('_', "-");
        let own = canon == "help" || declared.contains(&canon);
        // A bare `--help` takes no value: the word after it stays a word.
        let value = if canon == "help" && !body.contains('=') {
            None
        } else {
            value
        };
        if value.is_some() && !body.contains('=') {
            i += 1;
        }
        let shown = if own { &canon } else { &opt };
        let word = match value {
            Some(v) => format!("--{shown}={v}"),
            None => format!("--{shown}"),
        };
        if own {
            options.push(word);
        } else {
            passed.push(word);
        }
    }
    let mut own = vec![name.clone()];
    own.extend(options);
    own.extend(words);
    Split { own, passed }
}

/// One line for a clap error of the command `cmd` (whose name is the words a user
/// types, `bmk kit`): what was wrong, clap's suggestion when it has one, and where help
/// is. The multi-line rendering clap prints by default would break the rule that a
/// usage error is one line.
pub fn usage_line(cmd: &mut clap::Command, e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let name = cmd.get_name().to_string();
    let text = |kind: ContextKind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    let what = match e.kind() {
        ErrorKind::UnknownArgument => {
            let arg = text(ContextKind::InvalidArg).unwrap_or_default();
            if arg.starts_with('-') {
                format!("unknown option {arg}")
            } else {
                format!("unexpected argument '{arg}'")
            }
        }
        ErrorKind::MissingRequiredArgument => {
            let missing = match e.get(ContextKind::InvalidArg) {
                Some(ContextValue::Strings(v)) => v.join(", "),
                _ => String::new(),
            };
            format!("missing {missing}")
        }
        ErrorKind::InvalidSubcommand => format!(
            "unknown {} command '{}'",
            name.rsplit(' ').next().unwrap_or("bmk"),
            text(ContextKind::InvalidSubcommand).unwrap_or_default()
        ),
        _ => {
            let rendered = e.to_string();
            let first = rendered.lines().next().unwrap_or("invalid arguments");
            first.trim_start_matches("error: ").to_string()
        }
    };
    let mut line = format!("{name}: {what}");
    let suggestion = text(ContextKind::SuggestedArg)
        .or_else(|| text(ContextKind::SuggestedSubcommand))
        // clap names the flag alone; its suggestion for `--x=1` is still `--name`.
        .map(|s| s.split('=').next().unwrap_or(&s).to_string());
    if let Some(s) = suggestion {
        line.push_str(&format!("; did you mean '{s}'?"));
    }
    line.push_str(&format!(" (see '{name} --help')"));
    line
}

/// The whole help of `bmk kit`, or of `bmk kit SUBCOMMAND` when `sub` names one.
pub fn help(sub: Option<&str>) -> Option<String> {
    let mut cmd = command();
    cmd.build();
    match sub {
        None => Some(cmd.render_help().to_string()),
        Some(s) => cmd
            .find_subcommand_mut(s)
            .map(|c| c.render_help().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_definition_is_valid() {
        command().debug_assert();
    }

    #[test]
    fn own_options_go_to_clap_and_the_rest_is_passed_on() {
        let s = split(
            &command(),
            &v("sweep OLTP_RW_1M_1tab-trx --users 1,2 --time=3 --db-driver sqlite --sqlite-db=x.db --verbose --capture_interval=1"),
        );
        assert_eq!(
            s.own,
            v("sweep --users=1,2 --time=3 --capture-interval=1 OLTP_RW_1M_1tab-trx")
        );
        assert_eq!(
            s.passed,
            ["--db-driver=sqlite", "--sqlite-db=x.db", "--verbose"]
        );
    }

    #[test]
    fn what_run_does_not_declare_is_passed_on() {
        let s = split(&command(), &v("run X 4 10 --time=5 --results-dir=d"));
        assert_eq!(s.own, v("run --results-dir=d X 4 10"));
        assert_eq!(s.passed, ["--time=5"]);
    }

    #[test]
    fn a_missing_or_extra_word_is_named() {
        let mut cmd = command();
        let e = cmd
            .clone()
            .try_get_matches_from(v("kit sweep"))
            .unwrap_err();
        assert_eq!(
            usage_line(&mut cmd, &e),
            "bmk kit: missing <NAME> (see 'bmk kit --help')"
        );
        let e = cmd
            .clone()
            .try_get_matches_from(v("kit prepare X 4 extra"))
            .unwrap_err();
        assert_eq!(
            usage_line(&mut cmd, &e),
            "bmk kit: unexpected argument 'extra' (see 'bmk kit --help')"
        );
    }

    #[test]
    fn a_mistyped_command_gets_a_suggestion_in_one_line() {
        let mut cmd = command();
        let e = cmd
            .clone()
            .try_get_matches_from(v("kit sweeep"))
            .unwrap_err();
        let line = usage_line(&mut cmd, &e);
        assert_eq!(
            line,
            "bmk kit: unknown kit command 'sweeep'; did you mean 'sweep'? (see 'bmk kit --help')"
        );
    }
}
