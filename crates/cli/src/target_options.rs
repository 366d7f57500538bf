//! `--target NAME`: the options of a `bmk.toml` target, put before the user's own so
//! that plain options given on the command line override the target.

use std::path::PathBuf;

use bmk_kit::target::Targets;
use bmk_report::redact::{is_secret, REDACTED};

use crate::args::{GivenOption, RawArgs};

fn named<'a>(raw: &'a RawArgs, name: &str) -> Option<&'a GivenOption> {
    raw.options
        .iter()
        .rev()
        .find(|o| bmk_engine::options::canonical(&o.name) == name)
}

/// `raw` with the options of its `--target` (if any) in front.
pub fn expand(mut raw: RawArgs) -> Result<RawArgs, bmk_kit::KitError> {
    let Some(target) = named(&raw, "target").and_then(|o| o.value.clone()) else {
        return Ok(raw);
    };
    let explicit = named(&raw, "config")
        .and_then(|o| o.value.clone())
        .map(PathBuf::from);
    let home = std::env::var_os("BMK_HOME").map(PathBuf::from);
    let file = Targets::locate(explicit.as_deref(), home.as_deref())?;
    let targets = Targets::load(&file)?;
    let options = targets.options(&target, &|v| std::env::var(v).ok())?;
    let mut given: Vec<GivenOption> = options
        .into_iter()
        .map(|(name, value)| {
            // What an error message may quote: never the password itself.
            let shown = if is_secret(&name) { REDACTED } else { &value };
            GivenOption {
                original: format!("--{name}={shown} (from target '{target}')"),
                name,
                value: Some(value),
            }
        })
        .collect();
    given.append(&mut raw.options);
    raw.options = given;
    Ok(raw)
}
