//! How far a load has got, for `bmk kit prepare`'s progress bar: when the environment
//! variable [`ENV`] names a file, every batch of rows `insert_generated` loaded and
//! every `CREATE INDEX` that finished appends one line to it (`rows N`, `index`). The
//! kit sets the variable for the prepare it runs and reads the file as it grows; a
//! plain run (and so strict sysbench mode) has no such variable and writes nothing.
//!
//! A file rather than the output: the prepare's lines stay exactly those of a plain
//! prepare. Each line is one `O_APPEND` write, so loader threads do not interleave.

use std::fs::File;
use std::io::Write as _;
use std::sync::OnceLock;

/// The variable naming the progress file.
pub const ENV: &str = "BMK_LOAD_PROGRESS";

fn file() -> Option<&'static File> {
    static FILE: OnceLock<Option<File>> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = std::env::var_os(ENV)?;
        File::options().append(true).open(path).ok()
    })
    .as_ref()
}

/// `n` rows were loaded.
pub(crate) fn rows(n: u64) {
    if let Some(mut f) = file() {
        let _ = f.write_all(format!("rows {n}\n").as_bytes());
    }
}

/// A statement succeeded: an index build is reported.
pub(crate) fn after_query(sql: &str) {
    let Some(mut f) = file() else {
        return;
    };
    let words: Vec<String> = sql
        .split_whitespace()
        .take(3)
        .map(str::to_ascii_uppercase)
        .collect();
    let creates_index = words.first().is_some_and(|w| w == "CREATE")
        && (words.get(1).is_some_and(|w| w == "INDEX")
            || words.get(1).is_some_and(|w| w == "UNIQUE")
                && words.get(2).is_some_and(|w| w == "INDEX"));
    if creates_index {
        let _ = f.write_all(b"index\n");
    }
}
