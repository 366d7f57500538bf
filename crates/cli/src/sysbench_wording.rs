//! How sysbench words what it refuses, for a binary invoked as `sysbench`.
//!
//! bmk's own messages say which values an option takes; sysbench's say less, in
//! several styles that grew with its code, and scripts and test suites that drive
//! sysbench match them byte for byte. Invoked as `sysbench`, bmk prints these
//! instead. Each function returns `None` where bmk's own message stands.

use bmk_engine::options::{OptKind, OptionError, OptionSet};
use bmk_lua::{LuaError, LuaErrorKind};

use crate::args::GivenOption;
use crate::compat::Compat;

/// The marker between a Lua error's message and its traceback.
const TRACEBACK: &str = "\nstack traceback:\n";

/// The general option values sysbench checks before it prints its banner (its
/// initialisation): a number of threads below 1, a negative warm-up, integers that do
/// not parse, and a `--rand-type` the release does not draw from (1.1 dropped
/// `special`, 1.0.20 has no `zipfian`). The threads and warm-up messages end with the
/// blank line sysbench's log line has. 1.0.20 has no warm-up: its `--warmup-time` is
/// an unknown option, refused after the banner.
pub fn before_banner(given: &[GivenOption], compat: Compat) -> Option<String> {
    // As typed: an old name (`--num-threads`) is not the option sysbench checks here.
    let last = |name: &str| {
        given
            .iter()
            .rev()
            .find(|g| typed_name(g) == name)
            .map(|g| g.value.clone().unwrap_or_default())
    };
    let checked: &[&str] = match compat {
        Compat::V1_1 => &["threads", "warmup-time"],
        Compat::V1_0 => &["threads"],
    };
    for &name in checked {
        let Some(raw) = last(name) else { continue };
        // sysbench reads a bare option as 0 and any other value with strtol.
        let value = if raw.is_empty() {
            0
        } else {
            match raw.parse::<i64>() {
                Ok(v) if i32::try_from(v).is_ok() => v,
                _ => return Some(format!("Invalid value for the '{name}' option: '{raw}'")),
            }
        };
        let bad = match name {
            "threads" => value <= 0,
            _ => value < 0,
        };
        if bad {
            return Some(format!("FATAL: Invalid value for --{name}: {value}.\n"));
        }
    }
    // The distributions the release draws from, compared as typed (an empty value is
    // left to bmk's own check).
    if let Some(kind) = last("rand-type").filter(|k| !k.is_empty()) {
        let known: &[&str] = match compat {
            Compat::V1_1 => &["uniform", "gaussian", "pareto", "zipfian"],
            Compat::V1_0 => &["uniform", "gaussian", "special", "pareto"],
        };
        if !known.contains(&kind.as_str()) {
            return Some(format!(
                "FATAL: Invalid random numbers distribution: {kind}."
            ));
        }
    }
    None
}

/// The old option names sysbench 1.0.20 still takes, the new name each stands for,
/// and the value above which it takes effect (and warns).
const OLD_NAMES: [(&str, &str, i64); 4] = [
    ("num-threads", "threads", 1),
    ("max-requests", "events", 0),
    ("max-time", "time", 0),
    ("tx-rate", "rate", 0),
];

/// The name an option was typed with (`--max_requests=5` gives `max-requests`).
fn typed_name(g: &GivenOption) -> String {
    let body = g.original.trim_start_matches('-');
    body.split('=').next().unwrap_or(body).replace('_', "-")
}

/// sysbench 1.0.20's warnings for its old option names, in the order it checks them
/// (before its banner, at any `--verbosity`): one for each old name given a value
/// that takes effect.
pub fn old_name_warnings(given: &[GivenOption]) -> Vec<String> {
    let mut out = Vec::new();
    for (old, new, above) in OLD_NAMES {
        let value = given
            .iter()
            .rev()
            .find(|g| typed_name(g) == old)
            .and_then(|g| g.value.as_deref()?.trim().parse::<f64>().ok());
        if value.is_some_and(|v| v > above as f64) {
            out.push(format!(
                "WARNING: --{old} is deprecated, use --{new} instead"
            ));
        }
    }
    out
}

/// An old option name given to sysbench 1.1, which no longer knows them: the first
/// as typed.
pub fn removed_old_name(given: &[GivenOption]) -> Option<String> {
    given
        .iter()
        .find(|g| OLD_NAMES.iter().any(|(old, _, _)| typed_name(g) == *old))
        .map(|g| format!("invalid option: {}", g.original))
}

/// A refused option value: a boolean that is none of the spellings is an unknown
/// option to sysbench (`invalid option: --name=value`, as typed); the memory test
/// names the option and the value it cannot use.
pub fn option_error(err: &OptionError, opts: &OptionSet, given: &[GivenOption]) -> Option<String> {
    let OptionError::BadValue { option, value, .. } = err else {
        return None;
    };
    let spec = opts.spec(option)?;
    if spec.kind == OptKind::Bool {
        let key = bmk_engine::options::canonical(option);
        let typed = given
            .iter()
            .rev()
            .find(|g| bmk_engine::options::canonical(&g.name) == key)
            .map_or_else(|| format!("--{option}={value}"), |g| g.original.clone());
        return Some(format!("invalid option: {typed}"));
    }
    if option == "file-test-mode" {
        return Some(format!("FATAL: Invalid IO operations mode: {value}."));
    }
    if option.starts_with("memory-") {
        return Some(format!("FATAL: Invalid value for {option}: {value}"));
    }
    None
}

/// A `fileio` run whose files are missing or too small, in sysbench's two lines.
pub fn not_prepared(e: &bmk_systests::SystemTestError) -> Option<String> {
    let bmk_systests::SystemTestError::NotPrepared { path, short, .. } = e else {
        return None;
    };
    let name = path.display();
    Some(match short {
        Some((found, needed)) => format!(
            "FATAL: Size of file '{name}' is {}, but at least {} is expected.\n\
             WARNING: Did you run 'prepare' with different --file-total-size or --file-num values?",
            bmk_systests::human_size(*found),
            bmk_systests::human_size(*needed)
        ),
        None => format!(
            "FATAL: Cannot open file '{name}' errno = 2 (No such file or directory)\n\
             WARNING: Did you forget to run the prepare step?"
        ),
    })
}

/// A script failure as sysbench prints it: no traceback (sysbench calls scripts
/// without a message handler), and a malformed `sysbench.cmdline.options` entry as the
/// failure of the Lua function that reads them.
pub fn lua_error(e: &LuaError) -> Option<String> {
    if e.kind == LuaErrorKind::Declaration {
        return Some(
            "FATAL: `sysbench.cmdline.read_cmdline_options' function failed: \
             [string \"sysbench.cmdline.lua\"]:133: wrong table structure in sysbench.cmdline.options"
                .to_string(),
        );
    }
    let message = e.message.split(TRACEBACK).next()?;
    (message.len() != e.message.len()).then(|| message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmk_engine::options::OptSpec;

    fn given(name: &str, value: Option<&str>) -> GivenOption {
        GivenOption {
            name: name.into(),
            value: value.map(str::to_string),
            original: match value {
                Some(v) => format!("--{name}={v}"),
                None => format!("--{name}"),
            },
        }
    }

    #[test]
    fn a_negative_warmup_fails_before_the_banner() {
        assert_eq!(
            before_banner(&[given("warmup-time", Some("-1"))], Compat::V1_1).as_deref(),
            Some("FATAL: Invalid value for --warmup-time: -1.\n")
        );
        assert_eq!(
            before_banner(&[given("threads", None)], Compat::V1_1).as_deref(),
            Some("FATAL: Invalid value for --threads: 0.\n")
        );
        assert_eq!(
            before_banner(&[given("threads", Some("x"))], Compat::V1_1).as_deref(),
            Some("Invalid value for the 'threads' option: 'x'")
        );
        assert_eq!(
            before_banner(&[given("warmup-time", Some("0"))], Compat::V1_1),
            None
        );
        assert_eq!(
            before_banner(&[given("threads", Some("4"))], Compat::V1_1),
            None
        );
    }

    #[test]
    fn each_release_refuses_the_distributions_it_lacks() {
        let rand = |kind: &str, compat| before_banner(&[given("rand-type", Some(kind))], compat);
        assert_eq!(
            rand("special", Compat::V1_1).as_deref(),
            Some("FATAL: Invalid random numbers distribution: special.")
        );
        assert_eq!(
            rand("zipfian", Compat::V1_0).as_deref(),
            Some("FATAL: Invalid random numbers distribution: zipfian.")
        );
        assert_eq!(
            rand("Uniform", Compat::V1_1).as_deref(),
            Some("FATAL: Invalid random numbers distribution: Uniform.")
        );
        assert_eq!(rand("special", Compat::V1_0), None);
        assert_eq!(rand("zipfian", Compat::V1_1), None);
    }

    #[test]
    fn release_1_0_has_no_warmup_to_check() {
        assert_eq!(
            before_banner(&[given("warmup-time", Some("-1"))], Compat::V1_0),
            None
        );
        assert_eq!(
            before_banner(&[given("threads", Some("0"))], Compat::V1_0).as_deref(),
            Some("FATAL: Invalid value for --threads: 0.\n")
        );
    }

    #[test]
    fn old_names_warn_in_sysbench_order_when_they_take_effect() {
        let typed = |name: &str, value: &str| GivenOption {
            name: "ignored".into(),
            value: Some(value.into()),
            original: format!("--{name}={value}"),
        };
        let opts = [
            typed("tx-rate", "10"),
            typed("max_requests", "2"),
            typed("num-threads", "1"),
            typed("max-time", "0"),
        ];
        assert_eq!(
            old_name_warnings(&opts),
            [
                "WARNING: --max-requests is deprecated, use --events instead",
                "WARNING: --tx-rate is deprecated, use --rate instead",
            ]
        );
        assert_eq!(
            removed_old_name(&opts).as_deref(),
            Some("invalid option: --tx-rate=10")
        );
        assert_eq!(removed_old_name(&[given("events", Some("2"))]), None);
    }

    #[test]
    fn a_bad_boolean_is_an_invalid_option_as_typed() {
        let mut opts = OptionSet::new();
        opts.declare([OptSpec::new("bool_opt", OptKind::Bool, Some("off"), "")]);
        let typed = [given("bool-opt", Some("5"))];
        let err = OptionError::BadValue {
            option: "bool-opt".into(),
            value: "5".into(),
            allowed: String::new(),
        };
        assert_eq!(
            option_error(&err, &opts, &typed).as_deref(),
            Some("invalid option: --bool-opt=5")
        );
    }

    #[test]
    fn tracebacks_are_cut() {
        let e = LuaError::new(
            LuaErrorKind::Runtime,
            "x.lua:5: test error\nstack traceback:\n\t[C]: in function 'error'",
        );
        assert_eq!(lua_error(&e).as_deref(), Some("x.lua:5: test error"));
        let plain = LuaError::new(LuaErrorKind::Runtime, "for the user");
        assert_eq!(lua_error(&plain), None);
    }
}
