//! `--verbosity`: each message at sysbench's level for it (compared with sysbench
//! 1.0.20 side by side): 0 keeps failures and what scripts print, 3 is the default,
//! 4 adds the info lines, 5 one DEBUG line per worker start.

use crate::util::*;

#[test]
fn verbosity_zero_prints_only_failures_and_script_output() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --events=10 --report-interval=1 --verbosity=0 run")
        .run()
        .ok();
    assert_eq!(run.stdout, "");

    // prepare's messages are the script's own prints: they stay; the banner goes.
    let db = "--db-driver=sqlite --sqlite-db=v.db --tables=1 --table-size=10";
    let run = dir
        .bmk()
        .args(&format!("oltp_point_select {db} --verbosity=0 prepare"))
        .run()
        .ok();
    assert!(!run.stdout.contains("bmk "), "{}", run.stdout);
    assert!(
        run.stdout.starts_with("Creating table 'sbtest1'...\n"),
        "{}",
        run.stdout
    );
    let run = dir
        .bmk()
        .args(&format!(
            "oltp_point_select {db} --events=10 --verbosity=0 run"
        ))
        .run()
        .ok();
    assert_eq!(run.stdout, "");

    // A failure is still told.
    let run = dir
        .bmk()
        .args("oltp_point_select --db-driver=sqlite --sqlite-db=empty.db --events=1 --verbosity=0 run")
        .run()
        .code(1);
    assert!(run.stdout.starts_with("FATAL: "), "{}", run.context());

    // The system tests' prepare messages are notices.
    let files = "--file-num=2 --file-total-size=64K";
    let run = dir
        .bmk()
        .args(&format!("fileio {files} --verbosity=0 prepare"))
        .run()
        .ok();
    assert_eq!(run.stdout, "");
    assert!(dir.join("test_file.1").exists());
}

#[test]
fn verbosity_four_says_what_runs_and_why_it_ended() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --events=10 --cpu-max-prime=100 --verbosity=4 run")
        .run()
        .ok();
    assert!(
        run.stdout.contains(
            "from current time\n\n\nDoing CPU performance benchmark\n\nPrime numbers limit: 100\n\nInitializing worker threads...\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "Threads started!\n\nEvent limit exceeded, exiting...\nDone.\n\nCPU speed:\n"
        ),
        "{}",
        run.stdout
    );

    let run = dir
        .bmk()
        .args("threads --time=1 --thread-locks=3 --verbosity=4 run")
        .run()
        .ok();
    assert!(
        run.stdout.contains(
            "Doing thread subsystem performance test\nThread yields per test: 1000 Locks used: 3\nInitializing worker threads...\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "Threads started!\n\nTime limit exceeded, exiting...\nDone.\n\n\nThroughput:\n"
        ),
        "{}",
        run.stdout
    );

    // mutex ends when its workers are done, not on a limit.
    let run = dir.bmk().args("mutex --verbosity=4 run").run().ok();
    assert!(
        run.stdout.contains("Threads started!\n\nDone.\n\n"),
        "{}",
        run.stdout
    );

    // The default prints none of these.
    let run = dir.bmk().args("cpu --events=10 run").run().ok();
    assert!(!run.stdout.contains("Doing CPU"), "{}", run.stdout);
    assert!(!run.stdout.contains("Done."), "{}", run.stdout);
}

#[test]
fn verbosity_five_names_every_worker() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --events=10 --threads=2 --verbosity=5 run")
        .run()
        .ok();
    assert!(
        run.stdout.contains(
            "Initializing worker threads...\n\n\
             DEBUG: Worker thread (#0) started\nDEBUG: Worker thread (#0) initialized\n\
             DEBUG: Worker thread (#1) started\nDEBUG: Worker thread (#1) initialized\n\
             Threads started!\n"
        ),
        "{}",
        run.stdout
    );
}
