//! The C ABI from C: compiles tests/c/abi_test.c with the system C compiler
//! against include/nodelay.h and the static library, under AddressSanitizer
//! when the toolchain has it, and runs it against the embedded server (see
//! the C file for what it checks).

mod common;

use std::process::Command;

use common::{assert_c_test_passed, compiled_c_test, refused_url};
use nodelay_core::cookies::NETSCAPE_HEADER;
use nodelay_server::{start, ServerConfig};

#[test]
fn c_program_uses_the_abi() {
    let server = start(ServerConfig::default()).expect("embedded server");
    let refused = refused_url();
    let (exe, dir) = compiled_c_test("abi_test.c", "c");
    let cookie_file = dir.join("cookies.txt");
    let output = Command::new(&exe)
        .arg(server.url())
        .arg(&refused)
        .arg(&cookie_file)
        // Leak checking stays on: every allocation of the ABI has its free.
        .env("ASAN_OPTIONS", "detect_leaks=1")
        .output()
        .expect("run the C test");
    let text = std::fs::read_to_string(&cookie_file).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert_c_test_passed(&output);
    // The first line curl, LWP's HTTP::Cookies::Netscape and nodelay expect.
    assert!(text.starts_with(NETSCAPE_HEADER), "{text}");
}
