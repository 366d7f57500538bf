//! From argument words to validated, typed options without running anything: the
//! options every test knows (general, database, and the system tests'), the user's
//! values applied to them, and every typed setting a run derives from them.
//!
//! `app` takes these steps one by one around its printing and dispatch;
//! [`check_command_line`] takes them all at once for the option parser's fuzz target
//! (`fuzz/fuzz_targets/option_parser.rs`) and property test, which feed it generated
//! command lines and require a `Result`, never a panic. Errors are the one line the
//! user sees.

use bmk_engine::options::{OptKind, OptSpec, OptionError, OptionSet};
use bmk_sql::{DriverConfig, DriverKind};
use bmk_systests::SystemTestKind;

use crate::args::{self, GivenOption};
use crate::compat::Compat;
use crate::defs;
use crate::settings;

/// The SQL drivers' options (the `db-*` ones are general, declared in `defs`).
pub fn driver_specs() -> Vec<OptSpec> {
    bmk_sql::option_specs()
        .into_iter()
        .filter(|s| {
            !s.name.starts_with("db-")
                || matches!(s.name.as_str(), "db-connect-timeout" | "db-timeout")
        })
        .collect()
}

/// Every option declared before the test is known: general, database and driver ones.
pub fn base_options() -> OptionSet {
    let mut set = OptionSet::new();
    set.declare(driver_specs());
    set.declare(defs::general_specs());
    set
}

/// The general options sysbench 1.1 added: 1.0.20 refuses them as it refuses any
/// option it does not know.
const NEWER_THAN_1_0: [&str; 4] = [
    "warmup-time",
    "thread-init-timeout",
    "luajit-cmd",
    "rand-zipfian-exp",
];

/// A general option's declaration at the level `compat`: 1.0.20 draws from `special`
/// unless `--rand-type` says otherwise.
pub fn general_spec_at(mut spec: OptSpec, compat: Compat) -> OptSpec {
    if compat.is_1_0() && spec.name == "rand-type" {
        spec.default = Some("special".into());
    }
    spec
}

/// [`base_options`] at the level `compat`. Invoked as `sysbench` (`as_sysbench`) at
/// 1.0, the options 1.1 added are not declared, so they are refused as unknown; as
/// `bmk` they stay, as bmk's own extensions do.
pub fn base_options_at(compat: Compat, as_sysbench: bool) -> OptionSet {
    let mut set = OptionSet::new();
    set.declare(driver_specs());
    set.declare(
        defs::general_specs()
            .into_iter()
            .filter(|spec| {
                !(as_sysbench && compat.is_1_0() && NEWER_THAN_1_0.contains(&spec.name.as_str()))
            })
            .map(|spec| general_spec_at(spec, compat)),
    );
    set
}

/// [`base_options`] and every system test's options: what the command line's grammar
/// knows before a script declares its own.
pub fn static_options() -> OptionSet {
    let mut set = base_options();
    for t in SystemTestKind::ALL {
        set.declare(t.options());
    }
    set
}

/// A value the user gave that its declaration refuses.
#[derive(Debug)]
pub enum GivenError {
    /// The value does not fit the option.
    Value(OptionError),
    /// A bare `--name` (as typed) for an option that needs a value.
    NeedsValue(String),
}

impl std::fmt::Display for GivenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GivenError::Value(e) => write!(f, "{e}"),
            GivenError::NeedsValue(original) => write!(
                f,
                "invalid option: {original} (it needs a value: {original}=VALUE)"
            ),
        }
    }
}

/// Records the user's values; declared options are validated right away. `strict` is
/// sysbench's reading of a bare `--name` for an option that takes a value: an empty
/// value (0 for a number) rather than an error.
pub fn apply_given(
    opts: &mut OptionSet,
    given: &[GivenOption],
    strict: bool,
) -> Result<(), GivenError> {
    for g in given {
        match &g.value {
            Some(v) => opts.set(&g.name, v).map_err(GivenError::Value)?,
            // A bare `--name`: `on` for a boolean (also one a script declares later),
            // the empty string for an option nothing declares, as sysbench 1.0.20
            // hands it to a legacy script: set, and true in Lua, but not "on".
            None => {
                let empty = match opts.spec(&g.name).map(|s| s.kind) {
                    Some(OptKind::Int | OptKind::Size | OptKind::Double) if strict => Some("0"),
                    Some(OptKind::String | OptKind::List | OptKind::File) if strict => Some(""),
                    _ => None,
                };
                match empty {
                    Some(v) => opts.set(&g.name, v).map_err(GivenError::Value)?,
                    None => opts
                        .set_switch(&g.name)
                        .map_err(|_| GivenError::NeedsValue(g.original.clone()))?,
                }
            }
        }
    }
    Ok(())
}

/// sysbench 1.0's old option names, which stay options of their own beside the new
/// ones they set: `--num-threads=4` runs 4 threads and also gives `num-threads` the
/// value 4, which a script reads as `sysbench.opt.num_threads` (and, declaring no
/// options, as the global `num_threads`). `--threads=4` leaves `num-threads` at its
/// default of 1, as in sysbench 1.0.20; invoked as `bmk` (not `as_sysbench`),
/// `num-threads` follows the thread count whichever name gave it, so that an old
/// script that sizes its work by `num_threads` runs as its author meant.
pub fn keep_old_names(opts: &mut OptionSet, given: &[GivenOption], as_sysbench: bool) {
    let mut num_threads_given = false;
    for g in given {
        // `--max-time=5`, or `--max-time (line 2 of config file '...')`.
        let typed = g.original.trim_start_matches('-');
        let end = typed.find(['=', ' ']).unwrap_or(typed.len());
        let old = typed[..end].replace('_', "-");
        if old == g.name
            || !matches!(
                old.as_str(),
                "num-threads" | "max-time" | "max-requests" | "tx-rate"
            )
        {
            continue;
        }
        if let (Some(value), Some(_)) = (&g.value, opts.spec(&old)) {
            // Already checked under the new name, whose range is the same.
            if opts.set(&old, value).is_ok() && old == "num-threads" {
                num_threads_given = true;
            }
        }
    }
    if !as_sysbench && !num_threads_given && opts.spec("num-threads").is_some() {
        if let Some(threads) = opts.get("threads").and_then(|v| v.as_i64()) {
            let _ = opts.set("num-threads", &threads.to_string());
        }
    }
}

/// Every check of the options that a run of a system test makes before it starts:
/// the grammar, each value against its declaration, the engine's, the reports' and
/// the random generator's settings, and each driver's configuration. `strict` is
/// sysbench's grammar (no `--name value`).
// The binary itself takes these steps one by one (see `app`); the fuzz target and the
// tests call this.
#[cfg_attr(not(test), allow(dead_code))]
pub fn check_command_line(argv: &[String], strict: bool) -> Result<(), String> {
    check_with(&static_options(), argv, strict)
}

/// [`check_command_line`] with the declarations made once ([`static_options`]).
#[cfg_attr(not(test), allow(dead_code))]
pub fn check_with(statics: &OptionSet, argv: &[String], strict: bool) -> Result<(), String> {
    let takes_value =
        |name: &str| !strict && statics.spec(name).is_some_and(|s| s.kind != OptKind::Bool);
    let raw = args::parse(argv, &takes_value).map_err(|e| e.to_string())?;
    let mut opts = statics.clone();
    apply_given(&mut opts, &raw.options, strict).map_err(|e| e.to_string())?;
    opts.validate().map_err(|e| e.to_string())?;
    settings::run_config(&opts, strict).map_err(|e| e.to_string())?;
    settings::report_options(&opts).map_err(|e| e.to_string())?;
    settings::non_empty_path(&opts, "results-dir").map_err(|e| e.to_string())?;
    let _ = settings::rand_config(&opts);
    for kind in DriverKind::ALL {
        DriverConfig::from_options(kind, &|n| opts.raw(n)).map_err(|e| e.message)?;
    }
    Ok(())
}

/// The option parser fuzz target's input as a command line: words split at NUL bytes
/// and line ends after a first byte that picks sysbench's grammar (odd) or bmk's (even);
/// `None` for input that is not UTF-8 or is empty. Shared by the target and the test
/// that replays its corpus, so both read an input alike (the binary itself never calls
/// it).
#[cfg_attr(not(test), allow(dead_code))]
pub fn fuzz_command_line(data: &[u8]) -> Option<(Vec<String>, bool)> {
    let (&mode, rest) = data.split_first()?;
    let text = std::str::from_utf8(rest).ok()?;
    let argv = text
        .split(['\0', '\n'])
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    Some((argv, mode % 2 == 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (SplitMix64): the same command lines on every
    /// run, so a failure is reproducible from the printed line.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    /// Values that break parsers: edges of every numeric type, non-numbers, suffixes,
    /// lists, percentages, empty strings and odd characters.
    const VALUES: &[&str] = &[
        "",
        "0",
        "1",
        "-1",
        "2",
        "100",
        "101",
        "65535",
        "65536",
        "0.001",
        "0.0009",
        "1e-300",
        "1e308",
        "-1e308",
        "inf",
        "-inf",
        "nan",
        "NaN",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "18446744073709551616",
        "99999999999999999999999",
        "1e30",
        "5%",
        "1e300%",
        "-5%",
        "nan%",
        "%",
        "1K",
        "64K",
        "16383",
        "1G",
        "1T",
        "99999999T",
        "1.5K",
        "K",
        "on",
        "off",
        "yes",
        "no",
        "true",
        "maybe",
        "auto",
        "all",
        "none",
        "1,2,3",
        "1,,2",
        ",",
        "a,b",
        "3306,0",
        "x",
        " 7 ",
        "é",
        "\u{0}",
        "--",
        "=",
        "==",
        "-0",
        "+5",
        "0x10",
        "1_000",
    ];

    /// A command line of up to eight option words and up to two positional words, over
    /// every declared option name (both spellings), unknown names, bare switches and
    /// `--name value` pairs.
    fn command_line(g: &mut Gen, names: &[String]) -> Vec<String> {
        let mut argv = Vec::new();
        for _ in 0..g.below(9) {
            let name = match g.below(10) {
                0 => "no-such-option".to_string(),
                1 => names[g.below(names.len())].replace('-', "_"),
                _ => names[g.below(names.len())].clone(),
            };
            match g.below(8) {
                0 => argv.push(format!("--{name}")),
                1 => {
                    argv.push(format!("--{name}"));
                    argv.push(g.pick(VALUES).to_string());
                }
                _ => argv.push(format!("--{name}={}", g.pick(VALUES))),
            }
        }
        for _ in 0..g.below(3) {
            argv.push(
                g.pick(&["cpu", "memory", "run", "help", "prepare", "x"])
                    .to_string(),
            );
        }
        argv
    }

    /// 300 000 generated command lines through every option check: each gives a
    /// `Result`; none panics. Both outcomes occur (a generator that only made errors
    /// would test nothing).
    #[test]
    fn generated_command_lines_never_panic() {
        let names: Vec<String> = static_options()
            .specs()
            .map(|s| s.name.clone())
            // File options name files to read; what reading does is not the parser's
            // question, and the test must not depend on the machine's files.
            .filter(|n| !matches!(n.as_str(), "config-file" | "config") && !n.ends_with("-file"))
            .collect();
        let statics = static_options();
        let mut g = Gen(0x6f70_7473);
        let (mut ok, mut err) = (0u32, 0u32);
        for _ in 0..300_000 {
            let argv = command_line(&mut g, &names);
            let strict = g.below(4) == 0;
            let outcome = std::panic::catch_unwind(|| check_with(&statics, &argv, strict));
            match outcome {
                Ok(Ok(())) => ok += 1,
                Ok(Err(message)) => {
                    assert!(!message.contains('\n'), "{argv:?}: {message:?}");
                    err += 1;
                }
                Err(_) => panic!("the option parser panicked on {argv:?} (strict: {strict})"),
            }
        }
        assert!(ok > 1000 && err > 1000, "ok {ok}, errors {err}");
    }

    /// The committed corpus of the option parser's fuzz target
    /// (`fuzz/corpus/option_parser`), read as the target reads it.
    #[test]
    fn option_parser_fuzz_corpus_replays_clean() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/corpus/option_parser");
        let mut inputs = 0;
        for entry in std::fs::read_dir(&dir)
            .expect("the corpus folder")
            .flatten()
        {
            let data = std::fs::read(entry.path()).unwrap();
            let Some((argv, strict)) = fuzz_command_line(&data) else {
                continue;
            };
            if let Err(message) = check_command_line(&argv, strict) {
                assert!(!message.contains('\n'), "{message:?}");
            }
            inputs += 1;
        }
        assert!(inputs >= 4, "{inputs} inputs in {}", dir.display());
    }

    #[test]
    fn the_issue_s_values_are_errors() {
        let line = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        for bad in [
            "--forced-shutdown=inf",
            "--forced-shutdown=nan",
            "--forced-shutdown=1e308",
            "--forced-shutdown=99999999999999999999999",
            "--report-checkpoints=inf",
            "--report-checkpoints=1e30",
            "--report-interval=1e-300",
            "--percentile=0.0000001",
            "--results=",
            "--mysql-port=0",
            "--pgsql-port=65536",
            "--threads=100001",
            "--rate=1e10",
        ] {
            assert!(
                check_command_line(&line(&format!("{bad} cpu run")), false).is_err(),
                "{bad}"
            );
        }
        assert_eq!(
            check_command_line(&line("--threads=4 cpu run"), false),
            Ok(())
        );
    }
}
