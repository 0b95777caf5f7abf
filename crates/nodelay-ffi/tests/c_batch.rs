//! `nodelay_request_many` from C: compiles tests/c/batch_test.c against
//! include/nodelay.h and the static library (under AddressSanitizer with
//! leak checks when the toolchain has it) and runs it against the embedded
//! server serving HTTP/1.1 and h2c (see the C file for what it checks).

mod common;

use std::net::TcpListener;
use std::process::Command;

use common::compile;
use nodelay_server::{start, ServerConfig};

#[test]
fn c_program_runs_batches() {
    let server = start(ServerConfig {
        http2: true,
        ..ServerConfig::default()
    })
    .expect("embedded server");
    let refused = {
        // A port that was just free: nothing listens there any more.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/", listener.local_addr().unwrap())
    };
    let dir = std::env::temp_dir().join(format!("nodelay-ffi-batch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = compile("batch_test.c", &dir.join("batch_test_asan"), true)
        .or_else(|| compile("batch_test.c", &dir.join("batch_test"), false))
        .unwrap();
    let output = Command::new(&exe)
        .arg(server.url())
        .arg(&refused)
        .env("ASAN_OPTIONS", "detect_leaks=1")
        .output()
        .expect("run the C test");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "C test failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
