//! fileio stays in its working directory and touches only its own files.

use crate::util::*;

#[test]
fn prepare_run_cleanup_touch_only_their_own_files() {
    let dir = Dir::new();
    dir.write("keep.txt", "mine");
    dir.write("test_file.x", "not bmk's");
    let size = "--file-num=3 --file-total-size=3M";
    let prep = dir.bmk().args(&format!("fileio {size} prepare")).run().ok();
    for k in 0..3 {
        assert!(
            prep.stdout
                .contains(&format!("Creating file test_file.{k}\n")),
            "{}",
            prep.stdout
        );
    }
    prep.line_matching(r"^3145728 bytes written in \d+\.\d\d seconds \(\d+\.\d\d MiB/sec\)\.$");
    // `.bmk-fileio` records which test files bmk made, so cleanup removes only those.
    assert_eq!(
        dir.entries(),
        [
            ".bmk-fileio",
            "keep.txt",
            "test_file.0",
            "test_file.1",
            "test_file.2",
            "test_file.x"
        ]
    );
    for k in 0..3 {
        let len = std::fs::metadata(dir.join(&format!("test_file.{k}")))
            .unwrap()
            .len();
        assert_eq!(len, 1024 * 1024);
    }
    for mode in ["rndrw", "seqrewr", "rndwr", "seqrd"] {
        dir.bmk()
            .args(&format!(
                "fileio {size} --file-test-mode={mode} --time=1 --events=200 run"
            ))
            .run()
            .ok();
    }
    dir.bmk()
        .args(&format!(
            "fileio {size} --file-test-mode=rndrw --file-io-mode=mmap --events=100 run"
        ))
        .run()
        .ok();
    let clean = dir.bmk().args(&format!("fileio {size} cleanup")).run().ok();
    assert!(
        clean.stdout.contains("Removing test files...\n"),
        "{}",
        clean.stdout
    );
    assert_eq!(dir.entries(), ["keep.txt", "test_file.x"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("test_file.x")).unwrap(),
        "not bmk's"
    );
    // Nothing leaked into the repository.
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for d in [repo.clone(), repo.join("crates/cli")] {
        let leaked: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("test_file."))
            .collect();
        assert!(leaked.is_empty(), "{leaked:?} in {}", d.display());
    }
}

#[test]
fn async_and_direct_modes_run() {
    let dir = Dir::new();
    let size = "--file-num=2 --file-total-size=2M";
    dir.bmk().args(&format!("fileio {size} prepare")).run().ok();
    let run = dir
        .bmk()
        .args(&format!(
            "fileio {size} --file-test-mode=rndrd --file-io-mode=async --events=200 run"
        ))
        .run()
        .ok();
    assert!(
        run.stdout.contains("Using asynchronous I/O mode"),
        "{}",
        run.stdout
    );
    dir.bmk().args(&format!("fileio {size} cleanup")).run().ok();
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());
}
