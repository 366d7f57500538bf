//! Names the source a binary was built from, for `bmk --version`, and exports the
//! engine's C symbols (`sb_*`) from the executable so LuaJIT's `ffi.C` can find them
//! with dlsym.
//!
//! The commit comes from the first of these that knows it, so that every way of
//! building names it:
//! 1. `BMK_SOURCE_COMMIT` in the environment: for packagers who build from an unpacked
//!    source without its history (a distribution's source package);
//! 2. git, when the crate is inside a work tree (a clone, `cargo install --path`, the
//!    Debian package and the container image built from a clone); `.modified` is added
//!    when tracked files differ from that commit as this script runs;
//! 3. `.cargo_vcs_info.json`, which `cargo package` writes into a crate published from
//!    git (`cargo install bmk` from a registry);
//! 4. `source-commit` next to this file, which `git archive` fills in (the
//!    `export-subst` attribute in `.gitattributes`): a tarball of a commit.
//!
//! Otherwise the version says `+commit.unknown`.
use std::path::Path;
use std::process::Command;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&dir);
    println!("cargo:rerun-if-env-changed=BMK_SOURCE_COMMIT");
    println!("cargo:rerun-if-changed=source-commit");
    let build = from_env()
        .or_else(|| from_git(dir))
        .or_else(|| from_vcs_info(dir))
        .or_else(|| from_archive(dir))
        .map(|c| format!("git.{c}"))
        .unwrap_or_else(|| "commit.unknown".into());
    println!("cargo:rustc-env=BMK_BUILD={build}");
    // Only bmk runs Lua scripts; the null server needs no exported symbols.
    println!("cargo:rustc-link-arg-bin=bmk=-rdynamic");
}

/// The first 12 hex digits of `s` if it is a commit id (40 or 64 hex digits, or an
/// abbreviation of at least 7), else `None`.
pub fn commit_id(s: &str) -> Option<String> {
    let s = s.trim();
    let hex = s.len() >= 7 && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
    hex.then(|| s[..s.len().min(12)].to_ascii_lowercase())
}

fn from_env() -> Option<String> {
    commit_id(&std::env::var("BMK_SOURCE_COMMIT").ok()?)
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

pub fn from_git(dir: &Path) -> Option<String> {
    let commit = commit_id(&git(dir, &["rev-parse", "HEAD"])?)?;
    // A commit moves HEAD (a worktree's own HEAD file) or the branch it names (under
    // the common directory, or in packed-refs): watch those, so a new commit rebuilds.
    let git_dir = git(dir, &["rev-parse", "--absolute-git-dir"])?;
    let common = git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .unwrap_or_else(|| git_dir.clone());
    println!("cargo:rerun-if-changed={git_dir}/HEAD");
    println!("cargo:rerun-if-changed={common}/packed-refs");
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        println!("cargo:rerun-if-changed={common}/{branch}");
    }
    // The whole work tree, not only this crate: every crate goes into the binary.
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    // No optional locks: never take the index lock from a concurrent git command.
    let status = git(
        Path::new(&top),
        &[
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ],
    )?;
    Some(if status.is_empty() {
        commit
    } else {
        format!("{commit}.modified")
    })
}

pub fn from_vcs_info(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    // `{"git": {"sha1": "…"}, …}`: the one value this needs, without a JSON parser in
    // the build script.
    let after = text.split("\"sha1\"").nth(1)?;
    let value = after.split('"').nth(1)?;
    commit_id(value)
}

pub fn from_archive(dir: &Path) -> Option<String> {
    // Unfilled, the file holds the placeholder, which is not hex and so is ignored.
    commit_id(&std::fs::read_to_string(dir.join("source-commit")).ok()?)
}
