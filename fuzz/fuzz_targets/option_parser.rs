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
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let argv: Vec<String> = text
        .split(['\0', '\n'])
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    if let Err(message) = option_pipeline::check_command_line(&argv, mode % 2 == 1) {
        assert!(!message.contains('\n'), "{message:?}");
    }
});
