//! Results directories come from other machines: a FIFO, a link to a device or a huge
//! file where a results file should be never hangs the reader nor costs more memory
//! than the stated caps; what is skipped is named on stderr (checked end to end by the
//! cli's `analysis` tests) and the rest is read.
mod support;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use bmk_analysis::report::Report;
use bmk_results::RunData;
use support::*;

fn one_level_sweep(root: &Path) -> (PathBuf, PathBuf) {
    let dir = sweep(root, "run", &[4], &[], false, |u, _| 400 * u as u64);
    let level = dir.join("level-0001");
    (dir, level)
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

/// Reads and reports `dir` on another thread: a hang fails the test after 60 s
/// instead of holding it for ever.
fn report_within(dir: &Path) -> Result<(RunData, Report), String> {
    let (tx, rx) = mpsc::channel();
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let r = RunData::read(&dir)
            .map_err(bmk_analysis::Error::from)
            .and_then(|run| Report::build(&run).map(|rep| (run, rep)))
            .map_err(|e| e.to_string());
        let _ = tx.send(r);
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("reading the directory hung")
}

#[test]
fn a_fifo_as_a_capture_file_is_skipped_not_waited_for() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, level) = one_level_sweep(tmp.path());
    let status = level.join("server/global_status.txt");
    std::fs::remove_file(&status).unwrap();
    mkfifo(&status);
    let (run, _) = report_within(&dir).unwrap();
    assert!(run.levels[0].server_capture("global_status.txt").is_none());
    // The other captures are still read.
    assert!(run.levels[0].os_capture("loadavg.txt").is_some());
}

#[test]
fn links_to_a_device_are_skipped_not_read_without_end() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, level) = one_level_sweep(tmp.path());
    for name in ["intervals.jsonl", "server/innodb_status.txt", "os/stat.txt"] {
        let p = level.join(name);
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
    }
    let (run, _) = report_within(&dir).unwrap();
    let l = &run.levels[0];
    assert!(l.intervals.is_empty());
    assert!(l.result.is_some(), "result.json is still read");
    assert!(l.server_capture("innodb_status.txt").is_none());
    assert!(l.os_capture("stat.txt").is_none());
}

#[test]
fn a_fifo_as_result_json_or_the_input_itself_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, level) = one_level_sweep(tmp.path());
    let result = level.join("result.json");
    std::fs::remove_file(&result).unwrap();
    mkfifo(&result);
    let (run, _) = report_within(&dir).unwrap();
    assert!(
        run.levels[0].result.is_none(),
        "skipped as if the level had not finished"
    );

    let input = tmp.path().join("results.json");
    mkfifo(&input);
    let e = report_within(&input).unwrap_err();
    assert_eq!(
        e,
        format!("{}: a FIFO, not a regular file", input.display())
    );
    // A level.json that is a FIFO: the level cannot be read, said in one line.
    let level_json = level.join("level.json");
    std::fs::remove_file(&level_json).unwrap();
    mkfifo(&level_json);
    let e = report_within(&dir).unwrap_err();
    assert_eq!(
        e,
        format!("{}: a FIFO, not a regular file", level_json.display())
    );
}

/// A capture file larger than its cap is read up to the cap, cut back to its last whole
/// sample. (A sparse file: 300 MiB long, a few KiB on disk.)
#[test]
fn a_capture_file_over_its_cap_is_read_up_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, level) = one_level_sweep(tmp.path());
    let path = level.join("os/loadavg.txt");
    let whole = std::fs::read_to_string(&path).unwrap();
    let samples = bmk_results::capture::samples(&whole).len();
    assert!(samples > 2);
    // The real samples, then a hole of zeros up to 300 MiB, then one more sample.
    let f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.set_len(300 << 20).unwrap();
    drop(f);
    let run = RunData::read(level.parent().unwrap()).unwrap();
    let text = run.levels[0].os_capture("loadavg.txt").unwrap();
    assert!(text.len() <= 256 << 20);
    let read = bmk_results::capture::samples(&text);
    // Every real sample but the last (the zeros run on from it, so it is not whole).
    assert_eq!(read.len(), samples - 1);
    assert!(text.starts_with(&whole[..whole.len() / 2]));
}
