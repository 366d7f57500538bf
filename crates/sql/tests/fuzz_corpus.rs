//! The committed fuzz corpus (`fuzz/corpus`) through the fuzz targets' own entry
//! points: every input the fuzzer kept decodes without a panic, on stable Rust in CI.

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
fn mysql_row_decoder_corpus_replays_clean() {
    replay("mysql_rows", bmk_sql::fuzz_entry::mysql_rows);
}

#[test]
fn pgsql_value_renderer_corpus_replays_clean() {
    replay("pgsql_value", bmk_sql::fuzz_entry::pgsql_value);
}
