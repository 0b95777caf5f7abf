# frozen_string_literal: true

require_relative "lib/nodelay/version"

# `gem build nodelay.gemspec`, then `gem install nodelay-*.gem` with the
# engine's C library found as ext/nodelay/extconf.rb says (NODELAY_ROOT=a
# nodelay checkout, where cargo builds it, or --with-nodelay-dir=DIR). No gem
# from RubyGems is needed.
Gem::Specification.new do |spec|
  spec.name = "nodelay"
  spec.version = Nodelay::VERSION
  spec.summary = "HTTP client over the nodelay Rust engine (keep-alive, one write per request, HTTP/2)"
  spec.description = "A C extension over libnodelay_ffi, the C ABI of the engine the nodelay Python package uses."
  spec.authors = ["nodelay"]
  spec.license = "MIT"
  spec.required_ruby_version = ">= 3.1"
  spec.files = Dir["lib/**/*.rb", "ext/nodelay/*.{c,h,rb}", "README.md"]
  spec.extensions = ["ext/nodelay/extconf.rb"]
  spec.require_paths = ["lib"]
end
