//! `fileio` prepare, run and cleanup, each in its own temporary directory.

mod common;

use std::fs;
use std::path::Path;

use bmk_engine::Counter;
use bmk_systests::{FileIoMode, SystemTestError};
use common::{bench, counter, run_events, try_bench};

const BLOCK: u64 = 4096;

/// 2 files of 4 blocks each, no periodic flushes unless `extra` asks.
fn args<'a>(mode: &'a str, io: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut a = vec![
        ("file-num", "2"),
        ("file-total-size", "32K"),
        ("file-block-size", "4096"),
        ("file-test-mode", mode),
        ("file-io-mode", io),
        ("file-fsync-freq", "0"),
        ("file-fsync-end", "off"),
        ("file-async-backlog", "4"),
    ];
    a.extend_from_slice(extra);
    a
}

fn prepare(dir: &Path, args: &[(&str, &str)]) -> String {
    let b = bench("fileio", args, 1, 0, Some(dir));
    let mut out = Vec::new();
    b.prepare(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn cleanup(dir: &Path, args: &[(&str, &str)]) -> String {
    let b = bench("fileio", args, 1, 0, Some(dir));
    let mut out = Vec::new();
    b.cleanup(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// The directory's entries, without the hidden record of the files bmk made.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".bmk-fileio")
        .collect();
    v.sort();
    v
}

#[test]
fn prepare_creates_sized_files_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let a = args("rndrd", "sync", &[]);
    let out = prepare(dir.path(), &a);
    let lines: Vec<&str> = out.lines().collect();
    // sysbench's line: whole KiB and MiB, rounded down.
    assert_eq!(lines[0], "2 files, 16Kb each, 0Mb total");
    assert_eq!(lines[1], "Creating files for the test...");
    assert_eq!(lines[2], "Extra file open flags: (none)");
    assert_eq!(lines[3], "Creating file test_file.0");
    assert_eq!(lines[4], "Creating file test_file.1");
    assert!(
        lines[5].starts_with("32768 bytes written in ") && lines[5].ends_with(" MiB/sec)."),
        "{}",
        lines[5]
    );
    assert_eq!(lines.len(), 6);
    for i in 0..2 {
        assert_eq!(
            fs::metadata(dir.path().join(format!("test_file.{i}")))
                .unwrap()
                .len(),
            16384
        );
    }
    // Files already big enough are reused, as sysbench reuses them.
    let again = prepare(dir.path(), &a);
    let lines: Vec<&str> = again.lines().collect();
    assert_eq!(
        lines[3..],
        [
            "Reusing existing file test_file.0",
            "Reusing existing file test_file.1",
            "No bytes written."
        ]
    );
    cleanup(dir.path(), &a);
    assert!(names(dir.path()).is_empty());
}

#[test]
fn every_mode_in_every_io_mode_counts_its_operations() {
    for io in ["sync", "async", "mmap"] {
        let dir = tempfile::tempdir().unwrap();
        prepare(dir.path(), &args("seqwr", io, &[]));
        for mode in FileIoMode::ALL {
            let a = args(mode.name(), io, &[]);
            let b = bench("fileio", &a, 2, 40, Some(dir.path()));
            assert_eq!(b.fileio_mode(), Some(mode));
            let stats = run_events(&b, 2, 40);
            let (reads, writes) = (
                counter(&stats, Counter::Read),
                counter(&stats, Counter::Write),
            );
            assert_eq!(stats.events, 40, "{io} {}", mode.name());
            assert_eq!(reads + writes, 40, "{io} {}", mode.name());
            assert_eq!(counter(&stats, Counter::BytesRead), reads * BLOCK);
            assert_eq!(counter(&stats, Counter::BytesWritten), writes * BLOCK);
            assert_eq!(
                counter(&stats, Counter::Other),
                0,
                "no flushes were asked for"
            );
            match mode {
                FileIoMode::SeqRd | FileIoMode::RndRd => assert_eq!(writes, 0),
                FileIoMode::SeqWr | FileIoMode::SeqRewr | FileIoMode::RndWr => {
                    assert_eq!(reads, 0)
                }
                FileIoMode::RndRw => assert!(reads > 0 && writes > 0, "{reads}/{writes}"),
            }
        }
        cleanup(dir.path(), &args("seqwr", io, &[]));
        assert!(names(dir.path()).is_empty(), "{io}");
    }
}

#[test]
fn sequential_modes_wrap_around_and_merge_requests() {
    let dir = tempfile::tempdir().unwrap();
    let a = args("seqrd", "sync", &[]);
    prepare(dir.path(), &a);
    // 8 blocks in the set: 20 requests walk it two and a half times.
    let stats = run_events(&bench("fileio", &a, 1, 20, Some(dir.path())), 1, 20);
    assert_eq!(counter(&stats, Counter::Read), 20);
    assert_eq!(counter(&stats, Counter::BytesRead), 20 * BLOCK);
    // Three blocks per request and 4 per file: requests of 3 and 1 blocks alternate.
    let merged = args("seqrd", "sync", &[("file-merged-requests", "3")]);
    let b = bench("fileio", &merged, 1, 4, Some(dir.path()));
    assert!(b
        .header_lines()
        .contains(&"Merging requests up to 12KiB for sequential IO.".to_string()));
    let stats = run_events(&b, 1, 4);
    assert_eq!(counter(&stats, Counter::Read), 4);
    assert_eq!(counter(&stats, Counter::BytesRead), 8 * BLOCK);
    cleanup(dir.path(), &a);
}

#[test]
fn flushes_follow_the_fsync_options() {
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path(), &args("seqwr", "sync", &[]));
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], u64);
    let cases: &[Case] = &[
        // Every 10 requests both files, then both at the end: 50/10*2 + 2.
        (
            "seqwr",
            "sync",
            &[("file-fsync-freq", "10"), ("file-fsync-end", "on")],
            12,
        ),
        ("rndwr", "async", &[("file-fsync-freq", "25")], 4),
        (
            "rndwr",
            "mmap",
            &[("file-fsync-freq", "25"), ("file-fsync-mode", "fdatasync")],
            4,
        ),
        // After every write, and periodic flushing is then off.
        (
            "rndwr",
            "sync",
            &[("file-fsync-all", "on"), ("file-fsync-freq", "10")],
            50,
        ),
        (
            "seqrewr",
            "sync",
            &[("file-fsync-all", "on"), ("file-fsync-end", "on")],
            52,
        ),
        // Read-only modes never flush.
        (
            "rndrd",
            "sync",
            &[("file-fsync-freq", "1"), ("file-fsync-end", "on")],
            0,
        ),
        (
            "seqrd",
            "sync",
            &[("file-fsync-all", "on"), ("file-fsync-end", "on")],
            0,
        ),
    ];
    for (mode, io, extra, flushes) in cases {
        let a = args(mode, io, extra);
        let stats = run_events(&bench("fileio", &a, 1, 50, Some(dir.path())), 1, 50);
        assert_eq!(
            counter(&stats, Counter::Other),
            *flushes,
            "{mode} {io} {extra:?}"
        );
        assert_eq!(stats.events, 50);
    }
    cleanup(dir.path(), &args("seqwr", "sync", &[]));
}

#[test]
fn rndrw_follows_the_read_write_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let a = args("rndrw", "sync", &[("file-rw-ratio", "3")]);
    prepare(dir.path(), &a);
    let stats = run_events(&bench("fileio", &a, 1, 4000, Some(dir.path())), 1, 4000);
    let reads = counter(&stats, Counter::Read) as f64;
    let writes = counter(&stats, Counter::Write) as f64;
    assert!((reads / writes - 3.0).abs() < 0.5, "{reads}/{writes}");
    let only_writes = args("rndrw", "sync", &[("file-rw-ratio", "0")]);
    let stats = run_events(
        &bench("fileio", &only_writes, 1, 100, Some(dir.path())),
        1,
        100,
    );
    assert_eq!(counter(&stats, Counter::Write), 100);
    cleanup(dir.path(), &a);
}

#[test]
fn run_needs_a_test_mode() {
    let dir = tempfile::tempdir().unwrap();
    let b = bench(
        "fileio",
        &[("file-num", "2"), ("file-total-size", "32K")],
        1,
        0,
        Some(dir.path()),
    );
    assert_eq!(b.fileio_mode(), None);
    let err = b.workload().err().unwrap();
    assert!(matches!(
        err,
        SystemTestError::MissingOption("file-test-mode")
    ));
    assert_eq!(
        err.to_string(),
        "Missing required argument: --file-test-mode"
    );
    assert!(!b.header_lines().iter().any(|l| l.starts_with("Doing ")));
}

#[test]
fn run_needs_prepared_files_of_the_right_size() {
    let dir = tempfile::tempdir().unwrap();
    let a = args("rndrd", "sync", &[]);
    let err = bench("fileio", &a, 1, 0, Some(dir.path()))
        .workload()
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("test_file.0 does not exist"), "{err}");
    assert!(err.contains("fileio prepare"), "{err}");
    prepare(dir.path(), &a);
    // A larger set than the one prepared.
    let bigger = args("rndrd", "sync", &[("file-total-size", "64K")]);
    let err = bench("fileio", &bigger, 1, 0, Some(dir.path()))
        .workload()
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("has 16384 bytes, but the options need 32768"),
        "{err}"
    );
    cleanup(dir.path(), &a);
}

#[test]
fn seqwr_creates_missing_files() {
    for io in ["sync", "mmap"] {
        let dir = tempfile::tempdir().unwrap();
        let a = args("seqwr", io, &[]);
        let stats = run_events(&bench("fileio", &a, 1, 8, Some(dir.path())), 1, 8);
        assert_eq!(counter(&stats, Counter::Write), 8);
        assert_eq!(names(dir.path()), ["test_file.0", "test_file.1"]);
        assert_eq!(
            fs::metadata(dir.path().join("test_file.1")).unwrap().len(),
            16384
        );
        cleanup(dir.path(), &a);
        assert!(names(dir.path()).is_empty());
    }
}

#[test]
fn cleanup_removes_only_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let a = args("rndrd", "sync", &[]);
    prepare(dir.path(), &a);
    for other in [
        "test_file.x",
        "other",
        "test_file.2",
        "test_file.01",
        "test_file",
    ] {
        fs::write(dir.path().join(other), b"keep").unwrap();
    }
    fs::create_dir(dir.path().join("sub")).unwrap();
    fs::write(dir.path().join("sub/test_file.0"), b"keep").unwrap();
    assert_eq!(cleanup(dir.path(), &a), "Removing test files...\n");
    assert_eq!(
        names(dir.path()),
        [
            "other",
            "sub",
            "test_file",
            "test_file.01",
            "test_file.2",
            "test_file.x"
        ]
    );
    assert!(dir.path().join("sub/test_file.0").exists());
    // Cleaning up again is harmless.
    cleanup(dir.path(), &a);
}

#[test]
fn test_files_are_never_followed_through_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim");
    fs::write(&victim, b"precious").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("test_file.0")).unwrap();
    let a = args("rndwr", "sync", &[]);

    // prepare refuses to write through it ...
    let b = bench("fileio", &a, 1, 0, Some(dir.path()));
    let err = b.prepare(&mut Vec::new()).unwrap_err().to_string();
    assert!(err.contains("symbolic link"), "{err}");
    // ... a run refuses to start on it ...
    let err = bench("fileio", &a, 1, 0, Some(dir.path()))
        .workload()
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("test_file.0 is not a regular file"), "{err}");
    // ... and cleanup leaves it alone.
    let out = cleanup(dir.path(), &a);
    assert!(
        out.contains("WARNING: test_file.0 was not made by"),
        "{out}"
    );
    assert!(fs::symlink_metadata(dir.path().join("test_file.0")).is_ok());
    assert_eq!(fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn cleanup_removes_only_what_prepare_made() {
    let dir = tempfile::tempdir().unwrap();
    let a = args("rndrd", "sync", &[]);
    prepare(dir.path(), &a);
    fs::write(dir.path().join("test_file.3"), b"someone else's").unwrap();
    // A bigger --file-num than prepared names test_file.3, which bmk never made.
    let more = args("rndrd", "sync", &[("file-num", "4")]);
    let out = cleanup(dir.path(), &more);
    assert_eq!(
        out,
        "Removing test files...\n\
         WARNING: test_file.3 was not made by 'fileio prepare' here: left in place\n"
    );
    assert_eq!(names(dir.path()), ["test_file.3"]);
    assert!(!dir.path().join(".bmk-fileio").exists());
}

/// Whether the filesystem under `dir` accepts O_DIRECT (tmpfs, for one, does not).
fn direct_io_supported(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join("direct-probe");
    let ok = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
        .is_ok();
    let _ = fs::remove_file(&probe);
    ok
}

#[test]
fn direct_io_uses_aligned_buffers() {
    // The build directory is on a real disk even where the system temp dir is tmpfs.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let err = try_bench(
        "fileio",
        &args(
            "rndrd",
            "sync",
            &[("file-extra-flags", "direct"), ("file-block-size", "1000")],
        ),
        1,
        0,
        Some(dir.path()),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("multiple of 512"), "{err}");
    let a = args("rndrw", "sync", &[("file-extra-flags", "direct")]);
    assert!(bench("fileio", &a, 1, 0, Some(dir.path()))
        .header_lines()
        .contains(&"Extra file open flags: directio".to_string()));
    if !direct_io_supported(dir.path()) {
        eprintln!("skipping direct I/O runs: the filesystem refuses O_DIRECT");
        return;
    }
    prepare(dir.path(), &a);
    for io in ["sync", "async"] {
        let a = args("rndrw", io, &[("file-extra-flags", "direct,dsync")]);
        let stats = run_events(&bench("fileio", &a, 2, 40, Some(dir.path())), 2, 40);
        let ops = counter(&stats, Counter::Read) + counter(&stats, Counter::Write);
        assert_eq!(ops, 40, "{io}");
    }
    let seq = args("seqrd", "async", &[("file-extra-flags", "direct")]);
    let stats = run_events(&bench("fileio", &seq, 1, 16, Some(dir.path())), 1, 16);
    assert_eq!(counter(&stats, Counter::BytesRead), 16 * BLOCK);
    cleanup(dir.path(), &a);
    assert!(names(dir.path()).is_empty());
}

#[test]
fn header_describes_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let b = bench(
        "fileio",
        &[
            ("file-num", "4"),
            ("file-total-size", "4M"),
            ("file-test-mode", "seqwr"),
            ("file-io-mode", "async"),
            ("file-extra-flags", "direct"),
            ("file-fsync-freq", "0"),
        ],
        1,
        0,
        Some(dir.path()),
    );
    assert_eq!(
        b.header_lines(),
        [
            "Extra file open flags: directio",
            "4 files, 1MiB each",
            "4MiB total file size",
            "Block size 16KiB",
            "Calling fsync() at the end of test, Enabled.",
            "Using asynchronous I/O mode",
            "Doing sequential write (creation) test",
        ]
    );
    let b = bench(
        "fileio",
        &[
            ("file-test-mode", "rndrd"),
            ("file-io-mode", "mmap"),
            ("file-fsync-all", "on"),
        ],
        1,
        500,
        Some(dir.path()),
    );
    let lines = b.header_lines();
    assert!(lines.contains(&"Number of IO requests: 500".to_string()));
    assert!(lines.contains(&"Calling fsync() after each write operation.".to_string()));
    assert!(lines.contains(&"Using fast mmaped I/O mode".to_string()));
    assert_eq!(lines.last().unwrap(), "Doing random read test");
    assert_eq!(b.event_limit(), None);
}
