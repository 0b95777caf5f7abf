//! libFuzzer entry point; the logic (and its input layout) is in `src/lib.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    nodelay_fuzz::response_parser(data);
});
