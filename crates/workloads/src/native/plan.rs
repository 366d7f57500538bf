//! What one event of a natively run OLTP workload does, decided once from the options:
//! the statement groups in event order, their counts, and the SQL of every statement.
//!
//! The plan is only made for the option combinations the native worker reproduces
//! exactly; anything else (a BMK-kit extension that prints start-up lines or changes
//! the per-event logic, the sync-file barrier, session options, reconnects) returns
//! `None` and the workload runs in Lua, where all of it lives.

use bmk_engine::options::OptionSet;
use bmk_sql::{classify, QueryKind};

/// The workloads the native worker can run.
const NATIVE: &[&str] = &[
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
];

/// One kind of statement of the stock OLTP workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StmtKind {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

impl StmtKind {
    /// Every kind, in declaration order (`kind as usize` indexes this).
    pub(crate) const ALL: [StmtKind; 9] = [
        StmtKind::PointSelect,
        StmtKind::SimpleRange,
        StmtKind::SumRange,
        StmtKind::OrderRange,
        StmtKind::DistinctRange,
        StmtKind::IndexUpdate,
        StmtKind::NonIndexUpdate,
        StmtKind::Delete,
        StmtKind::Insert,
    ];

    /// The statement's SQL for table `table`.
    fn sql(self, table: &str) -> String {
        match self {
            StmtKind::PointSelect => format!("SELECT c FROM {table} WHERE id=?"),
            StmtKind::SimpleRange => format!("SELECT c FROM {table} WHERE id BETWEEN ? AND ?"),
            StmtKind::SumRange => format!("SELECT SUM(k) FROM {table} WHERE id BETWEEN ? AND ?"),
            StmtKind::OrderRange => {
                format!("SELECT c FROM {table} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            StmtKind::DistinctRange => {
                format!("SELECT DISTINCT c FROM {table} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            StmtKind::IndexUpdate => format!("UPDATE {table} SET k=k+1 WHERE id=?"),
            StmtKind::NonIndexUpdate => format!("UPDATE {table} SET c=? WHERE id=?"),
            StmtKind::Delete => format!("DELETE FROM {table} WHERE id=?"),
            StmtKind::Insert => {
                format!("INSERT INTO {table} (id, k, c, pad) VALUES (?, ?, ?, ?)")
            }
        }
    }
}

/// A group of statements in an event: one table is drawn for the whole group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Group {
    /// `count` point selects.
    PointSelects(u32),
    /// `count` range selects of one kind, each `range_size` ids wide.
    Ranges(StmtKind, u32),
    /// `count` k updates.
    IndexUpdates(u32),
    /// `count` c updates.
    NonIndexUpdates(u32),
    /// `count` DELETE + INSERT pairs on the same id.
    DeleteInserts(u32),
    /// `count` DELETEs (oltp_delete).
    Deletes(u32),
}

/// Everything a native worker needs to know about its workload.
#[derive(Debug, Clone)]
pub(crate) struct OltpPlan {
    /// BEGIN ... COMMIT around the groups.
    pub transaction: bool,
    /// The groups of one event, in order.
    pub groups: Vec<Group>,
    /// Statement kinds prepared per table, in the order the Lua workload prepares them.
    pub prepared: Vec<StmtKind>,
    pub tables: u32,
    pub table_size: u32,
    pub range_size: i64,
    /// Table name prefix (`sbtest`).
    pub table_name: String,
}

impl OltpPlan {
    /// The plan for built-in workload `name`, or `None` when it must run in Lua.
    pub(crate) fn for_workload(name: &str, opts: &OptionSet) -> Option<OltpPlan> {
        if !NATIVE.contains(&name) || !plain_options(opts) {
            return None;
        }
        let count = |n: &str| opts.int(n, 0).clamp(0, u32::MAX as i64) as u32;
        let tables = opts.int("tables", 1);
        let table_size = opts.int("table_size", 10000);
        if tables < 1 || tables > u32::MAX as i64 || table_size > u32::MAX as i64 {
            return None;
        }
        let redshift = opts.string("pgsql_variant").as_deref() == Some("redshift");
        let ranges = opts.flag("range_selects");
        let delete_inserts = if redshift { 0 } else { count("delete_inserts") };
        let reads = |groups: &mut Vec<Group>| {
            groups.push(Group::PointSelects(count("point_selects")));
            if ranges {
                groups.push(Group::Ranges(StmtKind::SimpleRange, count("simple_ranges")));
                groups.push(Group::Ranges(StmtKind::SumRange, count("sum_ranges")));
                groups.push(Group::Ranges(StmtKind::OrderRange, count("order_ranges")));
                groups.push(Group::Ranges(
                    StmtKind::DistinctRange,
                    count("distinct_ranges"),
                ));
            }
        };
        let writes = |groups: &mut Vec<Group>| {
            groups.push(Group::IndexUpdates(count("index_updates")));
            groups.push(Group::NonIndexUpdates(count("non_index_updates")));
            groups.push(Group::DeleteInserts(delete_inserts));
        };
        let mut groups = Vec::new();
        let transaction = match name {
            "oltp_point_select" => {
                // One per event whatever --point-selects says (as the script does).
                groups.push(Group::PointSelects(1));
                false
            }
            "oltp_read_only" => {
                reads(&mut groups);
                true
            }
            "oltp_read_write" => {
                reads(&mut groups);
                writes(&mut groups);
                true
            }
            "oltp_write_only" => {
                writes(&mut groups);
                true
            }
            "oltp_update_index" => {
                groups.push(Group::IndexUpdates(count("index_updates")));
                false
            }
            "oltp_update_non_index" => {
                groups.push(Group::NonIndexUpdates(count("non_index_updates")));
                false
            }
            "oltp_delete" => {
                groups.push(Group::Deletes(1));
                false
            }
            _ => return None,
        } && !opts.flag("skip_trx");
        // The Lua workloads prepare every statement kind of the event (whatever its
        // count, even 0), so the native worker prepares the same set.
        let mut prepared = Vec::new();
        for g in &groups {
            let kinds: &[StmtKind] = match g {
                Group::PointSelects(_) => &[StmtKind::PointSelect],
                Group::Ranges(k, _) => std::slice::from_ref(k),
                Group::IndexUpdates(_) => &[StmtKind::IndexUpdate],
                Group::NonIndexUpdates(_) => &[StmtKind::NonIndexUpdate],
                Group::DeleteInserts(_) => &[StmtKind::Delete, StmtKind::Insert],
                Group::Deletes(_) => &[StmtKind::Delete],
            };
            prepared.extend_from_slice(kinds);
        }
        Some(OltpPlan {
            transaction,
            groups,
            prepared,
            tables: tables as u32,
            table_size: table_size.max(1) as u32,
            range_size: opts.int("range_size", 100),
            table_name: opts.string("table_name").unwrap_or_else(|| "sbtest".into()),
        })
    }

    /// SQL and read/write/other kind of statement `kind` on table number `n`.
    pub(crate) fn statement(&self, kind: StmtKind, n: u32) -> (String, QueryKind) {
        let sql = kind.sql(&format!("{}{n}", self.table_name));
        let class = classify(&sql);
        (sql, class)
    }
}

/// True when no option asks for behaviour that only the Lua workload implements (the
/// BMK-kit extensions that change statements, ids, data or print start-up lines, the
/// sync-file barrier, session options, reconnects) and the option checks of
/// `check_options` pass (otherwise Lua reports the error).
fn plain_options(opts: &OptionSet) -> bool {
    let empty = |n: &str| opts.string(n).unwrap_or_default().is_empty();
    let zero = |n: &str| opts.int(n, 0) == 0;
    let strings_empty = [
        "mysql_query_hint",
        "select_star",
        "extra_query_before",
        "extra_query_after",
        "mysql_session_options",
        "sync_file",
    ]
    .iter()
    .all(|n| empty(n));
    let numbers_zero = [
        "sleep_after_query",
        "sleep_before_commit",
        "update_range_size",
        "rand_loop",
        "rnd_loop",
        "reconnect",
    ]
    .iter()
    .all(|n| zero(n));
    let flags_off = [
        "by_secidx",
        "trx_retry",
        "opt_debug",
        "pin_tables",
        "mysql_check_charset",
    ]
    .iter()
    .all(|n| !opts.flag(n));
    let select_cols = opts.string("select_cols").unwrap_or_else(|| "c".into());
    let load_mode = opts
        .string("load_mode")
        .unwrap_or_else(|| "parallel".into());
    let session_env = std::env::var("MYSQL_SESSION_OPTIONS").unwrap_or_default();
    strings_empty
        && numbers_zero
        && flags_off
        && (select_cols == "c" || select_cols.is_empty())
        && opts.int("rand_data", 100) == 100
        && opts.int("rnd_data", 100) == 100
        && matches!(
            load_mode.as_str(),
            "original" | "parallel" | "parallel_ordered" | "ordered"
        )
        && session_env.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmk_engine::options::{OptKind, OptSpec};

    fn options(given: &[(&str, &str)]) -> OptionSet {
        let mut o = OptionSet::new();
        let spec = |n: &str, k: OptKind, d: &str| OptSpec::new(n, k, Some(d), "");
        o.declare([
            spec("tables", OptKind::Int, "1"),
            spec("table_size", OptKind::Int, "10000"),
            spec("range_size", OptKind::Int, "100"),
            spec("point_selects", OptKind::Int, "10"),
            spec("simple_ranges", OptKind::Int, "1"),
            spec("sum_ranges", OptKind::Int, "1"),
            spec("order_ranges", OptKind::Int, "1"),
            spec("distinct_ranges", OptKind::Int, "1"),
            spec("index_updates", OptKind::Int, "1"),
            spec("non_index_updates", OptKind::Int, "1"),
            spec("delete_inserts", OptKind::Int, "1"),
            spec("range_selects", OptKind::Bool, "on"),
            spec("skip_trx", OptKind::Bool, "off"),
            spec("pin_tables", OptKind::Bool, "off"),
            spec("table_name", OptKind::String, "sbtest"),
            spec("select_cols", OptKind::String, "c"),
            spec("pgsql_variant", OptKind::String, ""),
        ]);
        for (k, v) in given {
            o.set(k, v).unwrap();
        }
        o
    }

    #[test]
    fn read_write_defaults_are_the_stock_transaction() {
        let p = OltpPlan::for_workload("oltp_read_write", &options(&[])).unwrap();
        assert!(p.transaction);
        assert_eq!(
            p.groups,
            vec![
                Group::PointSelects(10),
                Group::Ranges(StmtKind::SimpleRange, 1),
                Group::Ranges(StmtKind::SumRange, 1),
                Group::Ranges(StmtKind::OrderRange, 1),
                Group::Ranges(StmtKind::DistinctRange, 1),
                Group::IndexUpdates(1),
                Group::NonIndexUpdates(1),
                Group::DeleteInserts(1),
            ]
        );
        assert_eq!(p.prepared.len(), 9);
        let (sql, kind) = p.statement(StmtKind::Insert, 3);
        assert_eq!(
            sql,
            "INSERT INTO sbtest3 (id, k, c, pad) VALUES (?, ?, ?, ?)"
        );
        assert_eq!(kind, QueryKind::Write);
    }

    #[test]
    fn options_change_the_plan() {
        let o = options(&[
            ("skip_trx", "on"),
            ("range_selects", "off"),
            ("tables", "4"),
        ]);
        let p = OltpPlan::for_workload("oltp_read_only", &o).unwrap();
        assert!(!p.transaction);
        assert_eq!(p.groups, vec![Group::PointSelects(10)]);
        assert_eq!(p.tables, 4);
        let o = options(&[("pgsql_variant", "redshift")]);
        let p = OltpPlan::for_workload("oltp_write_only", &o).unwrap();
        assert_eq!(p.groups[2], Group::DeleteInserts(0));
    }

    #[test]
    fn point_select_runs_one_select_whatever_point_selects_says() {
        let o = options(&[("point_selects", "5")]);
        let p = OltpPlan::for_workload("oltp_point_select", &o).unwrap();
        assert_eq!(p.groups, vec![Group::PointSelects(1)]);
    }

    #[test]
    fn extensions_and_other_workloads_stay_in_lua() {
        assert!(OltpPlan::for_workload("oltp_insert", &options(&[])).is_none());
        assert!(OltpPlan::for_workload("bulk_insert", &options(&[])).is_none());
        let pinned = options(&[("pin_tables", "on")]);
        assert!(OltpPlan::for_workload("oltp_point_select", &pinned).is_none());
        let cols = options(&[("select_cols", "*")]);
        assert!(OltpPlan::for_workload("oltp_point_select", &cols).is_none());
        let zero = options(&[("tables", "0")]);
        assert!(OltpPlan::for_workload("oltp_point_select", &zero).is_none());
    }
}
