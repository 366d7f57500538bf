//! What data an OLTP level will read, as the server has it: before each level the kit
//! lists the benchmark's tables and reads the largest `id` of each, and the level's
//! `level.json` keeps it beside what the options claim (`--tables`, `--table-size`).
//! A run against fewer or smaller tables than its options say reads ids that do not
//! exist, which is fast and measures nothing; the report's data-size check compares
//! the two.
//!
//! Cheap by design, since it runs before every level: one catalog query lists the
//! tables (`information_schema.tables`, `pg_class`, `sqlite_master`), then `MAX(id)` of
//! the claimed tables that exist, [`BATCH`] tables per statement joined by `UNION ALL`.
//! `MAX` of the primary key is one index descent on InnoDB, PostgreSQL and SQLite, not a
//! scan, so a 500M-row table costs what a 1K-row one does; `COUNT(*)` would read every
//! row.

use bmk_results::results_dir::{TableData, TableSize};
use bmk_sql::{Connection, DriverConfig, DriverKind};

use crate::server;

/// Tables per `MAX(id)` statement: few statements for thousands of tables, each short
/// enough for any server's statement length limit.
const BATCH: usize = 100;

/// The tables and rows an OLTP workload's options claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataClaim {
    /// The tables' name prefix (`--table-name`, `sbtest` by default).
    pub prefix: String,
    /// `--tables`.
    pub tables: u32,
    /// `--table-size`.
    pub table_size: u64,
}

/// Defaults of the OLTP workloads' `--tables` and `--table-size`.
const DEFAULT_TABLES: u32 = 1;
const DEFAULT_TABLE_SIZE: u64 = 10_000;

impl DataClaim {
    /// The claim of test `test` with options `get` (canonical `-` names), for the
    /// workloads that read the `sbtest` tables (the OLTP family and the select_random
    /// scripts); `None` for the others (TPC-C, dbSTRESS, system tests), whose data is
    /// shaped otherwise. An option that is not a number gives no claim rather than a
    /// wrong one.
    pub fn of(test: &str, get: &dyn Fn(&str) -> Option<String>) -> Option<DataClaim> {
        let base = test
            .rsplit('/')
            .next()
            .unwrap_or(test)
            .trim_end_matches(".lua");
        let oltp = base.starts_with("oltp_")
            || base.starts_with("OLTP_")
            || base.starts_with("select_random_");
        if !oltp {
            return None;
        }
        let tables = match get("tables") {
            Some(v) => v.trim().parse().ok()?,
            None => DEFAULT_TABLES,
        };
        let table_size = match get("table-size") {
            Some(v) => v.trim().parse().ok()?,
            None => DEFAULT_TABLE_SIZE,
        };
        Some(DataClaim {
            prefix: get("table-name")
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "sbtest".to_string()),
            tables,
            table_size,
        })
    }

    fn record(&self) -> TableData {
        TableData {
            table_prefix: self.prefix.clone(),
            tables_claimed: self.tables,
            table_size_claimed: self.table_size,
            ..TableData::default()
        }
    }
}

/// Reads the claimed tables on a connection of its own to `cfg`; a failure is
/// recorded in the result (`error`), never raised: the level runs either way, and
/// says for itself what went wrong.
pub fn read(cfg: &DriverConfig, claim: &DataClaim) -> TableData {
    match server::connect(cfg) {
        Ok(mut conn) => {
            let data = read_on(conn.as_mut(), cfg.kind, claim);
            conn.disconnect();
            data
        }
        Err(e) => TableData {
            error: Some(e.to_string()),
            ..claim.record()
        },
    }
}

/// Reads the claimed tables on `conn`.
pub fn read_on(conn: &mut dyn Connection, kind: DriverKind, claim: &DataClaim) -> TableData {
    let mut data = claim.record();
    match found(conn, kind, claim) {
        Ok(tables) => {
            data.tables_missing = claim.tables - tables.len() as u32;
            data.tables = tables;
        }
        Err(e) => data.error = Some(e),
    }
    data
}

/// Only names made of letters, digits and `_` are put into SQL; anything else (a
/// `--table-name` with a quote) is not read rather than quoted per dialect.
fn plain_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The claimed tables that exist, in table order, with their largest id.
fn found(
    conn: &mut dyn Connection,
    kind: DriverKind,
    claim: &DataClaim,
) -> Result<Vec<TableSize>, String> {
    if !plain_name(&claim.prefix) {
        return Err(format!(
            "table name prefix '{}' is not a plain identifier; not read",
            claim.prefix
        ));
    }
    // The prefix is a plain identifier: `_` is a LIKE wildcard, which only lets the
    // listing return more names, filtered exactly below.
    let list = match kind {
        DriverKind::Mysql => format!(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE '{}%'",
            claim.prefix
        ),
        DriverKind::Pgsql => format!(
            "SELECT relname FROM pg_class WHERE relkind IN ('r', 'p') AND pg_table_is_visible(oid) AND relname LIKE '{}%'",
            claim.prefix
        ),
        DriverKind::Sqlite => format!(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '{}%'",
            claim.prefix
        ),
    };
    let listed = server::query_table(conn, &list).map_err(|e| e.to_string())?;
    let names: std::collections::HashSet<String> = listed
        .rows
        .iter()
        .filter_map(|r| r.first().cloned().flatten())
        .collect();
    let present: Vec<(u32, String)> = (1..=claim.tables)
        .map(|n| (n, format!("{}{n}", claim.prefix)))
        .filter(|(_, name)| names.contains(name))
        .collect();
    let mut out = Vec::with_capacity(present.len());
    for batch in present.chunks(BATCH) {
        let sql = batch
            .iter()
            .map(|(n, name)| format!("SELECT {n}, MAX(id) FROM {name}"))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let t = server::query_table(conn, &sql).map_err(|e| e.to_string())?;
        let mut by_n: std::collections::HashMap<u32, Option<u64>> = t
            .rows
            .iter()
            .filter_map(|r| {
                let n = r.first()?.as_deref()?.parse().ok()?;
                let max = r.get(1).cloned().flatten().and_then(|v| v.parse().ok());
                Some((n, max))
            })
            .collect();
        for (n, name) in batch {
            out.push(TableSize {
                name: name.clone(),
                max_id: by_n.remove(n).flatten(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| pairs.iter().find(|p| p.0 == k).map(|p| p.1.to_string())
    }

    #[test]
    fn claims_of_oltp_workloads_only() {
        let c = DataClaim::of(
            "oltp_read_only",
            &opts(&[("tables", "4"), ("table-size", "50000")]),
        )
        .unwrap();
        assert_eq!(
            (c.prefix.as_str(), c.tables, c.table_size),
            ("sbtest", 4, 50_000)
        );
        let c = DataClaim::of("/x/OLTP_RO-point_selects_reconnect.lua", &opts(&[])).unwrap();
        assert_eq!((c.tables, c.table_size), (1, 10_000));
        let c = DataClaim::of("oltp_point_select", &opts(&[("table-name", "t")])).unwrap();
        assert_eq!(c.prefix, "t");
        assert_eq!(DataClaim::of("tpcc", &opts(&[])), None);
        assert_eq!(DataClaim::of("dbstress", &opts(&[])), None);
        assert_eq!(
            DataClaim::of("oltp_read_only", &opts(&[("tables", "x")])),
            None
        );
    }

    fn sqlite(dir: &std::path::Path) -> DriverConfig {
        let db = dir.join("t.db");
        let db = db.to_string_lossy().into_owned();
        server::driver_config(&|k| match k {
            "db-driver" => Some("sqlite".into()),
            "sqlite-db" => Some(db.clone()),
            _ => None,
        })
        .unwrap()
    }

    #[test]
    fn tables_missing_and_small_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = sqlite(dir.path());
        let mut conn = server::connect(&cfg).unwrap();
        conn.query("BEGIN").unwrap();
        for (t, rows) in [(1, 1000), (2, 20), (4, 0)] {
            conn.query(&format!(
                "CREATE TABLE sbtest{t} (id INTEGER PRIMARY KEY, k INTEGER)"
            ))
            .unwrap();
            conn.query(&format!(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows}) \
                 INSERT INTO sbtest{t} SELECT x, 0 FROM c WHERE x <= {rows}"
            ))
            .unwrap();
        }
        conn.query("CREATE TABLE sbtest_other (id INTEGER)")
            .unwrap();
        conn.query("COMMIT").unwrap();
        let claim = DataClaim {
            prefix: "sbtest".into(),
            tables: 5,
            table_size: 1000,
        };
        let d = read(&cfg, &claim);
        assert_eq!(d.error, None);
        assert_eq!((d.tables_claimed, d.table_size_claimed), (5, 1000));
        assert_eq!(d.tables_missing, 2);
        let got: Vec<(&str, Option<u64>)> = d
            .tables
            .iter()
            .map(|t| (t.name.as_str(), t.max_id))
            .collect();
        assert_eq!(
            got,
            [
                ("sbtest1", Some(1000)),
                ("sbtest2", Some(20)),
                ("sbtest4", None)
            ]
        );
    }

    #[test]
    fn more_tables_than_one_batch() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = sqlite(dir.path());
        let mut conn = server::connect(&cfg).unwrap();
        conn.query("BEGIN").unwrap();
        for t in 1..=(BATCH as u32 + 5) {
            conn.query(&format!("CREATE TABLE sbtest{t} (id INTEGER PRIMARY KEY)"))
                .unwrap();
            conn.query(&format!("INSERT INTO sbtest{t} VALUES ({t})"))
                .unwrap();
        }
        conn.query("COMMIT").unwrap();
        let claim = DataClaim {
            prefix: "sbtest".into(),
            tables: BATCH as u32 + 5,
            table_size: 1,
        };
        let d = read_on(conn.as_mut(), DriverKind::Sqlite, &claim);
        assert_eq!(d.tables_missing, 0);
        assert_eq!(d.tables.len(), BATCH + 5);
        assert_eq!(d.tables[BATCH + 4].max_id, Some(BATCH as u64 + 5));
    }

    #[test]
    fn an_unreadable_server_is_recorded_not_raised() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = sqlite(&dir.path().join("no/such/dir"));
        let d = read(
            &cfg,
            &DataClaim {
                prefix: "sbtest".into(),
                tables: 2,
                table_size: 10,
            },
        );
        assert!(d.error.is_some(), "{d:?}");
        let d = read(
            &sqlite(dir.path()),
            &DataClaim {
                prefix: "sb'test".into(),
                tables: 2,
                table_size: 10,
            },
        );
        assert!(d.error.unwrap().contains("not a plain identifier"));
    }
}
