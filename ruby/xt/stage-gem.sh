#!/bin/sh
# stage-gem.sh ROOT STAGE: lays out in STAGE what `gem build` packs: the gem's
# Ruby and C files, and under ext/nodelay/engine the Rust sources of the C ABI
# it links (crates/nodelay-ffi/package-sources.sh), so that `gem install`
# builds libnodelay_ffi.a with cargo on a machine without a nodelay checkout
# (as rb-sys gems carry their crates).
set -eu
root=$1 stage=$2
rm -rf "$stage"
mkdir -p "$stage/ext/nodelay"
cp -r "$root/ruby/lib" "$root/ruby/nodelay.gemspec" "$root/ruby/README.md" "$stage/"
cp "$root"/ruby/ext/nodelay/*.c "$root"/ruby/ext/nodelay/*.h "$root"/ruby/ext/nodelay/extconf.rb "$stage/ext/nodelay/"
"$root/crates/nodelay-ffi/package-sources.sh" "$root" "$stage/ext/nodelay/engine"
