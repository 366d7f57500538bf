//! The `--config-file` reader: any text gives options or one error, never a panic.
#![no_main]

// The reader lives in the binary crate, which has no library to link against.
#[allow(dead_code)]
#[path = "../../crates/cli/src/args.rs"]
mod args;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = args::parse_config(text, "fuzz.cfg");
    }
});
