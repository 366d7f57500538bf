//! bmk's own drivers run the OLTP workloads against the null server, without tables
//! (the server answers every statement a run sends), with server-side prepared
//! statements and without, with a thread per worker and with event loops: every event
//! completes, with exactly the statements the workload sends per event and no error.

mod support;

use support::{bmk, stats, NullServer};

/// Statements per event of each workload: (reads, writes, others).
fn per_event(workload: &str) -> (u64, u64, u64) {
    match workload {
        "oltp_point_select" => (1, 0, 0),
        "oltp_read_only" => (14, 0, 2),
        "oltp_read_write" => (14, 4, 2),
        _ => unreachable!(),
    }
}

fn run(server: &NullServer, driver: &str, workload: &str, extra: &[&str]) {
    let events = 320;
    let mut args: Vec<String> = vec![workload.into()];
    args.extend(server.conn_args(driver));
    args.extend(["--events=320".into(), "--time=0".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("run".into());
    let out = bmk(&args, 60).ok();
    let s = stats(&out.stdout);
    let (r, w, o) = per_event(workload);
    let what = format!("{workload} on {driver} {extra:?}");
    assert_eq!(s.events, events, "{what}\n{}", out.stdout);
    assert_eq!(
        (s.read, s.write, s.other),
        (r * events, w * events, o * events),
        "{what}"
    );
    assert_eq!((s.errors, s.reconnects), (0, 0), "{what}");
    assert!(!out.stderr.contains("FATAL"), "{what}: {}", out.stderr);
}

fn workloads_in_both_ps_modes(driver: &str) {
    let server = NullServer::start(&[]);
    for workload in ["oltp_point_select", "oltp_read_only", "oltp_read_write"] {
        for mode in ["--db-ps-mode=auto", "--db-ps-mode=disable"] {
            run(&server, driver, workload, &[mode, "--threads=4"]);
        }
    }
}

#[test]
fn mysql_driver_runs_the_oltp_workloads() {
    workloads_in_both_ps_modes("mysql");
}

#[test]
fn pgsql_driver_runs_the_oltp_workloads() {
    workloads_in_both_ps_modes("pgsql");
}

#[test]
fn sixty_four_workers_on_event_loops_and_on_threads() {
    let server = NullServer::start(&[]);
    for driver in ["mysql", "pgsql"] {
        for mode in ["--db-ps-mode=auto", "--db-ps-mode=disable"] {
            run(
                &server,
                driver,
                "oltp_read_write",
                &[mode, "--threads=64", "--event-loops=2"],
            );
            run(
                &server,
                driver,
                "oltp_read_only",
                &[mode, "--threads=64", "--event-loops=off"],
            );
        }
    }
}

#[test]
fn the_lua_workload_path_runs_too() {
    // BMK_NATIVE_OLTP=0 sends the same statements through the Lua scripts.
    let server = NullServer::start(&[]);
    for driver in ["mysql", "pgsql"] {
        let mut args: Vec<String> = vec!["oltp_read_write".into()];
        args.extend(server.conn_args(driver));
        args.extend(["--events=50", "--time=0", "--threads=2", "run"].map(String::from));
        let out = std::process::Command::new(support::bmk_bin())
            .args(&args)
            .env("BMK_NATIVE_OLTP", "0")
            .output()
            .expect("run bmk");
        let out = support::Run::from(out).ok();
        let s = stats(&out.stdout);
        assert_eq!(
            (s.events, s.read, s.write, s.other),
            (50, 700, 200, 100),
            "{driver}"
        );
    }
}

#[test]
fn caching_sha2_and_password_authentication_let_bmk_in() {
    let server = NullServer::start(&[
        "--mysql-auth",
        "caching_sha2_password",
        "--pgsql-auth",
        "md5",
    ]);
    run(&server, "mysql", "oltp_point_select", &["--threads=2"]);
    run(&server, "pgsql", "oltp_point_select", &["--threads=2"]);
    let cleartext = NullServer::start(&["--pgsql-auth", "password"]);
    run(&cleartext, "pgsql", "oltp_point_select", &["--threads=2"]);
}

/// The null server declines TLS, so under the default `--pgsql-sslmode=prefer` bmk's
/// own PostgreSQL client is used and a point-select run puts its workers on event
/// loops, as on MySQL; `--pgsql-fast-path=off` (or `BMK_PGSQL_FASTPATH=0`) gives them
/// a thread each again, and the execution record says which.
#[test]
fn pgsql_point_selects_run_on_event_loops_with_the_fast_path() {
    let server = NullServer::start(&[]);
    for (fast, env, placement) in [
        ("on", "1", "on 2 event loops"),
        ("off", "1", "on a thread each"),
        ("env-off", "0", "on a thread each"),
    ] {
        let mut args: Vec<String> = vec!["oltp_point_select".into()];
        args.extend(server.conn_args("pgsql"));
        args.extend(
            [
                "--events=400",
                "--time=0",
                "--threads=8",
                "--event-loops=2",
                "--verbosity=4",
            ]
            .map(String::from),
        );
        if fast != "env-off" {
            args.push(format!("--pgsql-fast-path={fast}"));
        }
        args.push("run".into());
        let out = std::process::Command::new(support::bmk_bin())
            .args(&args)
            .env("BMK_PGSQL_FASTPATH", env)
            .env_remove("BMK_NATIVE_OLTP")
            .output()
            .expect("run bmk");
        let out = support::Run::from(out).ok();
        let line = out
            .stdout
            .lines()
            .find(|l| l.starts_with("Execution:"))
            .unwrap_or_else(|| panic!("no Execution line: {}", out.stdout));
        assert!(line.contains(placement), "{fast}: {line}");
        assert_eq!(
            line.ends_with("PostgreSQL fast path on"),
            fast == "on",
            "{line}"
        );
        let s = stats(&out.stdout);
        assert_eq!((s.events, s.read, s.errors), (400, 400, 0), "{fast}");
    }
}
