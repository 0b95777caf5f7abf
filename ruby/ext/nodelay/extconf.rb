# Builds nodelay_ext.so, the C extension over libnodelay_ffi.a (the engine's C
# ABI, crates/nodelay-ffi), with mkmf: only Ruby's stdlib, a C compiler and,
# in a checkout, cargo.
#
# Where the library comes from, first match wins:
# - `--with-nodelay-dir=DIR` (or --with-nodelay-include / --with-nodelay-lib):
#   a built library, DIR/include/nodelay.h and DIR/lib/libnodelay_ffi.a;
# - the nodelay checkout NODELAY_ROOT names, the one this file is in, or the
#   engine's sources a packaged gem carries (engine/, next to this file; see
#   ruby/xt/stage-gem.sh): cargo builds the library there (debug profile in a
#   checkout, release in a packaged gem; NODELAY_PROFILE=debug|release
#   chooses), into CARGO_TARGET_DIR when set, else ROOT/target.
require "mkmf"

BUNDLED_ENGINE = File.expand_path("engine", __dir__)

def checkout
  [ENV["NODELAY_ROOT"], File.expand_path("../../..", __dir__), BUNDLED_ENGINE].compact.find do |dir|
    File.file?(File.join(dir, "crates/nodelay-ffi/include/nodelay.h"))
  end
end

include_dir, lib_dir = dir_config("nodelay")
unless include_dir && lib_dir
  root = checkout or abort "nodelay: no libnodelay_ffi: pass --with-nodelay-dir=DIR or set NODELAY_ROOT to a nodelay checkout"
  profile = ENV.fetch("NODELAY_PROFILE", root == BUNDLED_ENGINE ? "release" : "debug")
  target = File.expand_path(ENV["CARGO_TARGET_DIR"] || "target", root)
  command = ["cargo", "build", "--quiet", "-p", "nodelay-ffi"]
  command << "--release" if profile == "release"
  system(*command, chdir: root) or abort "nodelay: `#{command.join(" ")}` failed in #{root}"
  include_dir = File.join(root, "crates/nodelay-ffi/include")
  lib_dir = File.join(target, profile)
end

library = File.join(lib_dir, "libnodelay_ffi.a")
File.file?(library) or abort "nodelay: #{library} is missing"
$INCFLAGS << " -I#{include_dir}"
# The static library, whole, then what Rust's standard library needs from libc.
$LOCAL_LIBS << " #{library} -lpthread -ldl -lm"
$CFLAGS << " -std=gnu11 -Wall -Wextra -Wno-unused-parameter"
have_header("nodelay.h") or abort "nodelay: nodelay.h not found in #{include_dir}"
create_makefile("nodelay/nodelay_ext")
# Relink when cargo rebuilt the library, and recompile when the C ABI's header
# changed (make knows only the C sources): an object compiled against an older
# header would call functions or lay out structs the library no longer has.
File.open("Makefile", "a") do |f|
  f.puts "\n$(DLLIB): #{library}"
  f.puts "$(OBJS): #{File.join(include_dir, "nodelay.h")}"
end
