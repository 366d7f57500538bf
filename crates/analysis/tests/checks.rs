//! Every sanity check on a sweep that triggers it and on one that does not. The sweeps
//! carry the real MariaDB/PostgreSQL and /proc captures of `tests/data`; where a check
//! needs what a short capture cannot show (a restart, a saturated client, falling disk
//! reads, several databases), the real samples are edited as each test says.
mod support;

use bmk_analysis::checks::{run_checks, CheckKind, Finding, Severity};
use bmk_results::RunData;
use support::*;

const USERS: [u32; 4] = [1, 2, 4, 8];

fn steady(u: u32, _s: u64) -> u64 {
    400 * u as u64
}

fn kinds(f: &[Finding]) -> Vec<(CheckKind, String)> {
    f.iter()
        .map(|f| (f.kind, f.level.clone().unwrap_or_default()))
        .collect()
}

fn clean(root: &std::path::Path) -> RunData {
    RunData::read(&sweep(root, "clean", &USERS, &[], false, steady)).unwrap()
}

#[test]
fn a_clean_sweep_triggers_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let findings = run_checks(&clean(tmp.path()));
    assert!(findings.is_empty(), "{findings:#?}");
}

#[test]
fn a_level_shorter_than_its_warm_up() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(
        tmp.path(),
        "s",
        &USERS,
        &[2.0, 2.0, 20.0, 2.0],
        false,
        steady,
    );
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::ShortLevel, "level-0003 (4 users)".into())]
    );
    assert!(
        f[0].message
            .starts_with("measured 10.0 s, less than its 20.0 s warm-up"),
        "{}",
        f[0].message
    );
}

#[test]
fn throughput_that_breaks_the_trend() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, |u, s| {
        if u == 4 {
            500
        } else {
            steady(u, s)
        }
    });
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::TrendBreak, "level-0003 (4 users)".into())]
    );
    assert!(
        f[0].message
            .contains("dips below both neighbours (2 users: 800.00, 8 users: 3200.00)"),
        "{}",
        f[0].message
    );
}

#[test]
fn stalls_are_found_and_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, |u, s| {
        if u == 8 && (s == 4 || s == 5) {
            300
        } else {
            steady(u, s)
        }
    });
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::Stall, "level-0004 (8 users)".into())]
    );
    assert!(f[0].message.starts_with("2 stalled interval(s), below 50 % of the level's usual 3200.0 TPS (the 75th percentile of its intervals): at 5 s (300.0 TPS), 6 s (300.0 TPS)"), "{}", f[0].message);
    assert_eq!((f[0].value, f[0].threshold), (Some(300.0), Some(1600.0)));
    assert_eq!(f[0].severity, Severity::Warn);
}

#[test]
fn throughput_up_while_disk_reads_fall_is_a_fake_io_bound_result() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    // The real capture's data set was cached (Innodb_data_reads did not move): give
    // each level reads growing by a level-specific step per sample, falling at level 2.
    for (level, step) in [(1, 600.0), (2, 100.0), (3, 200.0), (4, 300.0)] {
        let p = dir.join(format!("level-000{level}/server/global_status.txt"));
        edit_status(&p, "Innodb_data_reads", |i, v| v + step * i as f64);
    }
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::FakeIoBound, "level-0002 (2 users)".into())]
    );
    assert!(
        f[0].message
            .starts_with("TPS rose 100 % from 1 to 2 users while Innodb_data_reads/s fell"),
        "{}",
        f[0].message
    );
    // Reads that grow with throughput are fine.
    let dir = sweep(tmp.path(), "t", &USERS, &[], false, steady);
    for level in 1..=4 {
        let p = dir.join(format!("level-000{level}/server/global_status.txt"));
        edit_status(&p, "Innodb_data_reads", |i, v| {
            v + 100.0 * level as f64 * i as f64
        });
    }
    assert!(run_checks(&RunData::read(&dir).unwrap()).is_empty());
}

/// Writes `pg_stat_database.txt` into level 1 of `dir` from the real capture's row,
/// repeated as databases sbtest1..4 whose commits grow by `share[i]` times the real
/// growth.
fn databases(dir: &std::path::Path, share: [f64; 4]) {
    let text =
        std::fs::read_to_string(data_dir().join("pgsql/server/pg_stat_database.txt")).unwrap();
    let samples = bmk_results::capture::samples(&text);
    let first = bmk_results::capture::Table::parse(samples[0].body);
    let commit_col = first.column("xact_commit").unwrap();
    let name_col = first.column("datname").unwrap();
    let base: f64 = first.rows[0][commit_col]
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    let mut out = String::new();
    for s in &samples {
        let t = bmk_results::capture::Table::parse(s.body);
        let real: f64 = t.rows[0][commit_col].as_deref().unwrap().parse().unwrap();
        let mut copy = bmk_results::capture::Table {
            columns: t.columns.clone(),
            rows: Vec::new(),
        };
        for (i, k) in share.iter().enumerate() {
            let mut row = t.rows[0].clone();
            row[name_col] = Some(format!("sbtest{}", i + 1));
            row[commit_col] = Some(format!("{}", (base + (real - base) * k) as u64));
            copy.rows.push(row);
        }
        out.push_str(&bmk_results::capture::sample_header(s.at));
        out.push_str(&copy.to_text());
    }
    std::fs::write(dir.join("level-0001/server/pg_stat_database.txt"), out).unwrap();
}

/// Writes a per-table capture `file` into level 1 of `dir`: `header` columns, tables
/// `names`, whose counters grow by `rows[i]` over three samples 2 s apart.
fn per_table(dir: &std::path::Path, file: &str, header: &[&str], names: &[&str], rows: &[f64]) {
    let mut out = String::new();
    for step in 0..3u64 {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_764_100_800 + 2 * step);
        let t = bmk_results::capture::Table {
            columns: header.iter().map(|c| c.to_string()).collect(),
            rows: names
                .iter()
                .zip(rows)
                .map(|(n, r)| {
                    // The name, then the growth split over the counter columns.
                    let per = (r * step as f64 / 2.0 / (header.len() - 1) as f64) as u64;
                    std::iter::once(Some(n.to_string()))
                        .chain((1..header.len()).map(|_| Some((1_000 + per).to_string())))
                        .collect()
                })
                .collect(),
        };
        out.push_str(&bmk_results::capture::sample_header(at));
        out.push_str(&t.to_text());
    }
    std::fs::create_dir_all(dir.join("level-0001/server")).unwrap();
    std::fs::write(dir.join("level-0001/server").join(file), out).unwrap();
}

const PG_TABLES: [&str; 6] = [
    "relname",
    "seq_tup_read",
    "idx_tup_fetch",
    "n_tup_ins",
    "n_tup_upd",
    "n_tup_del",
];

#[test]
fn other_databases_are_not_table_groups() {
    // The benchmark's database beside others with far fewer commits: the old check
    // fired on every PostgreSQL run; the benchmark's tables are what is compared now.
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    databases(&dir, [1.0, 30.0, 0.1, 0.0]);
    assert!(run_checks(&RunData::read(&dir).unwrap()).is_empty());
}

#[test]
fn one_table_group_with_far_more_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    let names = ["sbtest1", "sbtest2", "sbtest3", "sbtest4", "other_table"];
    per_table(
        &dir,
        bmk_results::capture::PG_STAT_USER_TABLES,
        &PG_TABLES,
        &names,
        &[100_000.0, 300_000.0, 110_000.0, 90_000.0, 9e9],
    );
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::UnfairTableGroups, "level-0001 (1 user)".into())]
    );
    assert!(
        f[0].message
            .starts_with("table group 2 read and wrote 300000 rows (50 % of the 4 groups' 600000, 3.00x the mean of the others; pg_stat_user_tables)"),
        "{}",
        f[0].message
    );
    per_table(
        &dir,
        bmk_results::capture::PG_STAT_USER_TABLES,
        &PG_TABLES,
        &names,
        &[100_000.0, 120_000.0, 110_000.0, 90_000.0, 9e9],
    );
    assert!(run_checks(&RunData::read(&dir).unwrap()).is_empty());
}

#[test]
fn a_starved_table_group_on_mariadb_table_statistics() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    // `--tables=4` (the default options say so): a table with no rows is starved;
    // sbtest5 (prepared, not used by this run) is not the run's.
    let names = ["sbtest1", "sbtest2", "sbtest3", "sbtest4", "sbtest5"];
    let header = ["TABLE_NAME", "ROWS_READ", "ROWS_CHANGED"];
    per_table(
        &dir,
        bmk_results::capture::MYSQL_TABLE_STATISTICS,
        &header,
        &names,
        &[100_000.0, 100_000.0, 20_000.0, 100_000.0, 0.0],
    );
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::UnfairTableGroups, "level-0001 (1 user)".into())]
    );
    assert!(
        f[0].message
            .starts_with("table group 3 read and wrote 20000 rows")
            && f[0]
                .message
                .contains("0.20x the mean of the others; TABLE_STATISTICS)")
            && f[0].message.contains("far fewer than its share"),
        "{}",
        f[0].message
    );
    // Too few rows to judge: a handful of transactions would decide.
    per_table(
        &dir,
        bmk_results::capture::MYSQL_TABLE_STATISTICS,
        &header,
        &names,
        &[1_000.0, 1_000.0, 200.0, 1_000.0, 0.0],
    );
    assert!(run_checks(&RunData::read(&dir).unwrap()).is_empty());
}

#[test]
fn read_only_qps_that_counts_begin_and_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], true, steady);
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(
            CheckKind::ReadOnlyCountsTransactions,
            "level-0001 (1 user)".into()
        )]
    );
    assert!(
        f[0].message
            .starts_with("4 read-only level(s) count BEGIN/COMMIT as queries"),
        "{}",
        f[0].message
    );
}

#[test]
fn a_saturated_client() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    // The real client (the mariadb command-line client) was nearly idle; make its
    // process use 2 x 1.95 s of CPU per ~2.1 s sample on this 2-core client.
    edit_client_ticks(&dir.join("level-0004/os/client_stat.txt"), |i, _| {
        i as u64 * 205
    });
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::SaturatedClient, "level-0004 (8 users)".into())]
    );
    assert!(
        f[0].message
            .contains("of the 2 that the client's 2 cores can give"),
        "{}",
        f[0].message
    );
}

/// Sets `level.json`'s `cpu` of level `index` in `dir`.
fn set_cpu(dir: &std::path::Path, index: u32, cpu: bmk_results::results_dir::LevelCpu) {
    let path = dir
        .join(bmk_results::results_dir::level_dir_name(index))
        .join(bmk_results::results_dir::LEVEL_FILE);
    let mut info: bmk_results::results_dir::LevelInfo =
        bmk_results::results_dir::read_json(&path).unwrap();
    info.cpu = Some(cpu);
    std::fs::write(&path, serde_json::to_string(&info).unwrap()).unwrap();
}

fn quiet_cpu() -> bmk_results::results_dir::LevelCpu {
    bmk_results::results_dir::LevelCpu {
        wall_s: 10.0,
        bmk_user_s: 2.0,
        bmk_system_s: 1.0,
        server_s: 8.0,
        host_cpus: 2,
        host_busy_pct: 60.0,
        host_other_pct: 5.0,
        steal_pct: 0.0,
    }
}

#[test]
fn a_client_whose_one_user_keeps_a_core_busy_is_saturated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    for i in 1..=4 {
        set_cpu(&dir, i, quiet_cpu());
    }
    assert!(run_checks(&RunData::read(&dir).unwrap()).is_empty());
    // One user cannot use more than one core: 0.95 of one is its limit, not the host's.
    set_cpu(
        &dir,
        1,
        bmk_results::results_dir::LevelCpu {
            bmk_user_s: 7.0,
            bmk_system_s: 2.5,
            ..quiet_cpu()
        },
    );
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::SaturatedClient, "level-0001 (1 user)".into())]
    );
    assert!(
        f[0].message
            .starts_with("bmk used 0.95 cores, 95 % of the 1 that its 1 users' threads can give"),
        "{}",
        f[0].message
    );
}

#[test]
fn a_host_busy_with_other_work_or_stolen_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    set_cpu(
        &dir,
        2,
        bmk_results::results_dir::LevelCpu {
            host_busy_pct: 100.0,
            host_other_pct: 80.0,
            bmk_user_s: 2.5,
            bmk_system_s: 0.5,
            ..quiet_cpu()
        },
    );
    set_cpu(
        &dir,
        3,
        bmk_results::results_dir::LevelCpu {
            steal_pct: 12.0,
            ..quiet_cpu()
        },
    );
    set_cpu(
        &dir,
        4,
        bmk_results::results_dir::LevelCpu {
            host_other_pct: 25.0,
            steal_pct: 5.0,
            ..quiet_cpu()
        },
    );
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![
            (CheckKind::BusyHost, "level-0002 (2 users)".into()),
            (CheckKind::BusyHost, "level-0003 (4 users)".into())
        ]
    );
    assert!(
        f[0].message
            .starts_with("the host was busy: other work used 80 % of its 2 CPUs (limit 25 %; bmk 0.30 cores, local server 0.80 cores)"),
        "{}",
        f[0].message
    );
    assert!(
        f[1].message
            .contains("the hypervisor stole 12.0 % of its CPU time (limit 5 %)"),
        "{}",
        f[1].message
    );
}

#[test]
fn a_server_restart_during_a_level() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    // Uptime starts again from 2 s at the fourth sample, as after a restart.
    edit_status(
        &dir.join("level-0002/server/global_status.txt"),
        "Uptime",
        |i, v| if i >= 3 { 2.0 * (i - 2) as f64 } else { v },
    );
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::ServerRestart, "level-0002 (2 users)".into())]
    );
    assert!(
        f[0].message.contains("Uptime went back from"),
        "{}",
        f[0].message
    );
}

#[test]
fn a_level_that_did_not_finish() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    // What kill -9 of the level's process leaves: no result.json.
    std::fs::remove_file(dir.join("level-0004/result.json")).unwrap();
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::UnfinishedLevel, "level-0004 (8 users)".into())]
    );
    assert!(
        f[0].message.starts_with(
            "no result.json (the level's record says 'completed', 10 interval(s) written)"
        ),
        "{}",
        f[0].message
    );
}

#[test]
fn a_sampler_that_could_not_connect() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    // The lines the kit's sampler writes to server/events.txt.
    std::fs::write(
        dir.join("level-0002/server/events.txt"),
        "TS 1764100805.000000000 2025-11-25 20:00:05\nsampler cannot connect: Access denied for user 'x'@'localhost'\n\
         TS 1764100810.000000000 2025-11-25 20:00:10\nsampler connection restored\n",
    )
    .unwrap();
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::CaptureFailed, "level-0002 (2 users)".into())]
    );
    assert!(
        f[0].message
            .starts_with("1 sampler failure(s), the first: sampler cannot connect: Access denied"),
        "{}",
        f[0].message
    );
}

#[test]
fn a_level_half_stalled_is_flagged_against_its_good_half() {
    let tmp = tempfile::tempdir().unwrap();
    // Level 4's last 5 of 10 seconds run at 300 TPS: the median (1750) would put the
    // threshold at 875 TPS, under which 300 still falls, but so would 800; the real
    // test is that the threshold stays at half the good half (1600).
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, |u, s| {
        if u == 8 && s >= 5 {
            1000
        } else {
            steady(u, s)
        }
    });
    let f = run_checks(&RunData::read(&dir).unwrap());
    let stall = f
        .iter()
        .find(|f| f.kind == CheckKind::Stall)
        .expect("a stall");
    assert_eq!(stall.level.as_deref(), Some("level-0004 (8 users)"));
    assert!(
        stall.message.starts_with("5 stalled interval(s)"),
        "{}",
        stall.message
    );
    assert_eq!((stall.value, stall.threshold), (Some(1000.0), Some(1600.0)));
}

#[test]
fn errors_above_a_share_of_the_attempts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    // Level 1 (4000 events): 281,588 errors, as against tables that do not exist;
    // level 3 (16000 events): 40 errors, 0.25 %: a warning; level 4 (32000 events):
    // 10 errors, 0.03 %: nothing.
    for (level, errors) in [(1, 281_588u64), (3, 40), (4, 10)] {
        edit_result(&dir.join(format!("level-000{level}")), |v| {
            v["final"]["counters"]["errors"] = errors.into();
        });
    }
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![
            (CheckKind::Errors, "level-0001 (1 user)".into()),
            (CheckKind::Errors, "level-0003 (4 users)".into()),
        ]
    );
    assert_eq!(f[0].severity, Severity::Fail);
    assert_eq!(f[0].threshold, Some(1.0));
    let pct = 281_588.0 / (281_588.0 + 4000.0) * 100.0;
    assert!((f[0].value.unwrap() - pct).abs() < 1e-9, "{:?}", f[0].value);
    assert!(
        f[0].message
            .starts_with("281588 errors against 4000 events (98.60 % of attempts, above 1 %"),
        "{}",
        f[0].message
    );
    assert_eq!(f[1].severity, Severity::Warn);
    assert_eq!(f[1].threshold, Some(0.1));
}

#[test]
fn fatal_and_interrupted_levels_are_flagged_and_left_off_the_curves() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, |u, s| {
        // The fatal level measured almost nothing: without the rule it would also
        // break the trend.
        if u == 2 {
            if s == 0 {
                5
            } else {
                0
            }
        } else {
            steady(u, s)
        }
    });
    edit_result(&dir.join("level-0002"), |v| v["status"] = "fatal".into());
    edit_result(&dir.join("level-0004"), |v| {
        v["status"] = "interrupted".into()
    });
    let run = RunData::read(&dir).unwrap();
    assert!(!run.levels[1].usable() && !run.levels[3].usable());
    assert!(run.levels[0].usable() && run.levels[2].usable());
    let f = run_checks(&run);
    assert_eq!(
        kinds(&f),
        vec![
            (CheckKind::UnusableLevel, "level-0002 (2 users)".into()),
            (CheckKind::UnusableLevel, "level-0004 (8 users)".into()),
        ],
        "{f:#?}"
    );
    assert!(
        f[0].message.starts_with("status 'fatal' after 10.0 s"),
        "{}",
        f[0].message
    );
    assert_eq!(f[0].severity, Severity::Fail);
    let report = bmk_analysis::report::Report::build(&run).unwrap();
    assert_eq!(
        report.off_curves,
        ["level-0002 (fatal)", "level-0004 (interrupted)"]
    );
    // The table keeps them, the TPS curve has the two usable levels only.
    assert_eq!(report.rows.len(), 4);
    let tps_curve = &report.scalability[0].svg;
    let points = tps_curve.matches("<circle").count();
    assert_eq!(points, 2, "{tps_curve}");
}

#[test]
fn a_run_that_failed_or_was_interrupted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    let set_status = |status: &str| {
        let path = dir.join("run.json");
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        v["status"] = status.into();
        std::fs::write(&path, v.to_string()).unwrap();
    };
    std::fs::remove_dir_all(dir.join("level-0004")).unwrap();
    set_status("interrupted");
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(kinds(&f), vec![(CheckKind::RunNotCompleted, String::new())]);
    assert_eq!(f[0].severity, Severity::Warn);
    assert!(
        f[0].message
            .starts_with("the run ended 'interrupted'; 3 of 4 planned level(s) have a folder"),
        "{}",
        f[0].message
    );
    set_status("failed");
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(f[0].severity, Severity::Fail);
}

#[test]
fn reads_that_find_no_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    // Level 2 (8000 events, 112000 reads): 99 % of them empty, as with
    // --table-size=5000000 against 50K-row tables; level 3: 0.5 % (a warning).
    for (level, empty_pct) in [(2, 99.0), (3, 0.5)] {
        edit_result(&dir.join(format!("level-000{level}")), |v| {
            let reads = v["final"]["counters"]["reads"].as_u64().unwrap();
            let empty = (reads as f64 * empty_pct / 100.0) as u64;
            v["final"]["counters"]["empty_reads"] = empty.into();
            v["final"]["counters"]["rows"] = (reads - empty).into();
        });
    }
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![
            (CheckKind::EmptyReads, "level-0002 (2 users)".into()),
            (CheckKind::EmptyReads, "level-0003 (4 users)".into()),
        ]
    );
    assert_eq!(f[0].severity, Severity::Fail);
    assert_eq!((f[0].value, f[0].threshold), (Some(99.0), Some(1.0)));
    assert!(
        f[0].message.starts_with(
            "110880 of 112000 reads (99.00 %, above 1 %) returned no row (0.01 rows per read)"
        ),
        "{}",
        f[0].message
    );
    assert_eq!(f[1].severity, Severity::Warn);
    // Workloads that may read nothing at times are not checked.
    let path = dir.join("run.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("oltp_read_write", "tpcc")).unwrap();
    for l in 1..=4 {
        edit_result(&dir.join(format!("level-000{l}")), |v| {
            v["test"] = "tpcc".into();
        });
    }
    assert!(run_checks(&RunData::read(&dir).unwrap()).is_empty());
}

#[test]
fn data_smaller_than_the_options_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    // Level 1: --tables=400 against 4 tables; level 3: --table-size=5000000 against
    // 50K-row tables.
    set_level_data(&dir.join("level-0001"), |d| {
        *d = Some(table_data(400, 10_000, &[10_000; 4]));
    });
    set_level_data(&dir.join("level-0003"), |d| {
        *d = Some(table_data(4, 5_000_000, &[50_000, 50_000, 49_990, 50_000]));
    });
    // A level whose tables could not be read is not judged.
    set_level_data(&dir.join("level-0004"), |d| {
        *d = Some(bmk_results::results_dir::TableData {
            error: Some("Access denied".into()),
            ..Default::default()
        });
    });
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![
            (
                CheckKind::DataSmallerThanClaimed,
                "level-0001 (1 user)".into()
            ),
            (
                CheckKind::DataSmallerThanClaimed,
                "level-0003 (4 users)".into()
            ),
        ]
    );
    assert_eq!((f[0].value, f[0].threshold), (Some(396.0), Some(0.0)));
    assert!(
        f[0].message.starts_with("396 of the 400 tables the options claim (--tables=400) do not exist (found 4 sbtestN table(s))"),
        "{}",
        f[0].message
    );
    assert_eq!(
        (f[1].value, f[1].threshold),
        (Some(49_990.0), Some(5_000_000.0))
    );
    assert!(
        f[1].message.starts_with("4 table(s) hold fewer rows than --table-size=5000000 (sbtest1 max id 50000, sbtest2 max id 50000, sbtest3 max id 49990 and 1 more)"),
        "{}",
        f[1].message
    );
    assert!(f.iter().all(|f| f.severity == Severity::Fail));
}

#[test]
fn verdicts_of_a_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    edit_result(&dir.join("level-0002"), |v| {
        v["final"]["counters"]["errors"] = 100_000.into();
    });
    let run = RunData::read(&dir).unwrap();
    let report = bmk_analysis::report::Report::build(&run).unwrap();
    bmk_analysis::verdicts::write(&dir, &report.verdicts).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("checks.json")).unwrap()).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["check"], "errors");
    assert_eq!(v[0]["level"], 2);
    assert_eq!(v[0]["severity"], "fail");
    assert_eq!(v[0]["threshold"], 1.0);
    assert!(v[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("errors: level-0002 (2 users): 100000 errors against 8000 events"));
    let run_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(
        run_json["checks"],
        serde_json::json!({"fail": 1, "warn": 0})
    );
    assert!(report
        .text_summary()
        .contains("  FAIL errors: level-0002 (2 users): 100000 errors"));
}
