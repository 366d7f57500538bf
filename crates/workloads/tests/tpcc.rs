//! The built-in TPC-C workload (`bmk tpcc`) end to end on MariaDB and PostgreSQL:
//! prepare (1 warehouse x 2 table sets) → row counts per table → a 10 s run with 8
//! users (standard mix within tolerance, tpmC printed) → `check` passes every
//! consistency check → `--trx-debug=N` runs only that transaction → new_order
//! rollbacks are counted but are not errors → a broken invariant fails exactly its
//! check → cleanup leaves nothing. Plus option errors that need no server, and the
//! buckets of the latency histograms (`bmk_latency`, on SQLite).

mod support;

use std::collections::HashMap;

use support::{bmk, lua_script, stats, Db, Kind};

const SETS: u32 = 2;
const BASE: &[&str] = &["--scale=1", "--tables=2"];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = BASE.to_vec();
    v.extend_from_slice(extra);
    v
}

/// The per-type counts printed by `run` ("    new_order:   2219 (44.68%)"), plus
/// "rollbacks" and "tpmC".
fn summary(stdout: &str) -> HashMap<String, f64> {
    let mut m = HashMap::new();
    for l in stdout.lines() {
        let t = l.trim();
        if t.starts_with("TPC-C latency") {
            break;
        }
        if let Some(rest) = t.strip_prefix("tpmC:") {
            let v = rest.split_whitespace().next().unwrap().parse().unwrap();
            m.insert("tpmC".to_string(), v);
            continue;
        }
        let Some((name, rest)) = t.split_once(':') else {
            continue;
        };
        let name = match name {
            "new_order" | "payment" | "order_status" | "delivery" | "stock_level" | "purge" => name,
            "new_order rollbacks" => "rollbacks",
            _ => continue,
        };
        if let Some(v) = rest.split_whitespace().next().and_then(|n| n.parse().ok()) {
            m.insert(name.to_string(), v);
        }
    }
    m
}

/// The counts of the `TPC-C latency (ms):` table printed by `run`
/// ("    new_order:   2219   7.214  12.568  19.500  48.102").
fn latency_counts(stdout: &str) -> HashMap<String, f64> {
    let table = stdout
        .lines()
        .skip_while(|l| !l.starts_with("TPC-C latency (ms):"))
        .skip(1)
        .take_while(|l| l.starts_with("    "));
    table
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once(':')?;
            Some((
                name.to_string(),
                rest.split_whitespace().next()?.parse().ok()?,
            ))
        })
        .collect()
}

const TYPES: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

fn count(db: &Db, table: &str) -> u64 {
    db.scalar(&format!("SELECT count(*) FROM {table}"))
        .parse()
        .unwrap()
}

fn fk_count(db: &Db) -> u64 {
    let sql = match db.kind {
        Kind::Mysql => {
            "SELECT count(*) FROM information_schema.referential_constraints WHERE \
             constraint_schema = DATABASE()"
        }
        _ => "SELECT count(*) FROM pg_catalog.pg_constraint WHERE contype = 'f'",
    };
    db.scalar(sql).parse().unwrap()
}

fn check_lines(stdout: &str) -> (Vec<String>, usize) {
    let failed: Vec<String> = stdout
        .lines()
        .filter(|l| l.contains("FAILED!!!"))
        .map(str::to_string)
        .collect();
    let passed = stdout.lines().filter(|l| l.ends_with(": PASSED")).count();
    (failed, passed)
}

fn full_flow(kind: Kind) {
    let Some(db) = Db::new(kind) else { return };
    // PostgreSQL at REPEATABLE READ restarts most conflicting transactions; READ
    // COMMITTED keeps the short run busy enough for the mix statistics.
    let level = if kind == Kind::Pgsql {
        "--trx-level=RC"
    } else {
        "--trx-level=RR"
    };

    db.bmk("tpcc", "prepare", &args(&["--threads=2"])).ok();
    for n in 1..=SETS {
        assert_eq!(count(&db, &format!("warehouse{n}")), 1);
        assert_eq!(count(&db, &format!("district{n}")), 10);
        assert_eq!(count(&db, &format!("customer{n}")), 30_000);
        assert_eq!(count(&db, &format!("history{n}")), 30_000);
        assert_eq!(count(&db, &format!("orders{n}")), 30_000);
        assert_eq!(count(&db, &format!("new_orders{n}")), 9_000);
        assert_eq!(count(&db, &format!("stock{n}")), 100_000);
        assert_eq!(count(&db, &format!("item{n}")), 100_000);
        let ol = count(&db, &format!("order_line{n}"));
        assert!((290_000..=310_000).contains(&ol), "order_line{n}: {ol}");
        let olcnt: u64 = db
            .scalar(&format!("SELECT sum(o_ol_cnt) FROM orders{n}"))
            .parse()
            .unwrap();
        assert_eq!(ol, olcnt);
    }
    assert!(db.indexes("customer1").iter().any(|i| i == "idx_customer1"));
    assert_eq!(
        fk_count(&db),
        10 * SETS as u64,
        "--use-fk=1: 10 foreign keys per set"
    );

    // 10 s, 8 users, the standard mix.
    let run = db
        .bmk("tpcc", "run", &args(&["--threads=8", "--time=10", level]))
        .ok();
    let s = summary(&run.stdout);
    let total: f64 = TYPES.iter().map(|t| s[*t]).sum();
    assert!(total > 500.0, "too few transactions:\n{}", run.stdout);
    let expect = [45.0, 43.0, 4.0, 4.0, 4.0];
    let tol = [4.0, 4.0, 2.0, 2.0, 2.0];
    for (i, t) in TYPES.iter().enumerate() {
        let pct = 100.0 * s[*t] / total;
        assert!(
            (pct - expect[i]).abs() <= tol[i],
            "{t}: {pct:.2}% (expected {}%)\n{}",
            expect[i],
            run.stdout
        );
    }
    assert!(s["tpmC"] > 0.0, "{}", run.stdout);
    // Every completed transaction is timed once, under its type.
    let timed = latency_counts(&run.stdout);
    for t in TYPES {
        assert_eq!(timed.get(t), Some(&s[t]), "{t}\n{}", run.stdout);
    }
    let st = stats(&run.stdout);
    assert_eq!(st.transactions, total as u64, "{}", run.stdout);

    let chk = db.bmk("tpcc", "check", &args(&["--threads=2"])).ok();
    let (failed, passed) = check_lines(&chk.stdout);
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(passed, 10 * SETS as usize, "{}", chk.stdout);

    // --trx-debug=N runs only that transaction.
    for (i, t) in TYPES.iter().enumerate() {
        let dbg = format!("--trx-debug={}", i + 1);
        let r = db
            .bmk(
                "tpcc",
                "run",
                &args(&["--threads=2", "--time=1", level, &dbg]),
            )
            .ok();
        let s = summary(&r.stdout);
        assert!(s[*t] > 0.0, "{dbg}: no {t}\n{}", r.stdout);
        for other in TYPES.iter().filter(|o| *o != t) {
            assert_eq!(s[*other], 0.0, "{dbg} ran {other}\n{}", r.stdout);
        }
    }

    // One user, new_order only: about 1 % rollbacks, counted apart, no errors.
    let r = db
        .bmk(
            "tpcc",
            "run",
            &args(&["--threads=1", "--events=1000", "--time=0", "--trx-debug=1"]),
        )
        .ok();
    let s = summary(&r.stdout);
    let st = stats(&r.stdout);
    assert!(
        s["rollbacks"] >= 2.0,
        "rollbacks: {}\n{}",
        s["rollbacks"],
        r.stdout
    );
    assert!(
        s["rollbacks"] <= 50.0,
        "rollbacks: {}\n{}",
        s["rollbacks"],
        r.stdout
    );
    assert_eq!(st.ignored_errors, 0, "{}", r.stdout);
    assert_eq!(st.transactions, 1000);
    assert_eq!(s["new_order"], 1000.0);

    // Break check 5 only: drop the oldest undelivered order's new_orders row (ids
    // stay contiguous, the maximum is unchanged); every other check still passes.
    let min = db.scalar("SELECT min(no_o_id) FROM new_orders1 WHERE no_w_id = 1 AND no_d_id = 1");
    db.exec(&format!(
        "DELETE FROM new_orders1 WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = {min}"
    ));
    let chk = db.bmk("tpcc", "check", &args(&["--threads=2"]));
    assert_ne!(chk.code, 0, "check must fail\n{}", chk.stdout);
    let (failed, passed) = check_lines(&chk.stdout);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].starts_with("Check 5 ")
            && failed[0].contains("table set 1")
            && failed[0].contains("(1 offending)"),
        "{failed:?}"
    );
    assert_eq!(passed, 10 * SETS as usize - 1);

    db.bmk("tpcc", "cleanup", BASE).ok();
    assert!(db.tables().is_empty(), "{:?}", db.tables());
}

#[test]
fn tpcc_mysql_prepare_run_check_cleanup() {
    full_flow(Kind::Mysql);
}

#[test]
fn tpcc_pgsql_prepare_run_check_cleanup() {
    full_flow(Kind::Pgsql);
}

/// NULL schema variant, no foreign keys and the Percona quirks on PostgreSQL: the
/// data still passes every check after a run.
#[test]
fn tpcc_pgsql_null_nofk2_percona() {
    let Some(db) = Db::new(Kind::Pgsql) else {
        return;
    };
    let a = ["--scale=1", "--tables=1", "--force-null=1", "--use-fk=2"];
    db.bmk("tpcc", "prepare", &a).ok();
    assert!(!db
        .indexes("history1")
        .iter()
        .any(|i| i.starts_with("fkey_")));
    assert_eq!(fk_count(&db), 0);
    let nulls = db.scalar("SELECT count(*) FROM orders1 WHERE o_carrier_id IS NULL");
    assert_eq!(nulls, "9000");
    let mut r = a.to_vec();
    r.extend([
        "--threads=4",
        "--time=3",
        "--tpcc-compat=percona",
        "--trx-level=RC",
    ]);
    let run = db.bmk("tpcc", "run", &r).ok();
    assert!(
        run.stdout.contains("=> tpcc-compat: percona"),
        "{}",
        run.stdout
    );
    let chk = db.bmk("tpcc", "check", &a).ok();
    assert!(check_lines(&chk.stdout).0.is_empty(), "{}", chk.stdout);
    db.bmk("tpcc", "cleanup", &a).ok();
    assert!(db.tables().is_empty());
}

#[test]
fn tpcc_option_errors() {
    let sq = Db::new(Kind::Sqlite).unwrap();
    let r = sq.bmk("tpcc", "run", &["--force-primary=1", "--time=1"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("--force-primary=1 needs MySQL/MariaDB")
            || r.stdout.contains("--force-primary=1 needs MySQL/MariaDB"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    let r = sq.bmk("tpcc", "prepare", &["--use-fk=3"]);
    assert_ne!(r.code, 0);
    assert!(format!("{}{}", r.stdout, r.stderr).contains("--use-fk must be 0"));
    let help = bmk(&["tpcc".to_string(), "help".to_string()]).ok();
    for o in [
        "--use_fk",
        "--trx_debug",
        "--for_update",
        "--force_null",
        "--tpcc_compat",
    ] {
        assert!(help.stdout.contains(o), "{o}\n{}", help.stdout);
    }
}

/// SQLite: one loader, BEGIN IMMEDIATE write transactions, inline foreign keys; the
/// run keeps the data consistent.
#[test]
fn tpcc_sqlite_prepare_run_check_cleanup() {
    let db = Db::new(Kind::Sqlite).unwrap();
    let a = ["--scale=1", "--tables=1"];
    db.bmk("tpcc", "prepare", &a).ok();
    assert_eq!(count(&db, "new_orders1"), 9_000);
    let mut r = a.to_vec();
    r.extend(["--threads=4", "--time=3"]);
    let run = db.bmk("tpcc", "run", &r).ok();
    assert!(summary(&run.stdout)["new_order"] > 0.0, "{}", run.stdout);
    let chk = db.bmk("tpcc", "check", &a).ok();
    let (failed, passed) = check_lines(&chk.stdout);
    assert!(failed.is_empty(), "{failed:?}");
    assert_eq!(passed, 10);
    db.bmk("tpcc", "cleanup", &a).ok();
    assert!(db.tables().is_empty());
}

/// `bmk_latency`, the histograms behind the latency block: each time lands in the
/// bucket whose bound is the first at or above it, the workers' slots add up, and a
/// percentile is the bound of its bucket kept within the range.
const LATENCY_CHECK: &str = r#"
local latency = require("bmk_latency")
local hist = latency.set("latency_check", 2)
function prepare()
  local last = latency.BUCKETS - 1
  for i = 0, last do
    local b = latency.bound(i)
    assert(latency.bucket(b) == i, "at bound " .. i)
    assert(i == 0 or latency.bucket(b * 0.99999) == i, "below bound " .. i)
    assert(i == last or latency.bucket(b * 1.00001) == i + 1, "above bound " .. i)
  end
  assert(latency.bound(last) > 100000, "the last bound is above 100 s")
  assert(latency.bucket(1e9) == last and latency.bucket(1e-6) == 0, "out of range")
  for ms = 1, 100 do
    hist:record(3, 2, ms)
  end
  hist:record(0, 2, 0.5)
  local s = hist:summary(4, 2)
  assert(s.count == 101 and s.sum == 5050.5 and s.min == 0.5 and s.max == 100, "summary")
  assert(hist:summary(4, 1).count == 0, "another series")
  -- The 96th of 101 times is 95 ms: its bucket's bound, within 10 % above.
  local p95 = latency.percentile(s, 95)
  local p50 = latency.percentile(s, 50)
  assert(p95 >= 95 and p95 <= 100, "p95 " .. p95)
  assert(p50 >= 50 and p50 <= 55, "p50 " .. p50)
  assert(latency.percentile(s, 100) == 100, "p100")
  print("bmk_latency checked")
end
"#;

#[test]
fn latency_buckets_hold_each_time_up_to_their_bound() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let (_dir, script) = lua_script("latency_check.lua", LATENCY_CHECK);
    let run = db.bmk(&script, "prepare", &[]).ok();
    assert!(run.stdout.contains("bmk_latency checked"), "{}", run.stdout);
}
