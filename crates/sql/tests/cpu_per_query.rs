//! Client CPU per query of the MySQL driver (prepared point select: the crate path, the
//! hand-written fast path through `execute` and through `execute_into`, and client-side
//! emulation), for comparison with other clients. Ignored by default; run with
//! `cargo nextest run -p bmk-sql --cargo-profile release --test cpu_per_query
//! --run-ignored all --no-capture`. On a busy machine, count instructions instead:
//! `BMK_CPQ_N=2000 BMK_CPQ_CASE=execute_into valgrind --tool=callgrind
//! --collect-atstart=no --toggle-collect='*point_selects*' <test binary> --ignored`
//! (totals / 2000 = instructions per query).

mod support;

use bmk_testkit::require;

use std::time::Instant;

use bmk_sql::{Connection, ResultSet, StatementId, Value};
use support::{exec, MysqlTestDb};

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// `n` prepared point selects; the measured loop (kept out of line for callgrind).
#[inline(never)]
fn point_selects(con: &mut dyn Connection, st: StatementId, into: bool, n: i64) -> ResultSet {
    let mut rs = ResultSet::default();
    for i in 0..n {
        let id = i % 10_000 + 1;
        if into {
            assert!(con.execute_into(st, &[Value::Int(id)], &mut rs).unwrap());
        } else {
            rs = con.execute(st, &[Value::Int(id)]).unwrap().unwrap();
        }
        assert_eq!(rs.nrows(), 1);
    }
    rs
}

#[test]
#[ignore]
fn prepared_point_select_cpu() {
    let db = require!(MysqlTestDb::create());
    let mut setup = db.connect(&[]);
    exec(
        &mut *setup,
        "CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))",
    );
    setup
        .bulk_insert_init("INSERT INTO sbtest1 VALUES")
        .unwrap();
    for i in 1..=10_000 {
        setup
            .bulk_insert_next(&format!("({i},{i},'{:0>120}','{:0>60}')", i, i))
            .unwrap();
    }
    setup.bulk_insert_done().unwrap();
    // BMK_CPQ_N: fewer queries, e.g. under
    // `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*point_selects*'`.
    let n: i64 = std::env::var("BMK_CPQ_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    // (label, ps-mode, fast path, reuse one result set through execute_into)
    let cases = [
        ("crate path, execute", "auto", false, false),
        ("fast path, execute", "auto", true, false),
        ("fast path, execute_into", "auto", true, true),
        ("emulated, execute", "disable", true, false),
    ];
    let only = std::env::var("BMK_CPQ_CASE").ok(); // run only the cases matching this
    for (label, mode, fast, into) in cases {
        if only.as_deref().is_some_and(|o| !label.contains(o)) {
            continue;
        }
        std::env::set_var("BMK_MYSQL_FASTPATH", if fast { "1" } else { "0" });
        let mut con = db.connect(&[("db-ps-mode", mode)]);
        std::env::remove_var("BMK_MYSQL_FASTPATH");
        let st = con.prepare("SELECT c FROM sbtest1 WHERE id=?").unwrap();
        let (c0, t0) = (cpu_seconds(), Instant::now());
        let rs = point_selects(&mut *con, st, into, n);
        let (cpu, wall) = (cpu_seconds() - c0, t0.elapsed().as_secs_f64());
        assert_eq!(rs.get(0, 0).map(<[u8]>::len), Some(120));
        eprintln!(
            "ps-mode={mode}, {label}: {:.2} us client CPU/query, {:.2} us wall/query",
            cpu / n as f64 * 1e6,
            wall / n as f64 * 1e6
        );
    }
}
