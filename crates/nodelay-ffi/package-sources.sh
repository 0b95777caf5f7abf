#!/bin/sh
# package-sources.sh ROOT DEST [--with-server]: lays out in DEST the Rust
# sources of the C ABI (nodelay-proto, -core, -front, -ffi from the checkout
# ROOT) as a cargo workspace of their own, with ROOT's Cargo.lock, so that a
# packaged front (the Ruby gem, the Perl distribution) builds libnodelay_ffi.a
# with cargo where no checkout is. --with-server adds the embedded test server
# (nodelay-server, its certificates too), for a package whose tests run against
# it. Development-only dependencies are left out of the copied manifests.
set -eu
root=$1 dest=$2 server=${3:-}
crates="nodelay-proto nodelay-core nodelay-front nodelay-ffi"
[ "$server" = --with-server ] && crates="$crates nodelay-server"
rm -rf "$dest"
mkdir -p "$dest/crates"
for crate in $crates; do
    mkdir -p "$dest/crates/$crate"
    for part in src data include certs; do
        if [ -d "$root/crates/$crate/$part" ]; then cp -r "$root/crates/$crate/$part" "$dest/crates/$crate/"; fi
    done
    # Every section but [dev-dependencies].
    awk '/^\[/ { skip = ($0 == "[dev-dependencies]") } !skip' \
        "$root/crates/$crate/Cargo.toml" > "$dest/crates/$crate/Cargo.toml"
done
# The workspace: these members, and no path to the crates left behind.
members=$(for crate in $crates; do printf '"crates/%s", ' "$crate"; done)
sed -e "s|^members = .*|members = [${members%, }]|" \
    -e "$([ "$server" = --with-server ] || echo '/^nodelay-server = { path/d')" "$root/Cargo.toml" > "$dest/Cargo.toml"
cp "$root/Cargo.lock" "$dest/Cargo.lock"
