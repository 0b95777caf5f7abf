# frozen_string_literal: true

require_relative "lib/nodelay/version"

# `make gem` (ruby/xt/stage-gem.sh, then `gem build` in build/gem) makes a gem
# that carries the engine's Rust sources (ext/nodelay/engine): `gem install
# nodelay-*.gem` builds it with cargo, no checkout needed. `gem build` here, in
# a checkout, makes one that builds from NODELAY_ROOT (or takes
# --with-nodelay-dir=DIR), as ext/nodelay/extconf.rb says. No gem from
# RubyGems is needed.
Gem::Specification.new do |spec|
  spec.name = "nodelay"
  spec.version = Nodelay::VERSION
  spec.summary = "HTTP client over the nodelay Rust engine (keep-alive, one write per request, HTTP/2)"
  spec.description = "A C extension over libnodelay_ffi, the C ABI of the engine the nodelay Python package uses."
  spec.authors = ["nodelay"]
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.1"
  spec.files = Dir["lib/**/*.rb", "ext/nodelay/*.{c,h,rb}", "README.md"] +
               Dir["ext/nodelay/engine/{Cargo.toml,Cargo.lock}", "ext/nodelay/engine/crates/**/*"].reject { |f| File.directory?(f) }
  spec.extensions = ["ext/nodelay/extconf.rb"]
  spec.require_paths = ["lib"]
end
