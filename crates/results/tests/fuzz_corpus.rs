//! The committed fuzz corpus (`fuzz/corpus`) through the fuzz targets' own entry
//! points: every input the fuzzer kept reads without a panic, on stable Rust in CI.

use std::path::Path;

fn replay(target: &str, entry: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut inputs = 0;
    for entry_path in std::fs::read_dir(&dir)
        .expect("the corpus folder")
        .flatten()
    {
        entry(&std::fs::read(entry_path.path()).unwrap());
        inputs += 1;
    }
    assert!(inputs > 0, "no corpus in {}", dir.display());
}

#[test]
fn results_file_reader_corpus_replays_clean() {
    replay("results_file", bmk_results::fuzz_entry::results_file);
}

#[test]
fn results_dir_readers_corpus_replays_clean() {
    replay(
        "results_dir_files",
        bmk_results::fuzz_entry::results_dir_files,
    );
}
