//! Test support shared by every crate's integration tests: the one rule for a test
//! whose server or tool is missing, and names that do not collide.
//!
//! Owns: the skip-or-fail gate ([`unavailable`], [`require!`], [`ci`]),
//! [`unique_name`], [`bmk_bin`] for tests outside the binary's own crate, and headless
//! Chromium ([`chromium`], [`headless_chromium`]) for the tests that render pages, and
//! [`mariadb_install_db`] for the tests that start a private MariaDB. A test that cannot run prints one `NOTE: skipping test:` line on
//! standard error, so a reader of the test log sees it; under `CI=true` (which `.ci/run`
//! sets) it fails instead, so CI never passes by skipping. A skipped test still counts
//! as passed, and nextest hides the output of passed tests, so each skip is also
//! appended as one line to the file `$BMK_SKIP_LOG` names; `.ci/test` (the README's
//! test command) sets it and prints the count and reasons when the run ends.
//!
//! Must not: depend on any bmk crate (the crates under test take it as a
//! dev-dependency, and a dependency back on them would link a second copy of the crate
//! under test), or hold fixtures of one crate's tests.

#![deny(missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// True under CI (`CI=true`): a missing server or tool is a failure, not a skip.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The gate for a test whose `what` (a server, a program) is missing for reason `why`:
/// panics under CI, else prints the skip line and returns `None`, which the test turns
/// into an early return with [`require!`].
pub fn unavailable<T>(what: &str, why: &str) -> Option<T> {
    if ci() {
        panic!("{what} is required under CI=true but unavailable: {why}");
    }
    eprintln!("NOTE: skipping test: {what} unavailable: {why}");
    record_skip(what, why);
    None
}

/// Appends `test<TAB>what<TAB>why` to `$BMK_SKIP_LOG` when it is set. One short
/// `O_APPEND` write per line, so the lines of tests running at once do not interleave.
fn record_skip(what: &str, why: &str) {
    let Some(path) = std::env::var_os("BMK_SKIP_LOG") else {
        return;
    };
    let test = std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .map(str::to_string)
        .unwrap_or_else(|| std::env::args().nth(1).unwrap_or_default());
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .map(|n| n.rsplit_once('-').map_or(n.clone(), |(b, _)| b.to_string()))
        .unwrap_or_default();
    let one_line = |s: &str| s.replace(['\n', '\t'], " ");
    let line = format!(
        "{binary}::{}\t{}\t{}\n",
        one_line(&test),
        one_line(what),
        one_line(why)
    );
    use std::io::Write as _;
    if let Ok(mut f) = std::fs::File::options()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// Unwraps an `Option` from a gated constructor, or returns from the test (a skip that
/// [`unavailable`] has already announced).
#[macro_export]
macro_rules! require {
    ($e:expr) => {
        match $e {
            Some(v) => v,
            None => return,
        }
    };
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A name `<prefix>_<pid>_<n>`, unique on this machine while the process lives: tests of
/// several processes (nextest runs each test in its own) share the servers, so database,
/// user and table names must not collide. `prefix` says which tests made it, so a
/// leftover is traceable.
pub fn unique_name(prefix: &str) -> String {
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The workspace's root folder (two levels above this crate).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("workspace root")
        .to_path_buf()
}

/// The newest modification time of the workspace's sources (`crates/**`).
fn newest_source(dir: &Path) -> std::time::SystemTime {
    let mut newest = std::time::SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let t = if path.is_dir() {
            newest_source(&path)
        } else {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(newest)
        };
        newest = newest.max(t);
    }
    newest
}

/// The `bmk` binary (`$BMK_BIN`, else `target/debug/bmk`, built first when missing or
/// older than a source file, so that a test never runs a stale binary).
pub fn bmk_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Ok(p) = std::env::var("BMK_BIN") {
            return PathBuf::from(p);
        }
        let root = workspace_root();
        let target = std::env::var("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root.join("target"));
        let bin = target.join("debug").join("bmk");
        let built = std::fs::metadata(&bin).and_then(|m| m.modified()).ok();
        if built.is_none_or(|t| t < newest_source(&root.join("crates"))) {
            let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["build", "-p", "bmk"])
                .current_dir(&root)
                .status()
                .expect("cargo build -p bmk");
            assert!(status.success(), "cargo build -p bmk failed");
            // An up-to-date build leaves the file as it was (a test file newer than
            // it changed nothing in it): mark it checked so the next test skips cargo.
            let _ = std::fs::File::options()
                .write(true)
                .open(&bin)
                .and_then(|f| f.set_modified(std::time::SystemTime::now()));
        }
        bin
    })
}

/// The `bmk-null-server` binary: built with `bmk` (same package), so it is next to
/// [`bmk_bin`], which builds both when needed.
pub fn null_server_bin() -> PathBuf {
    bmk_bin().with_file_name("bmk-null-server")
}

/// Debian's Chromium (`chromium`, or `chromium-browser` elsewhere), if it runs.
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// `browser` headless with a new profile in `profile`, and without the background
/// connections (updates, sync, component downloads) that a machine without a network
/// would refuse at every start; the caller adds what to load and how.
pub fn headless_chromium(browser: &str, profile: &Path) -> Command {
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

/// `mariadb-install-db` (the program `install`) making a new data directory `data` for a
/// private server with a root login and an empty password, its temporary files in `tmp`
/// (servers running at once must not share them); the caller runs it.
pub fn mariadb_install_db(install: &Path, data: &Path, tmp: &Path) -> Command {
    let mut cmd = Command::new(install);
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--tmpdir={}", tmp.display()))
        .args([
            "--user=root",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
        ])
        .stdin(std::process::Stdio::null());
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_carry_the_prefix() {
        let a = unique_name("bmk_t");
        let b = unique_name("bmk_t");
        assert_ne!(a, b);
        assert!(
            a.starts_with(&format!("bmk_t_{}_", std::process::id())),
            "{a}"
        );
    }

    #[test]
    fn a_skip_is_recorded_in_the_skip_log() {
        let dir = std::env::temp_dir().join(unique_name("bmk_skip_log"));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("skips.txt");
        std::env::set_var("CI", "false");
        std::env::set_var("BMK_SKIP_LOG", &log);
        assert_eq!(unavailable::<u8>("PostgreSQL", "refused"), None);
        assert_eq!(unavailable::<u8>("openssl", "not\ninstalled"), None);
        std::env::remove_var("BMK_SKIP_LOG");
        std::env::remove_var("CI");
        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with("a_skip_is_recorded_in_the_skip_log\tPostgreSQL\trefused"),
            "{text}"
        );
        assert!(lines[1].ends_with("\topenssl\tnot installed"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_server_is_a_skip_outside_ci_and_a_failure_in_ci() {
        // One test for both cases: the environment is process-wide.
        std::env::set_var("CI", "false");
        assert_eq!(unavailable::<u8>("a server", "refused"), None);
        std::env::set_var("CI", "true");
        let failed = std::panic::catch_unwind(|| unavailable::<u8>("a server", "refused"));
        std::env::remove_var("CI");
        assert!(failed.is_err());
    }
}
