//! `nodelay_request_many` from C: compiles tests/c/batch_test.c against
//! include/nodelay.h and the static library (under AddressSanitizer with
//! leak checks when the toolchain has it) and runs it against the embedded
//! server serving HTTP/1.1 and h2c (see the C file for what it checks).

mod common;

use std::process::Command;

use common::{assert_c_test_passed, compiled_c_test, refused_url};
use nodelay_server::{start, ServerConfig};

#[test]
fn c_program_runs_batches() {
    let server = start(ServerConfig {
        http2: true,
        ..ServerConfig::default()
    })
    .expect("embedded server");
    let refused = refused_url();
    let (exe, dir) = compiled_c_test("batch_test.c", "batch");
    let output = Command::new(&exe)
        .arg(server.url())
        .arg(&refused)
        .env("ASAN_OPTIONS", "detect_leaks=1")
        .output()
        .expect("run the C test");
    let _ = std::fs::remove_dir_all(&dir);
    assert_c_test_passed(&output);
}
