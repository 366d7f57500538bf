//! Invoked as `sysbench`, bmk says what sysbench says where scripts and suites match
//! its output byte for byte: refused option values, the rate scheduler giving up, the
//! warm-up, histograms, the stock report printers, script failures without
//! tracebacks, the memory and fileio tests' messages, 1.0.20's warnings for old option
//! names, and `--help` without bmk's extensions. As `bmk`, its own wording stays.

use crate::util::{assert_text_eq, Dir};

const BANNER: &str = "sysbench 1.1.0 (using bundled LuaJIT 2.1.0-beta3)\n\n";

fn eq(expected: &str, actual: &str, run: &crate::util::Run) {
    assert_text_eq(expected, actual, &run.context());
}

#[test]
fn a_rate_no_worker_keeps_up_with_fails_without_a_report() {
    let dir = Dir::new();
    let run = dir
        .sysbench()
        .args("--rate=2000000000 cpu run --verbosity=1")
        .run()
        .code(1);
    let queue_full = "FATAL: The event queue is full. This means the worker threads are \
                      unable to keep up with the specified event generation rate\n";
    eq(queue_full, &run.stdout, &run);
    let run = dir
        .sysbench()
        .args("--rate=2000000000 cpu run")
        .run()
        .code(1);
    assert!(
        run.stdout
            .ends_with(&format!("Threads started!\n\n{queue_full}")),
        "{}",
        run.context()
    );
    // Beyond what sysbench takes (a C int) is refused up front.
    dir.sysbench()
        .args("--rate=2147483648 cpu run")
        .run()
        .code(1);
}

#[test]
fn thread_and_warmup_values_sysbench_refuses_fail_before_the_banner() {
    let dir = Dir::new();
    let run = dir
        .sysbench()
        .args("--warmup-time=-1 cpu run")
        .run()
        .code(1);
    // On stdout, where sysbench logs them, and no banner.
    eq("", &run.stderr, &run);
    eq(
        "FATAL: Invalid value for --warmup-time: -1.\n\n",
        &run.stdout,
        &run,
    );
    let run = dir.sysbench().args("--threads=0 cpu run").run().code(1);
    eq(
        "FATAL: Invalid value for --threads: 0.\n\n",
        &run.stdout,
        &run,
    );
    // A number sysbench cannot parse is its option parser's, on stderr.
    dir.sysbench()
        .args("--threads=x cpu run")
        .run()
        .fails_with("Invalid value for the 'threads' option: 'x'");
    // A distribution the release does not have, at each level.
    for (level, kind) in [("1.1", "special"), ("1.0", "zipfian"), ("1.1", "foo")] {
        let run = dir
            .sysbench()
            .env("BMK_SYSBENCH_COMPAT", level)
            .args(&format!("--rand-type={kind} cpu run"))
            .run()
            .code(1);
        eq(
            &format!("FATAL: Invalid random numbers distribution: {kind}.\n"),
            &run.stdout,
            &run,
        );
        eq("", &run.stderr, &run);
    }
    // bmk's own words as bmk.
    let run = dir.bmk().args("--warmup-time=-1 cpu run").run().code(1);
    assert!(
        run.stderr
            .contains("invalid value '-1' for option --warmup-time"),
        "{}",
        run.context()
    );
}

/// An event begun in the warm-up and ended after it counts as sysbench counts it (as
/// `bmk`, only events begun after the warm-up count).
#[test]
fn warmup_is_announced_and_straddling_events_count_as_sysbench() {
    let dir = Dir::new();
    dir.write(
        "slow.lua",
        "ffi.cdef[[int usleep(unsigned int);]]\nfunction event()\n  ffi.C.usleep(1200000)\nend\n",
    );
    let run = dir
        .sysbench()
        .args("--warmup-time=1 --time=1 slow.lua run")
        .run()
        .ok();
    assert!(
        run.stdout
            .contains("Threads started!\n\nWarming up for 1 seconds...\n\n\nThroughput:\n"),
        "{}",
        run.context()
    );
    assert_eq!(run.total_events(), 2, "{}", run.context());
    let run = dir
        .bmk()
        .args("--warmup-time=1 --time=1 slow.lua run")
        .run()
        .ok();
    assert!(
        run.stdout.contains("Warming up for 1 seconds...\n"),
        "{}",
        run.context()
    );
    assert_eq!(run.total_events(), 1, "{}", run.context());
}

#[test]
fn luajit_cmd_bare_is_no_command_and_an_unknown_one_is_sysbench_s_line() {
    let dir = Dir::new();
    dir.write("jit.lua", "print(\"jit \" .. tostring(jit.status()))\n");
    let run = dir.sysbench().args("--luajit-cmd jit.lua").run().ok();
    eq(&format!("{BANNER}jit true\n"), &run.stdout, &run);
    let run = dir.sysbench().args("--luajit-cmd=off jit.lua").run().ok();
    eq(&format!("{BANNER}jit false\n"), &run.stdout, &run);
    // A failure while loading the script: on stdout, as sysbench logs it.
    let run = dir
        .sysbench()
        .args("--luajit-cmd=nosuchcmd jit.lua")
        .run()
        .code(1);
    eq(
        &format!("{BANNER}FATAL: unknown luaJIT command or jit.* modules not installed\n"),
        &run.stdout,
        &run,
    );
}

/// Values go to the bucket with the nearest centre, printed as that centre.
#[test]
fn script_histograms_print_bucket_centres() {
    let dir = Dir::new();
    dir.write(
        "h.lua",
        "local h = sysbench.histogram.new(1000, 1, 10)\n\
         for _, v in ipairs({1, 2, 0, 10, 100, 5.001}) do h:update(v) end\n\
         h:print()\n",
    );
    let run = dir.sysbench().arg("h.lua").run().ok();
    eq(
        &format!(
            "{BANNER}       value  ------------- distribution ------------- count\n\
             \x20      1.000 |**************************************** 2\n\
             \x20      2.001 |********************                     1\n\
             \x20      4.997 |********************                     1\n\
             \x20     10.000 |**************************************** 2\n"
        ),
        &run.stdout,
        &run,
    );
}

#[test]
fn the_latency_histogram_ends_with_a_line_of_one_space() {
    let dir = Dir::new();
    let run = dir
        .sysbench()
        .args("cpu --events=20 --cpu-max-prime=100 --histogram run")
        .run()
        .ok();
    assert!(
        run.stdout.contains(" count\n") && run.stdout.contains("\n \nCPU speed:\n"),
        "{}",
        run.context()
    );
}

/// The stock printers a script installs print at any verbosity; the final report has
/// no thread running; JSON is laid out one field a line.
#[test]
fn stock_report_printers_as_sysbench_prints_them() {
    let dir = Dir::new();
    let script = |printer: &str| {
        format!(
            "ffi.cdef[[int usleep(unsigned int);]]\n\
             function event() ffi.C.usleep(1000) end\n\
             sysbench.hooks.report_intermediate = sysbench.{printer}\n\
             sysbench.hooks.report_cumulative = sysbench.{printer}\n"
        )
    };
    dir.write("text.lua", &script("report_default"));
    let run = dir
        .sysbench()
        .args("text.lua --time=3 --report-interval=2 --verbosity=1 run")
        .run()
        .ok();
    let stamps: Vec<&str> = run
        .stdout
        .lines()
        .map(|l| &l[..l.find(" tps:").unwrap()])
        .collect();
    assert_eq!(
        stamps,
        ["[ 2s ] thds: 1", "[ 3s ] thds: 0"],
        "{}",
        run.context()
    );

    dir.write("json.lua", &script("report_json"));
    let run = dir
        .sysbench()
        .args("json.lua --time=3 --report-interval=2 --verbosity=1 run")
        .run()
        .ok();
    let masked = regex::Regex::new(r"\d+\.\d\d")
        .unwrap()
        .replace_all(&run.stdout, "N");
    let element = |time: u32, threads: u32| {
        format!(
            "  {{\n    \"time\":    {time},\n    \"threads\": {threads},\n    \"tps\": N,\n    \
             \"qps\": {{\n      \"total\": N,\n      \"reads\": N,\n      \"writes\": N,\n      \
             \"other\": N\n    }},\n    \"latency\": N,\n    \"errors\": N,\n    \"reconnects\": N\n  }}"
        )
    };
    eq(
        &format!("[\n{}\n]\n[\n{}\n]\n", element(2, 1), element(3, 0)),
        &masked,
        &run,
    );
}

#[test]
fn script_option_and_load_failures_in_sysbench_words() {
    let dir = Dir::new();
    dir.write(
        "opts.lua",
        "sysbench.cmdline.options = { flag = {\"a switch\", false} }\n\
         function prepare() print(sysbench.opt.flag) end\n",
    );
    dir.sysbench()
        .args("--verbosity=0 opts.lua --flag=5 prepare")
        .run()
        .fails_with("invalid option: --flag=5");
    dir.sysbench()
        .args("--verbosity=0 opts.lua --flag=maybe prepare")
        .run()
        .fails_with("invalid option: --flag=maybe");
    dir.write(
        "table.lua",
        "sysbench.cmdline.options = { {} }\nfunction help() end\n",
    );
    // Load failures go to stdout, where sysbench logs them.
    let run = dir
        .sysbench()
        .args("--verbosity=0 table.lua help")
        .run()
        .code(1);
    assert_eq!(
        run.stdout,
        "FATAL: `sysbench.cmdline.read_cmdline_options' function failed: \
         [string \"sysbench.cmdline.lua\"]:133: wrong table structure in sysbench.cmdline.options\n",
        "{}",
        run.context()
    );
    dir.write("boom.lua", "\nerror(\"boom\")\n");
    let run = dir.sysbench().args("--verbosity=0 boom.lua").run().code(1);
    assert_eq!(run.stdout, "FATAL: boom.lua:2: boom\n", "{}", run.context());
    // As bmk, the traceback says where the error came from.
    let run = dir.bmk().args("--verbosity=0 boom.lua").run().code(1);
    assert!(run.stderr.contains("stack traceback:"), "{}", run.context());
}

#[test]
fn memory_refuses_as_sysbench_and_its_total_size_replaces_events() {
    let dir = Dir::new();
    for bad in ["-1", "0", "9"] {
        let run = dir
            .sysbench()
            .args(&format!("memory --memory-block-size={bad} run"))
            .run();
        let run = run.fails_with(&format!(
            "FATAL: Invalid value for memory-block-size: {bad}"
        ));
        eq(BANNER, &run.stdout, &run);
    }
    let args =
        "memory --memory-block-size=4K --memory-total-size=1M --events=1 --time=0 --threads=2 run";
    let run = dir.sysbench().args(args).run().ok();
    assert_eq!(run.total_events(), 256, "{}", run.context());
    // As bmk, whichever limit comes first.
    let run = dir.bmk().args(args).run().ok();
    assert_eq!(run.total_events(), 1, "{}", run.context());
}

/// sysbench gives each thread `total / block size / threads` blocks: with 1024 blocks
/// and 3 threads, 341 each and the last block never run, at both levels.
#[test]
fn memory_total_is_split_per_thread_as_sysbench() {
    let dir = Dir::new();
    let args = "memory --memory-block-size=1K --memory-total-size=1M --time=0 --threads=3 run";
    for level in ["1.1", "1.0"] {
        let run = dir
            .sysbench()
            .env("BMK_SYSBENCH_COMPAT", level)
            .args(args)
            .run()
            .ok();
        assert_eq!(run.total_events(), 1023, "{}", run.context());
        assert_eq!(run.value("events (avg/stddev):"), "341.0000/0.00");
    }
    // Fewer blocks than threads: nothing runs.
    let run = dir
        .sysbench()
        .args("memory --memory-total-size=2K --time=0 --threads=3 run")
        .run()
        .ok();
    assert_eq!(run.total_events(), 0, "{}", run.context());
    // As bmk, the threads share one total and run it to the last block.
    let run = dir.bmk().args(args).run().ok();
    assert_eq!(run.total_events(), 1024, "{}", run.context());
}

#[test]
fn fileio_prepare_reuses_files_and_run_names_what_is_missing() {
    let dir = Dir::new();
    let args = "fileio --file-num=2 --file-total-size=32K --verbosity=3";
    let run = dir
        .sysbench()
        .args(&format!("{args} --file-extra-flags=dsync prepare"))
        .run()
        .ok();
    let body = run.stdout.strip_prefix(BANNER).unwrap();
    let bytes = regex::Regex::new(r"in \d+\.\d\d seconds \(\d+\.\d\d MiB/sec\)").unwrap();
    eq(
        "2 files, 16Kb each, 0Mb total\nCreating files for the test...\n\
         Extra file open flags: dsync \nCreating file test_file.0\nCreating file test_file.1\n\
         32768 bytes written in T.\n",
        &bytes.replace(body, "in T"),
        &run,
    );
    let run = dir.sysbench().args(&format!("{args} prepare")).run().ok();
    eq(
        &format!(
            "{BANNER}2 files, 16Kb each, 0Mb total\nCreating files for the test...\n\
             Extra file open flags: (none)\nReusing existing file test_file.0\n\
             Reusing existing file test_file.1\nNo bytes written.\n"
        ),
        &run.stdout,
        &run,
    );
    let run = dir.sysbench().args(&format!("{args} run")).run().code(1);
    assert!(
        run.stdout.starts_with(&format!(
            "{BANNER}FATAL: Missing required argument: --file-test-mode\n\nfileio options:\n"
        )),
        "{}",
        run.context()
    );
    dir.sysbench()
        .args(&format!("{args} --file-test-mode=foo run"))
        .run()
        .fails_with("FATAL: Invalid IO operations mode: foo.");
    dir.sysbench()
        .args(&format!(
            "{args} --file-num=4 --file-block-size=4096 --file-test-mode=rndrd run"
        ))
        .run()
        .fails_with(
            "FATAL: Cannot open file 'test_file.2' errno = 2 (No such file or directory)\n\
             WARNING: Did you forget to run the prepare step?",
        );
    dir.sysbench()
        .args("fileio --file-num=2 --file-total-size=64K --file-test-mode=rndrd run")
        .run()
        .fails_with(
            "FATAL: Size of file 'test_file.0' is 16KiB, but at least 32KiB is expected.\n\
             WARNING: Did you run 'prepare' with different --file-total-size or --file-num values?",
        );
    let run = dir
        .sysbench()
        .args(&format!(
            "{args} --file-test-mode=rndrd --events=5 --validate run"
        ))
        .run()
        .ok();
    assert!(
        run.stdout
            .contains("Number of threads: 1\nValidation checks: on.\n\n"),
        "{}",
        run.context()
    );
    assert!(
        run.stdout.contains("Threads started!\n\n\nThroughput:\n"),
        "{}",
        run.context()
    );
}

#[test]
fn old_option_names_warn_in_1_0_and_are_unknown_to_1_1() {
    let dir = Dir::new();
    let run = dir
        .sysbench()
        .env("BMK_SYSBENCH_COMPAT", "1.0")
        .args("--verbosity=0 --max-requests=2 --num-threads=1 --tx-rate=0 --test=cpu run")
        .run()
        .code(0);
    eq(
        "WARNING: the --test option is deprecated. You can pass a script name or path on \
         the command line without any options.\n",
        &run.stderr,
        &run,
    );
    eq(
        "WARNING: --max-requests is deprecated, use --events instead\n",
        &run.stdout,
        &run,
    );
    let run = dir.sysbench().args("--max-requests=2 cpu run").run();
    let run = run.fails_with("invalid option: --max-requests=2");
    eq(BANNER, &run.stdout, &run);
}

#[test]
fn help_as_sysbench_lists_no_bmk_extension() {
    let dir = Dir::new();
    for level in ["1.1", "1.0"] {
        let run = dir
            .sysbench()
            .env("BMK_SYSBENCH_COMPAT", level)
            .arg("--help")
            .run()
            .ok();
        for ext in [
            "--native-oltp",
            "--mysql-fast-path",
            "sqlite",
            "bmk",
            "oltp_read_write",
        ] {
            assert!(!run.stdout.contains(ext), "{ext}\n{}", run.context());
        }
        assert!(
            run.stdout
                .ends_with("for a list of options for each test.\n\n"),
            "{}",
            run.context()
        );
    }
}
