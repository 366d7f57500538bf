//! A real warm-up, found: a MariaDB level that starts on a cold buffer pool reads its
//! pages from disk for its first seconds and runs slower until they are cached, and
//! the steady-state detection (MSER-5) of `bmk report` says where that warm-up ends.
//!
//! The data must take the disk longer than a report interval to read: 4 tables of 1M
//! rows (about 860 MB), in a buffer pool grown for them, emptied by shrinking the pool
//! to its minimum and growing it back (InnoDB evicts every page on the way down; its
//! files are opened with O_DIRECT, so the pages come back from the disk, not from the
//! OS page cache). The test changes the server's buffer pool, so it runs alone
//! (`.config/nextest.toml`) and puts the size back when it ends.

use std::time::{Duration, Instant};

use bmk_results::results_dir::read_intervals;
use bmk_sql::{Connection, DriverKind};

use crate::server_db::ServerDb;
use crate::util::Dir;

/// A number the server answers to `sql` (first column of the first row).
fn number(conn: &mut Box<dyn Connection>, sql: &str) -> f64 {
    let rs = conn
        .query(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or_else(|| panic!("{sql}: no result set"));
    rs.get_str(0, rs.nfields - 1)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{sql}: not a number"))
}

/// Sets the buffer pool size and waits until the server reports it (a resize runs in
/// the background).
fn resize_pool(conn: &mut Box<dyn Connection>, bytes: u64) {
    conn.query(&format!("SET GLOBAL innodb_buffer_pool_size = {bytes}"))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while number(conn, "SELECT @@innodb_buffer_pool_size") as u64 != bytes
        || !status_text(conn, "Innodb_buffer_pool_resize_status")
            .is_none_or(|s| s.is_empty() || s.contains("Completed"))
    {
        assert!(
            Instant::now() < deadline,
            "the pool never became {bytes} bytes"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn status_text(conn: &mut Box<dyn Connection>, name: &str) -> Option<String> {
    let rs = conn
        .query(&format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .ok()??;
    rs.get_str(0, 1)
}

/// Puts the pool back to its size before the test, whatever happens.
struct PoolBack {
    conn: Box<dyn Connection>,
    bytes: u64,
}

impl Drop for PoolBack {
    fn drop(&mut self) {
        let sql = format!("SET GLOBAL innodb_buffer_pool_size = {}", self.bytes);
        let _ = self.conn.query(&sql);
    }
}

#[test]
fn a_level_on_a_cold_buffer_pool_shows_a_warm_up_on_mariadb() {
    let Some(db) = ServerDb::new(DriverKind::Mysql) else {
        return;
    };
    let mut conn = db.conn();
    let before = number(&mut conn, "SELECT @@innodb_buffer_pool_size") as u64;
    let _back = PoolBack {
        conn: db.conn(),
        bytes: before,
    };
    let big = 1536 << 20;
    resize_pool(&mut conn, big);
    let dir = Dir::new();
    dir.write("bmk.toml", &db.target(false));
    dir.bmk()
        .args("kit prepare Prepare_1M_4tab-InnoDB 4 --target=db")
        .run_within(Duration::from_secs(300))
        .code(0);
    // Empty the pool: down to the smallest size, then back.
    resize_pool(&mut conn, 8 << 20);
    resize_pool(&mut conn, big);
    let cached = number(
        &mut conn,
        "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_data'",
    );
    assert!(cached < 2000.0, "{cached} pages still cached");
    dir.bmk()
        .args("kit run OLTP_RO_1M_4tab-uniform-p_sel1-notrx 4 40 --target=db --results-dir=cold --capture-interval=1")
        .run_within(Duration::from_secs(180))
        .code(0);
    dir.bmk()
        .arg("report")
        .arg(dir.join("cold"))
        .run_within(Duration::from_secs(60))
        .code(0);
    let steady: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cold/steady.json")).unwrap())
            .unwrap();
    let level = &steady[0];
    assert_eq!(level["verdict"], "steady", "{level:#}");
    let warmup = level["window"]["warmup_intervals"].as_u64().unwrap() as usize;
    assert!(warmup >= 2, "no warm-up found: {level:#}");
    // The intervals MSER-5 cut off ran slower than the window it kept: the pages came
    // from the disk.
    let lines = read_intervals(&dir.join("cold/level-0001/intervals.jsonl")).unwrap();
    let cut: f64 = lines[..warmup].iter().map(|l| l.record.tps).sum::<f64>() / warmup as f64;
    let window = level["window"]["figures"]["tps"].as_f64().unwrap();
    assert!(
        cut < 0.8 * window,
        "warm-up {cut:.0} TPS against the window's {window:.0}: {level:#}"
    );
}
