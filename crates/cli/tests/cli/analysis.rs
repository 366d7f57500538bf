//! `bmk merge`, `bmk report` and `bmk compare` on results directories built by the
//! analysis crate's test support (the report crate's own writers, real captures).
//! Text outputs are compared with `tests/golden/*.txt`; `BMK_BLESS=1` rewrites them.

#[path = "../../../analysis/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use support::*;

use crate::util::Dir;

#[track_caller]
fn matches_golden(name: &str, text: &str) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "golden", name]
        .iter()
        .collect();
    if std::env::var_os("BMK_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (BMK_BLESS=1 writes it)", path.display()));
    if text != want {
        let mut msg = format!("{} differs:\n", path.display());
        for (i, (got, want)) in text.lines().zip(want.lines()).enumerate() {
            if got != want {
                msg.push_str(&format!("line {}:\n  got:  {got}\n  want: {want}\n", i + 1));
            }
        }
        msg.push_str(&format!(
            "({} lines, want {})",
            text.lines().count(),
            want.lines().count()
        ));
        panic!("{msg}");
    }
}

fn process<'a>(threads: usize, start_ns: u64, events: &'a [Event]) -> Process<'a> {
    Process {
        threads,
        seconds: 10,
        start_ns,
        events,
        options: default_options("10000"),
        test: "oltp_read_write".into(),
        query_counts: false,
    }
}

/// Two processes of 4 threads that ran one level together.
fn two_processes(root: &Path, b_start_ns: u64) {
    let all = events(8, 10, 42, 2_000_000, |s| 900 + 40 * s);
    let a = process_share(&all, 2, 0);
    let b = process_share(&all, 2, 1);
    write_level(
        &root.join("a/level-0001"),
        1,
        1,
        0.0,
        &process(4, T0_NS, &a),
    );
    write_level(
        &root.join("b/level-0001"),
        1,
        1,
        0.0,
        &process(4, b_start_ns, &b),
    );
}

#[test]
fn merge_prints_the_final_report_of_the_sum_and_writes_it() {
    let dir = Dir::new();
    two_processes(dir.path(), T0_NS + 2_000_000);
    let run = dir.bmk().args("merge a b --results merged.json").run().ok();
    matches_golden("merge.txt", &run.stdout);
    let merged = bmk_results::ResultsFile::read(dir.join("merged.json")).unwrap();
    let a = bmk_results::ResultsFile::read(dir.join("a/level-0001/result.json")).unwrap();
    let b = bmk_results::ResultsFile::read(dir.join("b/level-0001/result.json")).unwrap();
    assert_eq!(
        merged.final_stats.events,
        a.final_stats.events + b.final_stats.events
    );
    assert_eq!(merged.intervals.len(), 10);
    assert!(run.stdout.contains(&format!(
        "total number of events:              {}",
        merged.final_stats.events
    )));

    dir.bmk().args("merge a b --results-dir merged").run().ok();
    let level = dir.join("merged/level-0001");
    assert!(level.join("result.json").is_file() && level.join("intervals.jsonl").is_file());
    assert!(std::fs::read_to_string(dir.join("merged/summary.csv"))
        .unwrap()
        .contains("level-0001,8,1,"));
    dir.bmk()
        .args("merge a b --results-dir merged")
        .run()
        .fails_mentioning(&["merged exists and is not empty"]);
}

#[test]
fn merge_refuses_bad_inputs_in_one_line() {
    let dir = Dir::new();
    two_processes(dir.path(), T0_NS + 30_000_000_000);
    dir.bmk()
        .args("merge a b")
        .run()
        .fails_mentioning(&["cannot merge: the runs did not overlap in time", "--mixed"]);
    dir.bmk().args("merge --mixed a b").run().code(0);
    dir.bmk()
        .args("merge a nowhere")
        .run()
        .fails_mentioning(&["nowhere"]);
    dir.bmk()
        .args("merge a")
        .run()
        .fails_mentioning(&["give two or more inputs"]);
    dir.bmk()
        .args("merge --frobnicate a b")
        .run()
        .fails_mentioning(&["unknown option --frobnicate"]);
}

#[test]
fn report_writes_one_self_contained_page_and_prints_the_summary() {
    let dir = Dir::new();
    sweep(dir.path(), "sweep", &[1, 2, 4, 8], &[], false, |u, s| {
        if u == 8 && (s == 4 || s == 5) {
            300
        } else {
            400 * u as u64
        }
    });
    let run = dir.bmk().args("report sweep").run().ok();
    matches_golden("report.txt", &run.stdout);
    let html = std::fs::read_to_string(dir.join("sweep/report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        html.matches("<svg").count() >= 3 + 4 * 3,
        "charts per level and scalability"
    );
    assert!(!html.contains("<script"), "readable without JavaScript");
    for reference in ["src=", "href=\"http", "url(", "@import"] {
        assert!(
            !html.contains(reference),
            "the page must not load {reference}"
        );
    }
    assert!(html.contains("stalls</span> — level-0004 (8 users)"));
    assert!(
        html.contains("<td><a href=\"#level-0001\">level-0001</a></td><td class=\"n\">1</td>"),
        "the table's rows: level and users from the summary row"
    );
    dir.bmk()
        .args("report nowhere")
        .run()
        .fails_mentioning(&["nowhere"]);
    dir.bmk()
        .args("report")
        .run()
        .fails_mentioning(&["give one results directory"]);
}

/// A side of a comparison: `users` levels, four repeats each, `gain` times the base
/// throughput, with repeat-to-repeat variation.
fn side(root: &Path, name: &str, gain: f64, buffer_pool: &str) {
    let dir = root.join(name);
    let mut options = default_options("10000");
    options.insert("tables".into(), "4".into());
    let mut rows = Vec::new();
    let mut index = 0;
    for u in [4u32, 8] {
        for repeat in 1..=4u32 {
            index += 1;
            let jitter = [0.0, 9.0, -6.0, 4.0][repeat as usize - 1] + gain * 3.0;
            let evs = events(u as usize, 10, index as u64, 2_000_000, |_| {
                ((300.0 * u as f64 + jitter) * gain) as u64
            });
            let p = Process {
                threads: u as usize,
                seconds: 10,
                start_ns: T0_NS + index as u64 * 20_000_000_000,
                events: &evs,
                options: options.clone(),
                test: "oltp_read_write".into(),
                query_counts: false,
            };
            rows.push(write_level(
                &dir.join(format!("level-{index:04}")),
                index,
                repeat,
                2.0,
                &p,
            ));
        }
    }
    let mut vars = variables_of("mariadb");
    vars.insert("innodb_buffer_pool_size".into(), buffer_pool.into());
    write_run(&dir, "oltp_read_write", &options, &[4, 8], &rows, vars);
}

#[test]
fn compare_gives_a_verdict_per_level_and_an_exit_status_for_ci() {
    let dir = Dir::new();
    side(dir.path(), "small-pool", 1.0, "134217728");
    side(dir.path(), "big-pool", 1.1, "1073741824");
    let run = dir
        .bmk()
        .args("compare small-pool big-pool --output cmp.html --fail-if-slower 5")
        .run()
        .ok();
    matches_golden("compare.txt", &run.stdout);
    let html = std::fs::read_to_string(dir.join("cmp.html")).unwrap();
    // TPS, p95 and p99 against users.
    assert!(html.contains("B is 10.") && html.matches("<svg").count() == 3);
    assert!(
        !html.contains("Every pair"),
        "two runs have one pair: the verdicts"
    );
    // The other way round B is slower: the exit status says so.
    let run = dir
        .bmk()
        .args("compare big-pool small-pool --fail-if-slower 5")
        .run()
        .code(2);
    assert!(
        run.stdout.contains("B is 9.") && run.stdout.contains("% slower than A at 4 users"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stderr,
        "bmk compare: 2 level(s) significantly slower than A by more than 5 %\n"
    );
    dir.bmk()
        .args("compare big-pool small-pool --fail-if-slower 50")
        .run()
        .ok();
    dir.bmk()
        .args("compare big-pool --fail-if-slower=x small-pool")
        .run()
        .fails_mentioning(&["invalid --fail-if-slower value 'x'"]);
}

/// Four configurations at once: one page with four curves per chart, and every pair's
/// verdict, each the same as `compare` of that pair alone says.
#[test]
fn compare_of_four_runs_draws_four_curves_and_judges_every_pair() {
    let dir = Dir::new();
    let names = ["p1", "p2", "p3", "p4"];
    for (name, gain) in names.iter().zip([1.0, 1.1, 1.2, 0.9]) {
        side(dir.path(), name, gain, "134217728");
    }
    let run = dir
        .bmk()
        .args("compare p1 p2 p3 p4 --output cmp4.html")
        .run()
        .ok();
    let html = std::fs::read_to_string(dir.join("cmp4.html")).unwrap();
    let tps_chart = &html[html.find("<figure title=\"TPS vs users\">").unwrap()..];
    let tps_chart = &tps_chart[..tps_chart.find("</figure>").unwrap()];
    for (letter, name) in ["A", "B", "C", "D"].iter().zip(names) {
        assert!(
            tps_chart.contains(&format!(">\n{letter} {name}\n</text>")),
            "no curve of {name}"
        );
    }
    let pairs: Vec<&str> = run
        .stdout
        .split("\nEvery pair:\n")
        .nth(1)
        .expect("an 'Every pair' block")
        .lines()
        .take_while(|l| !l.is_empty())
        .collect();
    // 6 pairs at 2 users counts.
    assert_eq!(pairs.len(), 12, "{}", run.stdout);
    let letters = ["A", "B", "C", "D"];
    for base in 0..4 {
        for side in base + 1..4 {
            let alone = dir
                .bmk()
                .args(&format!("compare {} {}", names[base], names[side]))
                .run()
                .ok();
            let verdicts: Vec<String> = alone
                .stdout
                .lines()
                .filter(|l| l.starts_with("B "))
                .map(|l| {
                    l.replacen("B ", &format!("{} ", letters[side]), 1)
                        .replace(" A at ", &format!(" {} at ", letters[base]))
                        .replace(" than A ", &format!(" than {} ", letters[base]))
                })
                .collect();
            assert_eq!(verdicts.len(), 2, "{}", alone.stdout);
            for v in &verdicts {
                assert!(pairs.contains(&v.as_str()), "{v} not in {pairs:#?}");
            }
        }
    }
    assert!(html.contains("<h2 id=\"pairs\">Every pair</h2>"));
}

/// Runs of different workloads are refused in one line with exit status 1, and
/// compared with `--mixed`, which the output says.
#[test]
fn compare_refuses_unlike_runs_unless_mixed() {
    let dir = Dir::new();
    side(dir.path(), "rw", 1.0, "134217728");
    side(dir.path(), "tpcc", 0.39, "134217728");
    for file in ["run.json", "level-0001/result.json"] {
        let path = dir.join(&format!("tpcc/{file}"));
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("oltp_read_write", "tpcc")).unwrap();
    }
    dir.bmk()
        .args("compare rw tpcc")
        .run()
        .fails_mentioning(&[
            "cannot compare unlike runs: A (rw) ran 'oltp_read_write' but B (tpcc) ran 'tpcc' (use --mixed to compare them anyway)",
        ]);
    let run = dir.bmk().args("compare --mixed rw tpcc").run().ok();
    assert!(
        run.stdout
            .contains("warning: unlike runs compared anyway (--mixed): A (rw) ran 'oltp_read_write' but B (tpcc) ran 'tpcc'"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("% slower than A at 4 users"));
}

/// `bmk report` writes each level's steady state into `steady.json`.
#[test]
fn report_writes_the_steady_windows() {
    let dir = Dir::new();
    let evs = events(
        4,
        30,
        9,
        2_000_000,
        |s| if s < 8 { 300 } else { 900 + s % 3 },
    );
    let row = write_level(
        &dir.join("warm/level-0001"),
        1,
        1,
        0.0,
        &Process {
            seconds: 30,
            ..process(4, T0_NS, &evs)
        },
    );
    write_run(
        &dir.join("warm"),
        "oltp_read_write",
        &default_options("10000"),
        &[4],
        &[row],
        Default::default(),
    );
    let run = dir.bmk().args("report warm").run().ok();
    assert!(
        run.stdout.contains("Steady state (MSER-5):"),
        "{}",
        run.stdout
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("warm/steady.json")).unwrap())
            .unwrap();
    assert_eq!(v[0]["level"], "level-0001");
    assert_eq!(v[0]["verdict"], "steady");
    assert_eq!(v[0]["window"]["start_s"], 8.0);
    assert_eq!(v[0]["window"]["end_s"], 30.0);
}

/// The server and OS rates of each level, derived from the captures copied into it.
/// (The test support once looked for the captures under this crate's `tests/data`,
/// found none and copied nothing, so the page had no rate charts to draw.)
#[test]
fn report_shows_server_and_os_rates_from_the_captures() {
    let dir = Dir::new();
    sweep(dir.path(), "sweep", &[1, 2], &[], false, |u, _| {
        400 * u as u64
    });
    dir.bmk().args("report sweep").run().ok();
    let html = std::fs::read_to_string(dir.join("sweep/report.html")).unwrap();
    // MariaDB 10.6 and later have no Innodb_rows_* counters: the rows chart then
    // comes from the Handler_* counters.
    assert!(
        html.contains("InnoDB rows") || html.contains("Row operations (Handler_*)"),
        "rates derived from the MariaDB capture"
    );
    assert!(html.contains("Client host CPU"), "rates derived from /proc");
}
