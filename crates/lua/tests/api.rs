//! Tests of the Lua runtime through its API: in process for loading and errors, and
//! through `bmk-lua-host` (a minimal runner built on the same API and
//! `bmk_engine::run`) where the output of a run matters.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;

use bmk_engine::options::{OptKind, OptSpec};
use bmk_lua::{HostConfig, LuaErrorKind, ModuleLibrary, NoModules, ScriptHost, ScriptSource};

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scripts")
        .join(name)
}

struct Output {
    ok: bool,
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `bmk-lua-host args...` with `stdin` as input.
fn host_with_stdin(args: &[&str], stdin: &str) -> Output {
    host_in(&std::env::temp_dir(), args, stdin)
}

/// Runs `bmk-lua-host args...` in directory `dir`.
fn host_in(dir: &std::path::Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bmk-lua-host"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bmk-lua-host");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Output {
        ok: out.status.success(),
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn host(args: &[&str]) -> Output {
    host_with_stdin(args, "")
}

fn host_ok(args: &[&str]) -> String {
    let out = host(args);
    assert!(
        out.ok,
        "bmk-lua-host {args:?} failed\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    out.stdout
}

fn path(name: &str) -> String {
    script(name).display().to_string()
}

/// `key=value` from a `total:` line.
fn total_field(out: &str, key: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.starts_with("total:"))
        .unwrap_or_else(|| panic!("no total line in\n{out}"));
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.parse().unwrap())
        .unwrap_or_else(|| panic!("no {key} in {line}"))
}

fn load(name: &str, library: Arc<dyn ModuleLibrary>) -> Result<ScriptHost, bmk_lua::LuaError> {
    let src = ScriptSource::from_file(&script(name)).unwrap();
    ScriptHost::load(src, HostConfig::new(vec!["test".into()], "run", library))
}

// Options -------------------------------------------------------------------------------

#[test]
fn declared_options_infer_their_types() {
    let host = load("options.lua", Arc::new(NoModules)).unwrap();
    let specs = host.declared_options();
    let kind = |n: &str| specs.iter().find(|s| s.name == n).unwrap().kind;
    assert_eq!(kind("flag"), OptKind::Bool);
    assert_eq!(kind("count"), OptKind::Double);
    assert_eq!(kind("ratio"), OptKind::Double);
    assert_eq!(kind("rows"), OptKind::Int);
    assert_eq!(kind("block"), OptKind::Size);
    assert_eq!(kind("name"), OptKind::String);
    assert_eq!(kind("hosts"), OptKind::List);
    assert_eq!(kind("path"), OptKind::File);
    let defaults: Vec<_> = specs
        .iter()
        .map(|s| (s.name.as_str(), s.default.as_deref().unwrap_or("-")))
        .collect();
    assert_eq!(
        defaults,
        [
            ("block", "16K"),
            ("count", "10"),
            ("even", "2"),
            ("flag", "off"),
            ("hosts", "a,b"),
            ("name", "sbtest"),
            ("path", "data.txt"),
            ("ratio", "0.5"),
            ("rows", "100"),
        ]
    );
}

#[test]
fn options_help_is_sorted_and_aligned() {
    let host = load("options.lua", Arc::new(NoModules)).unwrap();
    let expected = concat!(
        "  --block=SIZE       A size [16K]\n",
        "  --count=N          An inferred number [10]\n",
        "  --even=N           An even number [2]\n",
        "  --flag[=on|off]    A boolean flag [off]\n",
        "  --hosts=[LIST,...] A list [a,b]\n",
        "  --name=STRING      A string [sbtest]\n",
        "  --path=FILENAME    A file [data.txt]\n",
        "  --ratio=N          An explicit double [0.5]\n",
        "  --rows=N           An explicit integer [100]\n",
        "\n",
    );
    assert_eq!(host.options_help(), expected);
    // The same text from the script side, and from `help` without a help() function.
    let out = host_ok(&[&path("options.lua"), "print_options"]);
    assert_eq!(out, expected);
    let out = host_ok(&[&path("options.lua"), "help"]);
    assert_eq!(out, expected);
}

#[test]
fn option_values_reach_sysbench_opt_typed() {
    let out = host_ok(&[&path("options.lua"), "check"]);
    assert!(
        out.contains(
            "flag=false count=10 ratio=0.5 rows=100 block=16384 name=sbtest hosts=a|b path=data.txt even=2"
        ),
        "{out}"
    );
    let out = host_ok(&[
        "--flag",
        "--count=2.5",
        "--rows=7",
        "--block=2M",
        "--name=x",
        "--hosts=h1,h2,h3",
        "--even=4",
        "--threads=3",
        &path("options.lua"),
        "check",
    ]);
    assert!(
        out.contains(
            "flag=true count=2.5 ratio=0.5 rows=7 block=2097152 name=x hosts=h1|h2|h3 path=data.txt even=4"
        ),
        "{out}"
    );
    assert!(out.contains("threads=3 number"), "{out}");
    assert!(out.contains("command=check"), "{out}");
    assert!(out.contains("version=1.1.0"), "{out}");
    assert!(out.contains("options.lua"), "{out}");
    assert!(out.contains("argc=10"), "{out}");
    assert!(out.contains("defined=true parallel=false"), "{out}");
}

#[test]
fn wrong_option_types_and_validators_are_rejected() {
    let out = host(&["--rows=abc", &path("options.lua"), "check"]);
    assert!(!out.ok);
    assert!(
        out.stderr
            .contains("invalid value 'abc' for option --rows: expected an integer"),
        "{}",
        out.stderr
    );
    let out = host(&["--flag=maybe", &path("options.lua"), "check"]);
    assert!(!out.ok);
    assert!(out.stderr.contains("--flag"), "{}", out.stderr);
    let out = host(&["--even=3", &path("options.lua"), "check"]);
    assert!(!out.ok);
    assert!(
        out.stderr.contains("invalid value '3' for option --even"),
        "{}",
        out.stderr
    );
    let out = host(&["--nope=1", &path("options.lua"), "check"]);
    assert!(!out.ok);
    assert!(
        out.stderr.contains("invalid option: --nope"),
        "{}",
        out.stderr
    );
}

#[test]
fn set_options_declares_missing_script_options() {
    let mut host = load("options.lua", Arc::new(NoModules)).unwrap();
    let mut opts = bmk_engine::options::OptionSet::new();
    opts.declare([OptSpec::new("threads", OptKind::Int, Some("1"), "")]);
    opts.set("rows", "12").unwrap();
    host.set_options(opts).unwrap();
    host.run_command("check").unwrap();
}

#[test]
fn read_cmdline_options_call_command_and_globals() {
    let out = host_ok(&["--level=9", &path("misc.lua"), "nested"]);
    assert_eq!(out, "level 9\ndefined false\n");
    let out = host_ok(&[&path("misc.lua"), "globals"]);
    assert_eq!(out, "globals ok\n");
}

#[test]
fn luajit_cmd_controls_the_jit() {
    let out = host_ok(&["--threads=2", &path("misc.lua"), "jit"]);
    assert_eq!(out, "jit true\njit true\n");
    let out = host_ok(&["--threads=2", "--luajit-cmd=off", &path("misc.lua"), "jit"]);
    assert_eq!(out, "jit false\njit false\n");
    let out = host(&["--luajit-cmd=nosuchmod", &path("misc.lua"), "jit"]);
    assert!(!out.ok);
    assert!(
        out.stderr
            .contains("FATAL: unknown luaJIT command or jit.* modules not installed"),
        "{}",
        out.stderr
    );
}

// Commands ------------------------------------------------------------------------------

#[test]
fn parallel_commands_run_in_every_thread_with_its_tid() {
    let out = host_ok(&["--threads=4", &path("commands.lua"), "fanout"]);
    let mut tids: Vec<u32> = out
        .lines()
        .filter_map(|l| l.strip_prefix("fanout tid="))
        .map(|t| t.parse().unwrap())
        .collect();
    tids.sort();
    assert_eq!(tids, [0, 1, 2, 3], "{out}");
}

#[test]
fn custom_and_classic_commands() {
    let host = load("commands.lua", Arc::new(NoModules)).unwrap();
    assert!(host.has_command("fanout") && host.command_is_parallel("fanout"));
    assert!(host.has_command("single") && !host.command_is_parallel("single"));
    assert!(host.has_command("prepare") && !host.command_is_parallel("prepare"));
    assert!(!host.has_command("cleanup"));
    assert!(!host.has_command("run"));
    assert!(!host.has_command("helper"));
    let out = host_ok(&["--threads=4", &path("commands.lua"), "single"]);
    assert_eq!(out, "single tid=0 parallel=false\n");
    let out = host_ok(&[&path("commands.lua"), "prepare"]);
    assert_eq!(out, "prepare called\n");
    let out = host_ok(&[&path("commands.lua"), "help"]);
    assert_eq!(out, "custom help text\n");
    let mut host = host;
    let err = host.run_command("nonesuch").unwrap_err();
    assert_eq!(err.kind, LuaErrorKind::UnknownCommand);
}

// Event loop ----------------------------------------------------------------------------

#[test]
fn restartable_errors_restart_the_same_event() {
    let out = host_ok(&["--events=30", &path("restart.lua")]);
    assert_eq!(total_field(&out, "events"), 30.0, "{out}");
    assert!(
        out.contains("thread 0 events=30 restarts=60 attempts=90"),
        "{out}"
    );
    // Latency covers the retries: the first attempt of every event sleeps 20 ms.
    assert!(total_field(&out, "max_ms") >= 20.0, "{out}");
}

#[test]
fn thread_run_replaces_the_event_loop() {
    let out = host_ok(&["--threads=3", "--time=0", &path("thread_run.lua")]);
    assert_eq!(total_field(&out, "events"), 21.0, "{out}");
    assert_eq!(total_field(&out, "reads"), 21.0, "{out}");
}

#[test]
fn event_returning_true_stops_the_worker() {
    let out = host_ok(&["--threads=2", "--time=0", &path("stop.lua")]);
    assert_eq!(total_field(&out, "events"), 20.0, "{out}");
    // ffi.C.sb_counter_inc from the script reaches the engine's counters.
    assert_eq!(total_field(&out, "errors"), 20.0, "{out}");
    assert_eq!(total_field(&out, "writes"), 20.0, "{out}");
}

#[test]
fn script_from_stdin() {
    let out = host_with_stdin(
        &["--events=5", "-"],
        "#!/usr/bin/env sysbench\nfunction event() ffi.C.sb_counter_inc(0, ffi.C.SB_CNT_OTHER) end\nffi = require('ffi')\n",
    );
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(total_field(&out.stdout, "events"), 5.0);
    assert_eq!(total_field(&out.stdout, "other"), 5.0);
}

// Reports -------------------------------------------------------------------------------

#[test]
fn report_hooks_replace_the_default_output() {
    let out = host_ok(&[
        "--time=1",
        "--report-interval=0.25",
        "--mode=custom",
        &path("hooks.lua"),
    ]);
    let hooks: Vec<&str> = out.lines().filter(|l| l.starts_with("HOOK ")).collect();
    assert!(hooks.len() >= 3, "{out}");
    assert!(
        !out.contains("interval:") && !out.contains("total:"),
        "{out}"
    );
    assert!(hooks[0].contains("threads=1"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("FINAL events=")), "{out}");
    // latency_pct is in seconds: ~1 ms sleeps.
    let lat: f64 = hooks[0]
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("lat="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(lat > 0.0009 && lat < 0.05, "{out}");
}

#[test]
fn csv_report_lines() {
    let out = host_ok(&[
        "--time=1",
        "--report-interval=0.5",
        "--mode=csv",
        &path("hooks.lua"),
    ]);
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("total:")).collect();
    assert!(!lines.is_empty(), "{out}");
    for l in &lines {
        let cols: Vec<&str> = l.split(',').collect();
        assert_eq!(cols.len(), 10, "{l}");
        // The line at the time limit counts the threads still running, as sysbench's
        // does: 0 when the worker left before the reporter woke.
        if cols[0] == "1.0" {
            assert!(cols[1] == "1" || cols[1] == "0", "{l}");
        } else {
            assert_eq!(cols[1], "1", "{l}");
        }
        assert!(cols[2].parse::<f64>().unwrap() > 100.0, "{l}");
        assert!(cols[4].contains('.'), "{l}");
    }
    assert!(lines[0].starts_with("0.5,"), "{out}");
}

#[test]
fn json_report_is_one_array() {
    let out = host_ok(&[
        "--time=1",
        "--report-interval=0.25",
        "--mode=json",
        &path("hooks.lua"),
    ]);
    let json: String = out
        .lines()
        .filter(|l| !l.starts_with("total:"))
        .collect::<Vec<_>>()
        .join("\n");
    let v: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let items = v.as_array().unwrap();
    assert!(items.len() >= 3, "{json}");
    for (i, item) in items.iter().enumerate() {
        // The last item, at the time limit, counts the threads still running: 0 when
        // the worker left before the reporter woke (as sysbench's line does).
        if i + 1 == items.len() {
            assert!(item["threads"] == 1 || item["threads"] == 0, "{json}");
        } else {
            assert_eq!(item["threads"], 1);
        }
        assert!(item["tps"].as_f64().unwrap() > 100.0);
        assert!(item["qps"]["total"].is_number());
        assert!(item["latency"].as_f64().unwrap() > 0.9);
    }
}

#[test]
fn default_report_line() {
    let out = host_ok(&[
        "--time=1",
        "--report-interval=0.5",
        "--mode=default",
        &path("hooks.lua"),
    ]);
    let line = out.lines().next().unwrap();
    assert!(line.starts_with("[ 0.5s ] thds: 1 tps: "), "{out}");
    assert!(
        line.contains(" qps: 0.00 (r/w/o: 0.00/0.00/0.00) lat (ms,95%): "),
        "{out}"
    );
    // sysbench's Lua printer writes `err/s` without the colon the built-in line has.
    assert!(line.ends_with(" err/s 0.00 reconn/s: 0.00"), "{out}");

    // The stock printers are plain prints in sysbench: a script that installs them
    // gets its lines at any --verbosity.
    for (mode, shown) in [("default", true), ("csv", true)] {
        let out = host_ok(&[
            "--time=1",
            "--report-interval=0.5",
            "--verbosity=2",
            &format!("--mode={mode}"),
            &path("hooks.lua"),
        ]);
        let printed = out
            .lines()
            .any(|l| l.starts_with("[ 0.5s ]") || l.starts_with("0.5,"));
        assert_eq!(printed, shown, "{mode}: {out}");
    }
}

// Random numbers ------------------------------------------------------------------------

#[test]
fn random_distributions_have_the_right_shape() {
    let out = host_ok(&["--rand-seed=7", &path("rand.lua"), "check"]);
    assert_eq!(out, "rand ok\n");
}

#[test]
fn fixed_seed_repeats_exactly() {
    let run = |seed: &str| {
        let mut lines: Vec<String> = host_ok(&[
            &format!("--rand-seed={seed}"),
            "--threads=3",
            &path("rand.lua"),
            "draws",
        ])
        .lines()
        .map(str::to_string)
        .collect();
        lines.sort();
        lines
    };
    let a = run("42");
    assert_eq!(a.len(), 3);
    assert_eq!(a, run("42"));
    assert_ne!(a, run("43"));
    // Threads draw different streams.
    let streams: Vec<&str> = a.iter().map(|l| l.split_once(": ").unwrap().1).collect();
    assert_ne!(streams[0], streams[1]);
}

#[test]
fn unique_has_no_duplicates_across_threads() {
    let out = host_ok(&["--threads=4", &path("rand.lua"), "uniques"]);
    let mut all = std::collections::HashSet::new();
    let mut n = 0;
    for line in out.lines() {
        for v in line.strip_prefix("uniques ").unwrap().split(' ') {
            n += 1;
            assert!(all.insert(v.parse::<u32>().unwrap()), "duplicate {v}");
        }
    }
    assert_eq!(n, 80_000);
}

// Histograms ----------------------------------------------------------------------------

#[test]
fn user_histograms_print_their_buckets() {
    let out = host_ok(&[&path("histogram.lua"), "hist"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(
        lines[0],
        "       value  ------------- distribution ------------- count"
    );
    assert!(
        lines[1].ends_with(&format!("|{} 30", "*".repeat(40))),
        "{out}"
    );
    assert!(
        lines[2].contains("|*************") && lines[2].ends_with(" 10"),
        "{out}"
    );
    assert!(
        lines[3].starts_with("    1000.000 |*") && lines[3].ends_with(" 1"),
        "{out}"
    );
}

// Errors --------------------------------------------------------------------------------

#[test]
fn syntax_errors_name_file_and_line() {
    let err = match load("syntax_error.lua", Arc::new(NoModules)) {
        Err(e) => e,
        Ok(_) => panic!("loaded a broken script"),
    };
    assert_eq!(err.kind, LuaErrorKind::Syntax);
    assert!(
        err.message.contains("syntax_error.lua:3:"),
        "{}",
        err.message
    );
    assert!(err.message.contains("near '='"), "{}", err.message);
}

#[test]
fn runtime_errors_carry_a_traceback() {
    let out = host(&["--time=0", &path("runtime_error.lua")]);
    assert!(!out.ok);
    assert!(
        out.stderr
            .contains("runtime_error.lua:6: attempt to index local 't' (a nil value)"),
        "{}",
        out.stderr
    );
    // The traceback starts at the function that failed, then its caller.
    assert!(
        out.stderr.contains("stack traceback:\n\t")
            && out
                .stderr
                .contains("runtime_error.lua:6: in function 'inner'\n")
            && out
                .stderr
                .contains("runtime_error.lua:14: in function 'event'"),
        "{}",
        out.stderr
    );
}

#[test]
fn stack_overflows_carry_a_traceback() {
    // The line in the function --where names that started the recursion.
    for (place, line) in [("event", 18), ("thread_init", 13)] {
        let out = host(&[
            "--time=0",
            &path("stack_overflow.lua"),
            &format!("--where={place}"),
        ]);
        assert!(!out.ok);
        assert!(
            out.stderr
                .contains("stack_overflow.lua:8: stack overflow\nstack traceback:\n\t")
                && out
                    .stderr
                    .contains(&format!("stack_overflow.lua:{line}: in function")),
            "{place}: {}",
            out.stderr
        );
    }
}

#[test]
fn messages_raised_without_position_print_alone() {
    // error(msg, 0) is a message for the user: printed as is. error(msg) names the line
    // and carries the traceback that locates it.
    for place in ["event", "thread_init"] {
        for level in ["0", "1"] {
            let out = host(&[
                "--time=0",
                &path("raised_messages.lua"),
                &format!("--where={place}"),
                &format!("--level={level}"),
            ]);
            assert!(!out.ok);
            let message = "the table is missing; run prepare first";
            if level == "0" {
                assert!(
                    out.stderr.contains(&format!("{message}\n")),
                    "{}",
                    out.stderr
                );
                assert!(!out.stderr.contains("traceback"), "{}", out.stderr);
            } else {
                assert!(
                    out.stderr.contains(&format!(
                        "raised_messages.lua:9: {message}\nstack traceback:\n\t"
                    )),
                    "{place}: {}",
                    out.stderr
                );
            }
        }
    }
}

#[test]
fn runtime_errors_at_load_time() {
    let src = ScriptSource::from_text("inline.lua", "local x = 1\nerror('boom')\n");
    let err = match ScriptHost::load(src, HostConfig::new(vec![], "run", Arc::new(NoModules))) {
        Err(e) => e,
        Ok(_) => panic!("should fail"),
    };
    assert_eq!(err.kind, LuaErrorKind::Runtime);
    assert!(
        err.message
            .starts_with("inline.lua:2: boom\nstack traceback:"),
        "{}",
        err.message
    );
}

#[test]
fn unknown_modules_say_where_we_looked() {
    let err = match load("missing_module.lua", Arc::new(NoModules)) {
        Err(e) => e,
        Ok(_) => panic!("should fail"),
    };
    let m = &err.message;
    assert!(
        m.contains("module 'no_such_module_anywhere' not found"),
        "{m}"
    );
    assert!(
        m.contains("tests/scripts/no_such_module_anywhere.lua"),
        "{m}"
    );
    assert!(
        m.contains("no module 'no_such_module_anywhere' in bmk's built-in script library"),
        "{m}"
    );
}

#[test]
fn unknown_scripts_say_where_we_looked() {
    let err = ScriptSource::resolve("no_such_script", &NoModules).unwrap_err();
    assert_eq!(err.kind, LuaErrorKind::NotFound);
    assert_eq!(
        err.message,
        "Cannot find script 'no_such_script': no file 'no_such_script', no file \
         'no_such_script.lua', and no built-in script 'no_such_script'"
    );
}

#[test]
fn lua_path_and_sbtest_scriptdir_are_searched() {
    let dir = scratch_dir("lua-path");
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("a/from_lua_path.lua"), "return 'lua_path'").unwrap();
    std::fs::write(dir.join("b/from_scriptdir.lua"), "return 'scriptdir'").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_bmk-lua-host"))
        .env("LUA_PATH", format!("{}/a/?.lua;;", dir.display()))
        .env("SBTEST_SCRIPTDIR", dir.join("b"))
        .args(["-", "show"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(
                b"sysbench.cmdline.commands = { show = {function() \
                  print(require('from_lua_path') .. ' ' .. require('from_scriptdir')) end} }",
            )?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "lua_path scriptdir\n");
    let _ = std::fs::remove_dir_all(&dir);
}

struct TestLibrary;
impl ModuleLibrary for TestLibrary {
    fn module(&self, name: &str) -> Option<&'static str> {
        (name == "test_builtin")
            .then_some("return { greeting = function() return 'hello from the library' end }")
    }
}

#[test]
fn require_finds_built_in_and_nearby_modules() {
    let mut host = load("uses_module.lua", Arc::new(TestLibrary)).unwrap();
    host.run_command("show").unwrap();
    let src = ScriptSource::resolve("test_builtin", &TestLibrary).unwrap();
    assert_eq!(src.path, None);
}

// Coordinated omission ----------------------------------------------------------------

#[test]
fn a_stall_under_rate_shows_in_latency_and_queue() {
    let out = host_ok(&[
        "--rate=200",
        "--time=2.5",
        "--report-interval=0.25",
        &path("stall.lua"),
    ]);
    let intervals: Vec<(f64, f64, u64)> = out
        .lines()
        .filter(|l| l.starts_with("interval:"))
        .map(|l| {
            let get = |k: &str| {
                l.split_whitespace()
                    .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
                    .unwrap()
                    .to_string()
            };
            (
                get("max_ms").parse().unwrap(),
                get("p99_ms").parse().unwrap(),
                get("queue").parse().unwrap(),
            )
        })
        .collect();
    assert!(intervals.len() >= 8, "{out}");
    // The stalled event and the arrivals queued behind it.
    assert!(intervals.iter().any(|i| i.0 >= 450.0), "{out}");
    assert!(intervals.iter().any(|i| i.1 >= 100.0), "{out}");
    // While it stalls, arrivals pile up.
    assert!(intervals.iter().any(|i| i.2 >= 10), "{out}");
    // Before the stall, latency is small.
    assert!(intervals[0].0 < 250.0, "{out}");
    assert!(total_field(&out, "max_ms") >= 450.0, "{out}");
}

// SQL ---------------------------------------------------------------------------------

/// A fresh directory for one test's database files.
fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bmk-lua-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sqlite(dir: &std::path::Path, args: &[&str]) -> Output {
    let mut all = vec!["--db-driver=sqlite", "--sqlite-db=test.db"];
    all.extend_from_slice(args);
    host_in(dir, &all, "")
}

#[test]
fn sql_api_on_sqlite() {
    let dir = scratch_dir("sql-api");
    let sql = path("sql.lua");
    let out = sqlite(&dir, &[&sql, "check"]);
    assert!(out.ok, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "sql ok\n");
    // Every statement is classified: BEGIN/COMMIT other, SELECT read, UPDATE write.
    let out = sqlite(&dir, &["--events=300", &sql, "run"]);
    assert!(out.ok, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(total_field(&out.stdout, "events"), 300.0);
    assert_eq!(total_field(&out.stdout, "reads"), 300.0);
    assert_eq!(total_field(&out.stdout, "writes"), 300.0);
    assert_eq!(total_field(&out.stdout, "other"), 600.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sql_fatal_errors_print_fatal_and_abort() {
    let dir = scratch_dir("sql-fatal");
    let out = sqlite(&dir, &[&path("sql.lua"), "fatal"]);
    assert!(!out.ok);
    assert_eq!(
        out.stdout,
        "FATAL: sqlite_drv_query() returned error 1 (no such table: no_such_table) for query \
         'SELECT * FROM no_such_table'\n"
    );
    // Like sysbench's, the message names the script line that ran the query.
    assert!(
        out.stderr.contains(
            "sql.lua:183: SQL error, errno = 1, state = '': no such table: no_such_table\n\
             stack traceback:"
        ),
        "{}",
        out.stderr
    );
    // The driver's FATAL line comes before the hook, as sysbench's drivers print it.
    let out = sqlite(&dir, &[&path("sql.lua"), "hooked"]);
    assert!(out.ok, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        "FATAL: sqlite_drv_query() returned error 1 (no such table: no_such_table) for \
         query 'SELECT * FROM no_such_table'\nhooked ok 1\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sql_ignorable_errors_restart_the_event() {
    let dir = scratch_dir("sql-restart");
    let out = sqlite(
        &dir,
        &[
            "--sqlite-ignore-errors=all",
            "--events=5",
            &path("sql_restart.lua"),
        ],
    );
    assert!(out.ok, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.starts_with("rows 5\n"), "{}", out.stdout);
    assert_eq!(total_field(&out.stdout, "events"), 5.0);
    assert_eq!(total_field(&out.stdout, "errors"), 1.0);
    assert_eq!(total_field(&out.stdout, "writes"), 5.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sql_fatal_errors_caught_by_the_script_count_as_errors() {
    let dir = scratch_dir("sql-caught");
    let out = sqlite(&dir, &["--events=5", &path("sql_caught.lua")]);
    assert!(out.ok, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(total_field(&out.stdout, "errors"), 10.0, "{}", out.stdout);
    assert_eq!(total_field(&out.stdout, "reads"), 5.0, "{}", out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_driver_panic_fails_its_worker_and_the_run_still_reports() {
    use std::os::unix::process::ExitStatusExt;
    let dir = scratch_dir("sql-panic");
    let out = sqlite(
        &dir,
        &["--threads=2", "--events=1000", &path("sql_panic.lua")],
    );
    // An error exit, not the abort of a panic unwinding into LuaJIT.
    assert_eq!(out.status.signal(), None, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}\n{}", out.stdout, out.stderr);
    // The worker's Lua error, at the script line that ran the query.
    assert!(
        out.stderr.contains(
            "sql_panic.lua:14: SQL error, errno = 0, state = '': internal error: \
             bmk_conn_query panicked: the driver was asked to panic"
        ),
        "{}",
        out.stderr
    );
    // The report of what was measured: at least the two reads of the failed worker.
    assert!(total_field(&out.stdout, "reads") >= 2.0, "{}", out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sql_connect_failures_are_fatal() {
    let dir = scratch_dir("sql-connect");
    let out = sqlite(
        &dir,
        &[
            "--sqlite-db=/nonexistent/dir/x.db",
            &path("sql.lua"),
            "check",
        ],
    );
    assert!(!out.ok);
    assert!(
        out.stdout
            .starts_with("FATAL: unable to connect to SQLite database"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("sql.lua:"), "{}", out.stderr);
    assert!(
        out.stderr.contains("connection creation failed"),
        "{}",
        out.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sql_driver_errors() {
    let out = host_with_stdin(
        &["-", "x"],
        "sysbench.cmdline.commands = { x = {function() sysbench.sql.driver('oracle') end} }",
    );
    assert!(!out.ok);
    // sysbench's log line, then the Lua error.
    assert!(
        out.stdout
            .contains("FATAL: invalid database driver name: 'oracle'\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("failed to initialize the DB driver"),
        "{}",
        out.stderr
    );
}

/// A server for the SQL tests: how to reach it and how to make a scratch database.
struct Server {
    name: &'static str,
    options: fn(&str) -> Vec<String>,
    create_db: fn(&str) -> Result<(), String>,
    drop_db: fn(&str),
}

fn run_tool(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{cmd}: {}", String::from_utf8_lossy(&out.stderr)))
    }
}

const MARIADB: Server = Server {
    name: "MariaDB",
    options: |db| {
        vec![
            "--db-driver=mysql".into(),
            "--mysql-socket=/run/mysqld/mysqld.sock".into(),
            "--mysql-user=root".into(),
            format!("--mysql-db={db}"),
        ]
    },
    create_db: |db| {
        run_tool(
            "mariadb",
            &[
                "-uroot",
                "--socket=/run/mysqld/mysqld.sock",
                "-e",
                &format!("DROP DATABASE IF EXISTS {db}; CREATE DATABASE {db}"),
            ],
        )
    },
    drop_db: |db| {
        let _ = run_tool(
            "mariadb",
            &[
                "-uroot",
                "--socket=/run/mysqld/mysqld.sock",
                "-e",
                &format!("DROP DATABASE IF EXISTS {db}"),
            ],
        );
    },
};

const POSTGRES: Server = Server {
    name: "PostgreSQL",
    options: |db| {
        vec![
            "--db-driver=pgsql".into(),
            "--pgsql-host=127.0.0.1".into(),
            "--pgsql-user=postgres".into(),
            format!("--pgsql-db={db}"),
        ]
    },
    create_db: |db| {
        let psql = |sql: String| {
            run_tool(
                "psql",
                &[
                    "-h",
                    "127.0.0.1",
                    "-U",
                    "postgres",
                    "-v",
                    "ON_ERROR_STOP=1",
                    "-c",
                    &sql,
                ],
            )
        };
        psql(format!("DROP DATABASE IF EXISTS {db}"))?;
        psql(format!("CREATE DATABASE {db}"))
    },
    drop_db: |db| {
        let _ = run_tool(
            "psql",
            &[
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-c",
                &format!("DROP DATABASE IF EXISTS {db}"),
            ],
        );
    },
};

/// Runs the SQL script's commands against `server`; skips (with a note) when the server
/// is unreachable, unless `CI=true`.
fn sql_on_server(server: &Server, test: &str) {
    let db = format!("bmk_lua_{test}_{}", std::process::id());
    if let Err(e) = (server.create_db)(&db) {
        bmk_testkit::unavailable::<()>(server.name, &e.to_string());
        return;
    }
    let opts = (server.options)(&db);
    let run = |extra: &[&str]| {
        let mut args: Vec<&str> = opts.iter().map(String::as_str).collect();
        args.extend_from_slice(extra);
        host(&args)
    };
    let sql = path("sql.lua");
    let out = run(&[&sql, "check"]);
    assert!(out.ok, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "sql ok\n");
    let out = run(&["--events=100", "--threads=2", &sql, "run"]);
    assert!(out.ok, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(total_field(&out.stdout, "events"), 100.0);
    assert_eq!(total_field(&out.stdout, "reads"), 100.0);
    assert_eq!(total_field(&out.stdout, "writes"), 100.0);
    assert_eq!(total_field(&out.stdout, "other"), 200.0);
    let out = run(&[&sql, "fatal"]);
    assert!(!out.ok);
    assert!(out.stdout.starts_with("FATAL: "), "{}", out.stdout);
    // Each driver's own wording (MySQL `for query '...'`, libpq `failed query was:`).
    assert!(
        out.stdout.contains("SELECT * FROM no_such_table"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("sql.lua:183: SQL error, errno = "),
        "{}",
        out.stderr
    );
    let out = run(&[&sql, "hooked"]);
    assert!(out.ok, "{}\n{}", out.stdout, out.stderr);
    let out = run(&["--events=5", &path("sql_caught.lua")]);
    assert!(out.ok, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(total_field(&out.stdout, "errors"), 10.0, "{}", out.stdout);
    assert_eq!(total_field(&out.stdout, "reads"), 5.0, "{}", out.stdout);
    (server.drop_db)(&db);
}

#[test]
fn sql_api_on_mariadb() {
    sql_on_server(&MARIADB, "mariadb");
}

#[test]
fn sql_api_on_postgresql() {
    sql_on_server(&POSTGRES, "pgsql");
}

// Memory -----------------------------------------------------------------------------------

#[test]
fn worker_states_stay_small_and_share_freed_memory_intact() {
    let out = host_ok(&["--threads=4", "--time=60", &path("heap.lua"), "run"]);
    let sizes: Vec<f64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("state_kb="))
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(sizes.len(), 4, "{out}");
    // About 80 KB today (LuaJIT with its libraries ~50, the sysbench API the rest); the
    // bound only catches a state that grows by a large factor.
    for kb in sizes {
        assert!(kb < 160.0, "worker state holds {kb} KB after loading");
    }
}

#[test]
fn api_parts_made_on_first_use_read_like_plain_tables() {
    let out = host_ok(&["--threads=2", "--time=0", &path("lazy_api.lua"), "run"]);
    // Main state and both workers load the script.
    assert_eq!(
        out.matches("lazy api ok (untouched at start: true)")
            .count(),
        3,
        "{out}"
    );
    assert_eq!(out.matches("script options ok").count(), 2, "{out}");
}

#[test]
fn rarely_used_libraries_open_on_first_use() {
    let out = host_ok(&["--threads=2", &path("lazy_libs.lua"), "run"]);
    // Main state and both workers load the script.
    assert_eq!(
        out.matches("lazy libraries ok (unopened at start: true)")
            .count(),
        3,
        "{out}"
    );
}
