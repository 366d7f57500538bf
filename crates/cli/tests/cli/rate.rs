//! Rate mode end to end: the reported percentiles include the time arrivals spent
//! queued behind slow events (no coordinated omission), and the queue line shows it.

use crate::util::*;

const SLOW_EVENT: &str = "threads --threads=1 --thread-yields=2000 --thread-locks=1";

#[test]
fn queueing_time_is_in_the_percentiles() {
    let dir = Dir::new();
    // Closed loop first: how long one event takes on this machine. The event yields
    // the CPU 2000 times, so a machine busy with other work (other tests, a build)
    // can slow it to a crawl for a while: measure again, longer, before giving up.
    let mut closed_runs = 0;
    let (service_avg, eps) = loop {
        closed_runs += 1;
        let closed = dir
            .bmk()
            .args(&format!("{SLOW_EVENT} --time={closed_runs} run"))
            .run()
            .ok();
        let eps = num(&closed.value("events/s (eps):"));
        if eps > 1.0 || closed_runs == 3 {
            break (closed.latency_ms("avg:"), eps);
        }
    };
    assert!(eps > 1.0, "events too slow for the test: {eps}/s");
    // Arrivals at several times what one worker can serve, so the queue grows all run
    // long and most events wait for many service times. The closed-loop figure can be
    // off on a busy machine: if the worker kept up after all, try a higher rate.
    let mut attempt = 0;
    let open = loop {
        let rate = (eps * [8.0, 32.0, 128.0][attempt]).ceil() as u64;
        let open = dir
            .bmk()
            .args(&format!(
                "{SLOW_EVENT} --rate={rate} --time=2 --report-interval=0.5 run"
            ))
            .run()
            .ok();
        let served = num(&open.value("events/s (eps):"));
        attempt += 1;
        if served < 0.7 * rate as f64 || attempt == 3 {
            break open;
        }
    };
    let p95 = open.latency_ms("95th percentile:");
    assert!(
        p95 >= 5.0 * service_avg.max(0.01),
        "rate-mode p95 {p95} ms vs mean service time {service_avg} ms: queueing hidden\n{}",
        open.stdout
    );
    let queue: Vec<u64> = open
        .lines()
        .into_iter()
        .filter_map(|l| l.split("] queue length: ").nth(1))
        .map(|rest| {
            assert!(
                regex::Regex::new(r"^\d+ concurrency: \d+$")
                    .unwrap()
                    .is_match(rest),
                "{rest:?}"
            );
            rest.split(' ').next().unwrap().parse().unwrap()
        })
        .collect();
    assert!(queue.len() >= 3, "{}", open.stdout);
    assert!(
        queue.last().unwrap() > queue.first().unwrap() && *queue.last().unwrap() > 10,
        "queue does not grow: {queue:?}"
    );
    // Schedule lag is reported separately.
    assert!(
        open.stdout.contains("Schedule lag (ms):"),
        "{}",
        open.stdout
    );
    check_columns(&open.stdout);
}

#[test]
fn rate_mode_intermediate_lines() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --rate=200 --time=1 --report-interval=0.5 --cpu-max-prime=500 run")
        .run()
        .ok();
    // The line at the time limit can race the worker's exit: the thread count is read
    // when the line is made, and a worker that has just left is no longer running (as in
    // sysbench, whose count falls as its workers end). Earlier lines must say 1.
    let last = regex::Regex::new(
        r"^\[ \d+\.\ds \] thds: [01] eps: \d+\.\d\d lat \(ms,95%\): \d+\.\d\d\n\[ \d+\.\ds \] queue length: \d+ concurrency: \d+$",
    )
    .unwrap();
    let re = regex::Regex::new(
        r"^\[ \d+\.\ds \] thds: 1 eps: \d+\.\d\d lat \(ms,95%\): \d+\.\d\d\n\[ \d+\.\ds \] queue length: \d+ concurrency: \d+$",
    )
    .unwrap();
    let lines: Vec<&str> = run
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("[ "))
        .collect();
    assert!(
        lines.len() >= 2 && lines.len().is_multiple_of(2),
        "{}",
        run.stdout
    );
    let pairs: Vec<String> = lines.chunks(2).map(|pair| pair.join("\n")).collect();
    let (final_pair, earlier) = pairs.split_last().unwrap();
    for joined in earlier {
        assert!(re.is_match(joined), "{joined:?}");
    }
    assert!(last.is_match(final_pair), "{final_pair:?}");
}
