//! Lua workers on event loops (`--event-loops`) against Lua workers with a thread each:
//! the same scripts print the same (report totals, their own lines, error messages),
//! against SQLite and, where they run, MariaDB and PostgreSQL; thousands of workers fit
//! in one process; a script that blocks its loop is told about, and its run stays
//! correct. Through `bmk-lua-host`, like `api.rs`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn script(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scripts")
        .join(name)
        .display()
        .to_string()
}

struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `bmk-lua-host args...` in `dir`.
fn host_in(dir: &Path, args: &[String]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_bmk-lua-host"))
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .args(args)
        .output()
        .expect("run bmk-lua-host");
    Output {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The lines of a run's output that do not depend on timing, sorted (the workers of
/// a run print in an order that varies):
/// * the `total:` line without its times and rates;
/// * a message the log printed once for several workers that logged it in a row,
///   `(last message repeated N times)`, as its N + 1 copies;
/// * addresses (`[builtin#21]: at 0x...` in tracebacks) as `0x?`;
/// * without the header a panic prints, which names the thread (`bmk-worker-N` or
///   `bmk-loop-N`).
///
/// A failed run's lines once each and without the total, as how many workers reach
/// the failure, and how many events they ran, before the run stops varies.
fn comparable(text: &str, failed: bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        if failed && line.starts_with("total:") || line.starts_with("thread '") {
            continue;
        }
        if let Some(n) = line
            .strip_prefix("(last message repeated ")
            .and_then(|rest| rest.strip_suffix(" times)"))
            .and_then(|n| n.parse::<usize>().ok())
        {
            let last = lines.last().cloned().unwrap_or_default();
            lines.extend(std::iter::repeat_n(last, n));
            continue;
        }
        let line = if line.starts_with("total:") {
            line.split_whitespace()
                .filter(|kv| {
                    !["time=", "eps=", "max_ms="]
                        .iter()
                        .any(|k| kv.starts_with(k))
                })
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            without_addresses(line)
        };
        lines.push(line);
    }
    lines.sort();
    if failed {
        lines.dedup();
    }
    lines
}

/// `line` with every `0x` followed by hex digits as `0x?`.
fn without_addresses(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at + 2]);
        let tail = &rest[at + 2..];
        let digits = tail.len()
            - tail
                .trim_start_matches(|c: char| c.is_ascii_hexdigit())
                .len();
        if digits > 0 {
            out.push('?');
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// Runs `list` with a thread per worker and on one event loop, and checks that both
/// runs end alike and print the same. Returns the output of the run on the loop.
fn same_both_ways(dir: &Path, list: &[String]) -> Output {
    let run = |loops: &str| {
        let mut all = vec![format!("--event-loops={loops}")];
        all.extend_from_slice(list);
        host_in(dir, &all)
    };
    let threads = run("off");
    let looped = run("1");
    assert_eq!(
        threads.code, looped.code,
        "{list:?}: exit codes differ\nthreads:\n{}{}\nloop:\n{}{}",
        threads.stdout, threads.stderr, looped.stdout, looped.stderr
    );
    let failed = threads.code != Some(0);
    assert_eq!(
        comparable(&threads.stdout, failed),
        comparable(&looped.stdout, failed),
        "{list:?}: stdout differs"
    );
    assert_eq!(
        comparable(&threads.stderr, failed),
        comparable(&looped.stderr, failed),
        "{list:?}: stderr differs"
    );
    looped
}

/// Asserts that the standard output of `out` holds `line(tid)` for each of `workers`.
fn each_worker_printed(out: &Output, workers: u32, line: impl Fn(u32) -> String) {
    for tid in 0..workers {
        assert!(out.stdout.contains(&line(tid)), "{}", out.stdout);
    }
}

fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bmk-lua-loops-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn api_scripts_print_the_same_on_event_loops() {
    let dir = scratch_dir("api");
    let cases: &[&[&str]] = &[
        &["--threads=4", "--time=0", "--rand-seed=5", "per_worker.lua"],
        &["--threads=3", "--time=0", "thread_run.lua"],
        &["--threads=2", "--time=0", "stop.lua"],
        &["--threads=2", "--time=0", "lazy_api.lua", "run"],
        &["--threads=2", "lazy_libs.lua", "run"],
        &["--threads=2", "--time=0", "runtime_error.lua"],
        &[
            "--threads=2",
            "--time=0",
            "--where=thread_init",
            "--level=1",
            "raised_messages.lua",
        ],
        &[
            "--threads=2",
            "--time=0",
            "--where=event",
            "raised_messages.lua",
        ],
        &[
            "--threads=2",
            "--time=0",
            "--where=thread_init",
            "stack_overflow.lua",
        ],
        &[
            "--threads=2",
            "--time=0",
            "--where=event",
            "stack_overflow.lua",
        ],
        &["--threads=2", "--time=0", "deep_c_stack.lua"],
    ];
    for case in cases {
        let list: Vec<String> = case
            .iter()
            .map(|a| {
                if a.ends_with(".lua") {
                    script(a)
                } else {
                    a.to_string()
                }
            })
            .collect();
        same_both_ways(&dir, &list);
    }
    // What the comparison rests on: each worker's own generator and globals.
    let out = same_both_ways(
        &dir,
        &args(&[
            "--threads=4",
            "--time=0",
            "--rand-seed=5",
            &script("per_worker.lua"),
        ]),
    );
    assert_eq!(
        out.stdout.matches("after 5 events").count(),
        4,
        "{}",
        out.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn deep_recursion_through_c_fits_a_workers_stack() {
    let dir = scratch_dir("deep");
    let out = same_both_ways(
        &dir,
        &args(&[
            "--threads=2",
            "--time=0",
            "--depth=190",
            &script("deep_c_stack.lua"),
        ]),
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("worker 1: true 190"), "{}", out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The SQL scripts of `api.rs`, both ways, on a database reached with `db` options.
fn sql_scripts_both_ways(dir: &Path, db: &[String]) {
    let with = |extra: &[&str]| {
        let mut all = db.to_vec();
        all.extend(extra.iter().map(|a| a.to_string()));
        all
    };
    let check = host_in(dir, &with(&[&script("sql.lua"), "check"]));
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);
    let out = same_both_ways(
        dir,
        &with(&["--threads=2", "--events=100", &script("sql.lua")]),
    );
    assert!(
        out.stdout.contains("reads=100 writes=100 other=200"),
        "{}",
        out.stdout
    );
    let out = same_both_ways(
        dir,
        &with(&["--threads=2", "--events=6", &script("sql_caught.lua")]),
    );
    assert!(out.stdout.contains(" errors=12 "), "{}", out.stdout);
}

#[test]
fn sql_scripts_print_the_same_on_event_loops_on_sqlite() {
    let dir = scratch_dir("sqlite");
    let db = args(&["--db-driver=sqlite", "--sqlite-db=test.db"]);
    sql_scripts_both_ways(&dir, &db);
    // A driver that panics (bmk-sql's `test-panic` SQLite): the same failure.
    let mut panics = db.clone();
    panics.extend(args(&[
        "--threads=2",
        "--events=5",
        &script("sql_panic.lua"),
    ]));
    let out = same_both_ways(&dir, &panics);
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Creates database `db` with `tool args...`; `false` (and a skip note, or a failure
/// under CI) when the server is not there.
fn scratch_database(server: &str, tool: &str, args: &[&str]) -> bool {
    match Command::new(tool).args(args).output() {
        Ok(out) if out.status.success() => true,
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr).into_owned();
            bmk_testkit::unavailable::<()>(server, &why).is_some()
        }
        Err(e) => bmk_testkit::unavailable::<()>(server, &e.to_string()).is_some(),
    }
}

#[test]
fn sql_scripts_print_the_same_on_event_loops_on_mariadb() {
    let db = format!("bmk_lua_loops_{}", std::process::id());
    let sock = "--socket=/run/mysqld/mysqld.sock";
    let create = format!("DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}");
    if !scratch_database("MariaDB", "mariadb", &["-uroot", sock, "-e", &create]) {
        return;
    }
    let dir = scratch_dir("mariadb");
    sql_scripts_both_ways(
        &dir,
        &args(&[
            "--db-driver=mysql",
            "--mysql-socket=/run/mysqld/mysqld.sock",
            "--mysql-user=root",
            &format!("--mysql-db={db}"),
        ]),
    );
    let drop = format!("DROP DATABASE IF EXISTS {db}");
    let _ = Command::new("mariadb")
        .args(["-uroot", sock, "-e", &drop])
        .output();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sql_scripts_print_the_same_on_event_loops_on_postgresql() {
    let db = format!("bmk_lua_loops_{}", std::process::id());
    let psql = |sql: &str| {
        vec![
            "-h".to_string(),
            "127.0.0.1".into(),
            "-U".into(),
            "postgres".into(),
            "-v".into(),
            "ON_ERROR_STOP=1".into(),
            "-c".into(),
            sql.to_string(),
        ]
    };
    let drop = psql(&format!("DROP DATABASE IF EXISTS {db}"));
    let drop: Vec<&str> = drop.iter().map(String::as_str).collect();
    let create = psql(&format!("CREATE DATABASE {db}"));
    let create: Vec<&str> = create.iter().map(String::as_str).collect();
    if !scratch_database("PostgreSQL", "psql", &drop)
        || !scratch_database("PostgreSQL", "psql", &create)
    {
        return;
    }
    let dir = scratch_dir("pgsql");
    sql_scripts_both_ways(
        &dir,
        &args(&[
            "--db-driver=pgsql",
            "--pgsql-host=127.0.0.1",
            "--pgsql-user=postgres",
            &format!("--pgsql-db={db}"),
        ]),
    );
    let _ = Command::new("psql").args(&drop).output();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `bmk-lua-host args...` in `dir` and returns its output and its peak resident
/// memory in KiB (`wait4`'s own account of the child).
fn host_peak_rss(dir: &Path, args: &[String]) -> (Output, i64) {
    use std::io::Read;
    // Reaped by `wait4` below, which `Child::wait` cannot replace: it gives the rusage.
    #[allow(clippy::zombie_processes)]
    let mut child = Command::new(env!("CARGO_BIN_EXE_bmk-lua-host"))
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run bmk-lua-host");
    let (mut stdout, mut stderr) = (String::new(), String::new());
    // Little output: reading stdout to its end before stderr cannot block the child.
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 reaps our own child and fills both.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (
        Output {
            code,
            stdout,
            stderr,
        },
        usage.ru_maxrss,
    )
}

#[test]
fn two_thousand_lua_workers_share_the_loops() {
    let dir = scratch_dir("many");
    let db = args(&["--db-driver=sqlite", "--sqlite-db=many.db"]);
    let with = |extra: &[&str]| {
        let mut all = db.clone();
        all.extend(extra.iter().map(|a| a.to_string()));
        all
    };
    let prepared = host_in(&dir, &with(&[&script("point_select.lua"), "prepare"]));
    assert_eq!(
        prepared.code,
        Some(0),
        "{}{}",
        prepared.stdout,
        prepared.stderr
    );
    let run = |loops: &str| {
        let (out, peak_kib) = host_peak_rss(
            &dir,
            &with(&[
                &format!("--event-loops={loops}"),
                "--threads=2000",
                "--events=20000",
                "--time=0",
                &script("point_select.lua"),
            ]),
        );
        assert_eq!(out.code, Some(0), "{loops}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("total: events=20000 "),
            "{}",
            out.stdout
        );
        assert!(out.stdout.contains(" reads=20000 "), "{}", out.stdout);
        peak_kib / 1024
    };
    let looped = run("auto");
    let threads = run("off");
    // A worker is its Lua state (~80 KiB; on a loop a Lua thread of the loop's state,
    // ~20 KiB), a SQLite connection with its page cache (~190 KiB) and, on a loop, the
    // stack pages its coroutine uses: 532 MiB for the 2000 when this was written, 572
    // MiB with a thread each. A worker that kept the stack pages of its creation, or a
    // per-worker buffer, shows here.
    assert!(looped < 650, "2000 workers on loops peaked at {looped} MiB");
    assert!(
        looped < threads,
        "2000 workers: {looped} MiB on loops, {threads} MiB with a thread each"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_script_that_holds_its_loop_is_told_once_and_its_run_stays_correct() {
    let dir = scratch_dir("held");
    for how in ["execute", "busy"] {
        let run = |loops: &str| {
            host_in(
                &dir,
                &args(&[
                    &format!("--event-loops={loops}"),
                    "--threads=2",
                    "--events=200",
                    "--time=0",
                    &format!("--how={how}"),
                    &script("blocks_loop.lua"),
                ]),
            )
        };
        let out = run("1");
        assert_eq!(out.code, Some(0), "{how}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("total: events=200 "),
            "{how}: {}",
            out.stdout
        );
        assert!(out.stdout.contains(" reads=200 "), "{how}: {}", out.stdout);
        let told: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("WARNING: worker thread 0 of "))
            .collect();
        assert_eq!(told.len(), 1, "{how}: {}", out.stderr);
        assert!(
            told[0].contains("blocks_loop.lua' ran in its events for ")
                && told[0].contains("--event-loops=off"),
            "{how}: {}",
            told[0]
        );
        // With a thread each nobody waits for it: nothing to tell.
        let out = run("off");
        assert_eq!(out.code, Some(0), "{how}: {}{}", out.stdout, out.stderr);
        assert!(!out.stderr.contains("WARNING"), "{how}: {}", out.stderr);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ffi_usleep_lets_the_other_workers_of_the_loop_run() {
    // A start barrier in thread_init that polls with ffi.C.usleep: on one loop, worker 0
    // waits for worker 1, which can only check in while worker 0 sleeps.
    let dir = scratch_dir("usleep");
    let out = host_in(
        &dir,
        &args(&[
            "--event-loops=1",
            "--threads=3",
            "--time=0",
            &script("init_barrier.lua"),
        ]),
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    each_worker_printed(&out, 3, |tid| format!("worker {tid} passed"));
    assert!(!out.stderr.contains("WARNING"), "{}", out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn distinct_lines_of_failures_compare() {
    // The comparison itself: timing fields go, other differences stay.
    let a = "total: events=5 time=0.1 eps=50.0 reads=5 max_ms=1.0\nx\n";
    let b = "x\ntotal: events=5 time=0.2 eps=25.0 reads=5 max_ms=2.0\n";
    assert_eq!(comparable(a, false), comparable(b, false));
    assert_ne!(
        comparable(a, false),
        comparable("total: events=6 reads=5\nx\n", false)
    );
    let once: BTreeSet<String> = comparable("e\ne\n", true).into_iter().collect();
    assert_eq!(once.len(), 1);
    assert_eq!(
        comparable("F\n(last message repeated 2 times)\nat 0x1f2e\n", false),
        ["F", "F", "F", "at 0x?"]
    );
}

#[test]
fn top_level_code_that_sleeps_while_loading_does_not_stall_the_load_gate() {
    // Every state sleeps 20 ms in its top-level code, holding its place among the
    // states that load at once (one per CPU): on one loop, the workers waiting for a
    // place must yield to those holding one, not block their thread.
    let dir = scratch_dir("gate");
    let script = dir.join("sleepy_load.lua");
    std::fs::write(
        &script,
        "local ffi = require('ffi')\n\
         pcall(ffi.cdef, 'int usleep(unsigned int usec);')\n\
         ffi.C.usleep(20000)\n\
         function event() return true end\n",
    )
    .unwrap();
    let out = host_in(
        &dir,
        &args(&[
            "--event-loops=1",
            "--threads=6",
            "--time=0",
            &script.display().to_string(),
        ]),
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("total: events=6 "), "{}", out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn workers_sharing_a_state_keep_their_globals_options_hooks_and_modules() {
    // Six workers on one loop share its Lua state; each asserts in every event that the
    // globals, sysbench.opt values and hooks it set are its own, and at the end that a
    // required module's locals and an FFI metatype declared by every worker's top level
    // work for it. The same with a thread (and state) each.
    let dir = scratch_dir("shared");
    let out = same_both_ways(
        &dir,
        &args(&[
            "--threads=6",
            "--events=300",
            "--time=0",
            &script("shared_state.lua"),
        ]),
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    each_worker_printed(&out, 6, |tid| format!("worker {tid} kept its own\n"));
    assert!(out.stdout.contains("total: events=300 "), "{}", out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lua_workers_of_a_loop_cost_kilobytes_not_a_state_each() {
    // The workers of a loop are Lua threads of one state: a no-op worker's resident
    // memory is its globals, its `sysbench` table and its coroutine's stack pages
    // (about 20 KiB when this was written), where a state each (a thread per worker)
    // costs about 95 KiB.
    let dir = scratch_dir("small");
    let peak = |threads: u32, loops: &str| {
        let (out, kib) = host_peak_rss(
            &dir,
            &args(&[
                &format!("--event-loops={loops}"),
                &format!("--threads={threads}"),
                "--events=20000",
                "--time=0",
                &script("noop.lua"),
            ]),
        );
        assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
        kib
    };
    let base = peak(1, "auto");
    let per_worker = |total: i64| (total - base) / 1999;
    let looped = per_worker(peak(2000, "auto"));
    let threads = per_worker(peak(2000, "off"));
    assert!(looped < 40, "a Lua worker on a loop costs {looped} KiB");
    assert!(
        threads > 2 * looped,
        "a Lua worker costs {looped} KiB on a loop, {threads} KiB with a thread each"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_scripts_own_event_loop_that_only_computes_shares_its_loop() {
    // Four workers of one loop run a script's own thread_run for a second; their events
    // never wait, so each gets its turns only from the time slices its
    // ffi.C.sb_more_events gives.
    let dir = scratch_dir("own-loop");
    let out = host_in(
        &dir,
        &args(&[
            "--event-loops=1",
            "--threads=4",
            "--time=1",
            &script("own_loop_slices.lua"),
        ]),
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    each_worker_printed(&out, 4, |tid| format!("worker {tid} ran events: true\n"));
    let _ = std::fs::remove_dir_all(&dir);
}
