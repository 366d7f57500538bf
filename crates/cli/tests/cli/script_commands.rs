//! A script's own commands as sysbench runs them: a parallel command goes to worker
//! threads (announced by `Initializing worker threads...`) only with more than one
//! thread, and a failing command is reported on stdout under sysbench's dispatcher
//! name, without bmk's traceback.

use crate::util::{assert_text_eq, Dir};

const SCRIPT: &str = "sysbench.cmdline.commands = {\n\
    \x20 hello = {function() print('hello from ' .. sysbench.tid) end,\n\
    \x20          sysbench.cmdline.PARALLEL_COMMAND},\n\
    \x20 broken = {function() error('it broke') end}\n\
    }\n";

const BANNER: &str = "sysbench 1.1.0 (using bundled LuaJIT 2.1.0-beta3)\n\n";

#[test]
fn a_parallel_command_with_one_thread_runs_in_the_main_state() {
    let dir = Dir::new();
    dir.write("cmds.lua", SCRIPT);
    let run = dir.sysbench().args("cmds.lua hello").run().ok();
    assert_text_eq(
        &format!("{BANNER}hello from 0\n"),
        &run.stdout,
        &run.context(),
    );
}

#[test]
fn a_parallel_command_with_threads_is_announced() {
    let dir = Dir::new();
    dir.write("cmds.lua", SCRIPT);
    let run = dir.sysbench().args("cmds.lua --threads=2 hello").run().ok();
    let mut lines: Vec<&str> = run.stdout.lines().collect();
    lines[4..].sort_unstable();
    assert_eq!(
        lines,
        [
            "sysbench 1.1.0 (using bundled LuaJIT 2.1.0-beta3)",
            "",
            "Initializing worker threads...",
            "",
            "hello from 0",
            "hello from 1"
        ],
        "{}",
        run.context()
    );
}

#[test]
fn a_failing_command_is_reported_under_the_dispatcher_name() {
    let dir = Dir::new();
    dir.write("cmds.lua", SCRIPT);
    let run = dir.sysbench().args("cmds.lua broken").run().code(1);
    let expected = format!(
        "{BANNER}FATAL: `sysbench.cmdline.call_command' function failed: {}:3: it broke\n",
        dir.join("cmds.lua").display()
    );
    // The script's path as given on the command line.
    let expected = expected.replace(&format!("{}", dir.join("cmds.lua").display()), "cmds.lua");
    assert_text_eq(&expected, &run.stdout, &run.context());
}
