//! Every error path of the command line: the message (one line on stderr, never a panic) and
//! the exit code.

use crate::util::*;

#[test]
fn unknown_option_is_named_as_given() {
    let dir = Dir::new();
    dir.bmk()
        .args("cpu --foo=1 run")
        .run()
        .fails_with("invalid option: --foo=1");
    dir.sysbench()
        .args("cpu run --foo=1")
        .run()
        .fails_with("invalid option: --foo=1");
    dir.bmk()
        .args("--no-such-switch cpu run")
        .run()
        .fails_with("invalid option: --no-such-switch");
    // An option of another test is not an option of this one.
    dir.bmk()
        .args("cpu --memory-block-size=4K run")
        .run()
        .fails_with("invalid option: --memory-block-size=4K");
}

#[test]
fn bad_values_name_the_option_the_value_and_what_is_allowed() {
    let dir = Dir::new();
    for (args, option, value, allowed) in [
        ("cpu --threads=x run", "--threads", "'x'", "integer"),
        ("cpu --threads=0 run", "--threads", "'0'", "1"),
        ("cpu --rand-type=foo run", "--rand-type", "'foo'", "uniform"),
        ("cpu --percentile=200 run", "--percentile", "'200'", "100"),
        ("cpu --time=-1 run", "--time", "'-1'", "0"),
        (
            "cpu --report-interval=x run",
            "--report-interval",
            "'x'",
            "",
        ),
        ("cpu --debug=maybe run", "--debug", "'maybe'", "on"),
        (
            "cpu --report-format=xml run",
            "--report-format",
            "'xml'",
            "json",
        ),
        (
            "cpu --forced-shutdown=soon run",
            "--forced-shutdown",
            "'soon'",
            "%",
        ),
        (
            "cpu --report-checkpoints=a run",
            "--report-checkpoints",
            "'a'",
            "seconds",
        ),
        (
            "cpu --percentiles=50,200 run",
            "--percentiles",
            "'200'",
            "100",
        ),
        (
            "memory --memory-oper=bogus run",
            "--memory-oper",
            "'bogus'",
            "read",
        ),
        (
            "memory --memory-scope=x run",
            "--memory-scope",
            "'x'",
            "global",
        ),
        (
            "memory --memory-block-size=12Q run",
            "--memory-block-size",
            "'12Q'",
            "K, M, G or T",
        ),
        (
            "fileio --file-test-mode=bogus run",
            "--file-test-mode",
            "'bogus'",
            "rndrw",
        ),
        (
            "fileio --file-total-size=abc run",
            "--file-total-size",
            "'abc'",
            "K, M, G or T",
        ),
        (
            "fileio --file-io-mode=x run",
            "--file-io-mode",
            "'x'",
            "mmap",
        ),
    ] {
        dir.bmk()
            .args(args)
            .run()
            .fails_mentioning(&[option, value, allowed]);
        // These are refused in sysbench's own words as sysbench (see sysbench_words).
        let sysbench_worded = option == "--threads"
            || option == "--debug"
            || option == "--file-test-mode"
            || option == "--rand-type"
            || option.starts_with("--memory-");
        if !sysbench_worded {
            dir.sysbench()
                .args(args)
                .run()
                .fails_mentioning(&[option, value, allowed]);
        }
    }
}

#[test]
fn histogram_needs_a_percentile() {
    let dir = Dir::new();
    dir.bmk()
        .args("cpu --histogram --percentile=0 --events=1 run")
        .run()
        .fails_mentioning(&["--histogram", "--percentile=0"]);
}

#[test]
fn a_built_in_test_needs_a_command() {
    let dir = Dir::new();
    dir.sysbench()
        .args("cpu")
        .run()
        .fails_with("The 'cpu' test requires a command argument. See 'sysbench cpu help'");
    dir.bmk()
        .args("--threads=2 memory")
        .run()
        .fails_with("The 'memory' test requires a command argument. See 'bmk memory help'");
}

#[test]
fn strict_grammar_reads_a_separate_value_as_the_test_name() {
    let dir = Dir::new();
    dir.sysbench()
        .args("--threads 2 cpu run")
        .run()
        .fails_with("Unrecognized command line argument: run");
    dir.bmk()
        .args("cpu run extra")
        .run()
        .fails_with("Unrecognized command line argument: extra");
}

#[test]
fn bmk_mode_accepts_separate_values() {
    let dir = Dir::new();
    let run = dir.bmk().args("--threads 2 --events 4 cpu run").run().ok();
    assert!(
        run.stdout.contains("Number of threads: 2\n"),
        "{}",
        run.stdout
    );
    assert_eq!(run.total_events(), 4);
}

#[test]
fn unknown_test_and_unknown_command() {
    let dir = Dir::new();
    dir.bmk()
        .args("nosuchtest run")
        .run()
        .fails_mentioning(&["nosuchtest"]);
    dir.bmk()
        .args("cpu bogus")
        .run()
        .fails_mentioning(&["bogus"]);
}

#[test]
fn fileio_run_needs_prepare_and_a_mode() {
    let dir = Dir::new();
    let size = "--file-num=2 --file-total-size=1M";
    dir.bmk()
        .args(&format!("fileio {size} run"))
        .run()
        .fails_mentioning(&["--file-test-mode"]);
    dir.bmk()
        .args(&format!("fileio {size} --file-test-mode=rndrw run"))
        .run()
        .fails_mentioning(&["test_file.0", "prepare"]);
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());
}

#[test]
fn config_file_missing_is_one_clear_line() {
    let dir = Dir::new();
    dir.bmk()
        .args("--config-file=nosuch.cfg cpu run")
        .run()
        .fails_mentioning(&["nosuch.cfg", "--config-file"]);
    // A bad option inside the file is named with its line, without its value (the
    // file may hold secrets).
    dir.write("bad.cfg", "time=1\nfoo=1\n");
    dir.bmk()
        .args("--config-file=bad.cfg cpu run")
        .run()
        .fails_with("invalid option: --foo (line 2 of config file 'bad.cfg')");
}

#[test]
fn errors_print_the_banner_on_stdout_first() {
    let dir = Dir::new();
    let run = dir.sysbench().args("cpu --foo=1 run").run().code(1);
    let lines = run.lines();
    assert!(lines[0].starts_with("sysbench 1.1.0"), "{}", run.stdout);
    assert_eq!(lines.len(), 2, "{}", run.stdout);
}

#[test]
fn script_function_failures_name_the_function_like_sysbench() {
    // Parsers grep sysbench logs for "FATAL: `thread_init' function failed: ...": the
    // same words on stdout, the traceback after, one copy per distinct failure.
    let dir = Dir::new();
    for (function, body, failed_as) in [
        ("thread_init", "function event() end", "thread_init"),
        ("event", "", "thread_run"),
        ("thread_done", "function event() end", "thread_done"),
    ] {
        dir.write(
            "failing.lua",
            &format!("{body}\nfunction {function}()\n  error('{function} broke')\nend\n"),
        );
        let run = dir
            .sysbench()
            .args("failing.lua --threads=3 --events=30 run")
            .run()
            .code(1);
        // As sysbench: no traceback.
        let fatal =
            format!("FATAL: `{failed_as}' function failed: failing.lua:3: {function} broke\n");
        assert_eq!(run.stdout.matches(&fatal).count(), 1, "{}", run.stdout);
        assert!(!run.stdout.contains("stack traceback:"), "{}", run.stdout);
        // Every worker gets to thread_done; a failing thread_init or event stops the
        // run before some workers reach theirs.
        if function == "thread_done" {
            assert!(
                run.stdout.contains("\n(last message repeated 2 times)\n"),
                "{}",
                run.stdout
            );
        }
        assert_eq!(run.stderr, "", "{function}");
    }
}

#[test]
fn malformed_scripts_fail_with_the_position_of_the_fault() {
    let dir = Dir::new();
    dir.write("bad.lua", "function event()\n  x = = 1\nend\n");
    let run = dir.bmk().args("bad.lua --events=1 run").run();
    assert_eq!(
        run.stderr.trim_end(),
        "FATAL: bad.lua:2: unexpected symbol near '='",
        "{}",
        run.context()
    );
    let run = run.code(1);
    assert!(!run.stdout.contains("Running the test"), "{}", run.stdout);

    // A module that does not compile is named with the position inside it.
    dir.write("badmod.lua", "local = 2\n");
    dir.write("req.lua", "require('badmod')\nfunction event() end\n");
    let run = dir.bmk().args("req.lua --events=1 run").run().code(1);
    assert!(
        run.stderr.starts_with(
            "FATAL: error loading module 'badmod' from file './badmod.lua':\n\t./badmod.lua:1: "
        ),
        "{}",
        run.context()
    );

    // A runtime error in the main chunk, with its traceback.
    dir.write(
        "rt.lua",
        "local t = nil\nprint(t.x)\nfunction event() end\n",
    );
    let run = dir.bmk().args("rt.lua --events=1 run").run().code(1);
    assert!(
        run.stderr.starts_with(
            "FATAL: rt.lua:2: attempt to index local 't' (a nil value)\nstack traceback:"
        ),
        "{}",
        run.context()
    );
}

#[test]
fn init_runs_before_the_header_and_its_failure_leaves_none() {
    let dir = Dir::new();
    dir.write(
        "init.lua",
        "function init() print('init ran') end\nfunction event() end\n",
    );
    let run = dir.sysbench().args("init.lua --events=1 run").run().ok();
    let init = run.stdout.find("init ran\n").expect(&run.stdout);
    let header = run.stdout.find("Running the test with").expect(&run.stdout);
    assert!(init < header, "{}", run.stdout);

    dir.write(
        "init.lua",
        "function init() error('no init today') end\nfunction event() end\n",
    );
    let run = dir.sysbench().args("init.lua --events=1 run").run().code(1);
    assert!(
        run.stdout
            .contains("\nFATAL: `init' function failed: init.lua:1: no init today\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("Running the test"), "{}", run.stdout);
}

#[test]
fn command_failures_name_the_command_and_user_messages_stand_alone() {
    let dir = Dir::new();
    dir.write(
        "cmd.lua",
        "function prepare() error('prepare broke') end\n\
         function cleanup() error('nothing to clean up: run prepare first', 0) end\n",
    );
    // On stdout with the command's other output, as sysbench prints them.
    let run = dir.bmk().args("cmd.lua prepare").run().code(1);
    assert!(
        run.stdout.contains(
            "\nFATAL: `prepare' function failed: cmd.lua:1: prepare broke\nstack traceback:"
        ),
        "{}",
        run.context()
    );
    let run = dir.bmk().args("cmd.lua cleanup").run().code(1);
    assert!(
        run.stdout
            .ends_with("\nnothing to clean up: run prepare first\n"),
        "{}",
        run.context()
    );
}

#[test]
fn bad_varstring_lengths_fail_the_event_instead_of_overrunning_a_buffer() {
    // A negative length reached the C interface as 2^32-1 and wrote past the string
    // buffer (exit 139). Now it is sysbench's assertion, or (min > max) sysbench's
    // reading of it: min = 1.
    let dir = Dir::new();
    dir.write(
        "varstr.lua",
        "function event()\n  local s = sysbench.rand.varstring(-1, 0)\nend\n",
    );
    let run = dir
        .sysbench()
        .args("varstr.lua --events=1 run")
        .run()
        .code(1);
    assert!(run.stdout.contains("assertion failed!"), "{}", run.stdout);

    dir.write(
        "varstr2.lua",
        "local ffi = require('ffi')\n\
         function event()\n\
           local buf = ffi.new('char[?]', 4)\n\
           local n = ffi.C.sb_rand_varstr(buf, -1, 4)\n\
           assert(n >= 1 and n <= 4, n)\n\
           assert(#sysbench.rand.varstring(3, 7) <= 7)\n\
         end\n",
    );
    dir.sysbench()
        .args("varstr2.lua --events=200 run")
        .run()
        .code(0);
}
