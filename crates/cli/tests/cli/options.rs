//! The option grammar that succeeds: aliases, `-`/`_`, booleans, sizes,
//! config files, `--version`, `--help`, `<test> help`, `--db-driver=help`.

use crate::util::*;

#[test]
fn legacy_aliases_still_work() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --num-threads=2 --max-requests=6 --max-time=5 run")
        .run()
        .ok();
    assert!(
        run.stdout.contains("Number of threads: 2\n"),
        "{}",
        run.stdout
    );
    assert_eq!(run.total_events(), 6);

    let rate = dir
        .bmk()
        .args("cpu --tx-rate=1000 --max-requests=5 run")
        .run()
        .ok();
    assert!(rate.stdout.contains("Target transaction rate: 1000/sec\n"));
    assert_eq!(rate.total_events(), 5);

    // --max-time is --time.
    let timed = dir
        .bmk()
        .args("cpu --cpu-max-prime=500 --max-time=1 run")
        .run()
        .ok();
    let t = timed.time_elapsed();
    assert!((0.9..2.0).contains(&t), "elapsed {t}");
}

#[test]
fn test_option_is_deprecated_but_accepted() {
    // sysbench 1.0's option (1.1 has none: see sysbench_edges.rs).
    let dir = Dir::new();
    let run = dir
        .sysbench()
        .env("BMK_SYSBENCH_COMPAT", "1.0")
        .args("--test=cpu --events=3 run")
        .run()
        .code(0);
    assert_eq!(run.total_events(), 3);
    assert!(run.stdout.contains("Prime numbers limit: 10000"));
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("--test") && run.stderr.contains("deprecated"),
        "{}",
        run.stderr
    );
}

#[test]
fn dash_and_underscore_are_the_same_character() {
    let dir = Dir::new();
    let a = dir
        .bmk()
        .args("cpu --cpu_max_prime=123 --report_interval=1 --events=2 run")
        .run()
        .ok();
    assert!(
        a.stdout.contains("Prime numbers limit: 123\n"),
        "{}",
        a.stdout
    );
    assert!(a
        .stdout
        .contains("Report intermediate results every 1 second(s)"));
    // The later spelling wins whatever its separators.
    let b = dir
        .bmk()
        .args("cpu --cpu-max-prime=5 --cpu_max-prime=77 --events=2 run")
        .run()
        .ok();
    assert!(
        b.stdout.contains("Prime numbers limit: 77\n"),
        "{}",
        b.stdout
    );
}

#[test]
fn boolean_spellings() {
    let dir = Dir::new();
    for on in ["", "=on", "=true", "=yes", "=1", "=ON"] {
        let run = dir
            .bmk()
            .arg(format!("--histogram{on}"))
            .args("cpu --events=3 --cpu-max-prime=100 run")
            .run()
            .ok();
        assert!(
            run.stdout
                .contains("Latency histogram (values are in milliseconds)"),
            "--histogram{on}\n{}",
            run.stdout
        );
    }
    for off in ["=off", "=false", "=no", "=0"] {
        let run = dir
            .bmk()
            .arg(format!("--histogram{off}"))
            .args("cpu --events=3 --cpu-max-prime=100 run")
            .run()
            .ok();
        assert!(
            !run.stdout.contains("Latency histogram"),
            "--histogram{off}\n{}",
            run.stdout
        );
    }
}

#[test]
fn size_suffixes_are_powers_of_1024() {
    let dir = Dir::new();
    // (block, total, shown block, shown total, events)
    for (block, total, shown_block, shown_total, events) in [
        ("2K", "1M", "2KiB", "1MiB", 512),
        ("2048", "1048576", "2KiB", "1MiB", 512),
        ("1M", "3M", "1024KiB", "3MiB", 3),
    ] {
        let run = dir
            .bmk()
            .arg(format!("--memory-block-size={block}"))
            .arg(format!("--memory-total-size={total}"))
            .args("memory run")
            .run()
            .ok();
        for shown in [
            format!("  block size: {shown_block}\n"),
            format!("  total size: {shown_total}\n"),
        ] {
            assert!(run.stdout.contains(&shown), "{shown}\n{}", run.stdout);
        }
        assert_eq!(run.total_events(), events);
    }
    let lower = dir
        .bmk()
        .args("memory --memory-block-size=1k --memory-total-size=8k run")
        .run()
        .ok();
    assert_eq!(lower.total_events(), 8);
    let big = dir
        .bmk()
        .args("memory --memory-total-size=1T --memory-oper=none --events=1 run")
        .run()
        .ok();
    assert!(
        big.stdout.contains("  total size: 1048576MiB\n"),
        "{}",
        big.stdout
    );
    let g = dir
        .bmk()
        .args("memory --memory-total-size=1G --memory-oper=none --events=1 run")
        .run()
        .ok();
    assert!(g.stdout.contains("  total size: 1024MiB\n"), "{}", g.stdout);
}

#[test]
fn config_file_options_mean_the_same_as_command_line_ones() {
    let dir = Dir::new();
    dir.write(
        "bench.cfg",
        "# a comment\n\nthreads=2\nevents=8\ncpu-max-prime=321\nreport_interval=1\n",
    );
    let run = dir.bmk().args("--config-file=bench.cfg cpu run").run().ok();
    assert!(
        run.stdout.contains("Number of threads: 2\n"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Prime numbers limit: 321\n"));
    assert_eq!(run.total_events(), 8);
    // The command line can still add to it.
    let strict = dir
        .sysbench()
        .args("--config-file=bench.cfg --events=4 cpu run")
        .run()
        .ok();
    assert_eq!(strict.total_events(), 4);
}

#[test]
fn version_in_both_modes() {
    let dir = Dir::new();
    let strict = dir.sysbench().args("--version").run().ok();
    let re = regex::Regex::new(r"^sysbench [.0-9]+(-[a-f0-9]+)?\n$").unwrap();
    assert!(re.is_match(&strict.stdout), "{:?}", strict.stdout);
    assert!(strict.stdout.starts_with("sysbench 1.1.0"));
    let bmk = dir.bmk().args("--version").run().ok();
    let re =
        regex::Regex::new(r"^bmk \d+\.\d+\.\d+\S* \(sysbench 1\.1\.0 compatible\)\n$").unwrap();
    assert!(re.is_match(&bmk.stdout), "{:?}", bmk.stdout);
}

#[test]
fn help_lists_options_and_tests() {
    let dir = Dir::new();
    for (cmd, name) in [(dir.bmk(), "bmk"), (dir.sysbench(), "sysbench")] {
        let run = cmd.args("--help").run().ok();
        assert!(
            run.stdout
                .contains(&format!("  {name} [options]... [testname] [command]\n")),
            "{}",
            run.stdout
        );
        for needle in [
            "Usage:",
            "--threads=N",
            "--events=N",
            "--time=N",
            "--rate=N",
            "--report-interval=N",
            "--rand-type=STRING",
            "--percentile=N",
            "--histogram",
            "Compiled-in tests:",
            "  fileio",
            "  cpu",
            "  memory",
            "  threads",
            "  mutex",
        ] {
            assert!(run.stdout.contains(needle), "{needle}\n{}", run.stdout);
        }
    }
}

#[test]
fn test_help_lists_the_test_options() {
    let dir = Dir::new();
    let run = dir.bmk().args("cpu help").run().ok();
    assert!(run.stdout.contains("cpu options:"), "{}", run.stdout);
    assert!(run.stdout.contains("--cpu-max-prime=N"), "{}", run.stdout);
    let run = dir.sysbench().args("fileio help").run().ok();
    for o in [
        "--file-num=N",
        "--file-block-size=N",
        "--file-total-size=SIZE",
        "--file-test-mode=STRING",
        "--file-io-mode=STRING",
        "--file-fsync-freq=N",
        "--file-rw-ratio=N",
    ] {
        assert!(run.stdout.contains(o), "{o}\n{}", run.stdout);
    }
}

#[test]
fn db_driver_help_lists_drivers() {
    let dir = Dir::new();
    let run = dir.bmk().args("--db-driver=help").run().ok();
    assert!(run.stdout.contains("mysql"), "{}", run.stdout);
    assert!(run.stdout.contains("pgsql"), "{}", run.stdout);
}
