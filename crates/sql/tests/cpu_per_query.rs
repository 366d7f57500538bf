//! Client CPU per query of the MySQL driver (prepared point select, server-side and
//! emulated), for comparison with other clients. Ignored by default; run with
//! `cargo nextest run -p bmk-sql --test cpu_per_query --run-ignored all --no-capture`.

mod support;

use std::time::Instant;

use bmk_sql::Value;
use support::{exec, MysqlTestDb};

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
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
    const N: i64 = 20_000;
    for mode in ["auto", "disable"] {
        let mut con = db.connect(&[("db-ps-mode", mode)]);
        let st = con.prepare("SELECT c FROM sbtest1 WHERE id=?").unwrap();
        let (c0, t0) = (cpu_seconds(), Instant::now());
        for i in 0..N {
            let rs = con
                .execute(st, &[Value::Int(i % 10_000 + 1)])
                .unwrap()
                .unwrap();
            assert_eq!(rs.nrows(), 1);
        }
        let (cpu, wall) = (cpu_seconds() - c0, t0.elapsed().as_secs_f64());
        eprintln!(
            "ps-mode={mode}: {:.2} us client CPU/query, {:.2} us wall/query",
            cpu / N as f64 * 1e6,
            wall / N as f64 * 1e6
        );
    }
}
