//! What a script sees of sysbench itself when bmk is invoked as `sysbench`: the general
//! options in `sysbench.opt` (sysbench's own, with its values) and the modules
//! `require` finds in bmk's library (those sysbench ships).

use crate::util::{assert_text_eq, Dir};

/// Prints some of `sysbench.opt` from a command (options are set by then).
const SHOW_OPT: &str = "sysbench.cmdline.commands = { show = { function()\n\
    \x20 local o = sysbench.opt\n\
    \x20 print(o.mysql_ssl, o.mysql_password == '', #o.mysql_socket, o.luajit_cmd == '',\n\
    \x20       o.native_oltp, o.report_format, o.threads)\n\
    \x20 local n = 0\n\
    \x20 for _ in pairs(o) do n = n + 1 end\n\
    \x20 print(n)\n\
    end } }\n";

#[test]
fn sysbench_opt_holds_the_releases_own_options() {
    let dir = Dir::new();
    dir.write("show.lua", SHOW_OPT);
    // 1.1: 47 general and driver options, none of bmk's.
    let run = dir
        .sysbench()
        .args("show.lua --verbosity=1 show")
        .run()
        .ok();
    assert_text_eq(
        "false\ttrue\t0\ttrue\tnil\tnil\t1\n47\n",
        &run.stdout,
        &run.context(),
    );
    // 1.0.20 has its own set (no luajit_cmd: nil).
    let run = dir
        .sysbench()
        .env("BMK_SYSBENCH_COMPAT", "1.0")
        .args("show.lua --verbosity=1 show")
        .run()
        .ok();
    assert_text_eq(
        "false\ttrue\t0\tfalse\tnil\tnil\t1\n45\n",
        &run.stdout,
        &run.context(),
    );
}

#[test]
fn a_user_script_requires_only_what_sysbench_ships() {
    let dir = Dir::new();
    dir.write(
        "req.lua",
        "print(pcall(require, 'bmk_workload_support'))\n\
         print(type(require('oltp_common')))\n",
    );
    let run = dir.sysbench().args("req.lua --verbosity=0").run();
    let lines = run.lines();
    assert!(
        lines[0].starts_with("false\tmodule 'bmk_workload_support' not found:"),
        "{}",
        run.context()
    );
    // sysbench's message lists the files it tried, nothing of bmk's library.
    assert!(!run.stdout.contains("built-in"), "{}", run.context());
}
