//! `bmk --version` names the exact source in every way of building: the build script's
//! sources of the commit (environment, git, a published crate's `.cargo_vcs_info.json`,
//! a `git archive` tarball's `source-commit`), each checked here, and the binary under
//! test names the commit it was built from.

#[allow(dead_code)]
#[path = "../build.rs"]
mod build_script;

use std::path::Path;
use std::process::Command;

use build_script::{commit_id, from_archive, from_git, from_vcs_info};

const FULL: &str = "0123456789abcdef0123456789abcdef01234567";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_commit_id_is_hex_and_shortened_to_twelve_digits() {
    assert_eq!(commit_id(FULL).as_deref(), Some("0123456789ab"));
    assert_eq!(commit_id("ABCDEF0\n").as_deref(), Some("abcdef0"));
    // git archive's placeholder when the file was not filled in, and other non-ids.
    assert_eq!(commit_id("$Format:%H$"), None);
    assert_eq!(commit_id("abc"), None);
    assert_eq!(commit_id(""), None);
    assert_eq!(commit_id("0123456789abcdeg"), None);
}

#[test]
fn a_published_crate_names_the_commit_cargo_package_recorded() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(from_vcs_info(dir.path()), None);
    std::fs::write(
        dir.path().join(".cargo_vcs_info.json"),
        format!("{{\n  \"git\": {{\n    \"sha1\": \"{FULL}\"\n  }},\n  \"path_in_vcs\": \"crates/cli\"\n}}\n"),
    )
    .unwrap();
    assert_eq!(from_vcs_info(dir.path()).as_deref(), Some("0123456789ab"));
}

#[test]
fn a_tarball_names_the_commit_git_archive_wrote() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(from_archive(dir.path()), None);
    std::fs::write(dir.path().join("source-commit"), "$Format:%H$\n").unwrap();
    assert_eq!(from_archive(dir.path()), None, "an unfilled placeholder");
    std::fs::write(dir.path().join("source-commit"), format!("{FULL}\n")).unwrap();
    assert_eq!(from_archive(dir.path()).as_deref(), Some("0123456789ab"));
}

/// The repository's own `git archive` fills `source-commit` in (the `export-subst`
/// attribute of `.gitattributes` is in place and names the right file).
#[test]
fn git_archive_fills_in_the_source_commit_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&root)
        .output()
        .is_ok_and(|o| o.status.success())
    {
        // Built from a tarball: the file was filled in (or not) when it was made.
        eprintln!("skipped: the source is not a git work tree");
        return;
    }
    let head = git(&root, &["rev-parse", "HEAD"]);
    let out = Command::new("git")
        .args([
            "archive",
            "--format=tar",
            "HEAD",
            "crates/cli/source-commit",
        ])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("{head}\n")),
        "the archived crates/cli/source-commit does not hold HEAD {head}"
    );
}

#[test]
fn a_git_work_tree_names_its_commit_and_says_when_files_differ() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q"]);
    std::fs::write(d.join("a.rs"), "fn a() {}\n").unwrap();
    git(d, &["add", "a.rs"]);
    git(
        d,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "first",
        ],
    );
    let head = git(d, &["rev-parse", "HEAD"]);
    assert_eq!(from_git(d), Some(head[..12].to_string()));
    // An untracked file is not part of the build's source; an edited tracked one is.
    std::fs::write(d.join("notes.txt"), "x").unwrap();
    assert_eq!(from_git(d), Some(head[..12].to_string()));
    std::fs::write(d.join("a.rs"), "fn a() { }\n").unwrap();
    assert_eq!(from_git(d), Some(format!("{}.modified", &head[..12])));
    assert_eq!(
        from_git(&std::env::temp_dir().join("no-such-dir-bmk")),
        None
    );
}

/// The binary under test was built from this work tree, so it names HEAD.
#[test]
fn bmk_version_names_the_commit_it_was_built_from() {
    let out = Command::new(env!("CARGO_BIN_EXE_bmk"))
        .arg("--version")
        .env_remove("BMK_SYSBENCH_COMPAT")
        .output()
        .unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let expected = match std::env::var("BMK_SOURCE_COMMIT") {
        Ok(c) => commit_id(&c).unwrap(),
        Err(_) => match from_git(root) {
            Some(c) => c.trim_end_matches(".modified").to_string(),
            None => {
                eprintln!("skipped: the source is not a git work tree");
                return;
            }
        },
    };
    let prefix = format!("bmk {version}+git.{expected}");
    assert!(
        line.starts_with(&prefix) && line.ends_with(" (sysbench 1.1.0 compatible)\n"),
        "{line:?} does not start with {prefix:?}"
    );
}

/// Without `--image`, the Job runs the image the repository's recipe builds of this
/// version; `--image` names another.
#[test]
fn the_k8s_job_runs_the_recipes_image_unless_told_otherwise() {
    let image = |extra: &[&str]| -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_bmk"))
            .args(["kit", "k8s", "OLTP_RO_200_1tab", "2", "2", "--clients=2"])
            .args(["--job=ship", "--mysql-host=db.example"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let job: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        job["spec"]["template"]["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        image(&[]),
        format!("localhost/bmk:{}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(
        image(&["--image=registry.example/bmk:1"]),
        "registry.example/bmk:1"
    );
}
