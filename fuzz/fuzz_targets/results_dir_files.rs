//! bmk-report's reader of files from other machines: a value or an error, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bmk_results::fuzz_entry::results_dir_files(data);
});
