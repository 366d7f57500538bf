//! Where a script or an option meets an edge of sysbench's behaviour: a failing
//! `event()` or report hook, sysbench 1.0's legacy API at each level, `num_threads`,
//! the `--forced-shutdown` header line and `--rate`'s report. Each is checked as
//! `sysbench` at both levels (what the reference releases print) and as `bmk`.
//! Scripts and expected outputs are this project's own.

use crate::util::{assert_text_eq, Dir, Run};

/// What a run printed after `Threads started!` and its blank line.
fn after_start(run: &Run) -> &str {
    let at = run
        .stdout
        .find("Threads started!\n\n")
        .unwrap_or_else(|| panic!("no start line\n{}", run.context()));
    &run.stdout[at + "Threads started!\n\n".len()..]
}

const FAILING_EVENT: &str = "\
function event() error('boom') end
function done() print('done called') end
sysbench.hooks.report_cumulative = function() print('hook called') end
";

#[test]
fn a_failing_event_ends_the_run_without_statistics_as_sysbench() {
    let dir = Dir::new();
    dir.write("t.lua", FAILING_EVENT);
    for level in ["1.1", "1.0"] {
        let run = dir
            .sysbench()
            .env("BMK_SYSBENCH_COMPAT", level)
            .args("t.lua --threads=2 --events=5 --histogram run")
            .run()
            .code(1);
        // The first failure stops the other worker. Both workers may already be inside
        // `event()` when it does (they start together), so the same line can come twice,
        // which the message log folds into a repeat count as sysbench's does.
        let rest = after_start(&run).replace("(last message repeated 1 times)\n", "");
        assert_text_eq(
            "FATAL: `thread_run' function failed: t.lua:1: boom\ndone called\n",
            &rest,
            &run.context(),
        );
        assert_eq!(run.stderr, "", "{}", run.context());
    }
    // bmk reports what was measured up to the failure.
    let run = dir.bmk().args("t.lua --events=5 run").run().code(1);
    let rest = after_start(&run);
    assert!(
        rest.starts_with("FATAL: `thread_run' function failed: t.lua:1: boom\nstack traceback:"),
        "{}",
        run.context()
    );
    assert!(rest.contains("hook called\n"), "{}", run.context());
}

const FAILING_CUMULATIVE_HOOK: &str = "\
function event() end
sysbench.hooks.report_cumulative = function(stat)
  local t = nil
  print(t.field)
end
function done() print('done called') end
";

#[test]
fn a_failing_cumulative_hook_replaces_the_report_and_exits_0_as_sysbench() {
    let dir = Dir::new();
    dir.write("t.lua", FAILING_CUMULATIVE_HOOK);
    for level in ["1.1", "1.0"] {
        let run = dir
            .sysbench()
            .env("BMK_SYSBENCH_COMPAT", level)
            .args("t.lua --events=5 run")
            .run()
            .ok();
        assert_text_eq(
            "FATAL: `report_cumulative' function failed: t.lua:4: attempt to index local 't' (a nil value)\n\
             done called\n",
            after_start(&run),
            &run.context(),
        );
    }
    let run = dir.bmk().args("t.lua --events=5 run").run().code(1);
    let rest = after_start(&run);
    assert!(
        rest.starts_with(
            "FATAL: `report_cumulative' function failed: t.lua:4: attempt to index local 't' \
             (a nil value)\nstack traceback:"
        ),
        "{}",
        run.context()
    );
    assert!(!rest.contains("Latency (ms):"), "{}", run.context());
    assert!(rest.ends_with("done called\n"), "{}", run.context());
    assert_eq!(run.stderr, "", "{}", run.context());
}

const FAILING_INTERMEDIATE_HOOK: &str = "\
ffi = require('ffi')
ffi.cdef[[int usleep(unsigned int);]]
function event() ffi.C.usleep(20000) end
sysbench.hooks.report_intermediate = function(stat)
  local t = nil
  print(t.field)
end
";

#[test]
fn a_failing_intermediate_hook_is_told_once_with_its_repeats() {
    let dir = Dir::new();
    dir.write("t.lua", FAILING_INTERMEDIATE_HOOK);
    let line = "FATAL: `report_intermediate' function failed: t.lua:6: attempt to index local \
                't' (a nil value)\n";
    let repeats = regex::Regex::new(r"^\(last message repeated ([0-9]+) times\)\n\n").unwrap();
    for level in ["1.1", "1.0"] {
        let run = dir
            .sysbench()
            .env("BMK_SYSBENCH_COMPAT", level)
            .args("t.lua --time=3 --report-interval=1 run")
            .run()
            .ok();
        let rest = after_start(&run);
        assert!(rest.starts_with(line), "{}", run.context());
        let after = &rest[line.len()..];
        let n: u32 = repeats
            .captures(after)
            .unwrap_or_else(|| panic!("no repeat count\n{}", run.context()))[1]
            .parse()
            .unwrap();
        assert!((1..=2).contains(&n), "{}", run.context());
        // The default final report follows, in the level's layout.
        let report = repeats.replace(after, "");
        let first = if level == "1.1" {
            "Throughput:\n"
        } else {
            "General statistics:\n"
        };
        assert!(report.starts_with(first), "{}", run.context());
    }
    // As bmk the run goes on, but fails.
    let run = dir
        .bmk()
        .args("t.lua --time=2 --report-interval=1 run")
        .run()
        .code(1);
    assert!(
        after_start(&run).starts_with(
            "FATAL: `report_intermediate' function failed: t.lua:6: attempt to index local \
             't' (a nil value)\nstack traceback:"
        ),
        "{}",
        run.context()
    );
    assert!(run.stdout.contains("Latency (ms):"), "{}", run.context());
}

/// Prints the type of each name of sysbench 1.0's legacy API, then calls one.
const LEGACY_NAMES: &str = "\
function event()
  print(type(thread_id), type(test), type(db_driver), type(sb_rand), type(sb_rand_str),
    type(db_query), type(db_connect), type(sb_rand_uniq), type(DB_ERROR_NONE),
    type(mysql_table_engine))
  print(sb_rand(3, 3))
end
";

#[test]
fn sysbench_1_1_has_no_legacy_api() {
    let dir = Dir::new();
    dir.write("t.lua", LEGACY_NAMES);
    let run = dir
        .sysbench()
        .args("t.lua --events=1 --db-driver=sqlite run")
        .run()
        .code(1);
    assert_text_eq(
        "nil\tnil\tnil\tnil\tnil\tnil\tnil\tnil\tnil\tnil\n\
         FATAL: `thread_run' function failed: t.lua:5: attempt to call global 'sb_rand' (a nil value)\n",
        after_start(&run),
        &run.context(),
    );
    // Nor a --test option: after a test name it is an unknown option, without one the
    // command is taken for the test.
    dir.sysbench()
        .args("--test=cpu --events=1 cpu run")
        .run()
        .fails_with("invalid option: --test=cpu");
    let run = dir.sysbench().args("--test=cpu run").run().code(1);
    assert!(
        run.stdout.ends_with(
            "\nFATAL: Cannot find benchmark 'run': no such built-in test, file or module\n"
        ),
        "{}",
        run.context()
    );
}

#[test]
fn sysbench_1_0_has_the_legacy_api() {
    let dir = Dir::new();
    dir.write("t.lua", LEGACY_NAMES);
    let run = dir
        .sysbench()
        .env("BMK_SYSBENCH_COMPAT", "1.0")
        .args("t.lua --events=1 --db-driver=sqlite run")
        .run()
        .ok();
    assert!(
        after_start(&run).starts_with(
            "number\tstring\tstring\tfunction\tfunction\tfunction\tfunction\tfunction\t\
             number\tstring\n3\n"
        ),
        "{}",
        run.context()
    );
    let run = dir
        .sysbench()
        .env("BMK_SYSBENCH_COMPAT", "1.0")
        .args("--test=cpu --events=1 run")
        .run()
        .code(0);
    assert!(
        run.stdout.contains("Prime numbers limit"),
        "{}",
        run.context()
    );
}

#[test]
fn bmk_keeps_the_legacy_api_with_one_notice_per_run() {
    let dir = Dir::new();
    dir.write("t.lua", LEGACY_NAMES);
    let run = dir
        .bmk()
        .args("t.lua --threads=3 --events=3 --db-driver=sqlite run")
        .run()
        .code(0);
    // Each of the three workers prints both lines; the workers' lines may interleave.
    let lines: Vec<&str> = after_start(&run).lines().collect();
    let count = |line: &str| lines.iter().filter(|l| **l == line).count();
    assert_eq!(
        (
            count("number\tstring\tstring\tfunction\tfunction\tfunction\tfunction\tfunction\tnumber\tstring"),
            count("3")
        ),
        (3, 3),
        "{}",
        run.context()
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.context());
    assert!(
        run.stderr
            .starts_with("NOTE: this script uses sysbench 1.0's legacy API"),
        "{}",
        run.context()
    );
    // A script that uses none of it hears nothing.
    dir.write("new.lua", "function event() print(sysbench.tid) end\n");
    dir.bmk().args("new.lua --events=1 run").run().ok();
    // At the 1.0 level the API is no legacy: no notice.
    dir.bmk()
        .args("t.lua --sysbench-compat=1.0 --events=1 --db-driver=sqlite run")
        .run()
        .ok();
}

const NUM_THREADS: &str = "\
function event()
  print('num_threads=' .. tostring(num_threads) .. ' opt=' .. tostring(sysbench.opt.num_threads))
  return true
end
";

#[test]
fn num_threads_is_the_old_option_s_value_in_1_0() {
    let dir = Dir::new();
    dir.write("t.lua", NUM_THREADS);
    let shown = |run: &Run| -> Vec<String> {
        let mut lines: Vec<String> = run
            .stdout
            .lines()
            .filter(|l| l.starts_with("num_threads="))
            .map(str::to_string)
            .collect();
        lines.dedup();
        lines
    };
    let sysbench_1_0 = |args: &str| {
        dir.sysbench()
            .env("BMK_SYSBENCH_COMPAT", "1.0")
            .args(args)
            .run()
            .code(0)
    };
    // As sysbench 1.0.20: the value of --num-threads; --threads leaves it at 1.
    let run = sysbench_1_0("t.lua --num-threads=3 run");
    assert_eq!(shown(&run), ["num_threads=3 opt=3"], "{}", run.context());
    let run = sysbench_1_0("t.lua --threads=3 run");
    assert_eq!(shown(&run), ["num_threads=1 opt=1"], "{}", run.context());
    // As bmk: the thread count, whichever name gave it.
    for threads in ["--threads=3", "--num-threads=3"] {
        let run = dir
            .bmk()
            .args(&format!("t.lua --sysbench-compat=1.0 {threads} run"))
            .run()
            .code(0);
        assert_eq!(shown(&run), ["num_threads=3 opt=3"], "{}", run.context());
    }
}

#[test]
fn forced_shutdown_is_announced_in_the_header() {
    let dir = Dir::new();
    let header = |run: &Run| -> String {
        let from = run.stdout.find("Initializing random").unwrap();
        let to = run.stdout.find("Prime numbers limit").unwrap();
        run.stdout[from..to].to_string()
    };
    for level in ["1.1", "1.0"] {
        // The grace in whole seconds: 150% of 2 s is 3 s, 50% of 1 s is none.
        for (args, total) in [
            ("--time=2 --forced-shutdown=1", 3),
            ("--time=2 --forced-shutdown=150%", 5),
            ("--time=1 --forced-shutdown=50%", 1),
        ] {
            let run = dir
                .sysbench()
                .env("BMK_SYSBENCH_COMPAT", level)
                .args(&format!("cpu --events=1 {args} run"))
                .run()
                .ok();
            assert_text_eq(
                &format!(
                    "Initializing random number generator from current time\n\n\
                     Forcing shutdown in {total} seconds\n\n"
                ),
                &header(&run),
                &run.context(),
            );
        }
        // Without a time limit or with the option off, no line.
        for args in ["--time=0 --forced-shutdown=1", "--time=2"] {
            let run = dir
                .sysbench()
                .env("BMK_SYSBENCH_COMPAT", level)
                .args(&format!("cpu --events=1 {args} run"))
                .run()
                .ok();
            assert_text_eq(
                "Initializing random number generator from current time\n\n\n",
                &header(&run),
                &run.context(),
            );
        }
    }
    let run = dir
        .bmk()
        .args("cpu --events=1 --time=2 --forced-shutdown=1 run")
        .run()
        .ok();
    assert!(
        header(&run).contains("\n\nForcing shutdown in 3 seconds\n\n"),
        "{}",
        run.context()
    );
}

#[test]
fn schedule_lag_is_bmk_s_own_section() {
    let dir = Dir::new();
    let args = "cpu --cpu-max-prime=100 --rate=200 --time=1 run";
    for level in ["1.1", "1.0"] {
        let run = dir
            .sysbench()
            .env("BMK_SYSBENCH_COMPAT", level)
            .args(args)
            .run()
            .ok();
        assert!(run.stdout.contains("Latency (ms):"), "{}", run.context());
        assert!(!run.stdout.contains("lag"), "{}", run.context());
    }
    let run = dir.bmk().args(args).run().ok();
    assert!(
        run.stdout.contains("Schedule lag (ms):"),
        "{}",
        run.context()
    );
}
