//! Every numeric option has a range: a value outside it (or not a number at all:
//! `inf`, `nan`, a number too large for any type) fails with one line naming the
//! option, the value and what is allowed, exit code 1, before anything runs. Never a
//! panic, never a silent 0.

use crate::util::*;

/// `args` fails, as bmk and as sysbench, with one line mentioning every one of `parts`.
fn rejects(dir: &Dir, args: &str, parts: &[&str]) {
    dir.bmk().args(args).run().fails_mentioning(parts);
    dir.sysbench().args(args).run().fails_mentioning(parts);
}

#[test]
fn forced_shutdown_takes_finite_seconds_only() {
    let dir = Dir::new();
    for v in [
        "inf",
        "nan",
        "1e308",
        "99999999999999999999999",
        "-1",
        "1e30%",
    ] {
        rejects(
            &dir,
            &format!("cpu --time=1 --forced-shutdown={v} run"),
            &["--forced-shutdown", &format!("'{v}'"), "seconds"],
        );
    }
    // What is allowed still runs.
    dir.bmk()
        .args("cpu --events=5 --forced-shutdown=1e3 run")
        .run()
        .ok();
}

#[test]
fn report_checkpoints_take_finite_seconds_only() {
    let dir = Dir::new();
    for v in ["inf", "1e30", "nan", "0"] {
        rejects(
            &dir,
            &format!("cpu --events=5 --report-checkpoints={v} run"),
            &["--report-checkpoints", &format!("'{v}'"), "seconds"],
        );
    }
}

#[test]
fn report_interval_is_zero_or_at_least_a_millisecond() {
    let dir = Dir::new();
    for v in ["1e-300", "0.0009", "inf", "nan", "1e10"] {
        rejects(
            &dir,
            &format!("cpu --events=5 --report-interval={v} run"),
            &["--report-interval", &format!("'{v}'"), "0.001", "or 0"],
        );
    }
    dir.bmk()
        .args("cpu --events=5 --report-interval=0 run")
        .run()
        .ok();
    dir.bmk()
        .args("cpu --events=5 --report-interval=0.001 run")
        .run()
        .ok();
}

#[test]
fn percentile_is_zero_or_from_1_to_100() {
    let dir = Dir::new();
    for v in ["0.0000001", "0.5", "100.5", "-1", "nan"] {
        rejects(
            &dir,
            &format!("cpu --events=5 --percentile={v} run"),
            &["--percentile", &format!("'{v}'"), "from 1 to 100, or 0"],
        );
    }
    let off = dir
        .bmk()
        .args("cpu --events=5 --percentile=0 run")
        .run()
        .ok();
    assert!(!off.stdout.contains("th percentile"), "{}", off.stdout);
    dir.bmk()
        .args("cpu --events=5 --percentile=1 run")
        .run()
        .ok();
}

#[test]
fn results_file_and_directory_need_a_name() {
    let dir = Dir::new();
    for opt in ["--results", "--results-dir"] {
        dir.bmk()
            .args(&format!("cpu --events=5 {opt}= run"))
            .run()
            .fails_with(&format!(
                "invalid value '' for option {opt}: expected a file name"
            ));
    }
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());
}

#[test]
fn threads_rate_and_ports_have_caps() {
    let dir = Dir::new();
    for (args, option, allowed) in [
        ("cpu --threads=100001 run", "--threads", "100000"),
        // sysbench's limit: a C int.
        ("cpu --rate=1e10 run", "--rate", "2147483647"),
        ("cpu --rate=2147483648 run", "--rate", "2147483647"),
        (
            "cpu --thread-stack-size=1K run",
            "--thread-stack-size",
            "16384",
        ),
        ("cpu --mysql-port=0 run", "--mysql-port", "65535"),
        ("cpu --mysql-port=3306,65536 run", "--mysql-port", "65535"),
        ("cpu --pgsql-port=70000 run", "--pgsql-port", "65535"),
        ("cpu --pgsql-port=0 run", "--pgsql-port", "65535"),
        ("cpu --db-timeout=1e30 run", "--db-timeout", "integer"),
        (
            "cpu --db-connect-timeout=9999999 run",
            "--db-connect-timeout",
            "1000000",
        ),
        (
            "cpu --sqlite-busy-timeout=-1 run",
            "--sqlite-busy-timeout",
            "0",
        ),
    ] {
        rejects(&dir, args, &[option, allowed]);
    }
    // The old name is checked as the new one; sysbench 1.1 no longer knows it.
    dir.bmk()
        .args("cpu --num-threads=0 run")
        .run()
        .fails_mentioning(&["--threads", "'0'"]);
    dir.sysbench()
        .args("cpu --num-threads=0 run")
        .run()
        .fails_with("invalid option: --num-threads=0");
    dir.bmk()
        .args("cpu --events=5 --event-loops=4294967295 run")
        .run()
        .fails_mentioning(&["--event-loops", "'4294967295'", "100000"]);
}

#[test]
fn built_in_workloads_check_tables_and_sync_file() {
    let dir = Dir::new();
    for v in ["0", "1000001", "-3"] {
        dir.bmk()
            .args(&format!(
                "oltp_read_only --db-driver=sqlite --tables={v} prepare"
            ))
            .run()
            .fails_mentioning(&["--tables", &format!("'{v}'"), "1000000"]);
    }
    dir.bmk()
        .args("oltp_read_only --db-driver=sqlite --sync-file=gate --time=1 run")
        .run()
        .fails_with("invalid value 'gate' for option --sync-file: expected an absolute path");
    assert!(
        !dir.entries().iter().any(|e| e.starts_with("sbtest")),
        "{:?}",
        dir.entries()
    );
}
