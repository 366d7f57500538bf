//! Every help text, byte for byte: `--help` as `bmk` and as `sysbench`, `--db-driver=help`,
//! each system test's `help` and each built-in workload's `help`, under both names; as
//! `bmk`, its own commands' help (`help`, `-h`, `-V`, `kit`, each subcommand's `--help`)
//! and the one-line errors of mistyped names (`*.stderr.txt`: standard error, exit 1).
//!
//! The goldens live in `tests/help/`, one file per command line (its standard output;
//! the exit code must be 0 and standard error empty). They hold the option tables the
//! option definitions generate, so any change to a definition's name, type, default or
//! description shows here. After a deliberate change of a help text, run the tests with
//! `BMK_BLESS=1` and review the difference before committing it. The commit that strict
//! mode's banner names (`sysbench 1.1.0-abc1234`) is written as `REV`.

use std::path::PathBuf;

use crate::util::*;

/// Where the goldens are.
fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/help")
}

/// The help command lines: (golden file stem, program name, arguments).
fn command_lines() -> Vec<(String, &'static str, String)> {
    let mut lines = Vec::new();
    for program in ["bmk", "sysbench"] {
        lines.push((format!("{program}--help"), program, "--help".to_string()));
        if program == "sysbench" {
            // sysbench 1.0.20 lists other general options.
            lines.push((
                "sysbench-1.0--help".to_string(),
                "sysbench-1.0",
                "--help".to_string(),
            ));
        }
        lines.push((
            format!("{program}--db-driver=help"),
            program,
            "--db-driver=help".to_string(),
        ));
        for test in ["cpu", "fileio", "memory", "threads", "mutex"] {
            lines.push((
                format!("{program}-{test}-help"),
                program,
                format!("{test} help"),
            ));
        }
        for workload in bmk_workloads::workload_names() {
            lines.push((
                format!("{program}-{workload}-help"),
                program,
                format!("{workload} help"),
            ));
        }
    }
    for (stem, args) in [
        ("bmk-help", "help"),
        ("bmk--h", "-h"),
        ("bmk--V", "-V"),
        ("bmk-version", "version"),
        ("bmk-help-report", "help report"),
        ("bmk-kit", "kit"),
        ("bmk-kit--help", "kit --help"),
        ("bmk-report--help", "report --help"),
        ("bmk-compare--help", "compare --help"),
        ("bmk-merge--help", "merge --help"),
    ] {
        lines.push((stem.to_string(), "bmk", args.to_string()));
    }
    for sub in [
        "list", "show", "prepare", "run", "sweep", "search", "k8s", "ssh",
    ] {
        lines.push((
            format!("bmk-kit-{sub}--help"),
            "bmk",
            format!("kit {sub} --help"),
        ));
    }
    lines
}

/// Mistakes whose one line of standard error is golden: (file stem, arguments).
const TYPOS: [(&str, &str); 5] = [
    ("bmk-repot.stderr", "repot results"),
    ("bmk-kit-sweeep.stderr", "kit sweeep OLTP_RW_500_2tab-trx"),
    (
        "bmk-db-driver=sqlit.stderr",
        "oltp_read_write --db-driver=sqlit prepare",
    ),
    (
        "bmk-tabels.stderr",
        "oltp_read_write --db-driver=sqlite --tabels=4 prepare",
    ),
    (
        "bmk-compare-fail-if-slowr.stderr",
        "compare a b --fail-if-slowr=5",
    ),
];

/// The text with the commit in a `sysbench X.Y.Z-<commit>` banner, and the source in a
/// `bmk X.Y.Z+git.<commit>` version line, replaced by `REV`: both change with every commit.
fn without_revision(text: &str) -> String {
    let re = regex::Regex::new(r"(?m)^(sysbench [0-9.]+)-[0-9a-f]{7,40}\b").unwrap();
    let text = re.replace(text, "${1}-REV");
    let bmk = regex::Regex::new(r"(?m)^(bmk [0-9.]+)\+\S+").unwrap();
    bmk.replace(&text, "${1}+REV").into_owned()
}

#[test]
fn every_help_text_matches_its_golden() {
    let dir = Dir::new();
    let bless = std::env::var_os("BMK_BLESS").is_some();
    let mut checked = 0;
    for (stem, program, args) in command_lines() {
        let cmd = match program {
            "bmk" => dir.bmk(),
            "sysbench-1.0" => dir.sysbench().env("BMK_SYSBENCH_COMPAT", "1.0"),
            _ => dir.sysbench(),
        };
        let mut run = cmd.args(&args).run().ok();
        run.stdout = without_revision(&run.stdout);
        let path = golden_dir().join(format!("{stem}.txt"));
        if bless {
            std::fs::create_dir_all(golden_dir()).expect("create the golden directory");
            std::fs::write(&path, &run.stdout).expect("write a golden");
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "no golden {} ({e}); run with BMK_BLESS=1 to create it",
                path.display()
            )
        });
        assert_text_eq(&expected, &run.stdout, &run.context());
        checked += 1;
    }
    for (stem, args) in TYPOS {
        // Standard output may hold the banner, as before any test's failure.
        let run = dir.bmk().args(args).run().code(1);
        let path = golden_dir().join(format!("{stem}.txt"));
        if bless {
            std::fs::write(&path, &run.stderr).expect("write a golden");
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "no golden {} ({e}); run with BMK_BLESS=1 to create it",
                path.display()
            )
        });
        assert_text_eq(&expected, &run.stderr, &run.context());
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.context());
        checked += 1;
    }
    if !bless {
        // Every golden on disk belongs to a command line still checked.
        let on_disk = std::fs::read_dir(golden_dir()).unwrap().count();
        assert_eq!(
            on_disk,
            checked,
            "stale goldens in {}",
            golden_dir().display()
        );
    }
}

/// A bare `bmk` on a terminal prints the help `bmk --help` prints (off a terminal it
/// reads a script from standard input, as sysbench does).
#[test]
fn a_bare_bmk_on_a_terminal_prints_the_help() {
    let dir = Dir::new();
    let (mut leader, mut follower) = (0, 0);
    // SAFETY: openpty fills the two descriptors it is given; the others may be null.
    let opened = unsafe {
        libc::openpty(
            &mut leader,
            &mut follower,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(opened, 0, "openpty");
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (leader, follower) = unsafe {
        use std::os::fd::FromRawFd;
        (
            std::fs::File::from_raw_fd(leader),
            std::fs::File::from_raw_fd(follower),
        )
    };
    let out = std::process::Command::new(BMK)
        .current_dir(dir.path())
        .stdin(follower)
        .output()
        .expect("run bmk");
    drop(leader);
    assert_eq!(out.status.code(), Some(0));
    let expected = std::fs::read_to_string(golden_dir().join("bmk--help.txt")).unwrap();
    assert_text_eq(
        &expected,
        &String::from_utf8_lossy(&out.stdout),
        "bmk (standard input a terminal)",
    );
}
