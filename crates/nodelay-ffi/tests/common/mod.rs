//! What the C tests share: building a C program against include/nodelay.h
//! and the static library.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// Compiles the C test `source` (in tests/c/) into `out`; with `sanitize`,
/// under AddressSanitizer. `None` when the compiler refuses the sanitizer
/// (not every toolchain ships it).
pub fn compile(source: &str, out: &Path, sanitize: bool) -> Option<PathBuf> {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let mut cmd = Command::new(cc);
    cmd.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"]);
    if sanitize {
        cmd.args(["-fsanitize=address", "-fno-omit-frame-pointer"]);
    }
    cmd.arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/c").join(source))
        .arg(lib_dir().join("libnodelay_ffi.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(out);
    let output = cmd.output().expect("a C compiler (cc, or $CC)");
    if output.status.success() {
        return Some(out.to_path_buf());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(sanitize, "the C test {source} does not compile:\n{stderr}");
    eprintln!("no AddressSanitizer here ({stderr}); building without it");
    None
}

/// The C test `source` compiled into a fresh directory of its own (named
/// after `tag` and this process), under AddressSanitizer where the compiler
/// offers it; returns the program and the directory.
pub fn compiled_c_test(source: &str, tag: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("nodelay-ffi-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stem = source.trim_end_matches(".c");
    let exe = compile(source, &dir.join(format!("{stem}_asan")), true)
        .or_else(|| compile(source, &dir.join(stem), false))
        .unwrap();
    (exe, dir)
}

/// A URL on a port that was just free: nothing listens there any more.
pub fn refused_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}/", listener.local_addr().unwrap())
}

/// Fails the test with the C program's output unless it exited 0 (every
/// check passed).
pub fn assert_c_test_passed(output: &Output) {
    assert!(
        output.status.success(),
        "C test failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
