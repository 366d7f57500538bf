//! A fast path's decoder of server bytes (a server is untrusted input): a value or an
//! error, never a panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bmk_sql::fuzz_entry::pgsql_value(data);
});
