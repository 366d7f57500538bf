//! bmk's built-in workloads: the sysbench OLTP family with the BMK-kit extended options
//! and the sync-file start barrier, TPC-C and dbSTRESS.
//!
//! This crate owns the workload scripts (`lua/*.lua`, embedded with `include_str!`)
//! and therefore the schemas they create on MySQL/MariaDB, PostgreSQL and SQLite, the
//! data they load and the statement mix of every event. It exposes them to the Lua
//! runtime as a [`bmk_lua::ModuleLibrary`] ([`BuiltinLibrary`]), so
//! `require("oltp_common")` works from any user script and `bmk oltp_read_write ...`
//! finds the workload by name ([`workload_names`], [`script`]).
//!
//! It also owns the [`native`] workers that run the stock OLTP events in Rust when every
//! workload option given is one they implement (same statements, draws and counters as
//! the scripts; [`native::choose`] says which path runs and why), and the limits of the
//! workloads' own options that the scripts' sysbench-style declarations cannot express
//! ([`option_limits`]: `--tables`, `--sync-file`).
//!
//! It must not: parse the command line, run the event loop, or print reports — the
//! CLI, the engine and `bmk-report` do. The scripts reach the engine only through the
//! sysbench Lua API and its `ffi.C.sb_*` symbols; the native workers only
//! through the engine's `Worker` trait and `bmk-sql`'s `Connection`.
//!
//! # Modules
//! * `oltp_common` — options, statements, event helpers, `prepare` / `create` /
//!   `warmup` / `prewarm` / `cleanup`, the globals third-party scripts override.
//! * `bmk_oltp_tables` — the code of those commands (schema, loaders, load window,
//!   warm-up, cleanup), which `oltp_common`'s globals load on their first call so
//!   that the worker states of `run` never compile it.
//! * `SYNC_file` — the `--sync-file` barrier.
//! * `bmk_workload_support` — what the OLTP, TPC-C and dbSTRESS families share:
//!   option access, driver / MariaDB detection, session options, MySQL table
//!   options, catalog look-ups, load transactions, bulk inserts, sync-file wrappers.
//! * `bmk_workload_texts` — messages the native workers print too, made from the
//!   same Rust literals so the two kinds of worker cannot drift apart.
//! * one script per workload (see [`workload_names`]).
//!
//! # Schema decisions
//! * MySQL/MariaDB: stock columns (`id INTEGER NOT NULL AUTO_INCREMENT`, `k INTEGER`,
//!   `c CHAR(120)`, `pad CHAR(60)`), `/*! ENGINE = ... */`, then
//!   `--create-table-options`, `--mysql-table-options`, compression
//!   (`COMPRESSION='x'` on MySQL, `PAGE_COMPRESSED=1` on MariaDB, whose algorithm is
//!   the server's `innodb_compression_algorithm`) and RANGE(id) partitions.
//! * PostgreSQL: `id SERIAL` (or `INTEGER NOT NULL`), no engine or table options.
//! * SQLite: `id INTEGER PRIMARY KEY` (a rowid alias: an omitted id becomes max+1,
//!   no `AUTOINCREMENT`, so no `sqlite_sequence` table is left behind), no ENGINE
//!   clause; with `--secondary` the id is a plain column and ids are always explicit.
//!   One writer: worker 0 loads every table inside one transaction per table.
//! * The `k` index is created after the load (`k_N`; on PostgreSQL/SQLite, where
//!   index names are per schema, `k_N` for the default table name and
//!   `<table_name>_k_N` otherwise).
//!
//! # Load (`prepare`)
//! * `--load-mode=original`, or threads ≤ tables: worker t creates and loads tables
//!   t+1, t+1+threads, ... (stock behaviour).
//! * `parallel` / `parallel_ordered` with threads > tables: table N gets the workers
//!   N-1, N-1+tables, ...; the first creates the table, all load (contiguous id
//!   slices, or round-robin chunks of `--load-bulk-size` rows when ordered), the first
//!   waits for the others (marker files in `$TMPDIR`, keyed by the process id) and
//!   builds the k index. Integer arithmetic: every row is loaded exactly once.
//! * Rows are made in Rust as the driver sends them (`con:insert_generated`:
//!   MariaDB's bulk execute, PostgreSQL's `COPY`, prepared multi-row INSERTs
//!   elsewhere), committed every 20 000 rows; the original mode sends sysbench's
//!   512 KiB multi-row INSERT statements instead, their VALUES text one template
//!   filled by a single `ffi.C.sb_rand_str` call.
//! * Except in the original mode, tables take turns (`--load-tables-at-once`; auto:
//!   on InnoDB as many as fill 3/4 of its buffer pool): table N starts once table
//!   N-window has its k index, so every index is built from rows still in the buffer
//!   pool. A worker that fails marks its remaining tables finished, so no one waits
//!   for them.
//! * `create` (BMK) creates empty tables; `prepare` then loads existing empty tables
//!   and refuses non-empty ones.
//!
//! # Run
//! * Stock table choice is uniform; `--pin-tables` pins worker t to table
//!   (t mod tables)+1 when threads ≥ tables (and prepares statements for that table
//!   only).
//! * `--sync-file`: the BMK-kit file protocol; `F.0` is removed at the end of the run
//!   rather than at release time, which closes the reference protocol's race.
#![deny(missing_docs)]

/// What to do about a workload's missing tables, printed after the failed statement's
/// FATAL lines by the native workers and by the scripts (through `bmk_workload_texts`).
/// A macro, not a `const`, so that `concat!` can build that module from it.
macro_rules! missing_tables_hint {
    () => {
        "the workload's tables do not exist: create and load them with the prepare \
         command first (same --tables, --table-size and --table-name)"
    };
}

pub mod native;
pub mod option_limits;

use bmk_lua::ModuleLibrary;

/// The runnable built-in workloads, in the order `bmk help` lists them.
const WORKLOADS: &[&str] = &[
    "bulk_insert",
    "oltp_delete",
    "oltp_insert",
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_write_only",
    "select_random_points",
    "select_random_ranges",
    "OLTP_RO-point_selects_reconnect",
    "OLTP_RW-delete_inserts",
    "OLTP_RW-inserts_only",
    "tpcc",
    "dbstress",
];

/// Every embedded script: (module name, source).
const SCRIPTS: &[(&str, &str)] = &[
    ("oltp_common", include_str!("../lua/oltp_common.lua")),
    (
        "bmk_oltp_tables",
        include_str!("../lua/bmk_oltp_tables.lua"),
    ),
    ("SYNC_file", include_str!("../lua/SYNC_file.lua")),
    (
        "bmk_workload_support",
        include_str!("../lua/bmk_workload_support.lua"),
    ),
    (
        "bmk_workload_texts",
        concat!(
            "-- Made in Rust (bmk-workloads' lib.rs): the native workers print these too.\n",
            "return {\n  missing_tables = [[",
            missing_tables_hint!(),
            "]],\n}\n"
        ),
    ),
    ("bulk_insert", include_str!("../lua/bulk_insert.lua")),
    ("oltp_delete", include_str!("../lua/oltp_delete.lua")),
    ("oltp_insert", include_str!("../lua/oltp_insert.lua")),
    (
        "oltp_point_select",
        include_str!("../lua/oltp_point_select.lua"),
    ),
    ("oltp_read_only", include_str!("../lua/oltp_read_only.lua")),
    (
        "oltp_read_write",
        include_str!("../lua/oltp_read_write.lua"),
    ),
    (
        "oltp_update_index",
        include_str!("../lua/oltp_update_index.lua"),
    ),
    (
        "oltp_update_non_index",
        include_str!("../lua/oltp_update_non_index.lua"),
    ),
    (
        "oltp_write_only",
        include_str!("../lua/oltp_write_only.lua"),
    ),
    (
        "select_random_points",
        include_str!("../lua/select_random_points.lua"),
    ),
    (
        "select_random_ranges",
        include_str!("../lua/select_random_ranges.lua"),
    ),
    (
        "OLTP_RO-point_selects_reconnect",
        include_str!("../lua/OLTP_RO-point_selects_reconnect.lua"),
    ),
    (
        "OLTP_RW-delete_inserts",
        include_str!("../lua/OLTP_RW-delete_inserts.lua"),
    ),
    (
        "OLTP_RW-inserts_only",
        include_str!("../lua/OLTP_RW-inserts_only.lua"),
    ),
    ("bmk_shared", include_str!("../lua/bmk_shared.lua")),
    ("bmk_latency", include_str!("../lua/bmk_latency.lua")),
    ("tpcc_common", include_str!("../lua/tpcc_common.lua")),
    ("tpcc_run", include_str!("../lua/tpcc_run.lua")),
    ("tpcc_check", include_str!("../lua/tpcc_check.lua")),
    ("tpcc", include_str!("../lua/tpcc.lua")),
    (
        "dbstress_common",
        include_str!("../lua/dbstress_common.lua"),
    ),
    ("dbstress", include_str!("../lua/dbstress.lua")),
];

/// Other names a script is found under (name, canonical name).
const ALIASES: &[(&str, &str)] = &[
    (
        "oltp_point_select_reconnect",
        "OLTP_RO-point_selects_reconnect",
    ),
    (
        "oltp_point_selects_reconnect",
        "OLTP_RO-point_selects_reconnect",
    ),
    ("sync_file", "SYNC_file"),
];

/// The built-in script library: every workload and module by name.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinLibrary;

impl ModuleLibrary for BuiltinLibrary {
    fn module(&self, name: &str) -> Option<&'static str> {
        script(name)
    }
}

/// The names of the runnable built-in workloads (not the helper modules).
pub fn workload_names() -> &'static [&'static str] {
    WORKLOADS
}

/// The source of built-in script or module `name` (a trailing `.lua` is ignored).
pub fn script(name: &str) -> Option<&'static str> {
    let name = name.strip_suffix(".lua").unwrap_or(name);
    let name = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, canonical)| canonical);
    SCRIPTS.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_has_a_script() {
        for name in workload_names() {
            let src = script(name).unwrap_or_else(|| panic!("no script for {name}"));
            // The OLTP family builds on oltp_common; TPC-C and dbSTRESS have their own.
            let common = match *name {
                "tpcc" => "require(\"tpcc_common\")",
                "dbstress" => "require(\"dbstress_common\")",
                _ => "require(\"oltp_common\")",
            };
            assert!(src.contains(common), "{name} does not use {common}");
            assert!(src.contains("function event"), "{name}");
        }
    }

    #[test]
    fn modules_and_aliases_resolve() {
        assert!(script("oltp_common").is_some());
        assert!(script("oltp_common.lua").is_some());
        assert!(script("SYNC_file").is_some());
        assert_eq!(
            script("oltp_point_select_reconnect"),
            script("OLTP_RO-point_selects_reconnect")
        );
        assert!(script("no_such_workload").is_none());
        assert_eq!(
            BuiltinLibrary.module("oltp_read_write"),
            script("oltp_read_write")
        );
    }
}
