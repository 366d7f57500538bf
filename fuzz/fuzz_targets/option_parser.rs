//! The option parser: any command line gives validated settings or one error line,
//! never a panic. The input is split into words at NUL bytes and line ends; the first
//! byte picks sysbench's grammar (odd) or bmk's (even).
#![no_main]

// The parser lives in the binary crate, which has no library to link against.
#[allow(dead_code)]
#[path = "../../crates/cli/src/args.rs"]
mod args;
#[allow(dead_code)]
#[path = "../../crates/cli/src/defs.rs"]
mod defs;
#[allow(dead_code)]
#[path = "../../crates/cli/src/option_pipeline.rs"]
mod option_pipeline;
#[allow(dead_code)]
#[path = "../../crates/cli/src/settings.rs"]
mod settings;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((argv, strict)) = option_pipeline::fuzz_command_line(data) else {
        return;
    };
    if let Err(message) = option_pipeline::check_command_line(&argv, strict) {
        assert!(!message.contains('\n'), "{message:?}");
    }
});
