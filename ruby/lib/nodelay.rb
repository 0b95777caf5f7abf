# frozen_string_literal: true

# nodelay: an HTTP client over the nodelay Rust engine (the same engine as the
# Python package), through its C ABI. See README.md and docs/ruby.md.
require "nodelay/version"
require "nodelay/nodelay_ext"
require "nodelay/errors"
require "nodelay/cookie_jar"
require "nodelay/response"
require "nodelay/client"

module Nodelay
  @default_lock = Mutex.new

  class << self
    # GET `url` with a client shared by every call of the process (made on
    # first use; a client is thread-safe). With a block, the body is streamed
    # to it as for Client#get.
    def get(url, **options, &block) = default_client.get(url, **options, &block)

    # The shared client of Nodelay.get.
    def default_client
      @default_client || @default_lock.synchronize { @default_client ||= Client.new }
    end
  end
end

# A program that has loaded Faraday can say `f.adapter :nodelay` at once (one
# loaded later needs `require "nodelay/faraday"`, which loads Faraday).
require "nodelay/faraday" if defined?(::Faraday)
