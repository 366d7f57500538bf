//! A results directory whose disk fills up mid-run: the first failed write is said at
//! once, the level and the run end as `failed` with the reason recorded, and every file
//! left parses (no torn interval line, no half sample). The disk is a small tmpfs the
//! test mounts (as root), and, everywhere, a file-size limit on the bmk process.
//! Also: no results file is written through a symbolic link.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{Dir, Run};

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (mount(8) syntax) at `at`; `None` when this process
    /// may not mount.
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// The cpu run whose results go to `dir`: short intervals and a fast capture, so that
/// every kind of file is being appended when the disk fills.
fn run_args(dir: &Path) -> String {
    format!(
        "cpu --cpu-max-prime=2000 --threads=1 --time=4 --report-interval=0.1 --capture-interval=0.2 --results-dir={} run",
        dir.display()
    )
}

/// Waits until `path` has at least `n` lines.
fn wait_for_lines(path: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let lines = std::fs::read_to_string(path).map_or(0, |t| t.lines().count());
        if lines >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} never got {n} lines",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Fills the file system of `dir` to the last byte.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![0u8; 4096];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.flush();
}

/// Every file under `dir` parses: JSON documents, interval lines (each whole, the file
/// ending in a newline) and capture files (whole samples).
fn assert_every_file_parses(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            assert_every_file_parses(&path);
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let shown = path.display();
        if name.ends_with(".json") && !name.starts_with('.') {
            serde_json::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{shown}: {e}"));
        } else if name.ends_with(".jsonl") {
            assert!(
                text.is_empty() || text.ends_with('\n'),
                "{shown}: a torn last line"
            );
            for line in text.lines() {
                serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{shown}: {e}"));
            }
        } else if name.ends_with(".txt") {
            assert!(text.ends_with('\n'), "{shown}: a sample cut short");
            let samples = bmk_results::capture::samples(&text);
            assert!(!samples.is_empty(), "{shown}: no whole sample");
            assert!(
                text.starts_with("TS "),
                "{shown}: text before the first sample"
            );
        }
    }
}

/// What every variant checks once bmk has ended.
fn assert_failed_with_reason(run: &Run, results: &Path, error: &str) {
    assert_eq!(run.code, Some(1), "{}", run.context());
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("WARNING: "))
        .collect();
    assert!(
        !warnings.is_empty() && warnings.len() <= 2,
        "one warning per writer, at once: {}",
        run.context()
    );
    assert!(
        warnings[0].contains(error),
        "the first warning says why: {}",
        run.context()
    );
    let read = |p: PathBuf| -> Value {
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let manifest = read(results.join("run.json"));
    let level = read(results.join("level-0001/level.json"));
    for (what, v) in [("run.json", &manifest), ("level.json", &level)] {
        assert_eq!(v["status"], "failed", "{what}: {v}");
        let reason = v["reason"].as_str().unwrap_or_default();
        assert!(reason.contains(error), "{what}: reason {reason:?}");
    }
    assert!(
        !results.join("level-0001/.bmk-reserve").exists(),
        "the reserve is given up for the last records"
    );
    assert_every_file_parses(results);
}

#[test]
fn a_full_disk_ends_the_level_as_failed_with_every_file_whole() {
    let dir = Dir::new();
    let mnt = dir.join("small");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let Some(_fs) = root.then(|| Tmpfs::mount(&mnt, "8m")).flatten() else {
        // Without root (or without the right to mount) the file-size limit test below
        // stands in; under CI=true this fails instead.
        let _: Option<()> = bmk_testkit::unavailable(
            "a full-disk test on tmpfs",
            "cannot mount a tmpfs (not root)",
        );
        return;
    };
    let results = mnt.join("r");
    let (child, line) = dir.bmk().args(&run_args(&results)).spawn();
    wait_for_lines(&results.join("level-0001/intervals.jsonl"), 3);
    fill(&mnt);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut child = child;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "`{line}` still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
    let run = Run::new(line, child.wait_with_output().unwrap());
    // The filler is not bmk's; the rest must parse.
    std::fs::remove_file(mnt.join("filler")).unwrap();
    assert_failed_with_reason(&run, &results, "No space left on device");
}

#[test]
fn a_file_size_limit_ends_the_level_as_failed_with_every_file_whole() {
    let dir = Dir::new();
    let results = dir.join("r");
    let run = dir
        .bmk()
        .args(&run_args(&results))
        .file_size_limit(48 * 1024)
        .run_within(Duration::from_secs(60));
    assert_failed_with_reason(&run, &results, "File too large");
}

/// `intervals.jsonl` in a level folder (`BMK_LEVEL_DIR`) that is a link to a file
/// elsewhere: refused at the start with one line, the other file untouched.
#[test]
fn a_level_file_that_is_a_link_is_not_written_through() {
    let dir = Dir::new();
    let level = dir.join("level-0001");
    std::fs::create_dir(&level).unwrap();
    dir.write("victim.txt", "precious\n");
    std::os::unix::fs::symlink(dir.join("victim.txt"), level.join("intervals.jsonl")).unwrap();
    let run = dir
        .bmk()
        .env("BMK_LEVEL_DIR", level.to_str().unwrap())
        .args("cpu --cpu-max-prime=2000 --events=50 --report-interval=1 run")
        .run();
    assert_eq!(run.code, Some(1), "{}", run.context());
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.context());
    assert!(
        run.stderr
            .contains("intervals.jsonl: a symbolic link: refusing to write through it"),
        "{}",
        run.context()
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("victim.txt")).unwrap(),
        "precious\n"
    );
}
