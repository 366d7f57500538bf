//! Report options: sub-second intervals, checkpoints, `--percentiles`, `--histogram`,
//! `--report-format=csv|json`, and `--rand-seed` repeatability as the CLI shows it.

use std::time::Instant;

use regex::Regex;

use crate::util::*;

fn interval_lines(run: &Run) -> Vec<String> {
    run.lines()
        .into_iter()
        .filter(|l| l.starts_with("[ ") && !l.contains("Checkpoint"))
        .map(str::to_string)
        .collect()
}

#[test]
fn sub_second_intervals_show_the_needed_decimals_and_keep_time() {
    let dir = Dir::new();
    let t0 = Instant::now();
    let run = dir
        .bmk()
        .args("cpu --time=1 --report-interval=0.25 --cpu-max-prime=2000 run")
        .run()
        .ok();
    let wall = t0.elapsed().as_secs_f64();
    assert!(
        run.stdout
            .contains("Report intermediate results every 0.25 second(s)\n"),
        "{}",
        run.stdout
    );
    let lines = interval_lines(&run);
    assert!(
        (3..=5).contains(&lines.len()),
        "{} interval lines in {wall:.2} s:\n{}",
        lines.len(),
        run.stdout
    );
    // The line at the time limit counts the threads still running (0 once they left).
    let re =
        Regex::new(r"^\[ (\d+\.\d\d)s \] thds: ([01]) eps: \d+\.\d\d lat \(ms,95%\): \d+\.\d\d$")
            .unwrap();
    let total = run.total_events() as f64;
    assert!(total > 0.0, "{}", run.stdout);
    let mut shares = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let caps = re
            .captures(line)
            .unwrap_or_else(|| panic!("{line:?} does not match {re}"));
        // `[ 0.25s ]`, `[ 0.50s ]`, ...: stamps are the elapsed time, about a multiple
        // of the interval (a busy machine may wake the reporter a little late).
        assert!(
            &caps[2] == "1" || i + 1 == lines.len(),
            "only the last line may find the thread gone: {lines:?}"
        );
        let at = num(&caps[1]);
        let nominal = 0.25 * (i + 1) as f64;
        assert!(
            (nominal - 0.01..nominal + 0.06).contains(&at),
            "stamp {at} for interval {}: {lines:?}",
            i + 1
        );
        // Each interval covers about a quarter of the events of the run: its rate
        // times 0.25 s, as a share of the final report's total.
        let eps = num(line
            .split("eps: ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap());
        shares.push(eps * 0.25 / total);
    }
    // A loaded machine stretches or squeezes single intervals (a late reporter wake-up
    // moves events from one to the next), so each share only has to be clearly a part
    // of the run and not most of it; together the full intervals cannot hold more than
    // the run did (plus the rounding of eps to 2 decimals).
    for share in &shares {
        assert!(
            (0.05..=0.6).contains(share),
            "interval shares {shares:?} of {total} events:\n{}",
            run.stdout
        );
    }
    let sum: f64 = shares.iter().sum();
    assert!(
        (0.5..=1.02).contains(&sum),
        "interval shares {shares:?} (sum {sum}) of {total} events:\n{}",
        run.stdout
    );
}

#[test]
fn half_second_interval_prints_one_decimal() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("threads --time=1 --report-interval=0.5 run")
        .run()
        .ok();
    let lines = interval_lines(&run);
    assert!(!lines.is_empty(), "{}", run.stdout);
    assert!(lines[0].starts_with("[ 0.5s ] thds: 1 eps: "), "{lines:?}");
}

#[test]
fn checkpoints_print_full_reports_and_reset_counters() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --time=3 --report-interval=1 --report-checkpoints=1,2 --cpu-max-prime=3000 run")
        .run()
        .ok();
    assert!(
        run.stdout
            .contains("Report checkpoint(s) at 1, 2 seconds\n"),
        "{}",
        run.stdout
    );
    let blocks: Vec<&str> = run.stdout.split("Checkpoint report:\n").collect();
    assert_eq!(blocks.len(), 3, "two checkpoint reports\n{}", run.stdout);
    let stamps: Vec<&str> = run
        .lines()
        .into_iter()
        .filter(|l| l.ends_with("] Checkpoint report:"))
        .collect();
    assert_eq!(
        stamps,
        ["[ 1s ] Checkpoint report:", "[ 2s ] Checkpoint report:"]
    );

    // Each checkpoint and the final report cover about one second (counters reset):
    // a cumulative report would say 2 s at the second checkpoint.
    let span = |text: &str, label: &str| -> f64 {
        num(text
            .lines()
            .find_map(|l| l.trim_start().strip_prefix(label))
            .unwrap()
            .trim()
            .trim_end_matches('s'))
    };
    for block in &blocks[1..] {
        let t = span(block, "time elapsed:");
        assert!((0.8..1.3).contains(&t), "span of {t} s\n{}", run.stdout);
    }
    // And its event count is that second's, as the intermediate report of the same
    // second shows it (both are taken in the same tick).
    for (k, block) in blocks[1..].iter().enumerate() {
        let events = span(block, "total number of events:");
        let t = span(block, "time elapsed:");
        let line = interval_lines(&run)
            .into_iter()
            .find(|l| l.starts_with(&format!("[ {}s ]", k + 1)))
            .unwrap_or_else(|| panic!("no interval line for second {}\n{}", k + 1, run.stdout));
        let eps = num(line
            .split("eps: ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap());
        let expected = eps * t;
        assert!(
            (events - expected).abs() <= 0.1 * expected + 5.0,
            "checkpoint {} has {events} events, its second {expected:.0}\n{}",
            k + 1,
            run.stdout
        );
    }
    // Checkpoint reports have the full layout and columns.
    assert!(check_columns(&run.stdout) >= 3 * 10);
}

#[test]
fn several_percentiles_in_the_final_report() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --events=500 --cpu-max-prime=1000 --percentiles=50,95,99,99.9 run")
        .run()
        .ok();
    let latency: Vec<&str> = run
        .stdout
        .split("Latency (ms):\n")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap()
        .lines()
        .collect();
    let labels: Vec<&str> = latency
        .iter()
        .map(|l| l.split(':').next().unwrap().trim())
        .collect();
    assert_eq!(
        labels,
        [
            "min",
            "avg",
            "max",
            "50th percentile",
            "95th percentile",
            "99th percentile",
            "99.9th percentile",
            "sum"
        ]
    );
    check_columns(&run.stdout);
    let v = |l: &str| run.latency_ms(l);
    let (min, max) = (v("min:"), v("max:"));
    let p = [
        v("50th percentile:"),
        v("95th percentile:"),
        v("99th percentile:"),
        v("99.9th percentile:"),
    ];
    for w in p.windows(2) {
        assert!(w[0] <= w[1], "{p:?}");
    }
    assert!(min <= p[0] && p[3] <= max, "{min} {p:?} {max}");
}

#[test]
fn histogram_block_format() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --events=300 --cpu-max-prime=1000 --histogram run")
        .run()
        .ok();
    let text = run.stdout.split("Threads started!\n\n").nth(1).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("Latency histogram (values are in milliseconds)")
    );
    assert_eq!(
        lines.next(),
        Some("       value  ------------- distribution ------------- count")
    );
    let row = Regex::new(r"^ {0,11}\d+\.\d{3} \|(\**) *(\d+)$").unwrap();
    let mut total = 0;
    let mut widest = 0;
    let mut rows = 0;
    for line in lines.by_ref() {
        if line.trim().is_empty() {
            break;
        }
        let caps = row
            .captures(line)
            .unwrap_or_else(|| panic!("histogram row {line:?}"));
        // The value column is 12 wide; the bar and its padding 40 wide.
        assert_eq!(line.find('|'), Some(13), "{line:?}");
        assert!(caps[1].len() <= 40, "{line:?}");
        let count: u64 = caps[2].parse().unwrap();
        assert!(count > 0, "only non-empty buckets: {line:?}");
        total += count;
        widest = widest.max(caps[1].len());
        rows += 1;
    }
    assert!(rows >= 1);
    assert_eq!(total, 300, "every event is in the histogram");
    assert_eq!(widest, 40, "the largest bucket has the full bar");
    // The final report follows the histogram.
    assert!(text.contains("\nCPU speed:\n"), "{text}");
}

#[test]
fn csv_reports() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("cpu --time=1 --report-interval=0.25 --report-format=csv --cpu-max-prime=2000 run")
        .run()
        .ok();
    let body = run.stdout.split("Threads started!\n\n").nth(1).unwrap();
    let re = Regex::new(
        r"^\d+(\.\d+)?,1,\d+\.\d\d,\d+\.\d\d,\d+\.\d\d,\d+\.\d\d,\d+\.\d\d,\d+\.\d\d,\d+\.\d\d,\d+\.\d\d$",
    )
    .unwrap();
    let intervals: Vec<&str> = body.lines().filter(|l| re.is_match(l)).collect();
    assert!(intervals.len() >= 3, "{body}");
    // The final report: a header row and a data row with the same number of fields.
    let header = body
        .lines()
        .find(|l| l.starts_with("report,"))
        .unwrap_or_else(|| panic!("no final CSV header\n{body}"));
    let row = body
        .lines()
        .find(|l| l.starts_with("final,"))
        .unwrap_or_else(|| panic!("no final CSV row\n{body}"));
    let names: Vec<&str> = header.split(',').collect();
    let values: Vec<&str> = row.split(',').collect();
    assert_eq!(names.len(), values.len(), "{header}\n{row}");
    let events = values[names.iter().position(|n| *n == "events").unwrap()];
    assert!(events.parse::<u64>().unwrap() > 0);
    // Nothing of the text report is left.
    assert!(!body.contains("Throughput:"), "{body}");
}

#[test]
fn json_reports_parse() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args(
            "cpu --time=1 --report-interval=0.25 --report-format=json --percentiles=50,99 \
             --cpu-max-prime=2000 run",
        )
        .run()
        .ok();
    let body = run.stdout.split("Threads started!\n\n").nth(1).unwrap();
    // The intervals form one JSON array, the final report one object after it.
    let mut stream = serde_json::Deserializer::from_str(body).into_iter::<serde_json::Value>();
    let intervals = stream
        .next()
        .expect("an interval array")
        .unwrap_or_else(|e| panic!("intervals are not JSON: {e}\n{body}"));
    let intervals = intervals.as_array().expect("an array");
    assert!(intervals.len() >= 3, "{body}");
    for i in intervals {
        for key in [
            "time",
            "threads",
            "tps",
            "qps",
            "latency",
            "errors",
            "reconnects",
        ] {
            assert!(i.get(key).is_some(), "{key} missing in {i}");
        }
        for key in ["total", "reads", "writes", "other"] {
            assert!(i["qps"].get(key).is_some(), "qps.{key} missing in {i}");
        }
    }
    let fin = stream
        .next()
        .expect("a final object")
        .unwrap_or_else(|e| panic!("final report is not JSON: {e}\n{body}"));
    assert_eq!(fin["report"], "final");
    assert!(fin["events"].as_u64().unwrap() > 0, "{fin}");
    let pcts: Vec<f64> = fin["latency"]["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["percentile"].as_f64().unwrap())
        .collect();
    assert_eq!(pcts, [50.0, 95.0, 99.0]);
    assert!(stream.next().is_none(), "trailing output\n{body}");
}

/// `fileio rndrw` decides read or write per event with the thread's generator, so with
/// one thread and a fixed number of events the read/write split is a function of the
/// seed alone.
fn rndrw_split(dir: &Dir, seed: &str) -> (u64, u64) {
    let results = dir.join(&format!("seed-{seed}.json"));
    dir.bmk()
        .args("fileio --file-num=2 --file-total-size=1M --file-test-mode=rndrw --events=400")
        .arg(format!("--rand-seed={seed}"))
        .arg(format!("--results={}", results.display()))
        .arg("run")
        .run()
        .ok();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let c = &v["final"]["counters"];
    (c["reads"].as_u64().unwrap(), c["writes"].as_u64().unwrap())
}

#[test]
fn rand_seed_makes_random_choices_repeatable() {
    let dir = Dir::new();
    dir.bmk()
        .args("fileio --file-num=2 --file-total-size=1M prepare")
        .run()
        .ok();
    let a = rndrw_split(&dir, "12345");
    let b = rndrw_split(&dir, "12345");
    assert_eq!(a, b, "same seed, different choices");
    assert_eq!(a.0 + a.1, 400);
    // Other seeds give other splits (at least one of several).
    let others: Vec<(u64, u64)> = ["1", "2", "3", "4"]
        .iter()
        .map(|s| rndrw_split(&dir, s))
        .collect();
    assert!(others.iter().any(|o| *o != a), "{a:?} {others:?}");
    let header = dir
        .bmk()
        .args("cpu --rand-seed=12345 --events=1 run")
        .run()
        .ok();
    assert!(header
        .stdout
        .contains("Initializing random number generator from seed (12345).\n"));
}

#[test]
fn fractional_checkpoints_show_their_decimals() {
    let dir = Dir::new();
    let run = dir
        .bmk()
        .args("threads --time=1 --report-checkpoints=0.5 run")
        .run()
        .ok();
    let stamps: Vec<&str> = run
        .lines()
        .into_iter()
        .filter(|l| l.ends_with("] Checkpoint report:"))
        .collect();
    assert_eq!(stamps, ["[ 0.5s ] Checkpoint report:"], "{}", run.stdout);
}
