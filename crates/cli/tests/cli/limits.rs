//! `--events`, `--time`, `--warmup-time`, `--forced-shutdown`, `--thread-init-timeout`.

use std::time::{Duration, Instant};

use crate::util::*;

#[test]
fn events_limit_is_exact_with_one_and_several_threads() {
    let dir = Dir::new();
    for (threads, events) in [(1, 1), (1, 137), (2, 1000), (3, 1001), (8, 5)] {
        let run = dir
            .bmk()
            .arg(format!("--threads={threads}"))
            .arg(format!("--events={events}"))
            .args("cpu --cpu-max-prime=500 --time=0 run")
            .run()
            .ok();
        assert_eq!(run.total_events(), events, "{}", run.stdout);
        // Fairness sums back to the total.
        let avg: f64 = num(run.value("events (avg/stddev):").split('/').next().unwrap());
        assert!((avg * threads as f64 - events as f64).abs() < 0.01, "{avg}");
    }
}

#[test]
fn events_limit_stops_before_the_time_limit() {
    let dir = Dir::new();
    let t0 = Instant::now();
    let run = dir
        .bmk()
        .args("threads --threads=2 --events=500 --time=30 run")
        .run()
        .ok();
    assert_eq!(run.total_events(), 500);
    assert!(t0.elapsed().as_secs_f64() < 10.0);
}

#[test]
fn time_limit_is_honoured() {
    let dir = Dir::new();
    let t0 = Instant::now();
    let run = dir
        .bmk()
        .args("cpu --threads=2 --time=1 --cpu-max-prime=2000 run")
        .run()
        .ok();
    let wall = t0.elapsed().as_secs_f64();
    let elapsed = run.time_elapsed();
    assert!((0.95..1.5).contains(&elapsed), "time elapsed {elapsed}");
    assert!((0.95..3.0).contains(&wall), "wall {wall}");
    assert!(run.total_events() > 10);
}

#[test]
fn warmup_resets_statistics_and_ignores_the_event_limit() {
    let dir = Dir::new();
    // Event limit alone: the warm-up does not eat into it.
    let t0 = Instant::now();
    let run = dir
        .bmk()
        .args("cpu --warmup-time=1 --events=200 --cpu-max-prime=500 --time=0 run")
        .run()
        .ok();
    assert!(t0.elapsed().as_secs_f64() >= 1.0, "warm-up was skipped");
    assert_eq!(run.total_events(), 200, "{}", run.stdout);
    assert!(run.time_elapsed() < 1.0, "{}", run.stdout);

    // Time limit: the report covers only the measured second, not the warm-up.
    let t0 = Instant::now();
    let run = dir
        .bmk()
        .args("cpu --cpu-max-prime=500 --warmup-time=1 --time=1 --report-interval=1 run")
        .run()
        .ok();
    let wall = t0.elapsed().as_secs_f64();
    assert!(wall >= 2.0, "wall {wall}: warm-up + time");
    let elapsed = run.time_elapsed();
    assert!((0.95..1.6).contains(&elapsed), "time elapsed {elapsed}");
    // The first interval is stamped from the measured start, not from the warm-up.
    let first = run
        .lines()
        .into_iter()
        .find(|l| l.starts_with("[ "))
        .map(str::to_string);
    if let Some(first) = first {
        assert!(first.starts_with("[ 1s ]"), "{first}");
    }
    let execution: f64 = num(run
        .value("execution time (avg/stddev):")
        .split('/')
        .next()
        .unwrap());
    assert!(
        execution < 1.4,
        "busy time {execution} includes the warm-up"
    );
}

#[test]
fn forced_shutdown_reports_and_exits_2() {
    let dir = Dir::new();
    let t0 = Instant::now();
    // One mutex event per thread that takes far longer than --time.
    let run = dir
        .bmk()
        .args(
            "mutex --threads=1 --mutex-locks=2000000000 --mutex-loops=0 --time=1 \
             --forced-shutdown=1 run",
        )
        .run()
        .code(2);
    let wall = t0.elapsed().as_secs_f64();
    assert!(wall < 6.0, "took {wall} s");
    assert!(
        run.stdout
            .contains("The --max-time limit has expired, forcing shutdown...\n"),
        "{}",
        run.stdout
    );
    // The cumulative report follows.
    let after = run.stdout.split("forcing shutdown...\n").nth(1).unwrap();
    assert!(after.contains("Throughput:"), "{}", run.stdout);
    assert!(after.contains("Latency (ms):"), "{}", run.stdout);

    // A percentage of --time also works.
    let run = dir
        .sysbench()
        .args("mutex --mutex-locks=2000000000 --mutex-loops=0 --time=1 --forced-shutdown=50% run")
        .run()
        .code(2);
    assert!(run.stdout.contains("forcing shutdown"), "{}", run.stdout);
}

#[test]
fn thread_init_timeout_exits_2() {
    let dir = Dir::new();
    // A Lua script whose thread_init outlasts the timeout (busy, so no sleep builtin).
    dir.write(
        "slow_init.lua",
        "function thread_init()\n  local t = os.time()\n  while os.time() - t < 5 do end\nend\n\
         function event()\nend\n",
    );
    let t0 = Instant::now();
    let run = dir
        .sysbench()
        .args("slow_init.lua --thread-init-timeout=1 --time=1 run")
        .run()
        .code(2);
    assert!(
        t0.elapsed().as_secs_f64() < 4.0,
        "did not give up after 1 s"
    );
    assert!(
        run.stdout
            .contains("Worker threads failed to initialize within 1 seconds!\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("Threads started!"), "{}", run.stdout);
}

#[test]
fn failed_thread_init_releases_nobody_and_reports_nothing() {
    // Like sysbench: the failure, then "Threads initialization failed!" (1.1's wording), exit 1, and no
    // report of a run that never started — also when other workers started fine, whose
    // thread_done does not run either.
    let dir = Dir::new();
    dir.write(
        "bad_init.lua",
        "function thread_init()\n  if sysbench.tid == 2 then\n    \
         error('worker 2 cannot start', 0)\n  end\nend\nfunction event()\nend\n\
         function thread_done()\n  print('thread_done ran')\nend\n",
    );
    let run = dir
        .sysbench()
        .args("bad_init.lua --threads=4 --time=5 run")
        .run()
        .code(1);
    assert!(
        run.stdout
            .ends_with("\nFATAL: worker 2 cannot start\nFATAL: Threads initialization failed!\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("Threads started!"), "{}", run.stdout);
    assert!(!run.stdout.contains("SQL statistics"), "{}", run.stdout);
    assert!(!run.stdout.contains("thread_done ran"), "{}", run.stdout);
}

#[test]
fn events_that_restart_for_ever_end_with_the_run() {
    // sysbench restarts an event after a restartable error until it completes; when
    // every attempt fails (workers that deadlock each other every time) that never
    // ends. bmk gives the event up, unrecorded, once the time limit has passed.
    let dir = Dir::new();
    dir.write(
        "restarts.lua",
        "function event()\n  error({ errcode = sysbench.error.RESTART_EVENT })\nend\n",
    );
    let run = dir
        .sysbench()
        .args("restarts.lua --threads=2 --time=1 run")
        .run_within(Duration::from_secs(20))
        .ok();
    assert_eq!(run.total_events(), 0, "{}", run.stdout);
}

/// The time limit counts from the release of the workers, after the slowest
/// `thread_init`, as sysbench's does: workers whose `thread_init` waits on the server for
/// different times (0.4 to 1.3 s) then each run `--time` (given in a `--config-file`) of
/// 0.2-second events. A limit that started with the first worker ready, or with the
/// process, would end the run after a few events. Several runs at once, both with
/// workers on event loops and on threads of their own, so a race has chances to show.
#[test]
fn a_slow_thread_init_does_not_shorten_the_time_limit_on_mariadb() {
    use crate::server_db::ServerDb;
    let db = bmk_testkit::require!(ServerDb::new(bmk_sql::DriverKind::Mysql));
    let dir = Dir::new();
    dir.write(
        "slow_init.lua",
        "function thread_init()\n  con = sysbench.sql.driver():connect()\n  \
         con:query(string.format('SELECT SLEEP(%.1f)', 0.4 + 0.3 * sysbench.tid))\nend\n\
         function event()\n  con:query('SELECT SLEEP(0.2)')\nend\n\
         function thread_done()\n  con:disconnect()\nend\n",
    );
    let mut config = String::from("time=2\nthreads=4\n");
    for arg in &db.args {
        config.push_str(arg.trim_start_matches("--"));
        config.push('\n');
    }
    dir.write("config", &config);
    let runs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = ["auto", "off", "auto", "off"]
            .iter()
            .map(|loops| {
                let dir = &dir;
                s.spawn(move || {
                    dir.bmk()
                        .arg("--config-file=config")
                        .arg(format!("--event-loops={loops}"))
                        .args("slow_init.lua run")
                        .run_within(Duration::from_secs(60))
                        .ok()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in runs {
        // 4 workers x 2 s / 0.2 s = 40 events, less the ones a worker had not
        // finished when the time was up.
        let events = run.total_events();
        assert!(
            (36..=44).contains(&events),
            "{events} events\n{}",
            run.stdout
        );
        let elapsed = run.time_elapsed();
        assert!(
            (1.95..2.6).contains(&elapsed),
            "{elapsed} s measured\n{}",
            run.stdout
        );
    }
}
