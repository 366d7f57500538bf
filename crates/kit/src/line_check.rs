//! Refusing a level's command line before anything is written: a sweep or a search
//! passes every option it does not declare to its levels, so an unknown option or a
//! bad value (`--resume=x` given to an older sweep, `--tables=abc`) would otherwise
//! surface only when the first level starts, after the results folder was made.
//!
//! The kit cannot know the options a level accepts (the test declares them, a Lua
//! script at load time), and it must not parse the sysbench command line: the binary
//! does. So it asks the binary: the level's own line with its command `run` replaced
//! by `help` goes through the same option checks as a run (undeclared options, value
//! ranges) and then only prints the test's options, without connecting anywhere.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::KitError;

/// Checks the level command line `args` (the program's arguments, ending with the
/// command `run`) with the binary `program`. `Err` carries the binary's first line of
/// complaint, prefixed with `what` (`bmk kit sweep`).
pub fn check(program: &Path, args: &[String], what: &str) -> Result<(), KitError> {
    let Some((last, head)) = args.split_last() else {
        return Ok(());
    };
    if last != "run" {
        return Ok(());
    }
    let mut line: Vec<String> = head.to_vec();
    line.push("help".into());
    let out = Command::new(program)
        .args(&line)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| KitError::io(program, e))?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("the level's command line was refused");
    Err(KitError::Usage(format!("{what}: {first}")))
}
