//! Keeping secrets out of results: options whose name contains `password` or `secret`
//! (any case, `-` and `_` alike) have their value replaced by `***` — in the option map
//! and in the command line, whether given as `--name=value` or, in bmk's relaxed
//! grammar, as `--name value`.

/// What a redacted value is replaced with.
pub const REDACTED: &str = "***";

/// Whether an option of this name holds a secret.
pub fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.contains("password") || name.contains("secret")
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
        let opts = redact_options([("mysql-password", "x"), ("threads", "4")]);
        assert_eq!(opts[0], ("mysql-password".into(), "***".into()));
        assert_eq!(opts[1], ("threads".into(), "4".into()));
    }
}
