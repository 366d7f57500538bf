//! prepare: messages, schema and data of the OLTP tables on every driver, the load modes
//! (several loader connections per table), and warmup.

mod support;

use support::{Db, Kind};

fn is_groups(s: &str, groups: usize) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == groups
        && parts
            .iter()
            .all(|p| p.len() == 11 && p.bytes().all(|b| b.is_ascii_digit()))
}

fn check_data(db: &Db, table: &str, rows: u64) {
    let n: u64 = db
        .scalar(&format!("SELECT COUNT(*) FROM {table}"))
        .parse()
        .unwrap();
    assert_eq!(n, rows, "{table} rows");
    let distinct: u64 = db
        .scalar(&format!("SELECT COUNT(DISTINCT id) FROM {table}"))
        .parse()
        .unwrap();
    assert_eq!(distinct, rows, "{table} ids unique");
    assert_eq!(db.scalar(&format!("SELECT MIN(id) FROM {table}")), "1");
    assert_eq!(
        db.scalar(&format!("SELECT MAX(id) FROM {table}")),
        rows.to_string()
    );
    let kmin: u64 = db
        .scalar(&format!("SELECT MIN(k) FROM {table}"))
        .parse()
        .unwrap();
    let kmax: u64 = db
        .scalar(&format!("SELECT MAX(k) FROM {table}"))
        .parse()
        .unwrap();
    assert!(
        kmin >= 1 && kmax <= rows,
        "k in [1, {rows}]: {kmin}..{kmax}"
    );
    for c in db.column(&format!("SELECT c FROM {table} ORDER BY id LIMIT 50")) {
        assert_eq!(c.trim_end().len(), 119, "c length: {c:?}");
        assert!(is_groups(c.trim_end(), 10), "c format: {c:?}");
    }
    for pad in db.column(&format!("SELECT pad FROM {table} ORDER BY id LIMIT 50")) {
        assert_eq!(pad.trim_end().len(), 59, "pad length: {pad:?}");
        assert!(is_groups(pad.trim_end(), 5), "pad format: {pad:?}");
    }
    let distinct_c: u64 = db
        .scalar(&format!("SELECT COUNT(DISTINCT c) FROM {table}"))
        .parse()
        .unwrap();
    assert!(distinct_c > rows * 9 / 10, "c values are random");
}

fn check_prepare(kind: Kind, extra: &[&str]) -> Option<String> {
    let db = Db::new(kind)?;
    let mut args = vec!["--tables=3", "--table-size=2500"];
    args.extend_from_slice(extra);
    let out = db.bmk("oltp_read_write", "prepare", &args).ok();
    for n in 1..=3 {
        let t = format!("sbtest{n}");
        assert!(
            out.stdout.contains(&format!("Creating table '{t}'...")),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout
                .contains(&format!("Inserting 2500 records into '{t}'")),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout
                .contains(&format!("Creating a secondary index on '{t}'...")),
            "{}",
            out.stdout
        );
        check_data(&db, &t, 2500);
        let idx = db.indexes(&t);
        let kname = if kind == Kind::Mysql {
            "k_".to_string()
        } else {
            format!("k_{n}")
        };
        assert!(
            idx.iter().any(|i| i.starts_with(&kname)),
            "{t} indexes: {idx:?}"
        );
    }
    let tables = db.tables();
    assert_eq!(tables, vec!["sbtest1", "sbtest2", "sbtest3"]);
    let schema = db.create_table_text("sbtest1");
    match kind {
        Kind::Mysql => {
            assert!(schema.contains("AUTO_INCREMENT") || extra.contains(&"--auto-inc=off"));
            assert!(
                schema.contains("`c` char(120) NOT NULL DEFAULT ''"),
                "{schema}"
            );
            assert!(
                schema.contains("`pad` char(60) NOT NULL DEFAULT ''"),
                "{schema}"
            );
            assert!(schema.contains("PRIMARY KEY (`id`)"), "{schema}");
            assert!(schema.contains("KEY `k_1` (`k`)"), "{schema}");
            assert!(schema.contains("ENGINE=InnoDB"), "{schema}");
        }
        Kind::Sqlite => {
            assert!(schema.contains("id INTEGER"), "{schema}");
            assert!(schema.contains("PRIMARY KEY"), "{schema}");
            assert!(!schema.to_uppercase().contains("ENGINE"), "{schema}");
        }
        Kind::Pgsql => {
            assert!(schema.contains("c character"), "{schema}");
            assert!(schema.contains("pad character"), "{schema}");
        }
    }
    db.bmk("oltp_read_write", "cleanup", &args).ok();
    assert!(db.tables().is_empty());
    Some(out.stdout)
}

#[test]
fn prepare_sqlite() {
    check_prepare(Kind::Sqlite, &[]);
}

#[test]
fn prepare_sqlite_no_auto_inc() {
    check_prepare(Kind::Sqlite, &["--auto-inc=off"]);
}

#[test]
fn prepare_mysql_original() {
    check_prepare(Kind::Mysql, &["--threads=2", "--load-mode=original"]);
}

#[test]
fn prepare_mysql_parallel_loaders() {
    // 8 workers on 3 tables: 3, 3 and 2 loader connections per table.
    let out = check_prepare(Kind::Mysql, &["--threads=8", "--load-bulk-size=300"]);
    if let Some(out) = out {
        assert!(out.contains("3 loader connections, load mode parallel, 300 rows per chunk"));
        assert!(out.contains("2 loader connections, load mode parallel, 300 rows per chunk"));
    }
}

#[test]
fn prepare_mysql_parallel_ordered_explicit_ids() {
    check_prepare(
        Kind::Mysql,
        &[
            "--threads=7",
            "--load-mode=parallel_ordered",
            "--auto-inc=off",
            "--load-bulk-size=100",
        ],
    );
}

#[test]
fn prepare_mysql_parallel_explicit_ids() {
    check_prepare(
        Kind::Mysql,
        &["--threads=6", "--auto-inc=off", "--load-bulk-size=77"],
    );
}

#[test]
fn prepare_pgsql() {
    check_prepare(Kind::Pgsql, &["--threads=2"]);
}

#[test]
fn prepare_pgsql_parallel_loaders() {
    check_prepare(Kind::Pgsql, &["--threads=6", "--load-bulk-size=250"]);
}

#[test]
fn prepare_pgsql_ordered_explicit_ids() {
    check_prepare(
        Kind::Pgsql,
        &[
            "--threads=5",
            "--auto-inc=off",
            "--load-mode=parallel_ordered",
        ],
    );
}

#[test]
fn warmup_and_prewarm() {
    for kind in [Kind::Mysql, Kind::Sqlite, Kind::Pgsql] {
        let Some(db) = Db::new(kind) else { continue };
        let args = ["--tables=2", "--table-size=200", "--threads=2"];
        db.bmk("oltp_read_only", "prepare", &args).ok();
        for cmd in ["warmup", "prewarm"] {
            let out = db.bmk("oltp_read_only", cmd, &args).ok();
            assert!(
                out.stdout.contains("Preloading table sbtest1"),
                "{}",
                out.stdout
            );
            assert!(
                out.stdout.contains("Preloading table sbtest2"),
                "{}",
                out.stdout
            );
        }
        db.bmk("oltp_read_only", "cleanup", &args).ok();
    }
}

/// oltp_common's command code (schema, loaders, cleanup) is compiled by a state only
/// when a command first calls it: a worker of `run` never holds it. Its globals stay
/// what a script may override: prepare calls the script's own `create_table`.
const OVERRIDE_SCRIPT: &str = r#"
require("oltp_common")
function create_table(drv, con, n)
  print("OVERRIDE create_table " .. n)
  return builtin_create_table(drv, con, n)
end
function prepare_statements() prepare_point_selects() end
function event() execute_point_selects() end
local init = thread_init
function thread_init()
  init()
  print(string.format("WORKER %d holds the command code: %s", sysbench.tid,
    tostring(package.loaded.bmk_oltp_tables ~= nil)))
end
"#;

#[test]
fn a_run_worker_never_loads_the_command_code_and_prepare_calls_a_script_s_override() {
    let db = Db::new(Kind::Sqlite).expect("SQLite needs no server");
    let (_dir, script) = support::lua_script("override.lua", OVERRIDE_SCRIPT);
    let args = ["--tables=2", "--table-size=100", "--threads=2"];
    let out = db.bmk(&script, "prepare", &args).ok();
    for n in 1..=2 {
        assert!(
            out.stdout.contains(&format!(
                "OVERRIDE create_table {n}\nCreating table 'sbtest{n}'..."
            )),
            "{}",
            out.stdout
        );
        assert_eq!(db.scalar(&format!("SELECT COUNT(*) FROM sbtest{n}")), "100");
    }
    let run = db
        .bmk(
            &script,
            "run",
            &["--tables=2", "--threads=2", "--events=100"],
        )
        .ok();
    for tid in 0..2 {
        assert!(
            run.stdout
                .contains(&format!("WORKER {tid} holds the command code: false")),
            "{}",
            run.stdout
        );
    }
    assert_eq!(support::stats(&run.stdout).transactions, 100);
    let cleanup = db.bmk(&script, "cleanup", &args).ok();
    assert!(
        cleanup.stdout.contains("Dropping table 'sbtest2'..."),
        "{}",
        cleanup.stdout
    );
    assert!(db.tables().is_empty(), "{:?}", db.tables());
}

#[test]
fn prepare_oltp_insert_without_auto_inc_creates_empty_tables() {
    for kind in [Kind::Sqlite, Kind::Mysql, Kind::Pgsql] {
        let Some(db) = Db::new(kind) else { continue };
        let args = ["--tables=1", "--table-size=100", "--auto-inc=off"];
        db.bmk("oltp_insert", "prepare", &args).ok();
        assert_eq!(db.scalar("SELECT COUNT(*) FROM sbtest1"), "0");
        let run = db.bmk(
            "oltp_insert",
            "run",
            &["--tables=1", "--auto-inc=off", "--events=50"],
        );
        let run = run.ok();
        assert_eq!(support::stats(&run.stdout).write, 50);
        assert_eq!(db.scalar("SELECT COUNT(*) FROM sbtest1"), "50");
        db.bmk("oltp_insert", "cleanup", &args).ok();
    }
}

#[test]
fn a_failing_table_owner_does_not_hang_the_other_loaders() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    let args = ["--tables=2", "--table-size=300", "--threads=6"];
    db.bmk("oltp_read_write", "prepare", &args).ok();
    // The tables exist with rows: each owner fails; its co-loaders must give up too.
    let mut cmd = vec!["oltp_read_write".to_string()];
    cmd.extend(db.args());
    cmd.extend(args.iter().map(|s| s.to_string()));
    cmd.push("prepare".into());
    let mut child = std::process::Command::new(support::bmk_bin())
        .args(&cmd)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("prepare hung after its table owners failed");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(!status.success());
    // No coordination marker is left behind.
    let tmp = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".into());
    let prefix = format!("bmk-prepare-{}-", child.id());
    let left: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "markers left in {tmp}: {left:?}");
    db.bmk("oltp_read_write", "cleanup", &args).ok();
}

/// Extra columns whose template holds the characters the bulk text path (LOAD DATA /
/// COPY) must escape load the same values as INSERTs would, and after a load with
/// server-assigned ids the next AUTO_INCREMENT / SERIAL id follows the last row.
#[test]
fn prepare_extra_cols_escapes_and_next_id() {
    for kind in [Kind::Mysql, Kind::Pgsql, Kind::Sqlite] {
        let Some(db) = Db::new(kind) else { continue };
        let template = "a\tb\\c'd\"e#";
        let opt = format!("--extra-cols-default={template}");
        let args = [
            "--tables=1",
            "--table-size=300",
            "--threads=1",
            "--extra-cols=2",
            opt.as_str(),
        ];
        db.bmk("oltp_read_write", "prepare", &args).ok();
        check_data(&db, "sbtest1", 300);
        for col in ["col1", "col2"] {
            let v = db.column(&format!("SELECT {col} FROM sbtest1 ORDER BY id LIMIT 20"));
            for s in v {
                assert_eq!(s.len(), template.len(), "{kind:?} {col}: {s:?}");
                assert!(s.starts_with("a\tb\\c'd\"e"), "{kind:?} {col}: {s:?}");
                assert!(
                    s.as_bytes()[s.len() - 1].is_ascii_digit(),
                    "{kind:?}: {s:?}"
                );
            }
        }
        db.exec("INSERT INTO sbtest1 (k, c, pad) VALUES (1, 'x', 'y')");
        assert_eq!(db.scalar("SELECT MAX(id) FROM sbtest1"), "301", "{kind:?}");
        db.bmk("oltp_read_write", "cleanup", &args).ok();
    }
}

#[test]
fn prepare_loads_a_window_of_tables_at_a_time() {
    // One table at a time: table n+1 is created once table n has its k index.
    for kind in [Kind::Mysql, Kind::Pgsql] {
        let Some(out) = check_prepare(kind, &["--threads=3", "--load-tables-at-once=1"]) else {
            continue;
        };
        assert!(
            out.contains("Loading 1 table at a time (--load-tables-at-once)"),
            "{out}"
        );
        for n in 1..3 {
            let indexed = out
                .find(&format!("Creating a secondary index on 'sbtest{n}'..."))
                .unwrap();
            let next = out
                .find(&format!("Creating table 'sbtest{}'...", n + 1))
                .unwrap();
            assert!(indexed < next, "{out}");
        }
    }
    // Fewer workers than tables, and several loaders per table, take turns as well.
    check_prepare(Kind::Mysql, &["--threads=2", "--load-tables-at-once=2"]);
    check_prepare(Kind::Mysql, &["--threads=6", "--load-tables-at-once=1"]);
}

#[test]
fn prepare_checks_the_load_window() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let out = db.bmk(
        "oltp_read_write",
        "prepare",
        &["--tables=1", "--load-tables-at-once=-1"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    // A command's failure is on stdout, as sysbench prints it.
    assert!(
        out.stdout
            .contains("load_tables_at_once must be 0 (auto) or more"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_failed_table_does_not_hold_up_the_next_ones() {
    // sbtest1 exists with rows: its worker fails, the tables after it still get their
    // turn instead of waiting for it forever.
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    db.bmk(
        "oltp_read_write",
        "prepare",
        &["--tables=1", "--table-size=10"],
    )
    .ok();
    let out = db.bmk(
        "oltp_read_write",
        "prepare",
        &[
            "--tables=3",
            "--table-size=100",
            "--threads=3",
            "--load-tables-at-once=1",
        ],
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("table 'sbtest1' already exists and is not empty"),
        "{}",
        out.stdout
    );
    check_data(&db, "sbtest2", 100);
    check_data(&db, "sbtest3", 100);
}
