//! The BMK-kit extended options: each one changes the schema, the data or the
//! statements the BMK kit describes for them.

mod support;

use support::{bmk, lua_script, stats, Db, Kind};

const FIXED_C: &str = "1234567890X-1234567890X-1234567890X-1234567890X-1234567890X-\
                       1234567890X-1234567890X-1234567890X-1234567890X-1234567890X";

/// The "DEBUG: <drv>: prepare: ..." and "query: ..." lines of a --db-debug run.
fn traced(stderr: &str, what: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("DEBUG: ")?;
            let (_, rest) = rest.split_once(": ")?;
            rest.strip_prefix(&format!("{what}: ")).map(str::to_string)
        })
        .collect()
}

#[test]
fn mysql_schema_options() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    let args = [
        "--table-name=bmkt",
        "--tables=2",
        "--table-size=1000",
        "--threads=2",
        "--extra-cols=2",
        "--extra-cols-type=VARCHAR(40)",
        "--extra-cols-options=NOT NULL DEFAULT 'x'",
        "--extra-cols-default=ab##@@",
        "--mysql-table-partitions=3",
        "--mysql-table-compression=zlib",
        "--rand-data=0",
    ];
    let out = db.bmk("oltp_read_write", "prepare", &args).ok();
    assert!(
        out.stdout.contains("Creating table 'bmkt1'..."),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("with 3 partitions"), "{}", out.stdout);
    assert_eq!(db.tables(), vec!["bmkt1", "bmkt2"]);
    let schema = db.create_table_text("bmkt1");
    assert!(
        schema.contains("`col1` varchar(40) NOT NULL DEFAULT 'x'"),
        "{schema}"
    );
    assert!(
        schema.contains("`col2` varchar(40) NOT NULL DEFAULT 'x'"),
        "{schema}"
    );
    assert!(!schema.contains("`col3`"), "{schema}");
    assert!(schema.contains("PAGE_COMPRESSED"), "{schema}");
    assert!(schema.contains("PARTITION BY RANGE (`id`)"), "{schema}");
    // size = 1000 / 3 + 1 = 334
    assert!(
        schema.contains("PARTITION `p1` VALUES LESS THAN (334)"),
        "{schema}"
    );
    assert!(
        schema.contains("PARTITION `p2` VALUES LESS THAN (668)"),
        "{schema}"
    );
    assert!(
        schema.contains("PARTITION `p00` VALUES LESS THAN MAXVALUE"),
        "{schema}"
    );
    assert_eq!(db.scalar("SELECT COUNT(*) FROM bmkt1"), "1000");
    for v in db.column("SELECT col1 FROM bmkt1 LIMIT 100") {
        let b = v.as_bytes();
        assert!(
            v.len() == 6
                && v.starts_with("ab")
                && b[2..4].iter().all(u8::is_ascii_digit)
                && b[4..6].iter().all(u8::is_ascii_lowercase),
            "{v:?}"
        );
    }
    // --rand-data=0: every c is the fixed template.
    assert_eq!(db.scalar("SELECT COUNT(DISTINCT c) FROM bmkt2"), "1");
    assert_eq!(db.scalar("SELECT c FROM bmkt2 LIMIT 1"), FIXED_C);
    let cleanup = db.bmk("oltp_read_write", "cleanup", &args).ok();
    assert!(cleanup.stdout.contains("Dropping table 'bmkt2'..."));
    assert!(db.tables().is_empty());
}

#[test]
fn mysql_secondary_and_no_secondary_index() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    let args = [
        "--table-size=100",
        "--secondary=on",
        "--create-secondary=off",
    ];
    db.bmk("oltp_read_only", "prepare", &args).ok();
    let schema = db.create_table_text("sbtest1");
    assert!(schema.contains("KEY `xid` (`id`)"), "{schema}");
    assert!(!schema.contains("PRIMARY KEY"), "{schema}");
    assert!(!schema.contains("k_1"), "{schema}");
    db.bmk("oltp_read_only", "cleanup", &args).ok();
}

#[test]
fn rand_data_and_extra_cols_sqlite_pgsql() {
    for kind in [Kind::Sqlite, Kind::Pgsql] {
        let Some(db) = Db::new(kind) else { continue };
        let args = [
            "--table-name=foo",
            "--table-size=300",
            "--rand-data=50",
            "--extra-cols=1",
            "--extra-cols-default=#-#",
        ];
        db.bmk("oltp_read_only", "prepare", &args).ok();
        assert_eq!(db.tables(), vec!["foo1"]);
        assert!(
            db.indexes("foo1").iter().any(|i| i == "foo_k_1"),
            "{:?}",
            db.indexes("foo1")
        );
        // 50%: floor(0.5 * 119) = 59 random characters, then the first 60 fixed ones.
        for c in db.column("SELECT c FROM foo1 LIMIT 20") {
            let c = c.trim_end();
            assert_eq!(c.len(), 119);
            assert_eq!(&c[59..], &FIXED_C[..60], "{c}");
        }
        for v in db.column("SELECT col1 FROM foo1 LIMIT 20") {
            let b = v.as_bytes();
            assert!(
                v.len() == 3 && b[0].is_ascii_digit() && b[2].is_ascii_digit(),
                "{v}"
            );
        }
        let run = db
            .bmk(
                "oltp_read_write",
                "run",
                &["--table-name=foo", "--table-size=300", "--events=20"],
            )
            .ok();
        assert_eq!(stats(&run.stdout).read, 20 * 14);
        db.bmk("oltp_read_only", "cleanup", &args).ok();
        assert!(db.tables().is_empty());
    }
}

#[test]
fn statement_options_change_the_sql() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    // A fixed seed for the rows and the run: with random ones, a range UPDATE finds no
    // row now and then (a few in a hundred runs), and counts as `other`, not `write`.
    let base = ["--table-name=st", "--table-size=500", "--rand-seed=7"];
    db.bmk("oltp_read_write", "prepare", &base).ok();
    let mut args = base.to_vec();
    args.extend([
        "--events=10",
        "--db-debug=on",
        "--select-star=id,k",
        "--mysql-query-hint=MAX_EXECUTION_TIME(1000)",
        "--by-secidx=on",
        "--update-range-size=5",
        "--extra-query-before=SELECT 1",
        "--extra-query-after=DO 2",
        "--mysql-session-options=SET SESSION sort_buffer_size=300000; SET @bmk_x=1",
    ]);
    let run = db.bmk("oltp_read_write", "run", &args).ok();
    let prepared = traced(&run.stderr, "prepare");
    let has = |sql: &str| prepared.iter().any(|p| p == sql);
    let h = "/*+ MAX_EXECUTION_TIME(1000) */";
    for want in [
        format!("SELECT {h} id,k FROM st1 WHERE k=?"),
        format!("SELECT {h} id,k FROM st1 WHERE k BETWEEN ? AND ?"),
        format!("SELECT {h} SUM(k) FROM st1 WHERE k BETWEEN ? AND ?"),
        format!("SELECT {h} id,k FROM st1 WHERE k BETWEEN ? AND ? ORDER BY c"),
        format!("SELECT {h} DISTINCT c FROM st1 WHERE k BETWEEN ? AND ? ORDER BY c"),
        format!("UPDATE {h} st1 SET k=k+1 WHERE id BETWEEN ? AND ?"),
        format!("UPDATE {h} st1 SET c=? WHERE k BETWEEN ? AND ?"),
        format!("DELETE {h} FROM st1 WHERE id=?"),
        format!("INSERT {h} INTO st1 (id, k, c, pad) VALUES (?, ?, ?, ?)"),
    ] {
        assert!(
            has(&want),
            "missing prepared statement {want:?} in {prepared:#?}"
        );
    }
    let queries = traced(&run.stderr, "query");
    assert!(
        queries
            .iter()
            .any(|q| q.trim() == "SET SESSION sort_buffer_size=300000"),
        "{queries:?}"
    );
    assert!(
        queries.iter().any(|q| q.trim() == "SET @bmk_x=1"),
        "{queries:?}"
    );
    assert_eq!(
        queries.iter().filter(|q| q.as_str() == "SELECT 1").count(),
        10
    );
    assert_eq!(queries.iter().filter(|q| q.as_str() == "DO 2").count(), 10);
    let s = stats(&run.stdout);
    // 14 reads + the extra SELECT; 4 writes; BEGIN, COMMIT and DO; and, counted as
    // sysbench counts thread_init's statements, the two session options.
    assert_eq!((s.read, s.write, s.other), (150, 40, 32), "{}", run.stdout);
    assert!(run
        .stdout
        .contains("=> Using Query HINT : MAX_EXECUTION_TIME(1000)"));
    assert!(run.stdout.contains("=> select-cols: id,k"));
    db.bmk("oltp_read_write", "cleanup", &base).ok();
}

#[test]
fn default_statements_are_the_stock_ones() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    db.bmk("oltp_read_write", "prepare", &["--table-size=100"])
        .ok();
    let run = db
        .bmk(
            "oltp_read_write",
            "run",
            &["--table-size=100", "--events=2", "--db-debug=on"],
        )
        .ok();
    let prepared = traced(&run.stderr, "prepare");
    for want in [
        "SELECT c FROM sbtest1 WHERE id=?",
        "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?",
        "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
        "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
        "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
        "UPDATE sbtest1 SET k=k+1 WHERE id=?",
        "UPDATE sbtest1 SET c=? WHERE id=?",
        "DELETE FROM sbtest1 WHERE id=?",
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
        "BEGIN",
        "COMMIT",
    ] {
        assert!(
            prepared.iter().any(|p| p == want),
            "missing {want:?} in {prepared:#?}"
        );
    }
    assert!(
        !run.stdout.contains("=> "),
        "no BMK start-up lines by default: {}",
        run.stdout
    );
}

#[test]
fn sleeps_slow_the_events_down() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    db.bmk("oltp_point_select", "prepare", &["--table-size=100"])
        .ok();
    let t0 = std::time::Instant::now();
    db.bmk(
        "oltp_point_select",
        "run",
        &[
            "--table-size=100",
            "--events=20",
            "--sleep-after-query=20000",
        ],
    )
    .ok();
    assert!(
        t0.elapsed().as_millis() >= 400,
        "20 × 20 ms of sleep-after-query"
    );
    let t0 = std::time::Instant::now();
    db.bmk(
        "oltp_write_only",
        "run",
        &[
            "--table-size=100",
            "--events=10",
            "--sleep-before-commit=50000",
        ],
    )
    .ok();
    assert!(
        t0.elapsed().as_millis() >= 500,
        "10 × 50 ms of sleep-before-commit"
    );
}

#[test]
fn bad_option_values_are_errors() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let r = db.bmk("oltp_read_only", "prepare", &["--rand-data=101"]);
    assert_ne!(r.code, 0);
    assert!(format!("{}{}", r.stdout, r.stderr).contains("rand_data must be in [0-100]"));
    let r = db.bmk("oltp_read_only", "prepare", &["--rand-loop=4"]);
    assert_ne!(r.code, 0);
    assert!(format!("{}{}", r.stdout, r.stderr).contains("rand_loop must be in [0-3]"));
    let r = db.bmk("oltp_read_only", "prepare", &["--load-mode=fast"]);
    assert_ne!(r.code, 0);
}

/// Prints, per worker, the ids get_id() produced.
const ID_SCRIPT: &str = r#"
require("oltp_common")
function prepare_statements() end
local lo, hi, n, prev, strides = math.huge, 0, 0, nil, 0
local mods = {}
function event()
  local id = get_id()
  if id < lo then lo = id end
  if id > hi then hi = id end
  if prev and (prev + 77777) % sysbench.opt.table_size == id % sysbench.opt.table_size then
    strides = strides + 1
  end
  prev = id
  mods[id % 250] = true
  n = n + 1
end
function thread_done()
  local m = 0
  for _ in pairs(mods) do m = m + 1 end
  print(string.format("IDS tid=%d min=%d max=%d n=%d strides=%d residues=%d",
    sysbench.tid, lo, hi, n, strides, m))
end
"#;

fn id_lines(db: &Db, script: &str, extra: &[&str]) -> Vec<(u64, u64, u64, u64, u64, u64)> {
    let mut args = vec![script.to_string()];
    args.extend(db.args());
    args.extend(["--table-size=1000", "--threads=4", "--time=1"].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("run".into());
    let out = bmk(&args).ok();
    let mut v: Vec<_> = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("IDS "))
        .map(|l| {
            let f: Vec<u64> = l
                .split_whitespace()
                .map(|kv| kv.split_once('=').unwrap().1.parse().unwrap())
                .collect();
            (f[0], f[1], f[2], f[3], f[4], f[5])
        })
        .collect();
    v.sort();
    assert_eq!(v.len(), 4, "{}", out.stdout);
    v
}

#[test]
fn rand_loop_generators() {
    let Some(db) = Db::new(Kind::Sqlite) else {
        return;
    };
    let (_dir, script) = lua_script("ids.lua", ID_SCRIPT);
    // 1 = chunk: 4 workers on 1 table get disjoint slices of 250 ids.
    for (tid, lo, hi, ..) in id_lines(&db, &script, &["--rand-loop=1"]) {
        assert!(
            lo > tid * 250 && hi <= (tid + 1) * 250,
            "tid {tid}: {lo}..{hi}"
        );
    }
    // 2 = shift: worker t only uses ids ≡ t+1 (mod 250).
    for (tid, _, _, _, _, residues) in id_lines(&db, &script, &["--rnd-loop=2"]) {
        assert_eq!(residues, 1, "tid {tid}");
    }
    // 3 = loop: a stride of 77777 from one id to the next.
    for (tid, _, _, n, strides, _) in id_lines(&db, &script, &["--rand-loop=3"]) {
        // (re-seeded every million ids)
        assert!(
            n - strides <= 1 + n / 1_000_000,
            "tid {tid}: {strides} strides in {n} ids"
        );
    }
    // 0 = default: the whole range.
    for (tid, lo, hi, ..) in id_lines(&db, &script, &[]) {
        assert!(lo < 100 && hi > 900, "tid {tid}: {lo}..{hi}");
    }
}

#[test]
fn reconnect_every_n_events_reprepares() {
    let Some(db) = Db::new(Kind::Mysql) else {
        return;
    };
    db.bmk("oltp_read_only", "prepare", &["--table-size=100"])
        .ok();
    let run = db
        .bmk(
            "oltp_read_only",
            "run",
            &[
                "--table-size=100",
                "--events=50",
                "--reconnect=10",
                "--db-debug=on",
            ],
        )
        .ok();
    assert_eq!(traced(&run.stderr, "reconnect").len(), 5, "{}", run.stderr);
    // 7 statements (BEGIN, COMMIT, 5 selects) prepared at start and after each reconnect.
    assert_eq!(traced(&run.stderr, "prepare").len(), 42);
    assert_eq!(stats(&run.stdout).read, 50 * 14);
    db.bmk("oltp_read_only", "cleanup", &[]).ok();
}

#[test]
fn bmk_create_then_prepare_loads_existing_tables() {
    for kind in [Kind::Sqlite, Kind::Mysql, Kind::Pgsql] {
        let Some(db) = Db::new(kind) else { continue };
        let args = ["--tables=2", "--table-size=400", "--threads=2"];
        let out = db.bmk("oltp_read_write", "create", &args).ok();
        assert!(
            out.stdout.contains("Creating table 'sbtest2'..."),
            "{}",
            out.stdout
        );
        assert_eq!(db.tables(), vec!["sbtest1", "sbtest2"]);
        assert_eq!(db.scalar("SELECT COUNT(*) FROM sbtest1"), "0");
        let out = db.bmk("oltp_read_write", "prepare", &args).ok();
        assert!(out.stdout.contains("exists and is empty"), "{}", out.stdout);
        assert_eq!(db.scalar("SELECT COUNT(*) FROM sbtest2"), "400");
        // A second prepare refuses to load a table twice.
        let again = db.bmk("oltp_read_write", "prepare", &args);
        assert_ne!(again.code, 0);
        assert!(
            format!("{}{}", again.stdout, again.stderr).contains("is not empty"),
            "{}{}",
            again.stdout,
            again.stderr
        );
        db.bmk("oltp_read_write", "cleanup", &args).ok();
        assert!(db.tables().is_empty());
    }
}
