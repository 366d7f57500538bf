//! The sysbench command-line grammar: `[options]... [testname] [command]`.
//!
//! This layer only splits the raw arguments into option assignments and positional
//! words; it does not know which options exist. Typed checking happens once the test
//! (and with it, the full set of declared options) is known — see `settings`.

use std::path::Path;

use bmk_engine::bounded_file;

use thiserror::Error;

/// One `--name[=value]` as the user gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct GivenOption {
    /// Name without the leading dashes, with legacy aliases resolved.
    pub name: String,
    /// Value; `None` for a bare `--name` (a boolean switched on).
    pub value: Option<String>,
    /// The argument exactly as typed, for error messages.
    pub original: String,
}

/// The command line split into its parts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawArgs {
    /// Options in the order given (config-file ones first).
    pub options: Vec<GivenOption>,
    /// Test name, script path, or `-` for standard input.
    pub test: Option<String>,
    /// Command (`run`, `prepare`, ...).
    pub command: Option<String>,
    /// Warnings to print (deprecated spellings).
    pub warnings: Vec<String>,
}

/// A command line that cannot be parsed.
#[derive(Debug, Error, PartialEq)]
pub enum ArgsError {
    /// A third positional word.
    #[error("Unrecognized command line argument: {0}")]
    Unrecognized(String),
    /// `--config-file` could not be read or has a bad line.
    #[error("{0}")]
    ConfigFile(String),
}

/// Legacy 1.0 spellings that scripts still pass.
fn resolve_alias(name: &str) -> &str {
    match name {
        "num-threads" | "num_threads" => "threads",
        "max-time" | "max_time" => "time",
        "max-requests" | "max_requests" => "events",
        "tx-rate" | "tx_rate" => "rate",
        other => other,
    }
}

/// Splits `argv` (without the program name).
///
/// `takes_value` tells, in bmk mode, whether `--name` expects a value so that
/// `--name value` can be accepted; in strict mode pass a function returning false,
/// since sysbench only understands `--name=value`.
pub fn parse(argv: &[String], takes_value: &dyn Fn(&str) -> bool) -> Result<RawArgs, ArgsError> {
    parse_with(argv, takes_value, true)
}

/// [`parse`]; `test_option` says whether `--test=NAME` names the test, as in sysbench
/// 1.0 (deprecated there). sysbench 1.1 has no such option: without it `--test` is
/// an option like any other, which nothing declares.
pub fn parse_with(
    argv: &[String],
    takes_value: &dyn Fn(&str) -> bool,
    test_option: bool,
) -> Result<RawArgs, ArgsError> {
    let mut out = RawArgs::default();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        i += 1;
        if let Some(body) = arg.strip_prefix("--").filter(|b| !b.is_empty()) {
            let (name, mut value) = match body.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (body.to_string(), None),
            };
            if value.is_none() && takes_value(&name) {
                if let Some(next) = argv.get(i).filter(|n| !n.starts_with("--")) {
                    value = Some(next.clone());
                    i += 1;
                }
            }
            if name == "test" && test_option {
                out.warnings.push(
                    "WARNING: the --test option is deprecated. You can pass a script name or \
                     path on the command line without any options."
                        .to_string(),
                );
                positional.insert(0, value.unwrap_or_default());
                continue;
            }
            if name == "config-file" || name == "config_file" {
                let path = value.clone().unwrap_or_default();
                out.options.extend(read_config_file(Path::new(&path))?);
            }
            out.options.push(GivenOption {
                name: resolve_alias(&name).to_string(),
                value,
                original: arg.clone(),
            });
        } else {
            positional.push(arg.clone());
        }
    }
    let mut words = positional.into_iter();
    out.test = words.next();
    out.command = words.next();
    if let Some(extra) = words.next() {
        return Err(ArgsError::Unrecognized(extra));
    }
    Ok(out)
}

/// Reads `name=value` lines (blank lines and `#` comments ignored).
///
/// A config file may be given by mistake (`--config-file=/etc/shadow`), so no message
/// shows a line of it: a line that is not an option is named by its number, and an
/// option it sets by its name and line ([`GivenOption::original`] `--NAME (line N of
/// config file 'PATH')`), never its value.
pub fn read_config_file(path: &Path) -> Result<Vec<GivenOption>, ArgsError> {
    let shown = path.display().to_string();
    let text = read_limited(path).map_err(|e| {
        ArgsError::ConfigFile(format!(
            "cannot read config file '{shown}': {e}; check the --config-file path"
        ))
    })?;
    parse_config(&text, &shown)
}

/// The options of a config file's `text`; `shown` names the file in messages.
pub fn parse_config(text: &str, shown: &str) -> Result<Vec<GivenOption>, ArgsError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let body = line.trim_start_matches("--");
        let (name, value) = match body.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (body, None),
        };
        let is_name = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !is_name {
            return Err(ArgsError::ConfigFile(format!(
                "config file '{shown}', line {}: not an option (expected name=value)",
                n + 1
            )));
        }
        out.push(GivenOption {
            name: resolve_alias(name).to_string(),
            value,
            original: format!("--{name} (line {} of config file '{shown}')", n + 1),
        });
    }
    Ok(out)
}

/// The file's text: UTF-8 from a regular file of at most
/// [`bounded_file::CONFIG_FILE`] (a path given by mistake, `/dev/zero` or a log, is
/// refused, not read without end).
fn read_limited(path: &Path) -> Result<String, String> {
    bounded_file::read_to_string(path, bounded_file::CONFIG_FILE).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    /// The committed fuzz corpus of the config file reader (`fuzz/corpus/config_file`)
    /// through the fuzz target's entry point: no input panics.
    #[test]
    fn config_file_fuzz_corpus_replays_clean() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/config_file");
        let mut inputs = 0;
        for entry in std::fs::read_dir(&dir)
            .expect("the corpus folder")
            .flatten()
        {
            let data = std::fs::read(entry.path()).unwrap();
            if let Ok(text) = std::str::from_utf8(&data) {
                let _ = parse_config(text, "fuzz.cfg");
            }
            inputs += 1;
        }
        assert!(inputs > 0);
    }

    /// A config file's lines are never shown: not a line that is no option, not the
    /// value of one, and a file too large is refused.
    #[test]
    fn config_file_errors_show_no_line() {
        let e = parse_config("threads=2\nroot:$6$SECRET:19000::\n", "f").unwrap_err();
        assert_eq!(
            e.to_string(),
            "config file 'f', line 2: not an option (expected name=value)"
        );
        let opts = parse_config("mysql-pasword=SECRET\n", "f").unwrap();
        assert_eq!(
            opts[0].original,
            "--mysql-pasword (line 1 of config file 'f')"
        );
        let big = tempfile::NamedTempFile::new().unwrap();
        big.as_file().set_len(2 << 20).unwrap();
        let e = read_config_file(big.path()).unwrap_err();
        assert!(e.to_string().contains("larger than 1 MiB"), "{e}");
        let e = read_config_file(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[test]
    fn options_before_and_after_the_test_name() {
        let r = parse(
            &args("oltp_point_select --tables=2 run --threads=4"),
            &|_| false,
        )
        .unwrap();
        assert_eq!(r.test.as_deref(), Some("oltp_point_select"));
        assert_eq!(r.command.as_deref(), Some("run"));
        assert_eq!(r.options.len(), 2);
        assert_eq!(r.options[1].value.as_deref(), Some("4"));
    }

    #[test]
    fn strict_grammar_reads_a_separate_value_as_the_test_name() {
        let err = parse(&args("--threads 2 cpu run"), &|_| false).unwrap_err();
        assert_eq!(err.to_string(), "Unrecognized command line argument: run");
    }

    #[test]
    fn bmk_grammar_accepts_separate_values() {
        let r = parse(&args("--threads 2 cpu run"), &|n| n == "threads").unwrap();
        assert_eq!(r.test.as_deref(), Some("cpu"));
        assert_eq!(r.options[0].value.as_deref(), Some("2"));
    }

    #[test]
    fn aliases_and_test_option() {
        let r = parse(
            &args("--num-threads=3 --max-time=5 --test=cpu run"),
            &|_| false,
        )
        .unwrap();
        assert_eq!(r.options[0].name, "threads");
        assert_eq!(r.options[1].name, "time");
        assert_eq!(r.test.as_deref(), Some("cpu"));
        assert_eq!(r.command.as_deref(), Some("run"));
        assert_eq!(r.warnings.len(), 1);
    }
}
