//! The built-in dbSTRESS workload (`bmk dbstress`) on MariaDB and PostgreSQL:
//! prepare (10 000 objects x 2 sets, both load partitionings) → row counts and the
//! deterministic data → a 10 s RW1 run with 8 users (exact statement mix, no lock
//! conflicts with --anti-dead, HISTORY size unchanged) → the RO and RW10-UPD
//! scenarios → cleanup leaves nothing.

mod support;

use support::{stats, Db, Kind};

const SIZE: &str = "--obj-table-size=10000";
const SETS: &str = "--obj-tables=2";

fn count(db: &Db, table: &str) -> u64 {
    db.scalar(&format!("SELECT count(*) FROM {table}"))
        .parse()
        .unwrap()
}

/// The counts of the `dbSTRESS transactions:` block the run prints, by name.
fn dbstress_counts(stdout: &str) -> std::collections::BTreeMap<String, u64> {
    let block = stdout
        .split_once("dbSTRESS transactions:\n")
        .unwrap_or_else(|| panic!("no dbSTRESS block in\n{stdout}"))
        .1;
    block
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let (name, rest) = l.trim().split_once(':')?;
            let count = rest.split_whitespace().next()?.parse().ok()?;
            Some((name.to_string(), count))
        })
        .collect()
}

fn flow(kind: Kind, load: &[&str]) {
    let Some(db) = Db::new(kind) else { return };
    let mut prep = vec![SIZE, SETS];
    prep.extend_from_slice(load);
    db.bmk("dbstress", "prepare", &prep).ok();
    for n in 1..=2 {
        assert_eq!(count(&db, &format!("ZONE{n}")), 10);
        assert_eq!(count(&db, &format!("SECTION{n}")), 100);
        assert_eq!(count(&db, &format!("STAT{n}")), 1000);
        assert_eq!(count(&db, &format!("OBJECT{n}")), 10_000);
        assert_eq!(count(&db, &format!("HISTORY{n}")), 200_000);
        // every object exactly once, 20 history rows each
        let distinct = db.scalar(&format!("SELECT count(DISTINCT REF) FROM OBJECT{n}"));
        assert_eq!(distinct, "10000");
        let per_obj = db.scalar(&format!(
            "SELECT count(*) FROM (SELECT REF_OBJECT FROM HISTORY{n} GROUP BY REF_OBJECT \
             HAVING count(*) <> 20) t"
        ));
        assert_eq!(per_obj, "0");
    }
    if load.contains(&"--hpk=on") && kind == Kind::Mysql {
        let ddl = db.create_table_text("HISTORY1");
        assert!(ddl.contains("UNIQUE KEY `history_ref_idx`"), "{ddl}");
    }
    // deterministic values: object 123
    let row = db.column(
        "SELECT REF_SECTION FROM OBJECT1 WHERE REF = '0000000123' UNION ALL \
         SELECT CREATE_DATE FROM OBJECT1 WHERE REF = '0000000123'",
    );
    let row: Vec<&str> = row.iter().map(|s| s.trim_end()).collect();
    assert_eq!(row, vec!["23", "12/04/1923"]); // CHAR(12) is blank-padded on PostgreSQL
    let stat =
        db.scalar("SELECT REF_STAT FROM HISTORY2 WHERE REF_OBJECT = '0000000123' AND HORDER = 3");
    assert_eq!(stat, "153");

    // RW1 (the defaults): BEGIN, SEL1, SEL2, UPDATE, DELETE, INSERT, COMMIT.
    let run = db
        .bmk("dbstress", "run", &[SIZE, SETS, "--threads=8", "--time=10"])
        .ok();
    let st = stats(&run.stdout);
    assert!(st.transactions > 100, "{}", run.stdout);
    assert_eq!(st.ignored_errors, 0, "{}", run.stdout);
    assert_eq!(st.read, 2 * st.transactions, "{}", run.stdout);
    assert_eq!(st.write, 3 * st.transactions, "{}", run.stdout);
    assert_eq!(st.other, 2 * st.transactions, "{}", run.stdout);
    // Every committed transaction is read-write and ran each group once.
    let counts = dbstress_counts(&run.stdout);
    assert_eq!(counts["read_only"], 0, "{}", run.stdout);
    for group in ["read_write", "sel1", "sel2", "update", "delete_insert"] {
        assert_eq!(counts[group], st.transactions, "{group}\n{}", run.stdout);
    }
    for n in 1..=2 {
        assert_eq!(count(&db, &format!("HISTORY{n}")), 200_000);
    }

    // RO: SEL1 + SEL2 in autocommit.
    let run = db
        .bmk(
            "dbstress",
            "run",
            &[SIZE, SETS, "--threads=4", "--time=2", "--scenario=RO"],
        )
        .ok();
    let st = stats(&run.stdout);
    assert_eq!((st.write, st.other), (0, 0), "{}", run.stdout);
    assert_eq!(st.read, 2 * st.transactions);
    let counts = dbstress_counts(&run.stdout);
    assert_eq!(counts["read_only"], st.transactions, "{}", run.stdout);
    assert_eq!((counts["read_write"], counts["update"]), (0, 0));

    // RW10-UPD with xREF/xDEAD: one UPDATE every 10th transaction of each user.
    let run = db
        .bmk(
            "dbstress",
            "run",
            &[
                SIZE,
                SETS,
                "--threads=1",
                "--events=200",
                "--time=0",
                "--scenario=RW10-UPD-xDEAD-xREF",
            ],
        )
        .ok();
    let st = stats(&run.stdout);
    assert_eq!(st.write, 20, "{}", run.stdout);
    assert_eq!(st.read, 400);
    let counts = dbstress_counts(&run.stdout);
    assert_eq!((counts["read_only"], counts["read_write"]), (180, 20));
    assert_eq!((counts["update"], counts["delete_insert"]), (20, 0));

    db.bmk("dbstress", "cleanup", &[SIZE, SETS]).ok();
    assert!(db.tables().is_empty(), "{:?}", db.tables());
}

#[test]
fn dbstress_mysql_ordered_load() {
    flow(
        Kind::Mysql,
        &["--threads=3", "--ordered-load=on", "--hpk=on"],
    );
}

#[test]
fn dbstress_pgsql_normal_load() {
    flow(Kind::Pgsql, &["--threads=4"]);
}

#[test]
fn dbstress_sqlite_and_errors() {
    let db = Db::new(Kind::Sqlite).unwrap();
    let small = ["--obj-table-size=1000", "--obj-tables=1"];
    db.bmk("dbstress", "prepare", &small).ok();
    assert_eq!(count(&db, "HISTORY1"), 20_000);
    let mut a = small.to_vec();
    a.extend(["--threads=2", "--time=0", "--events=100"]);
    let run = db.bmk("dbstress", "run", &a).ok();
    let st = stats(&run.stdout);
    assert_eq!(st.transactions, 100);
    let counts = dbstress_counts(&run.stdout);
    assert_eq!(
        counts["read_only"] + counts["read_write"],
        100,
        "{}",
        run.stdout
    );
    assert_eq!(counts["sel1"], 100, "{}", run.stdout);
    let r = db.bmk("dbstress", "warmup", &small);
    assert_ne!(r.code, 0);
    assert!(format!("{}{}", r.stdout, r.stderr).contains("MySQL-only"));
    let mut b = small.to_vec();
    b.extend(["--threads=200", "--time=1"]);
    let r = db.bmk("dbstress", "run", &b);
    assert_ne!(r.code, 0);
    assert!(format!("{}{}", r.stdout, r.stderr).contains("--anti-dead needs"));
    let r = db.bmk("dbstress", "run", &["--scenario=RW1-BOGUS", "--time=1"]);
    assert_ne!(r.code, 0);
    db.bmk("dbstress", "cleanup", &small).ok();
    assert!(db.tables().is_empty());
}
