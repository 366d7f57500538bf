//! What sysbench itself gives scripts, per release, that bmk reproduces when invoked as
//! `sysbench`: the general options it puts in `sysbench.opt` (a script sees exactly
//! these besides its own, each with the value sysbench gives it) and the Lua modules
//! it installs.

use crate::ApiLevel;

/// sysbench 1.1's general and driver (mysql, pgsql) option keys.
const V1_1: &[&str] = &[
    "db_debug",
    "db_driver",
    "db_ps_mode",
    "debug",
    "events",
    "forced_shutdown",
    "help",
    "histogram",
    "luajit_cmd",
    "mysql_compression",
    "mysql_compression_algorithms",
    "mysql_db",
    "mysql_debug",
    "mysql_dry_run",
    "mysql_host",
    "mysql_ignore_errors",
    "mysql_password",
    "mysql_port",
    "mysql_socket",
    "mysql_ssl",
    "mysql_ssl_ca",
    "mysql_ssl_cert",
    "mysql_ssl_cipher",
    "mysql_ssl_key",
    "mysql_user",
    "percentile",
    "pgsql_db",
    "pgsql_host",
    "pgsql_password",
    "pgsql_port",
    "pgsql_sslmode",
    "pgsql_user",
    "rand_pareto_h",
    "rand_seed",
    "rand_type",
    "rand_zipfian_exp",
    "rate",
    "report_checkpoints",
    "report_interval",
    "thread_init_timeout",
    "thread_stack_size",
    "threads",
    "time",
    "validate",
    "verbosity",
    "version",
    "warmup_time",
];

/// sysbench 1.0.20's.
const V1_0: &[&str] = &[
    "db_debug",
    "db_driver",
    "db_ps_mode",
    "debug",
    "events",
    "forced_shutdown",
    "help",
    "histogram",
    "max_requests",
    "max_time",
    "mysql_compression",
    "mysql_db",
    "mysql_debug",
    "mysql_dry_run",
    "mysql_host",
    "mysql_ignore_errors",
    "mysql_password",
    "mysql_port",
    "mysql_socket",
    "mysql_ssl",
    "mysql_ssl_cipher",
    "mysql_user",
    "num_threads",
    "percentile",
    "pgsql_db",
    "pgsql_host",
    "pgsql_password",
    "pgsql_port",
    "pgsql_user",
    "rand_pareto_h",
    "rand_seed",
    "rand_spec_iter",
    "rand_spec_pct",
    "rand_spec_res",
    "rand_type",
    "rate",
    "report_checkpoints",
    "report_interval",
    "thread_stack_size",
    "threads",
    "time",
    "tx_rate",
    "validate",
    "verbosity",
    "version",
];

/// The option keys sysbench of `level` shows in `sysbench.opt`.
pub(crate) fn builtin_keys(level: ApiLevel) -> &'static [&'static str] {
    match level {
        ApiLevel::V1_1 => V1_1,
        ApiLevel::V1_0 => V1_0,
    }
}

/// What sysbench's `mysql_ssl` (a switch) reads for bmk's SSL mode.
pub(crate) fn mysql_ssl_switch(mode: &str) -> bool {
    !matches!(mode, "disabled" | "off" | "false" | "0" | "")
}

/// The modules sysbench installs beside its scripts, which a script may `require`.
const SHIPPED_MODULES: &[&str] = &[
    "bulk_insert",
    "oltp_common",
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
];

/// Whether sysbench installs module `name`.
pub(crate) fn ships_module(name: &str) -> bool {
    SHIPPED_MODULES.contains(&name.strip_suffix(".lua").unwrap_or(name))
}
