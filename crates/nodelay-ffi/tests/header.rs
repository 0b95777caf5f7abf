//! The checked-in `include/nodelay.h` is what cbindgen makes of the sources
//! now: a change to the ABI without regenerating the header fails here.
//! `NODELAY_BLESS=1 cargo test -p nodelay-ffi --test header` rewrites it.

use std::path::Path;

#[test]
fn checked_in_header_is_current() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen parses the crate")
        .write(&mut generated);
    let path = crate_dir.join("include/nodelay.h");
    if std::env::var_os("NODELAY_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write the header");
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/nodelay.h is stale: run NODELAY_BLESS=1 cargo test -p nodelay-ffi --test header"
    );
}
