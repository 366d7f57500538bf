//! Every sanity check on a sweep that triggers it and on one that does not. The sweeps
//! carry the real MariaDB/PostgreSQL and /proc captures of `tests/data`; where a check
//! needs what a short capture cannot show (a restart, a saturated client, falling disk
//! reads, several databases), the real samples are edited as each test says.
mod support;

use bmk_analysis::checks::{run_checks, CheckKind, Finding};
use bmk_analysis::RunData;
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
    assert!(f[0].message.starts_with("2 stalled interval(s), below 50 % of the median 3200.0 TPS: at 5 s (300.0 TPS), 6 s (300.0 TPS)"), "{}", f[0].message);
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
fn table_groups(dir: &std::path::Path, share: [f64; 4]) {
    let text =
        std::fs::read_to_string(data_dir().join("pgsql/server/pg_stat_database.txt")).unwrap();
    let samples = bmk_report::capture::samples(&text);
    let first = bmk_report::capture::Table::parse(samples[0].body);
    let commit_col = first.column("xact_commit").unwrap();
    let name_col = first.column("datname").unwrap();
    let base: f64 = first.rows[0][commit_col]
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    let mut out = String::new();
    for s in &samples {
        let t = bmk_report::capture::Table::parse(s.body);
        let real: f64 = t.rows[0][commit_col].as_deref().unwrap().parse().unwrap();
        let mut copy = bmk_report::capture::Table {
            columns: t.columns.clone(),
            rows: Vec::new(),
        };
        for (i, k) in share.iter().enumerate() {
            let mut row = t.rows[0].clone();
            row[name_col] = Some(format!("sbtest{}", i + 1));
            row[commit_col] = Some(format!("{}", (base + (real - base) * k) as u64));
            copy.rows.push(row);
        }
        out.push_str(&bmk_report::capture::sample_header(s.at));
        out.push_str(&copy.to_text());
    }
    std::fs::write(dir.join("level-0001/server/pg_stat_database.txt"), out).unwrap();
}

#[test]
fn one_table_group_with_far_more_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "s", &USERS, &[], false, steady);
    table_groups(&dir, [1.0, 3.0, 1.1, 0.9]);
    let f = run_checks(&RunData::read(&dir).unwrap());
    assert_eq!(
        kinds(&f),
        vec![(CheckKind::UnfairTableGroups, "level-0001 (1 user)".into())]
    );
    assert!(
        f[0].message.starts_with("database sbtest2 got"),
        "{}",
        f[0].message
    );
    table_groups(&dir, [1.0, 1.2, 1.1, 0.9]);
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
        f[0].message.contains("% of the client's 2 cores"),
        "{}",
        f[0].message
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
