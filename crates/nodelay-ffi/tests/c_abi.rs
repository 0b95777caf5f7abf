//! The C ABI from C: compiles tests/c/abi_test.c with the system C compiler
//! against include/nodelay.h and the static library, under AddressSanitizer
//! when the toolchain has it, and runs it against the embedded server (see
//! the C file for what it checks).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use nodelay_core::cookies::NETSCAPE_HEADER;
use nodelay_server::{start, ServerConfig};

/// The directory holding `libnodelay_ffi.a`, next to the test binaries'
/// `deps/` directory. `cargo test` builds only the rlib a test links, so the
/// static library comes from `cargo build -p nodelay-ffi` (make test-rust runs
/// it first).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .to_path_buf();
    assert!(
        dir.join("libnodelay_ffi.a").is_file(),
        "no libnodelay_ffi.a in {}: run `cargo build -p nodelay-ffi` first",
        dir.display()
    );
    dir
}

/// Compiles the C test; with `sanitize`, under AddressSanitizer. `None` when
/// the compiler refuses the sanitizer (not every toolchain ships it).
fn compile(out: &Path, sanitize: bool) -> Option<PathBuf> {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let mut cmd = Command::new(cc);
    cmd.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"]);
    if sanitize {
        cmd.args(["-fsanitize=address", "-fno-omit-frame-pointer"]);
    }
    cmd.arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/c/abi_test.c"))
        .arg(lib_dir().join("libnodelay_ffi.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(out);
    let output = cmd.output().expect("a C compiler (cc, or $CC)");
    if output.status.success() {
        return Some(out.to_path_buf());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(sanitize, "the C test does not compile:\n{stderr}");
    eprintln!("no AddressSanitizer here ({stderr}); building without it");
    None
}

#[test]
fn c_program_uses_the_abi() {
    let server = start(ServerConfig::default()).expect("embedded server");
    let refused = {
        // A port that was just free: nothing listens there any more.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/", listener.local_addr().unwrap())
    };
    let dir = std::env::temp_dir().join(format!("nodelay-ffi-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = compile(&dir.join("abi_test_asan"), true)
        .or_else(|| compile(&dir.join("abi_test"), false))
        .unwrap();
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
    assert!(
        output.status.success(),
        "C test failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // The first line curl, LWP's HTTP::Cookies::Netscape and nodelay expect.
    assert!(text.starts_with(NETSCAPE_HEADER), "{text}");
}
