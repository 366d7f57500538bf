//! Output layout as sysbench prints it: the header, the intermediate lines, the final
//! report's blocks and columns, for every built-in test.
//!
//! Each layout test compares the whole output with numbers replaced by `N` (see
//! [`skeleton`]) to an expected skeleton, then checks the value columns against the
//! example report in `util.rs` with [`check_columns`].

use crate::util::*;

/// The header every non-strict run starts with, up to the RNG line's two blank lines.
const HEADER: &str = "\
bmk N (sysbench N compatible, using bundled LuaJIT N-betaN)

Running the test with following options:
Number of threads: N
Initializing random number generator from current time


";

/// `Latency (ms):` with the default 95th percentile, and `Threads fairness:`.
const LATENCY_AND_FAIRNESS: &str = "\
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

const THROUGHPUT: &str = "\
Throughput:
    events/s (eps): N
    time elapsed: Ns
    total number of events: N

";

const STARTED: &str = "\
Initializing worker threads...

Threads started!

";

#[track_caller]
fn assert_layout(run: &Run, expected: &str) {
    let context = format!("command: {}\n--- stdout ---\n{}", run.line, run.stdout);
    assert_text_eq(expected, &skeleton(&run.stdout), &context);
    assert!(
        check_columns(&run.stdout) >= 7,
        "too few value lines checked"
    );
}

#[test]
fn the_spec_example_columns_are_what_the_report_crate_documents() {
    let c = spec_columns();
    assert_eq!(
        (c.value_start, c.latency_end, c.fairness_start),
        (41, 53, 35)
    );
    // The checker accepts the example report itself, every value line of it.
    assert_eq!(check_columns(SPEC_EXAMPLE), 18);
}

#[test]
fn cpu_layout() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --cpu-max-prime=2000 --events=50 run")
        .run()
        .ok();
    let expected = format!(
        "{HEADER}Prime numbers limit: N\n\n{STARTED}CPU speed:\n    events per second: N\n\n{THROUGHPUT}{LATENCY_AND_FAIRNESS}"
    );
    assert_layout(&run, &expected);
    // `events per second:` is printed `%8.2f` after one space.
    run.line_matching(r"^    events per second: [ \d]{4}\d\.\d\d$");
}

#[test]
fn memory_layout() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("memory --memory-total-size=1M --memory-block-size=4K run")
        .run()
        .ok();
    let expected = format!(
        "{HEADER}Running memory speed test with the following options:
  block size: NKiB
  total size: NMiB
  operation: write
  scope: global

{STARTED}Total operations: N (N per second)

N MiB transferred (N MiB/sec)


{THROUGHPUT}{LATENCY_AND_FAIRNESS}"
    );
    assert_layout(&run, &expected);
    // 1 MiB in 4 KiB blocks: the implied event limit.
    assert_eq!(run.total_events(), 256);
    run.line_matching(r"^1\.00 MiB transferred \(\d+\.\d\d MiB/sec\)$");
}

#[test]
fn threads_layout() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("threads --threads=2 --events=40 --thread-yields=10 run")
        .run()
        .ok();
    // The threads-like layout opens its report with a blank line, as sysbench does.
    let expected = format!("{HEADER}{STARTED}\n{THROUGHPUT}{LATENCY_AND_FAIRNESS}");
    assert_layout(&run, &expected);
}

#[test]
fn mutex_layout() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("mutex --threads=2 --mutex-locks=100 --mutex-loops=10 run")
        .run()
        .ok();
    // The threads-like layout opens its report with a blank line, as sysbench does.
    let expected = format!("{HEADER}{STARTED}\n{THROUGHPUT}{LATENCY_AND_FAIRNESS}");
    assert_layout(&run, &expected);
    // One event per thread.
    assert_eq!(run.total_events(), 2);
}

fn fileio_expected(mode_line: &str, random: bool) -> String {
    let random = if random {
        "Number of IO requests: N\nRead/Write ratio for combined random IO test: N\n"
    } else {
        ""
    };
    format!(
        "{HEADER}Extra file open flags: (none)
N files, NKiB each
NMiB total file size
Block size NKiB
{random}Periodic FSYNC enabled, calling fsync() each N requests.
Calling fsync() at the end of test, Enabled.
Using synchronous I/O mode
{mode_line}
{STARTED}
Throughput:
         read:  IOPS=N N MiB/s (N MB/s)
         write: IOPS=N N MiB/s (N MB/s)
         fsync: IOPS=N

Latency (ms):
         min: N
         avg: N
         max: N
         Nth percentile: N
         sum: N

"
    )
}

#[test]
fn fileio_layouts() {
    let dir = Dir::new();
    let size = "--file-num=2 --file-total-size=1M";
    dir.bmk().args(&format!("fileio {size} prepare")).run().ok();
    for (mode, line, ratio) in [
        ("rndrw", "Doing random r/w test", true),
        ("rndrd", "Doing random read test", true),
        ("seqwr", "Doing sequential write (creation) test", false),
        ("seqrd", "Doing sequential read test", false),
        ("rndwr", "Doing random write test", true),
        ("seqrewr", "Doing sequential rewrite test", false),
    ] {
        let run = dir
            .bmk()
            .args(&format!(
                "fileio {size} --file-test-mode={mode} --events=64 run"
            ))
            .run()
            .ok();
        assert_layout_fileio(&run, &fileio_expected(line, ratio));
    }
    dir.bmk().args(&format!("fileio {size} cleanup")).run().ok();
}

#[track_caller]
fn assert_layout_fileio(run: &Run, expected: &str) {
    let context = format!("command: {}\n--- stdout ---\n{}", run.line, run.stdout);
    assert_text_eq(expected, &skeleton(&run.stdout), &context);
    // Latency rows only: fileio has no events/s lines and no fairness block.
    assert_eq!(check_columns(&run.stdout), 5);
    for l in ["read:  IOPS=", "write: IOPS="] {
        run.line_matching(&format!(
            r"^         {l}\d+\.\d\d \d+\.\d\d MiB/s \(\d+\.\d\d MB/s\)$"
        ));
    }
    run.line_matching(r"^         fsync: IOPS=\d+\.\d\d$");
}

#[test]
fn optional_header_lines_appear_only_when_asked_for_and_in_order() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args(
            "cpu --threads=2 --rate=5000 --report-interval=1 --report-checkpoints=10,20 \
             --warmup-time=1 --rand-seed=42 --events=10 run",
        )
        .run()
        .ok();
    let head: Vec<&str> = run.lines().into_iter().take(13).collect();
    let banner = head[0];
    assert!(
        banner.starts_with("bmk ") && banner.contains("sysbench 1.1.0 compatible"),
        "{banner}"
    );
    assert_eq!(
        head[1..],
        [
            "",
            "Running the test with following options:",
            "Number of threads: 2",
            "Target transaction rate: 5000/sec",
            "Report intermediate results every 1 second(s)",
            "Report checkpoint(s) at 10, 20 seconds",
            "Warmup time: 1s",
            "Initializing random number generator from seed (42).",
            "",
            "",
            "Prime numbers limit: 10000",
            "",
        ]
    );
    // Without them, none of those lines.
    let plain = dir.bmk().args("cpu --events=1 run").run().ok();
    for absent in ["Target transaction", "Report ", "Warmup", "from seed"] {
        assert!(!plain.stdout.contains(absent), "{absent}\n{}", plain.stdout);
    }
}

#[test]
fn strict_mode_banner_and_header() {
    let dir = Dir::new();
    let run = dir.sysbench().args("cpu --events=5 run").run().ok();
    let lines = run.lines();
    let banner = regex::Regex::new(
        r"^sysbench 1\.1\.0(-[a-f0-9]+)? \(using bundled LuaJIT 2\.1\.0-beta3\)$",
    )
    .unwrap();
    assert!(banner.is_match(lines[0]), "banner {:?}", lines[0]);
    let expected = format!(
        "{}Prime numbers limit: N\n\n{STARTED}CPU speed:\n    events per second: N\n\n{THROUGHPUT}{LATENCY_AND_FAIRNESS}",
        HEADER.replace(
            "bmk N (sysbench N compatible, using bundled LuaJIT N-betaN)",
            &skeleton(lines[0])
        )
    );
    assert_layout(&run, &expected);
}

#[test]
fn intermediate_lines_match_the_spec_formats() {
    let dir = Dir::new();
    let events = dir
        .bmk()
        .args("cpu --time=1 --report-interval=0.5 --cpu-max-prime=2000 run")
        .run()
        .ok();
    let re =
        regex::Regex::new(r"^\[ \d+\.\ds \] thds: \d+ eps: \d+\.\d\d lat \(ms,95%\): \d+\.\d\d$")
            .unwrap();
    let lines: Vec<&str> = events
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("[ "))
        .collect();
    assert!(!lines.is_empty(), "{}", events.stdout);
    for l in &lines {
        assert!(re.is_match(l), "{l:?}");
    }

    // Whole-second intervals print `[ 1s ]`; --percentile changes the label.
    let whole = dir
        .bmk()
        .args("threads --time=2 --report-interval=1 --percentile=99 run")
        .run()
        .ok();
    let re = regex::Regex::new(r"^\[ \d+s \] thds: \d+ eps: \d+\.\d\d lat \(ms,99%\): \d+\.\d\d$")
        .unwrap();
    let lines: Vec<&str> = whole
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("[ "))
        .collect();
    assert!(!lines.is_empty(), "{}", whole.stdout);
    for l in &lines {
        assert!(re.is_match(l), "{l:?}");
    }
    assert!(lines[0].starts_with("[ 1s ] thds: 1 "), "{lines:?}");
    assert!(whole.stdout.contains("         99th percentile:"));

    // --percentile=0 keeps the latency part, at 0% (the lowest latency), and the final
    // report says percentiles are disabled, as sysbench 1.0.20 prints them.
    let nolat = dir
        .bmk()
        .args("threads --time=1 --report-interval=0.5 --percentile=0 run")
        .run()
        .ok();
    // The line at the time limit counts the threads still running (0 once they left).
    let re =
        regex::Regex::new(r"^\[ \d+\.\ds \] thds: [01] eps: \d+\.\d\d lat \(ms,0%\): \d+\.\d\d$")
            .unwrap();
    let reports: Vec<&str> = nolat
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("[ "))
        .collect();
    assert!(!reports.is_empty(), "{}", nolat.stdout);
    for l in reports {
        assert!(re.is_match(l), "{l:?}");
    }
    assert!(
        nolat
            .stdout
            .contains("         percentile stats:               disabled\n"),
        "{}",
        nolat.stdout
    );
    assert!(!nolat.stdout.contains("th percentile:"), "{}", nolat.stdout);
}

#[test]
fn fileio_intermediate_line() {
    let dir = Dir::new();
    let size = "--file-num=2 --file-total-size=2M";
    dir.bmk().args(&format!("fileio {size} prepare")).run().ok();
    let run = dir
        .bmk()
        .args(&format!(
            "fileio {size} --file-test-mode=rndrw --time=1 --report-interval=0.5 run"
        ))
        .run()
        .ok();
    let re = regex::Regex::new(
        r"^\[ \d+\.\ds \] reads: \d+\.\d\d MiB/s writes: \d+\.\d\d MiB/s fsyncs: \d+\.\d\d/s latency \(ms,95%\): \d+\.\d\d\d$",
    )
    .unwrap();
    let lines: Vec<&str> = run
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("[ "))
        .collect();
    assert!(!lines.is_empty(), "{}", run.stdout);
    for l in &lines {
        assert!(re.is_match(l), "{l:?}");
    }
}

/// A built-in workload's cleanup on SQLite removes the database file it leaves empty,
/// and keeps one that holds anything else.
#[test]
fn cleanup_on_sqlite_removes_the_file_only_when_nothing_is_left_in_it() {
    let dir = Dir::new();
    let oltp = |command: &str| {
        dir.bmk()
            .args(&format!(
                "oltp_read_write --db-driver=sqlite --tables=2 --table-size=50 {command}"
            ))
            .run()
            .ok()
    };
    oltp("prepare");
    assert!(dir.join("sbtest.db").exists());
    oltp("cleanup");
    assert!(!dir.join("sbtest.db").exists(), "{:?}", dir.entries());

    oltp("prepare");
    // A table of the user's own in the same file.
    dir.write(
        "own.lua",
        "local con = sysbench.sql.driver():connect()\ncon:query('CREATE TABLE mine(x INT)')\n",
    );
    dir.bmk().args("--db-driver=sqlite own.lua").run().ok();
    oltp("cleanup");
    assert!(
        dir.join("sbtest.db").exists(),
        "a file with a table left in it is kept"
    );
}
