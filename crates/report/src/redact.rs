//! Keeping secrets out of everything bmk writes: options whose name contains
//! `password` or `secret` (any case, `-` and `_` alike) have their value replaced by
//! `***` — in the option map, in option dumps, and in the command line, whether given as
//! `--name=value` or, in bmk's relaxed grammar, as `--name value`. An option that
//! nothing declared may be a mistyped secret (`--mysql-pasword=...`), so messages about
//! one show its name only ([`shown_argument`]).
//!
//! This module is the one place that decides what is secret: the results file, the
//! option dumps of the workloads, error messages and the Lua API all ask it.

/// What a redacted value is replaced with.
pub const REDACTED: &str = "***";

/// Whether an option of this name holds a secret.
pub fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.contains("password") || name.contains("secret")
}

/// The value to show for option `name`: `***` for a secret.
pub fn shown_value<'a>(name: &str, value: &'a str) -> &'a str {
    if is_secret(name) {
        REDACTED
    } else {
        value
    }
}

/// Whether an option nothing declared may be a secret: its name is a secret's, or holds
/// `pass`, `pwd` or something within two typing errors of `password` or `secret`
/// (`--mysql-pasword`, `--pgsql-passwrod`, `--mysql-secert`).
pub fn may_be_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    is_secret(&lower)
        || lower.contains("pass")
        || lower.contains("pwd")
        || ["password", "secret"]
            .iter()
            .any(|word| fuzzy_contains(&lower, word, 2))
}

/// Whether `text` has a substring within `max` edits (insertions, deletions,
/// substitutions) of `word`: the edit-distance table with a free start and end in
/// `text` (Sellers' algorithm). Hand-rolled: a dozen lines, and no crate is made for it.
fn fuzzy_contains(text: &str, word: &str, max: usize) -> bool {
    let w = word.as_bytes();
    // prev[j]: the fewest edits that turn w[..j] into a substring ending here.
    let mut prev: Vec<usize> = (0..=w.len()).collect();
    if prev[w.len()] <= max {
        return true;
    }
    for &c in text.as_bytes() {
        let mut cur = vec![0; w.len() + 1];
        for j in 1..=w.len() {
            let sub = prev[j - 1] + usize::from(w[j - 1] != c);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
        }
        if cur[w.len()] <= max {
            return true;
        }
        prev = cur;
    }
    false
}

/// An argument as a message about an option nothing declared shows it: the value of
/// one that [may be a secret](may_be_secret) is `***`; anything else is shown as given,
/// as sysbench shows it (`invalid option: --foo=1`).
pub fn shown_argument(arg: &str) -> String {
    let body = arg.trim_start_matches('-');
    match arg.split_once('=') {
        Some((name, value))
            if !value.is_empty() && may_be_secret(body.split('=').next().unwrap_or("")) =>
        {
            format!("{name}={REDACTED}")
        }
        _ => arg.to_string(),
    }
}

/// `(name, value)` pairs with secret values replaced.
pub fn redact_options<I, K, V>(options: I) -> Vec<(String, String)>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<String>,
    V: Into<String>,
{
    options
        .into_iter()
        .map(|(k, v)| {
            let k = k.into();
            let v = if is_secret(&k) {
                REDACTED.to_string()
            } else {
                v.into()
            };
            (k, v)
        })
        .collect()
}

/// A command line with secret option values replaced.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for arg in args {
        if hide_next {
            hide_next = false;
            if !arg.starts_with("--") {
                out.push(REDACTED.to_string());
                continue;
            }
        }
        match arg.strip_prefix("--") {
            Some(opt) if is_secret(opt.split('=').next().unwrap_or("")) => {
                match opt.split_once('=') {
                    Some((name, _)) => out.push(format!("--{name}={REDACTED}")),
                    None => {
                        out.push(arg.clone());
                        hide_next = true;
                    }
                }
            }
            _ => out.push(arg.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_hidden() {
        let args: Vec<String> = [
            "bmk",
            "--mysql-password=hunter2",
            "--pgsql_PASSWORD",
            "s3cret",
            "--api-secret=x",
            "--threads=4",
            "--mysql-user=root",
            "oltp_read_write",
            "run",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            redact_args(&args),
            [
                "bmk",
                "--mysql-password=***",
                "--pgsql_PASSWORD",
                "***",
                "--api-secret=***",
                "--threads=4",
                "--mysql-user=root",
                "oltp_read_write",
                "run"
            ]
        );
        assert_eq!(shown_value("pgsql_password", "pw"), "***");
        assert_eq!(shown_value("threads", "4"), "4");
        assert_eq!(
            shown_argument("--mysql-pasword=SECRET"),
            "--mysql-pasword=***"
        );
        assert_eq!(shown_argument("--foo"), "--foo");
        assert_eq!(shown_argument("--foo=1"), "--foo=1");
        assert_eq!(
            shown_argument("--oltp-table-size=77"),
            "--oltp-table-size=77"
        );
        for typo in [
            "--pgsql-passwrod=x",
            "--mysql-secert=x",
            "--my-pwd=x",
            "--passwd=x",
        ] {
            assert!(shown_argument(typo).ends_with("=***"), "{typo}");
        }
        for plain in [
            "threads",
            "tables",
            "report-interval",
            "table-size",
            "percentile",
        ] {
            assert!(!may_be_secret(plain), "{plain}");
        }
        let opts = redact_options([("mysql-password", "x"), ("threads", "4")]);
        assert_eq!(opts[0], ("mysql-password".into(), "***".into()));
        assert_eq!(opts[1], ("threads".into(), "4".into()));
    }
}
