//! What one event of a natively run OLTP workload does, decided once from the options:
//! the statement groups in event order, their counts, and the SQL of every statement.
//!
//! The plan is only made when every workload option given is one the native worker
//! implements ([`NATIVE_OPTIONS`], an allow-list): any other option (a BMK-kit
//! extension that prints start-up lines or changes the per-event logic, the sync-file
//! barrier, session options, reconnects, and any option added to the scripts later)
//! makes the workload run in Lua, where all of it lives, and the reason is recorded.

use bmk_engine::options::OptionSet;

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
    /// The plan for built-in workload `name`, or why it must run in Lua.
    /// `script_options`: the canonical keys of the options the workload's script
    /// declares (the others are the engine's and the drivers', which both paths share).
    pub(crate) fn for_workload(
        name: &str,
        opts: &OptionSet,
        script_options: &[String],
    ) -> Result<OltpPlan, String> {
        if !NATIVE.contains(&name) {
            return Err(format!("{name} has no native worker"));
        }
        lua_only_option(opts, script_options).map_or(Ok(()), Err)?;
        let count = |n: &str| opts.int(n, 0).clamp(0, u32::MAX as i64) as u32;
        let tables = opts.int("tables", 1);
        let table_size = opts.int("table_size", 10000);
        if tables < 1 || tables > u32::MAX as i64 {
            return Err("--tables".into());
        }
        if table_size > u32::MAX as i64 {
            return Err("--table-size".into());
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
            _ => return Err(format!("{name} has no native worker")),
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
        Ok(OltpPlan {
            transaction,
            groups,
            prepared,
            tables: tables as u32,
            table_size: table_size.max(1) as u32,
            range_size: opts.int("range_size", 100),
            table_name: opts.string("table_name").unwrap_or_else(|| "sbtest".into()),
        })
    }

    /// SQL of statement `kind` on table number `n`.
    pub(crate) fn statement(&self, kind: StmtKind, n: u32) -> String {
        kind.sql(&format!("{}{n}", self.table_name))
    }
}

/// The workload options the native worker implements: those it reads (counts, sizes,
/// names, the range selects, `--skip-trx`, the Redshift variant) and those that only
/// `prepare` and `cleanup` read, which always run in Lua. An option that is not here
/// sends the run to Lua when it is given with another value than its default.
pub(crate) const NATIVE_OPTIONS: &[&str] = &[
    "tables",
    "table_size",
    "range_size",
    "point_selects",
    "simple_ranges",
    "sum_ranges",
    "order_ranges",
    "distinct_ranges",
    "index_updates",
    "non_index_updates",
    "delete_inserts",
    "range_selects",
    "skip_trx",
    "table_name",
    "pgsql_variant",
    "select_cols",
    "rand_data",
    "rnd_data",
    // Read by prepare and cleanup only.
    "auto_inc",
    "secondary",
    "create_secondary",
    "create_table_options",
    "mysql_storage_engine",
    "mysql_table_options",
    "mysql_table_compression",
    "mysql_table_partitions",
    "load_mode",
    "load_bulk_size",
    "load_tables_at_once",
];

/// The first reason the workload must run in Lua, or `None`: a given workload option
/// that is not in [`NATIVE_OPTIONS`] (unless given at its default), a value of an
/// allowed one that the native worker does not reproduce, or session options from the
/// environment (`MYSQL_SESSION_OPTIONS`).
fn lua_only_option(opts: &OptionSet, script_options: &[String]) -> Option<String> {
    let shown = |key: &str| format!("--{}", key.replace('_', "-"));
    for (key, raw) in opts.given() {
        if !script_options.iter().any(|k| k == key) || NATIVE_OPTIONS.contains(&key) {
            continue;
        }
        let at_default = opts.spec(key).is_some_and(|spec| {
            let default = spec.default.as_deref().map(|d| spec.parse(d));
            matches!(default, Some(Ok(d)) if spec.parse(raw).is_ok_and(|v| v == d))
        });
        if !at_default {
            return Some(shown(key));
        }
    }
    let select_cols = opts.string("select_cols").unwrap_or_else(|| "c".into());
    if !(select_cols == "c" || select_cols.is_empty()) {
        return Some(shown("select_cols"));
    }
    for n in ["rand_data", "rnd_data"] {
        if opts.int(n, 100) != 100 {
            return Some(shown(n));
        }
    }
    let load_mode = opts
        .string("load_mode")
        .unwrap_or_else(|| "parallel".into());
    if !matches!(
        load_mode.as_str(),
        "original" | "parallel" | "parallel_ordered" | "ordered"
    ) {
        // The Lua workload's option check reports the bad value.
        return Some(shown("load_mode"));
    }
    if !std::env::var("MYSQL_SESSION_OPTIONS")
        .unwrap_or_default()
        .is_empty()
    {
        return Some("MYSQL_SESSION_OPTIONS".into());
    }
    None
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
            spec("sleep_after_query", OptKind::Int, "0"),
        ]);
        for (k, v) in given {
            o.set(k, v).unwrap();
        }
        o
    }

    fn keys() -> Vec<String> {
        options(&[]).specs().map(|s| s.key()).collect()
    }

    #[test]
    fn read_write_defaults_are_the_stock_transaction() {
        let p = OltpPlan::for_workload("oltp_read_write", &options(&[]), &keys()).unwrap();
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
        assert_eq!(
            p.statement(StmtKind::Insert, 3),
            "INSERT INTO sbtest3 (id, k, c, pad) VALUES (?, ?, ?, ?)"
        );
    }

    #[test]
    fn options_change_the_plan() {
        let o = options(&[
            ("skip_trx", "on"),
            ("range_selects", "off"),
            ("tables", "4"),
        ]);
        let p = OltpPlan::for_workload("oltp_read_only", &o, &keys()).unwrap();
        assert!(!p.transaction);
        assert_eq!(p.groups, vec![Group::PointSelects(10)]);
        assert_eq!(p.tables, 4);
        let o = options(&[("pgsql_variant", "redshift")]);
        let p = OltpPlan::for_workload("oltp_write_only", &o, &keys()).unwrap();
        assert_eq!(p.groups[2], Group::DeleteInserts(0));
    }

    #[test]
    fn point_select_runs_one_select_whatever_point_selects_says() {
        let o = options(&[("point_selects", "5")]);
        let p = OltpPlan::for_workload("oltp_point_select", &o, &keys()).unwrap();
        assert_eq!(p.groups, vec![Group::PointSelects(1)]);
    }

    #[test]
    fn extensions_and_other_workloads_stay_in_lua() {
        assert!(OltpPlan::for_workload("oltp_insert", &options(&[]), &keys()).is_err());
        assert!(OltpPlan::for_workload("bulk_insert", &options(&[]), &keys()).is_err());
        let pinned = options(&[("pin_tables", "on")]);
        assert!(OltpPlan::for_workload("oltp_point_select", &pinned, &keys()).is_err());
        let cols = options(&[("select_cols", "*")]);
        assert!(OltpPlan::for_workload("oltp_point_select", &cols, &keys()).is_err());
        let zero = options(&[("tables", "0")]);
        assert!(OltpPlan::for_workload("oltp_point_select", &zero, &keys()).is_err());
    }

    /// The allow-list: an option the native worker does not know runs the workload
    /// in Lua and is named as the reason; given at its default, it does not.
    #[test]
    fn options_off_the_allow_list_name_the_reason() {
        let sleep = options(&[("sleep_after_query", "5")]);
        let why = OltpPlan::for_workload("oltp_read_only", &sleep, &keys()).unwrap_err();
        assert_eq!(why, "--sleep-after-query");
        let pinned = options(&[("pin_tables", "on")]);
        let why = OltpPlan::for_workload("oltp_read_only", &pinned, &keys()).unwrap_err();
        assert_eq!(why, "--pin-tables");
        let at_default = options(&[("sleep_after_query", "0"), ("tables", "3")]);
        assert!(OltpPlan::for_workload("oltp_read_only", &at_default, &keys()).is_ok());
        // Options the script does not declare (the engine's, the drivers') are the
        // same on both paths.
        let mut general = options(&[]);
        general.set("threads", "8").unwrap();
        assert!(OltpPlan::for_workload("oltp_read_only", &general, &keys()).is_ok());
        assert_eq!(
            OltpPlan::for_workload("oltp_insert", &options(&[]), &keys()).unwrap_err(),
            "oltp_insert has no native worker"
        );
    }
}
