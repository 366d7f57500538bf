//! The two sysbench releases bmk reproduces (1.1 by default, 1.0.20 with
//! `BMK_SYSBENCH_COMPAT=1.0` or `--sysbench-compat=1.0`): version strings, report
//! layouts, messages and exit codes, as whole outputs with their numbers masked.

use crate::util::{assert_text_eq, skeleton, Dir};

const BANNER_1_1: &str = "sysbench 1.1.0 (using bundled LuaJIT 2.1.0-beta3)\n\n";
const BANNER_1_0: &str = "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)\n\n";

fn eq(expected: &str, run: &crate::util::Run, actual: &str) {
    assert_text_eq(expected, actual, &run.context());
}

#[test]
fn version_is_the_release_alone_as_sysbench() {
    let dir = Dir::new();
    let run = dir.sysbench().arg("--version").run().ok();
    eq("sysbench 1.1.0\n", &run, &run.stdout);
    let run = dir
        .sysbench()
        .env("BMK_SYSBENCH_COMPAT", "1.0")
        .arg("--version")
        .run()
        .ok();
    eq("sysbench 1.0.20\n", &run, &run.stdout);
}

#[test]
fn bmk_names_the_release_it_follows() {
    let dir = Dir::new();
    let run = dir.bmk().args("--sysbench-compat=1.0 --version").run().ok();
    assert!(
        run.stdout.ends_with("(sysbench 1.0.20 compatible)\n"),
        "{}",
        run.context()
    );
    // The option wins over the environment.
    let run = dir
        .bmk()
        .env("BMK_SYSBENCH_COMPAT", "1.0")
        .args("--sysbench-compat=1.1 --version")
        .run()
        .ok();
    assert!(
        run.stdout.ends_with("(sysbench 1.1.0 compatible)\n"),
        "{}",
        run.context()
    );
}

#[test]
fn an_unknown_level_is_one_line_and_exit_1() {
    let dir = Dir::new();
    dir.sysbench()
        .env("BMK_SYSBENCH_COMPAT", "0.5")
        .args("cpu run")
        .run()
        .fails_with(
            "invalid value '0.5' in the environment variable BMK_SYSBENCH_COMPAT: expected 1.1 or 1.0",
        );
    dir.bmk()
        .args("--sysbench-compat=2 cpu run")
        .run()
        .fails_with("invalid value '2' for option --sysbench-compat: expected 1.1 or 1.0");
}

/// The threads test's whole output at both levels: the header, the blank line that
/// opens sysbench's own part of the report, and the block that differs.
#[test]
fn threads_report_at_both_levels() {
    let dir = Dir::new();
    let args = "threads --events=20 --threads=2 --thread-yields=10 run";
    let body = "\
Running the test with following options:
Number of threads: N
Initializing random number generator from current time


Initializing worker threads...

Threads started!


";
    let tail = "
Latency (ms):
         min: N
         avg: N
         max: N
         Nth percentile: N
         sum: N

Threads fairness:
    events (avg/stddev): N/N
    execution time (avg/stddev): N/N

";
    let run = dir.sysbench().args(args).run().ok();
    let expected = format!(
        "{}{body}Throughput:\n    events/s (eps): N\n    time elapsed: Ns\n    total number of events: N\n{tail}",
        skeleton(BANNER_1_1)
    );
    eq(&expected, &run, &skeleton(&run.stdout));

    let run = dir
        .sysbench()
        .env("BMK_SYSBENCH_COMPAT", "1.0")
        .args(args)
        .run()
        .ok();
    let expected = format!(
        "{}{body}General statistics:\n    total time: Ns\n    total number of events: N\n{tail}",
        skeleton(BANNER_1_0)
    );
    eq(&expected, &run, &skeleton(&run.stdout));
}

#[test]
fn cpu_report_under_1_0_has_general_statistics() {
    let dir = Dir::new();
    let run = dir
        .sysbench()
        .env("BMK_SYSBENCH_COMPAT", "1.0")
        .args("cpu --events=10 run")
        .run()
        .ok();
    let report = skeleton(&run.stdout);
    let at = report.find("CPU speed:").expect("a CPU speed block");
    eq(
        "\
CPU speed:
    events per second: N

General statistics:
    total time: Ns
    total number of events: N

",
        &run,
        &report[at..report.find("Latency (ms):").unwrap()],
    );
}

#[test]
fn help_of_a_system_test_ends_with_a_blank_line() {
    let dir = Dir::new();
    let run = dir.sysbench().args("threads help").run().ok();
    assert!(
        run.stdout
            .starts_with(&format!("{BANNER_1_1}threads options:\n")),
        "{}",
        run.context()
    );
    assert!(run.stdout.ends_with("[8]\n\n"), "{}", run.context());
}

#[test]
fn system_tests_without_prepare_say_so() {
    let dir = Dir::new();
    dir.sysbench()
        .args("threads prepare")
        .run()
        .fails_with("'threads' test does not implement the 'prepare' command.");
}

#[test]
fn help_and_version_print_no_banner() {
    let dir = Dir::new();
    let run = dir.sysbench().arg("--help").run().ok();
    assert!(run.stdout.starts_with("Usage:\n"), "{}", run.context());
}

#[test]
fn a_third_word_fails_before_the_banner() {
    let dir = Dir::new();
    let run = dir
        .sysbench()
        .args("foo bar baz")
        .run()
        .fails_with("Unrecognized command line argument: baz");
    assert_eq!(run.stdout, "", "{}", run.context());
}

#[test]
fn an_unknown_benchmark_is_named_as_sysbench_names_it() {
    let dir = Dir::new();
    let run = dir.sysbench().args("nosuchthing run").run().code(1);
    eq(
        &format!(
            "{BANNER_1_1}FATAL: Cannot find benchmark 'nosuchthing': no such built-in test, file or module\n"
        ),
        &run,
        &run.stdout,
    );
    eq("", &run, &run.stderr);
}

#[test]
fn a_script_without_a_command_only_runs_its_body() {
    let dir = Dir::new();
    dir.write(
        "body.lua",
        "print('top level ran')\nfunction event() print('no event expected') end\n",
    );
    let run = dir.sysbench().args("--events=1 body.lua").run().ok();
    eq(&format!("{BANNER_1_1}top level ran\n"), &run, &run.stdout);
    // From standard input, a command is not run either.
    dir.write(
        "piped.lua",
        "function prepare() print('not run') end\nprint('piped body')\n",
    );
    let run = dir
        .sysbench()
        .args("- prepare")
        .stdin_file(&dir.join("piped.lua"))
        .run()
        .ok();
    eq(&format!("{BANNER_1_1}piped body\n"), &run, &run.stdout);
}

#[test]
fn commands_a_script_lacks() {
    let dir = Dir::new();
    dir.write("bare.lua", "function event() end\n");
    for command in ["prepare", "cleanup", "help"] {
        dir.sysbench()
            .args(&format!("bare.lua {command}"))
            .run()
            .fails_with(&format!(
                "'bare.lua' test does not implement the '{command}' command."
            ));
    }
    dir.sysbench()
        .args("bare.lua frobnicate")
        .run()
        .fails_with("Unknown command: frobnicate");
}

#[test]
fn a_script_without_event_fails_after_init() {
    let dir = Dir::new();
    dir.write("noevent.lua", "function init() print('init ran') end\n");
    let run = dir
        .sysbench()
        .args("--verbosity=0 noevent.lua run")
        .run()
        .code(1);
    eq(
        "init ran\nFATAL: cannot find the event() function in noevent.lua\n",
        &run,
        &run.stdout,
    );
}

/// Options declared without a default read as their type's empty value; a boolean as
/// switched on.
#[test]
fn declared_options_without_defaults() {
    let dir = Dir::new();
    dir.write(
        "opts.lua",
        r#"sysbench.cmdline.options = {
  s = {"a string"},
  b = {"a flag", nil, sysbench.cmdline.ARG_BOOL},
  n = {"a number", nil, sysbench.cmdline.ARG_INT},
  l = {"a list", nil, sysbench.cmdline.ARG_LIST},
  d = {"with a default", 7},
}
function prepare()
  local o = sysbench.opt
  print(string.format("[%s] %s %s %s %s %s", o.s, tostring(o.b), tostring(o.n),
    type(o.l), tostring(#o.l), tostring(o.d)))
  print(tostring(sysbench.cmdline.command))
end
"#,
    );
    let run = dir
        .sysbench()
        .args("--verbosity=0 opts.lua prepare")
        .run()
        .ok();
    eq("[] true 0 table 0 7\nprepare\n", &run, &run.stdout);
    let run = dir.sysbench().args("opts.lua help").run().ok();
    eq(
        &format!(
            "{BANNER_1_1}opts.lua options:\n  --b[=on|off]   a flag\n  --d=N          with a default [7]\n  --l=[LIST,...] a list\n  --n=N          a number\n  --s=STRING     a string\n\n"
        ),
        &run,
        &run.stdout,
    );
}

#[test]
fn a_parallel_command_on_one_thread_runs_unannounced() {
    let dir = Dir::new();
    dir.write(
        "par.lua",
        r#"function each() print("thread " .. sysbench.tid) end
sysbench.cmdline.commands = { spread = { each, sysbench.cmdline.PARALLEL_COMMAND } }
"#,
    );
    let run = dir.sysbench().args("--threads=1 par.lua spread").run().ok();
    eq(&format!("{BANNER_1_1}thread 0\n"), &run, &run.stdout);
}

/// A script that never made a SQL driver reports like `threads`: no SQL block.
#[test]
fn scripts_without_a_database_get_the_event_layout() {
    let dir = Dir::new();
    dir.write("plain.lua", "function event() end\n");
    let run = dir.sysbench().args("--events=5 plain.lua run").run().ok();
    assert!(!run.stdout.contains("SQL statistics"), "{}", run.context());
    assert!(
        run.stdout.contains("Threads started!\n\n\nThroughput:\n"),
        "{}",
        run.context()
    );
}

#[test]
fn sysbench_rand_special_exists_only_at_1_0() {
    let dir = Dir::new();
    dir.write(
        "special.lua",
        "function prepare() print(type(sysbench.rand.special)) print(sysbench.version) end\n",
    );
    let run = dir
        .sysbench()
        .args("--verbosity=0 special.lua prepare")
        .run()
        .ok();
    eq("nil\n1.1.0\n", &run, &run.stdout);
    let run = dir
        .sysbench()
        .env("BMK_SYSBENCH_COMPAT", "1.0")
        .args("--verbosity=0 special.lua prepare")
        .run()
        .ok();
    eq("function\n1.0.20\n", &run, &run.stdout);
}

/// The share of 2000 `sysbench.rand.default(1, 1000)` draws that land in the narrow
/// slice around the centre where `special` puts three draws in four (uniform: 1%).
const CENTRE_SHARE: &str = "\
function prepare()
  local hot = 0
  for i = 1, 2000 do
    local v = sysbench.rand.default(1, 1000)
    if v >= 490 and v <= 510 then hot = hot + 1 end
  end
  print(sysbench.opt.rand_type .. ' ' .. hot / 2000)
end
";

/// `(rand_type, share)` printed by [`CENTRE_SHARE`].
fn centre_share(run: &crate::util::Run) -> (String, f64) {
    let (kind, share) = run
        .stdout
        .trim()
        .split_once(' ')
        .unwrap_or_else(|| panic!("{}", run.context()));
    (kind.to_string(), share.parse().unwrap())
}

#[test]
fn rand_type_defaults_to_special_at_1_0_only() {
    let dir = Dir::new();
    dir.write("share.lua", CENTRE_SHARE);
    let args = "--verbosity=0 share.lua prepare";
    let at_1_0 = [
        dir.sysbench().env("BMK_SYSBENCH_COMPAT", "1.0").args(args),
        dir.bmk().args(&format!("--sysbench-compat=1.0 {args}")),
    ];
    for cmd in at_1_0 {
        let run = cmd.run().ok();
        let (kind, share) = centre_share(&run);
        assert_eq!(kind, "special", "{}", run.context());
        assert!(share > 0.6, "{share}: {}", run.context());
    }
    let uniform = [
        dir.sysbench().args(args),
        dir.bmk().args(args),
        dir.bmk().args(&format!("--sysbench-compat=1.1 {args}")),
        dir.sysbench()
            .env("BMK_SYSBENCH_COMPAT", "1.0")
            .args(&format!("--rand-type=uniform {args}")),
    ];
    for cmd in uniform {
        let run = cmd.run().ok();
        let (kind, share) = centre_share(&run);
        assert_eq!(kind, "uniform", "{}", run.context());
        assert!(share < 0.1, "{share}: {}", run.context());
    }
}

#[test]
fn options_added_in_1_1_are_unknown_at_1_0() {
    let dir = Dir::new();
    for given in [
        "--warmup-time=1",
        "--warmup-time=-1",
        "--thread-init-timeout=5",
        "--luajit-cmd",
        "--luajit-cmd=off",
        "--rand-zipfian-exp=0.5",
    ] {
        let run = dir
            .sysbench()
            .env("BMK_SYSBENCH_COMPAT", "1.0")
            .args(&format!("{given} --events=1 cpu run"))
            .run()
            .fails_with(&format!("invalid option: {given}"));
        eq(BANNER_1_0, &run, &run.stdout);
    }
    // 1.1 knows them, and bmk keeps them at either level, as its other extensions.
    for given in [
        "--warmup-time=0",
        "--thread-init-timeout=5",
        "--rand-zipfian-exp=0.5",
    ] {
        dir.sysbench()
            .args(&format!("{given} --events=1 cpu run"))
            .run()
            .ok();
        dir.bmk()
            .args(&format!("--sysbench-compat=1.0 {given} --events=1 cpu run"))
            .run()
            .ok();
    }
}

/// bmk's own `--help` shows the level's `--rand-type` default.
#[test]
fn bmk_help_shows_the_level_s_rand_type_default() {
    let dir = Dir::new();
    let line = |run: &crate::util::Run| {
        run.stdout
            .lines()
            .find(|l| l.trim_start().starts_with("--rand-type="))
            .unwrap_or_else(|| panic!("{}", run.context()))
            .to_string()
    };
    let run = dir.bmk().args("--sysbench-compat=1.0 --help").run().ok();
    assert!(line(&run).ends_with("[special]"), "{}", run.context());
    let run = dir.bmk().args("--help").run().ok();
    assert!(line(&run).ends_with("[uniform]"), "{}", run.context());
}

#[test]
fn script_load_failures_print_on_stdout_after_the_banner() {
    let dir = Dir::new();
    dir.write("syntax.lua", "function event(\n");
    dir.write("raises.lua", "\nerror('at load')\n");
    let cases = [
        (
            "syntax.lua",
            "FATAL: syntax.lua:2: <name> or '...' expected near '<eof>'",
        ),
        ("raises.lua", "FATAL: raises.lua:2: at load"),
        (
            "absent.lua",
            "FATAL: Cannot find benchmark 'absent.lua': no such built-in test, file or module",
        ),
    ];
    for (level, banner) in [("1.1", BANNER_1_1), ("1.0", BANNER_1_0)] {
        for (script, message) in cases {
            let run = dir
                .sysbench()
                .env("BMK_SYSBENCH_COMPAT", level)
                .args(&format!("{script} run"))
                .run()
                .code(1);
            eq(&format!("{banner}{message}\n"), &run, &run.stdout);
            eq("", &run, &run.stderr);
        }
    }
    // As bmk, failures stay on stderr.
    let run = dir.bmk().args("syntax.lua run").run().code(1);
    assert!(run.stderr.contains("syntax.lua:2:"), "{}", run.context());
}
