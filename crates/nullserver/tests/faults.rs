//! How bmk behaves against each fault the null server injects.

mod support;

use std::time::Instant;

use support::{bmk, stats, NullServer};

fn point_select(
    server: &NullServer,
    driver: &str,
    extra: &[&str],
    limit: u64,
) -> (support::Run, f64) {
    let mut args: Vec<String> = vec!["oltp_point_select".into()];
    args.extend(server.conn_args(driver));
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("run".into());
    let start = Instant::now();
    let out = bmk(&args, limit);
    (out, start.elapsed().as_secs_f64())
}

/// `--delay-ms`: every answer comes that much later, so the latency rises by it.
#[test]
fn delayed_answers_show_in_the_latency() {
    let server = NullServer::start(&["--delay-ms", "30"]);
    for driver in ["mysql", "pgsql"] {
        let (out, _) = point_select(
            &server,
            driver,
            &["--events=20", "--time=0", "--threads=2"],
            60,
        );
        let s = stats(&out.ok().stdout);
        assert_eq!(s.events, 20);
        assert!(
            s.latency_avg_ms >= 30.0,
            "{driver}: avg {} ms",
            s.latency_avg_ms
        );
    }
}

/// `--drop-after`: the lost connection ends the run with a clean FATAL and exit 1.
#[test]
fn a_dropped_connection_is_a_clean_fatal_error() {
    let server = NullServer::start(&["--drop-after", "20"]);
    for driver in ["mysql", "pgsql"] {
        let (out, secs) = point_select(&server, driver, &["--time=5", "--threads=1"], 30);
        assert_eq!(out.code, 1, "{driver}: {}\n{}", out.stdout, out.stderr);
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(all.contains("FATAL"), "{driver}: {all}");
        assert!(!all.contains("panicked"), "{driver}: {all}");
        assert!(secs < 5.0, "{driver}: the run went on for {secs} s");
    }
}

/// `--drop-after` with the lost-connection errors ignored: bmk reconnects every time
/// and the run completes.
#[test]
fn dropped_connections_are_reconnected_when_ignored() {
    let server = NullServer::start(&["--drop-after", "50"]);
    let (out, _) = point_select(
        &server,
        "mysql",
        &[
            "--time=2",
            "--threads=2",
            "--mysql-ignore-errors=2013,2006",
            "--event-loops=off",
        ],
        30,
    );
    let s = stats(&out.ok().stdout);
    assert!(s.reconnects >= 2, "{s:?}");
    assert!(s.events > 100, "{s:?}");
}

/// `--freeze-after`: the workers wait for answers that never come; `--time` cannot end
/// the run, `--forced-shutdown` does (exit 2, as sysbench).
#[test]
fn a_frozen_server_is_left_by_forced_shutdown() {
    let server = NullServer::start(&["--freeze-after", "10"]);
    for driver in ["mysql", "pgsql"] {
        let (out, secs) = point_select(
            &server,
            driver,
            &["--time=1", "--forced-shutdown=1", "--threads=2"],
            30,
        );
        assert_eq!(out.code, 2, "{driver}: {}\n{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("forcing shutdown"),
            "{driver}: {}",
            out.stdout
        );
        assert!((1.5..10.0).contains(&secs), "{driver}: {secs} s");
        assert!(stats(&out.stdout).events <= 20);
    }
}

/// `--freeze-after` without `--forced-shutdown` or a read timeout: the run still ends,
/// the grace (10 s) after `--time`, with the final report of what was measured and the
/// number of workers it abandoned (exit 2).
#[test]
fn a_frozen_server_ends_the_run_by_time_plus_grace_with_a_report() {
    let server = NullServer::start(&["--freeze-after", "10"]);
    for driver in ["mysql", "pgsql"] {
        let (out, secs) = point_select(
            &server,
            driver,
            &["--time=1", "--threads=2", "--db-timeout=0"],
            40,
        );
        assert_eq!(out.code, 2, "{driver}: {}\n{}", out.stdout, out.stderr);
        assert!(
            out.stdout
                .contains("2 worker(s) still busy 10 s after the time limit"),
            "{driver}: {}",
            out.stdout
        );
        assert!(out.stdout.contains("abandoned"), "{driver}: {}", out.stdout);
        assert!((10.5..25.0).contains(&secs), "{driver}: {secs} s");
        let s = stats(&out.stdout);
        assert!(s.events <= 20, "{driver}: {s:?}");
    }
}

/// `--db-timeout`: a server that stops answering is a lost connection after that
/// long (MySQL's read timeout), a clean FATAL and exit 1, long before `--time`.
#[test]
fn db_timeout_turns_a_frozen_server_into_a_lost_connection() {
    let server = NullServer::start(&["--freeze-after", "10"]);
    let (out, secs) = point_select(
        &server,
        "mysql",
        &["--time=30", "--threads=2", "--db-timeout=1"],
        40,
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("FATAL"), "{}", out.stdout);
    assert!(secs < 15.0, "{secs} s");
}

/// `--drop-after` with every error ignored (`--mysql-ignore-errors=all`), as a server
/// killed and restarted mid-run: bmk reconnects each time, counts the reconnects and
/// exits 0.
#[test]
fn a_restarting_server_with_all_errors_ignored_exits_0_with_reconnects() {
    let server = NullServer::start(&["--drop-after", "30"]);
    let (out, _) = point_select(
        &server,
        "mysql",
        &["--time=2", "--threads=2", "--mysql-ignore-errors=all"],
        30,
    );
    let s = stats(&out.ok().stdout);
    assert!(s.reconnects >= 2, "{s:?}");
    assert!(s.events > 100, "{s:?}");
}

/// `--malformed-after` on MySQL: the driver reports the broken stream as a lost
/// connection, FATAL, exit 1.
#[test]
fn a_malformed_mysql_answer_is_a_clean_fatal_error() {
    let server = NullServer::start(&["--malformed-after", "20"]);
    let (out, secs) = point_select(&server, "mysql", &["--time=5", "--threads=1"], 30);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("FATAL") || out.stdout.contains("FATAL"));
    assert!(secs < 5.0, "{secs} s");
}

/// `--malformed-after` on PostgreSQL: a clean FATAL and exit 1 at once (dropping the
/// failed connection's client used to wait for ever for its connection task).
#[test]
fn a_malformed_pgsql_answer_is_a_clean_fatal_error() {
    let server = NullServer::start(&["--malformed-after", "20"]);
    let (out, secs) = point_select(&server, "pgsql", &["--time=5", "--threads=1"], 20);
    assert!(format!("{}{}", out.stdout, out.stderr).contains("unknown message tag"));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(secs < 5.0, "{secs} s");
}
