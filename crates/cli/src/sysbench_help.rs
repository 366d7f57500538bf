//! `--help` as `sysbench`: the options the reproduced sysbench release lists, in its
//! groups, order and blank-line layout, with its value types and defaults, and bmk's
//! own descriptions. bmk's extensions (its own options, the `sqlite` driver, the
//! built-in workload list) are left out: a `sysbench` has none of them.

use bmk_engine::options::{OptKind, OptSpec};
use bmk_systests::SystemTestKind;

use crate::compat::Compat;
use crate::help::option_lines;

/// The general options each release lists, by group.
fn general_names(compat: Compat) -> [(&'static str, Vec<&'static str>); 3] {
    let general = match compat {
        Compat::V1_1 => vec![
            "threads",
            "events",
            "time",
            "warmup-time",
            "forced-shutdown",
            "thread-stack-size",
            "thread-init-timeout",
            "rate",
            "report-interval",
            "report-checkpoints",
            "debug",
            "validate",
            "help",
            "version",
            "config-file",
            "luajit-cmd",
        ],
        Compat::V1_0 => vec![
            "threads",
            "events",
            "time",
            "forced-shutdown",
            "thread-stack-size",
            "rate",
            "report-interval",
            "report-checkpoints",
            "debug",
            "validate",
            "help",
            "version",
            "config-file",
            "tx-rate",
            "max-requests",
            "max-time",
            "num-threads",
        ],
    };
    let rand = match compat {
        Compat::V1_1 => vec![
            "rand-type",
            "rand-seed",
            "rand-pareto-h",
            "rand-zipfian-exp",
        ],
        Compat::V1_0 => vec![
            "rand-type",
            "rand-spec-iter",
            "rand-spec-pct",
            "rand-spec-res",
            "rand-seed",
            "rand-pareto-h",
        ],
    };
    [
        ("General options:", general),
        ("Pseudo-Random Numbers Generator options:", rand),
        ("Log options:", vec!["verbosity"]),
    ]
}

/// Each driver's options as the release lists them.
fn driver_names(compat: Compat) -> [(&'static str, Vec<&'static str>); 2] {
    let mysql = match compat {
        Compat::V1_1 => vec![
            "mysql-host",
            "mysql-port",
            "mysql-socket",
            "mysql-user",
            "mysql-password",
            "mysql-db",
            "mysql-ssl",
            "mysql-ssl-key",
            "mysql-ssl-ca",
            "mysql-ssl-cert",
            "mysql-ssl-cipher",
            "mysql-compression",
            "mysql-compression-algorithms",
            "mysql-debug",
            "mysql-ignore-errors",
            "mysql-dry-run",
        ],
        Compat::V1_0 => vec![
            "mysql-host",
            "mysql-port",
            "mysql-socket",
            "mysql-user",
            "mysql-password",
            "mysql-db",
            "mysql-ssl",
            "mysql-ssl-cipher",
            "mysql-compression",
            "mysql-debug",
            "mysql-ignore-errors",
            "mysql-dry-run",
        ],
    };
    let mut pgsql = vec![
        "pgsql-host",
        "pgsql-port",
        "pgsql-user",
        "pgsql-password",
        "pgsql-db",
    ];
    if compat == Compat::V1_1 {
        pgsql.push("pgsql-sslmode");
    }
    [("mysql", mysql), ("pgsql", pgsql)]
}

/// `spec` with the value type, default and choices the release shows for it where
/// bmk's declaration differs (bmk takes more: TLS modes besides on/off, file names).
fn as_listed(mut spec: OptSpec, compat: Compat) -> OptSpec {
    match spec.name.as_str() {
        "mysql-ssl" => {
            spec.kind = OptKind::Bool;
            spec.default = Some("off".into());
        }
        "mysql-ssl-key" | "mysql-ssl-ca" | "mysql-ssl-cert" => spec.kind = OptKind::String,
        "mysql-password" | "mysql-ssl-cipher" | "pgsql-password" => {
            spec.default = Some(String::new());
        }
        "rand-type" => {
            let (choices, default): (&[&str], &str) = match compat {
                Compat::V1_1 => (&["uniform", "gaussian", "pareto", "zipfian"], "uniform"),
                Compat::V1_0 => (&["uniform", "gaussian", "special", "pareto"], "special"),
            };
            spec = spec.with_choices(choices);
            spec.default = Some(default.into());
        }
        _ => {}
    }
    spec
}

/// The specs named `names`, in that order (a name bmk does not declare is skipped).
fn pick(all: &[OptSpec], names: &[&str], compat: Compat) -> Vec<OptSpec> {
    names
        .iter()
        .filter_map(|n| all.iter().find(|s| s.name == *n).cloned())
        .map(|s| as_listed(s, compat))
        .collect()
}

/// The whole `--help` text of the release `compat`, from bmk's option declarations
/// (`general`: the general and database options; `drivers`: the drivers' options).
pub fn text(compat: Compat, general: &[OptSpec], drivers: &[OptSpec]) -> String {
    let mut out = String::from(
        "Usage:\n  sysbench [options]... [testname] [command]\n\n\
         Commands implemented by most tests: prepare run cleanup help\n\n",
    );
    for (title, names) in general_names(compat) {
        out.push_str(title);
        out.push('\n');
        out.push_str(&option_lines(&pick(general, &names, compat)));
        out.push('\n');
    }
    // The latency options are a group of their own without a title, after the log
    // options; the database options' title is followed by a blank line, and the group
    // by two.
    out.push_str(&option_lines(&pick(
        general,
        &["percentile", "histogram"],
        compat,
    )));
    out.push_str("\nGeneral database options:\n\n");
    out.push_str(&option_lines(&pick(
        general,
        &["db-driver", "db-ps-mode", "db-debug"],
        compat,
    )));
    out.push_str("\n\nCompiled-in database drivers:\n");
    for kind in [bmk_sql::DriverKind::Mysql, bmk_sql::DriverKind::Pgsql] {
        out.push_str(&format!("  {} - {}\n", kind.name(), kind.description()));
    }
    out.push('\n');
    for (driver, names) in driver_names(compat) {
        out.push_str(&format!("{driver} options:\n"));
        out.push_str(&option_lines(&pick(drivers, &names, compat)));
        out.push('\n');
    }
    out.push_str("Compiled-in tests:\n");
    for t in SystemTestKind::ALL {
        out.push_str(&format!("  {} - {}\n", t.name(), t.description()));
    }
    out.push_str("\nSee 'sysbench <testname> help' for a list of options for each test.\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn help(compat: Compat) -> String {
        text(
            compat,
            &crate::defs::general_specs(),
            &crate::option_pipeline::driver_specs(),
        )
    }

    /// Every option the release lists is one bmk declares.
    #[test]
    fn every_listed_option_is_declared() {
        let general = crate::defs::general_specs();
        let drivers = crate::option_pipeline::driver_specs();
        for compat in [Compat::V1_1, Compat::V1_0] {
            let mut names: Vec<&str> = general_names(compat)
                .into_iter()
                .chain(driver_names(compat))
                .flat_map(|(_, n)| n)
                .collect();
            names.extend([
                "percentile",
                "histogram",
                "db-driver",
                "db-ps-mode",
                "db-debug",
            ]);
            for n in names {
                assert!(
                    general.iter().chain(&drivers).any(|s| s.name == n),
                    "{n} ({compat:?})"
                );
            }
        }
    }

    #[test]
    fn no_bmk_extension_is_listed() {
        for compat in [Compat::V1_1, Compat::V1_0] {
            let text = help(compat);
            for ext in [
                "--native-oltp",
                "--mysql-fast-path",
                "sqlite",
                "--results",
                "oltp_",
            ] {
                assert!(!text.contains(ext), "{ext} in {compat:?} help");
            }
        }
    }

    #[test]
    fn each_release_lists_its_own_general_options() {
        let v11 = help(Compat::V1_1);
        let v10 = help(Compat::V1_0);
        assert!(v11.contains("  --luajit-cmd=STRING "));
        assert!(!v11.contains("--max-requests"));
        assert!(v10.contains("  --max-requests=N "));
        assert!(!v10.contains("--warmup-time"));
        assert!(v10.contains("{uniform,gaussian,special,pareto} [special]\n"));
        assert!(v11.contains("  --mysql-ssl[=on|off] "));
        assert!(v11.ends_with("for each test.\n\n"));
        assert!(v11.contains("\n\nGeneral database options:\n\n  --db-driver=STRING "));
    }
}
