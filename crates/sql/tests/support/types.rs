//! Scenarios shared by the three drivers' tests: every bind type with NULLs, emulated
//! vs server-side prepared statements, and a 1 M row bulk insert.

use bmk_sql::{Connection, DriverKind, ResultSet, RowSource, Value};

use super::{exec, scalar};

const VC: &str = "it's a \"q\" \\ back\\slash; -- ünï ?";

/// Rows of a result set as owned text.
pub fn rows(rs: &ResultSet) -> Vec<Vec<Option<String>>> {
    rs.rows()
        .map(|r| {
            r.into_iter()
                .map(|c| c.map(|b| String::from_utf8_lossy(b).into_owned()))
                .collect()
        })
        .collect()
}

fn create_sql(kind: DriverKind, table: &str) -> String {
    match kind {
        DriverKind::Pgsql => format!(
            "CREATE TABLE {table} (id INT PRIMARY KEY, ti SMALLINT, si SMALLINT, i INT, bi BIGINT, \
             f REAL, d DOUBLE PRECISION, tm TIME, dt DATE, dtm TIMESTAMP, ts TIMESTAMP, \
             c CHAR(10), vc VARCHAR(60))"
        ),
        _ => format!(
            "CREATE TABLE {table} (id INT PRIMARY KEY, ti TINYINT, si SMALLINT, i INT, bi BIGINT, \
             f FLOAT, d DOUBLE, tm TIME, dt DATE, dtm DATETIME, ts TIMESTAMP NULL, \
             c CHAR(10), vc VARCHAR(60))"
        ),
    }
}

/// Insert one row of every type and one of NULLs through a prepared statement, then
/// read both back through a prepared statement and a text query.
pub fn round_trip(con: &mut dyn Connection, kind: DriverKind, mode: &str) {
    let table = format!("bt_{mode}");
    exec(con, &create_sql(kind, &table));
    let ins = con
        .prepare(&format!(
            "INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))
        .unwrap();
    let full = [
        Value::Int(1),
        Value::Int(127),
        Value::Int(-32768),
        Value::Int(2147483647),
        Value::Int(i64::MIN),
        Value::Float(1.5),
        Value::Double(12345.625),
        Value::from("12:34:56"),
        Value::from("2024-02-29"),
        Value::from("2024-02-29 23:59:58"),
        Value::from("2024-01-01 00:00:01"),
        Value::from("abc"),
        Value::from(VC),
    ];
    con.execute(ins, &full).unwrap_or_else(|e| panic!("{e}"));
    let mut nulls = vec![Value::Int(2)];
    nulls.resize(13, Value::Null);
    con.execute(ins, &nulls).unwrap_or_else(|e| panic!("{e}"));

    let char_val = if kind == DriverKind::Pgsql {
        "abc       "
    } else {
        "abc"
    };
    let expect_full: Vec<Option<String>> = [
        "1",
        "127",
        "-32768",
        "2147483647",
        "-9223372036854775808",
        "1.5",
        "12345.625",
        "12:34:56",
        "2024-02-29",
        "2024-02-29 23:59:58",
        "2024-01-01 00:00:01",
        char_val,
        VC,
    ]
    .iter()
    .map(|s| Some(s.to_string()))
    .collect();
    let mut expect_null = vec![Some("2".to_string())];
    expect_null.resize(13, None);

    let sel = con
        .prepare(&format!("SELECT * FROM {table} WHERE id = ?"))
        .unwrap();
    for (id, expect) in [(1, &expect_full), (2, &expect_null)] {
        let rs = con.execute(sel, &[Value::Int(id)]).unwrap().expect("rows");
        assert_eq!(rs.nfields, 13);
        assert_eq!(rs.columns[1], "ti");
        assert_eq!(
            &rows(&rs),
            &vec![expect.clone()],
            "prepared select, mode {mode}"
        );
        let rs = con
            .query(&format!("SELECT * FROM {table} WHERE id = {id}"))
            .unwrap()
            .expect("rows");
        assert_eq!(
            &rows(&rs),
            &vec![expect.clone()],
            "text select, mode {mode}"
        );
    }
    // No rows: a result set with zero rows, not None.
    let rs = con
        .execute(sel, &[Value::Int(99)])
        .unwrap()
        .expect("empty set");
    assert_eq!(rs.nrows(), 0);
    // Statements without a result set.
    let upd = con
        .prepare(&format!("UPDATE {table} SET i = ? WHERE id = ?"))
        .unwrap();
    assert!(con
        .execute(upd, &[Value::Int(5), Value::Int(2)])
        .unwrap()
        .is_none());
    assert_eq!(con.affected_rows(), 1);
}

/// The same inserts and selects through a server-side (`a`) and an emulated (`d`)
/// connection give identical rows.
pub fn same_rows(a: &mut dyn Connection, d: &mut dyn Connection) {
    exec(
        a,
        "CREATE TABLE sr (id INT PRIMARY KEY, s VARCHAR(100), n BIGINT, x DOUBLE PRECISION)",
    );
    let texts = [
        "plain",
        "'; DROP TABLE sr; --",
        "back\\slash\\",
        "new\nline\ttab",
        "dq\"sq'",
        "ünïcödé ?",
        "",
    ];
    for base in [0i64, 100] {
        let con: &mut dyn Connection = if base == 0 { &mut *a } else { &mut *d };
        let st = con
            .prepare("INSERT INTO sr (id, s, n, x) VALUES (?, ?, ?, ?)")
            .unwrap();
        for (i, t) in texts.iter().enumerate() {
            let i = i as i64;
            con.execute(
                st,
                &[
                    Value::Int(base + i),
                    Value::from(*t),
                    Value::Int(i * 1_000_000_007),
                    Value::Double(i as f64 / 4.0),
                ],
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        con.execute(
            st,
            &[Value::Int(base + 50), Value::Null, Value::Null, Value::Null],
        )
        .unwrap();
    }
    let q = "SELECT id % 100, s, n, x FROM sr WHERE id >= ? AND id < ? ORDER BY id";
    let sa = a.prepare(q).unwrap();
    let sd = d.prepare(q).unwrap();
    let ra = rows(
        &a.execute(sa, &[Value::Int(0), Value::Int(100)])
            .unwrap()
            .unwrap(),
    );
    let rd = rows(
        &d.execute(sd, &[Value::Int(100), Value::Int(200)])
            .unwrap()
            .unwrap(),
    );
    assert_eq!(ra.len(), texts.len() + 1);
    assert_eq!(ra, rd);
    // Both connections read the other's rows identically too.
    let ra2 = rows(
        &a.execute(sa, &[Value::Int(100), Value::Int(200)])
            .unwrap()
            .unwrap(),
    );
    let rd2 = rows(
        &d.execute(sd, &[Value::Int(0), Value::Int(100)])
            .unwrap()
            .unwrap(),
    );
    assert_eq!(ra2, rd2);
    assert_eq!(ra, ra2);
    for (i, t) in texts.iter().enumerate() {
        assert_eq!(ra[i][1].as_deref(), Some(*t));
    }
}

/// Bulk insert 1,000,000 rows and check the count.
pub fn bulk_million(con: &mut dyn Connection, table_suffix: &str) {
    exec(
        con,
        &format!("CREATE TABLE bulk (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(20) NOT NULL) {table_suffix}"),
    );
    let t = std::time::Instant::now();
    con.bulk_insert_init("INSERT INTO bulk (id, k, c) VALUES")
        .unwrap();
    let mut tuple = String::with_capacity(64);
    for i in 1..=1_000_000u32 {
        use std::fmt::Write as _;
        tuple.clear();
        let _ = write!(tuple, "({i},{},'{i:020}')", i % 1000);
        con.bulk_insert_next(&tuple)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    con.bulk_insert_done().unwrap();
    eprintln!("bulk insert of 1M rows: {:?}", t.elapsed());
    assert_eq!(
        scalar(con, "SELECT COUNT(*) FROM bulk").as_deref(),
        Some("1000000")
    );
    assert_eq!(
        scalar(con, "SELECT c FROM bulk WHERE id = 123456").as_deref(),
        Some("00000000000000123456")
    );
}

/// `load_text` on a connection that has the path: a table loaded from escaped
/// tab-separated rows, NULL included, counts one statement's rows.
pub fn load_text_rows(con: &mut dyn Connection) {
    exec(
        con,
        "CREATE TABLE loaded (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(20) NULL)",
    );
    // An empty load is how callers probe for the path: it must load nothing.
    assert_eq!(con.load_text("loaded", "id", b"").unwrap(), Some(0));
    let data = b"1\t10\ta\\tb\\\\c\n2\t20\t\\N\n3\t30\tline\\nbreak\n";
    assert_eq!(con.load_text("loaded", "id, k, c", data).unwrap(), Some(3));
    assert_eq!(
        scalar(con, "SELECT COUNT(*) FROM loaded").as_deref(),
        Some("3")
    );
    assert_eq!(
        scalar(con, "SELECT c FROM loaded WHERE id = 1").as_deref(),
        Some("a\tb\\c")
    );
    assert_eq!(scalar(con, "SELECT c FROM loaded WHERE id = 2"), None);
    assert_eq!(
        scalar(con, "SELECT c FROM loaded WHERE id = 3").as_deref(),
        Some("line\nbreak")
    );
    assert_eq!(
        scalar(con, "SELECT SUM(k) FROM loaded").as_deref(),
        Some("60")
    );
    // A duplicate key: PostgreSQL fails, MySQL's LOCAL load skips the row (which the
    // row count shows); never a silent fallback.
    match con.load_text("loaded", "id, k, c", b"1\t10\tdup\n") {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(n) => assert_eq!(n, Some(0)),
    }
}

/// Rows `1..=n` of the `insert_rows` test: a NULL in every 7th row's `c`, text with the
/// characters COPY and the binary protocol escape, a double.
struct Numbered {
    next: i64,
    last: i64,
}

impl RowSource for Numbered {
    fn next_row(&mut self, row: &mut [Value]) -> bool {
        if self.next > self.last {
            return false;
        }
        let i = self.next;
        self.next += 1;
        row[0] = Value::Int(i);
        row[1] = Value::Int(i % 1000);
        row[2] = if i % 7 == 0 {
            Value::Null
        } else {
            // Reuse the row's text buffer, as loaders do.
            let mut text = match std::mem::replace(&mut row[2], Value::Null) {
                Value::Text(t) => t,
                _ => Vec::new(),
            };
            text.clear();
            text.extend_from_slice(
                format!("r{i}\t'\\\n{}", "x".repeat((i % 250) as usize)).as_bytes(),
            );
            Value::Text(text)
        };
        row[3] = Value::Double(i as f64 / 4.0);
        true
    }
}

/// `insert_rows` loads every row intact, in one transaction, across several commands
/// or statements (40 000 rows, 5.6 MB: forty 1000-row INSERTs, or two bulk commands
/// of at most 4 MiB).
pub fn insert_rows_intact(con: &mut dyn Connection) {
    exec(
        con,
        "CREATE TABLE generated (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(300) NULL, d DOUBLE PRECISION NOT NULL)",
    );
    exec(con, "BEGIN");
    let mut rows = Numbered {
        next: 1,
        last: 40_000,
    };
    let n = con
        .insert_rows("generated", &["id", "k", "c", "d"], &mut rows)
        .unwrap();
    exec(con, "COMMIT");
    assert_eq!(n, 40_000);
    assert_eq!(
        scalar(con, "SELECT COUNT(*) FROM generated").as_deref(),
        Some("40000")
    );
    assert_eq!(
        scalar(con, "SELECT COUNT(*) FROM generated WHERE c IS NULL").as_deref(),
        Some("5714")
    );
    assert_eq!(
        scalar(con, "SELECT SUM(k) FROM generated").as_deref(),
        Some(&*(1..=40_000i64).map(|i| i % 1000).sum::<i64>().to_string())
    );
    assert_eq!(
        scalar(con, "SELECT c FROM generated WHERE id = 12345").as_deref(),
        Some(&*format!("r12345\t'\\\n{}", "x".repeat(95)))
    );
    assert_eq!(
        scalar(
            con,
            "SELECT COUNT(*) FROM generated WHERE id = 40000 AND d = 10000"
        )
        .as_deref(),
        Some("1")
    );
    // No rows: nothing to do, no error.
    let mut none = Numbered { next: 1, last: 0 };
    assert_eq!(
        con.insert_rows("generated", &["id", "k", "c", "d"], &mut none)
            .unwrap(),
        0
    );
    // A duplicate key fails the load.
    let mut dup = Numbered { next: 5, last: 5 };
    assert!(con
        .insert_rows("generated", &["id", "k", "c", "d"], &mut dup)
        .is_err());
}
