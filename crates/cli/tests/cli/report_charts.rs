//! The report's latency and timeline charts from a real MariaDB sweep with a lock held
//! for seconds in its second level: the intervals that completed nothing are gaps in
//! every latency line (not 0 ms) and shaded as such, the interval the lock released
//! keeps its stored p99 and its max (the wait), the sweep's timeline marks each
//! level's start, and the gap's drill-down shows the sessions waiting for the table.
//! Reports of a PostgreSQL sweep and a TPC-C sweep, rendered by headless Chromium, have
//! their sections and a point per interval; `--export` writes what the charts draw.

use std::time::{Duration, Instant};

use bmk_analysis::series::LatencyLines;
use bmk_results::RunData;
use bmk_sql::DriverKind;

use crate::server_db::ServerDb;
use crate::util::Dir;

/// Lines in `path` (0 while it does not exist).
fn lines_in(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

#[test]
fn a_lock_is_a_latency_gap_and_the_timeline_marks_the_levels_on_mariadb() {
    let Some(db) = ServerDb::new(DriverKind::Mysql) else {
        return;
    };
    let dir = Dir::new();
    dir.write("bmk.toml", &db.target(false));
    dir.bmk()
        .args("kit prepare Prepare_1K_1tab 1 --target=db")
        .run_within(Duration::from_secs(120))
        .code(0);
    let (mut child, line) = dir
        .bmk()
        .args("kit sweep OLTP_RW_1K_1tab-uniform-trx --users=1,2 --time=9 --pause=0 --capture-interval=1 --target=db --results-dir=lock")
        .spawn();
    // Two intervals into the second level, every session waits for the table for 4 s.
    let intervals = dir.join("lock/level-0002/intervals.jsonl");
    let deadline = Instant::now() + Duration::from_secs(90);
    while lines_in(&intervals) < 2 {
        assert!(Instant::now() < deadline, "{line}: level 2 never reported");
        assert!(child.try_wait().unwrap().is_none(), "{line} ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut locker = db.conn();
    locker.query("LOCK TABLES sbtest1 WRITE").unwrap();
    std::thread::sleep(Duration::from_secs(4));
    locker.query("UNLOCK TABLES").unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{line}: {status}");

    let results = dir.join("lock");
    dir.bmk()
        .arg("report")
        .arg(&results)
        .run_within(Duration::from_secs(60))
        .code(0);
    let run = RunData::read(&results).unwrap();
    let level = &run.levels[1];
    let lat = LatencyLines::of(level);
    let empty: Vec<usize> = (0..level.intervals.len())
        .filter(|&i| level.intervals[i].record.events == 0)
        .collect();
    assert!(
        empty.len() >= 2,
        "the lock stopped 2+ whole intervals: {empty:?}"
    );
    assert_eq!(lat.gaps.len(), empty.len());
    for (name, values) in &lat.lines {
        for &i in &empty {
            assert!(
                values[i].is_nan(),
                "{name} at interval {i} is {}",
                values[i]
            );
        }
    }
    // The interval in which the lock was released: its p99 is the stored one, seconds.
    let after = *empty.last().unwrap() + 1;
    let stored_p99 = level.intervals[after]
        .record
        .latency
        .percentiles
        .iter()
        .find(|p| p.percentile == 99.0)
        .map(|p| p.ms)
        .unwrap();
    let p99 = &lat.lines.iter().find(|l| l.0 == "p99").unwrap().1;
    assert_eq!(p99[after], stored_p99);
    // ... and its max the lock's wait, drawn where the wait ended.
    let stored_max = level.intervals[after].record.latency.max_ms;
    let max = &lat.lines.iter().find(|l| l.0 == "max").unwrap().1;
    assert_eq!(max[after], stored_max);
    assert!(stored_max > 2000.0, "waited for the lock: {stored_max} ms");

    let page = std::fs::read_to_string(results.join("report.html")).unwrap();
    let chart = |title: &str| -> &str {
        let at = page
            .find(&format!("<figure title=\"{title}\">"))
            .unwrap_or_else(|| panic!("no chart {title}"));
        &page[at..at + page[at..].find("</figure>").unwrap()]
    };
    let latency = chart("level-0002 (2 users): latency");
    assert!(latency.contains(">\nnothing completed\n</text>"));
    // One grey span per empty interval, plus the legend's key.
    let grey = latency.matches("fill=\"#969696\"").count();
    assert_eq!(grey, empty.len() + 1, "{latency}");
    assert!(page.contains("<figure title=\"level-0002 (2 users): latency distribution\">"));
    // The server's side of the story, from the status captured every second.
    for title in [
        "Server threads",
        "InnoDB row lock waits",
        "InnoDB redo log written",
        "InnoDB buffer pool dirty pages",
        "InnoDB buffer pool hit ratio (reads served without a disk read)",
        "Client host CPU: bmk and the other processes (100 % = all CPUs)",
    ] {
        chart(title);
    }
    // Level 2's sessions piled up waiting for the table (the first chart of that
    // title is level 1's).
    let level2 = &page[page.find("<h2 id=\"level-0002\">").unwrap()..];
    let states = &level2[level2
        .find("<figure title=\"Sessions by state (processlist)\">")
        .unwrap()..];
    let states = &states[..states.find("</figure>").unwrap()];
    assert!(
        states.contains(">\nWaiting for table metadata lock\n</text>"),
        "{states}"
    );
    // From the notch to its cause: the processlist sampled during the lock shows the
    // sessions waiting for the table, on the page and linked from the timeline.
    let notches = bmk_analysis::drilldown::notches(level);
    let waiting = notches
        .iter()
        .filter(|n| n.why == "nothing completed")
        .flat_map(|n| n.states.iter().map(move |s| (n, s)))
        .find(|(_, (state, _))| state.contains("Waiting for table"))
        .unwrap_or_else(|| panic!("no waiting sessions in {notches:#?}"));
    let (notch, (state, sessions)) = waiting;
    assert!(*sessions >= 2, "both users wait: {state} × {sessions}");
    assert!(page.contains(&format!(
        "<details class=\"notch\" id=\"{}\">",
        notch.anchor
    )));
    assert!(page.contains(&format!("<a href=\"#{}\">", notch.anchor)));
    let timeline = chart("Sweep timeline: throughput");
    for label in ["1 user", "2 users"] {
        assert!(
            timeline.contains(&format!(">\n{label}\n</text>")),
            "{label}"
        );
    }
    let timeline_latency = chart("Sweep timeline: latency");
    assert_eq!(
        timeline_latency.matches("fill=\"#969696\"").count(),
        empty.len() + 1
    );

    // The same page as a browser renders it: the charts above, the gap and the
    // drill-down of the notch to the waiting sessions.
    let Some(browser) = crate::live_page::chromium()
        .or_else(|| bmk_testkit::unavailable("chromium (Debian's package)", "not installed"))
    else {
        return;
    };
    let dom = crate::live_page::dump_dom(
        browser,
        &format!("file://{}", results.join("report.html").display()),
    );
    assert!(dom.contains("</html>"), "Chromium rendered nothing");
    for title in [
        "Sweep timeline: throughput",
        "Sweep timeline: latency",
        "level-0002 (2 users): latency",
        "InnoDB row lock waits",
        "Sessions by state (processlist)",
    ] {
        figure(&dom, title);
    }
    assert!(figure(&dom, "level-0002 (2 users): latency").contains("nothing completed"));
    let rendered_notch = &dom[dom
        .find(&format!("id=\"{}\"", notch.anchor))
        .expect("the notch's drill-down in the rendered page")..];
    assert!(
        rendered_notch[..rendered_notch.find("</details>").unwrap()].contains(state.as_str()),
        "the rendered drill-down lists '{state}'"
    );
}

#[test]
fn export_writes_each_chart_as_tidy_csv_and_svg_that_agree_with_the_run() {
    let dir = Dir::new();
    dir.bmk()
        .args("kit prepare Prepare_1K_1tab 1 --db-driver=sqlite")
        .run_within(Duration::from_secs(120))
        .code(0);
    dir.bmk()
        .args("kit sweep OLTP_RO_1K_1tab-uniform-p_sel1-notrx --users=1,2 --time=3 --pause=0 --capture-interval=1 --db-driver=sqlite --results-dir=run")
        .run_within(Duration::from_secs(120))
        .code(0);
    let out = dir.join("charts");
    let run = dir
        .bmk()
        .arg("report")
        .arg(dir.join("run"))
        .arg(format!("--export={}", out.display()))
        .run_within(Duration::from_secs(60))
        .code(0);
    let names = {
        let mut n: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    let csvs: Vec<&String> = names.iter().filter(|n| n.ends_with(".csv")).collect();
    assert_eq!(
        csvs.len() * 2,
        names.len(),
        "a CSV and an SVG per chart: {names:?}"
    );
    assert!(
        run.stderr
            .contains(&format!("exported {} charts to", csvs.len())),
        "{}",
        run.context()
    );
    for n in names.iter().filter(|n| n.ends_with(".svg")) {
        let svg = std::fs::read_to_string(out.join(n)).unwrap();
        assert!(svg.starts_with("<svg"), "{n}");
    }
    // Rows as (header → value) maps.
    let rows = |name: &str| -> Vec<std::collections::BTreeMap<String, String>> {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        lines
            .map(|l| {
                let fields: Vec<&str> = l.split(',').collect();
                assert_eq!(fields.len(), header.len(), "{name}: {l}");
                header
                    .iter()
                    .zip(fields)
                    .map(|(h, f)| (h.to_string(), f.to_string()))
                    .collect()
            })
            .collect()
    };
    // Every file loads with Python's csv module (what a reader's script would use) into
    // the same rows as read here.
    let python = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import csv, json, sys\n\
             print(json.dumps({n: list(csv.DictReader(open(n, newline=''))) for n in sys.argv[1:]}))",
        )
        .args(&csvs)
        .current_dir(&out)
        .output()
        .expect("python3");
    assert!(
        python.status.success(),
        "{}",
        String::from_utf8_lossy(&python.stderr)
    );
    let by_python: std::collections::BTreeMap<
        String,
        Vec<std::collections::BTreeMap<String, String>>,
    > = serde_json::from_slice(&python.stdout).unwrap();
    assert_eq!(by_python.len(), csvs.len());
    for name in &csvs {
        assert_eq!(by_python[name.as_str()], rows(name), "{name}");
    }
    // The scalability chart's points are summary.csv's TPS.
    let summary = std::fs::read_to_string(dir.join("run/summary.csv")).unwrap();
    let tps_by_users: Vec<(String, f64)> = rows("01-transactions-per-second-vs-users.csv")
        .iter()
        .map(|r| (r["users"].clone(), r["value"].parse().unwrap()))
        .collect();
    assert_eq!(tps_by_users.len(), 2);
    for (users, tps) in &tps_by_users {
        let line = summary
            .lines()
            .find(|l| l.split(',').nth(3) == Some(users.as_str()))
            .unwrap();
        let want: f64 = line.split(',').nth(5).unwrap().parse().unwrap();
        assert!((tps - want).abs() < 0.01, "{users} users: {tps} vs {want}");
    }
    // A level's throughput over time is its intervals' TPS, with the run's names.
    let level = csvs
        .iter()
        .find(|n| n.contains("level-0002-2-users-throughput"))
        .unwrap();
    let intervals =
        bmk_results::results_dir::read_intervals(&dir.join("run/level-0002/intervals.jsonl"))
            .unwrap();
    let r = rows(level);
    assert_eq!(r.len(), intervals.len());
    for (row, line) in r.iter().zip(&intervals) {
        assert_eq!(row["scenario"], "OLTP_RO_1K_1tab-uniform-p_sel1-notrx");
        assert_eq!(
            (row["level"].as_str(), row["users"].as_str()),
            ("level-0002", "2")
        );
        assert_eq!(row["time_s"].parse::<f64>().unwrap(), line.record.time_s);
        assert_eq!(row["value"].parse::<f64>().unwrap(), line.record.tps);
    }
}

/// The `<figure>` of `title` in `page`, from its tag to its end.
fn figure<'a>(page: &'a str, title: &str) -> &'a str {
    let at = page
        .find(&format!("<figure title=\"{title}\">"))
        .unwrap_or_else(|| panic!("no chart {title}"));
    &page[at..at + page[at..].find("</figure>").unwrap()]
}

/// The point counts of the data lines (2 px wide) of a chart, legend keys left out
/// (they have two points each and come last).
fn line_points(chart: &str) -> Vec<usize> {
    chart
        .split("<polyline")
        .skip(1)
        .filter(|p| p.contains("stroke-width=\"2\""))
        .map(|p| {
            let points = p.split("points=\"").nth(1).unwrap_or("");
            points
                .split('"')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .count()
        })
        .collect()
}

#[test]
fn postgresql_and_tpcc_reports_render_in_chromium() {
    let Some(browser) = crate::live_page::chromium()
        .or_else(|| bmk_testkit::unavailable("chromium (Debian's package)", "not installed"))
    else {
        return;
    };
    let Some(db) = ServerDb::new(DriverKind::Pgsql) else {
        return;
    };
    let dir = Dir::new();
    dir.write("bmk.toml", &db.target(false));
    dir.bmk()
        .args("kit prepare Prepare_1K_2tab 2 --target=db")
        .run_within(Duration::from_secs(120))
        .code(0);
    dir.bmk()
        .args("kit sweep OLTP_RW_1K_2tab-uniform-trx --users=1,2 --time=4 --pause=0 --capture-interval=1 --target=db --results-dir=pg")
        .run_within(Duration::from_secs(120))
        .code(0);
    dir.bmk()
        .args("kit prepare Prepare_TPCC_1W 1 --db-driver=sqlite")
        .run_within(Duration::from_secs(300))
        .code(0);
    dir.bmk()
        .args("kit sweep TPCC_1W --users=1,2 --time=4 --pause=0 --capture-interval=1 --db-driver=sqlite --results-dir=tpcc")
        .run_within(Duration::from_secs(120))
        .code(0);
    for (out, wanted) in [
        (
            "pg",
            &[
                "Sweep timeline: throughput",
                "Sweep timeline: latency",
                "PostgreSQL transactions (the benchmark's database)",
                "PostgreSQL client backends by wait event type (pg_stat_activity)",
                "level-0002 (2 users): latency distribution",
            ][..],
        ),
        (
            "tpcc",
            &["Sweep timeline: throughput", "level-0001 (1 user): latency"][..],
        ),
    ] {
        let results = dir.join(out);
        dir.bmk()
            .arg("report")
            .arg(&results)
            .run_within(Duration::from_secs(60))
            .code(0);
        let dom = crate::live_page::dump_dom(
            browser,
            &format!("file://{}", results.join("report.html").display()),
        );
        assert!(dom.contains("</html>"), "{out}: Chromium rendered nothing");
        for title in wanted {
            figure(&dom, title);
        }
        // Each level's throughput line has a point per interval, as intervals.jsonl.
        for (level, users) in [("level-0001", "1 user"), ("level-0002", "2 users")] {
            let intervals = bmk_results::results_dir::read_intervals(
                &results.join(level).join("intervals.jsonl"),
            )
            .unwrap();
            let chart = figure(&dom, &format!("{level} ({users}): throughput"));
            assert_eq!(
                line_points(chart).first().copied(),
                Some(intervals.len()),
                "{out} {level}"
            );
        }
        if out == "tpcc" {
            assert!(dom.contains("<h3>TPC-C results</h3>"), "no TPC-C section");
            assert!(dom.contains("<th>tpmC</th>"), "no tpmC");
            // Each level's latency by transaction type, a row per type.
            assert_eq!(
                dom.matches("<h3>Latency by transaction type</h3>").count(),
                2,
                "a latency table per level"
            );
            assert_eq!(dom.matches("<td>new_order</td>").count(), 2);
        }
    }
}
