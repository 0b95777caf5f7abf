# frozen_string_literal: true

require_relative "test_helper"

# Requests leave nothing behind: after a warm-up (pool, caches, Ruby's heap
# at its working size), many more requests of every shape the extension
# handles differently leave the process's RSS where it was, within a
# tolerance far below what one leaked response per request would add.
# ruby/bench/soak.rb runs the million-request version of this.
class TestMemory < Minitest::Test
  WARMUP = 20_000
  REQUESTS = 50_000
  # KiB RSS may grow over REQUESTS (allocator and heap noise). A leaked ABI
  # response (its head buffer alone is hundreds of bytes) or body per
  # request would add several times this.
  TOLERANCE_KIB = 8 * 1024
  # Periods of REQUESTS measured one after the other. A leak grows RSS in
  # every period; the heap settling to its working size (which a busy
  # machine can stretch past the warm-up) grows it in one. The smallest
  # growth is the one compared.
  PERIODS = 2

  def rss_kib = File.read("/proc/self/status")[/^VmRSS:\s+(\d+)/, 1].to_i

  def test_rss_flat_over_many_requests
    # ASan's allocator keeps freed memory in quarantine, so RSS grows by design there.
    skip "RSS is not measured under AddressSanitizer (make asan-ruby)" if ENV["NODELAY_ASAN_PRELOAD"]
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 10)
    form = { "user" => "soak", "note" => "a small form" }
    buffer = String.new
    shapes = [
      -> { client.get("/bytes/202")["content-length"] == "202" },
      -> { client.post("/echo", form: form, headers: { "X-A" => "1" }).body == "user=soak&note=a+small+form" },
      -> { client.get("/bytes/40000").body.bytesize == 40_000 },
      -> { client.get("/gzip/3000").body.bytesize == 3000 },
      -> { n = 0; client.get("/bytes/5000") { |piece| n += piece.bytesize }; n == 5000 },
      -> { n = 0; client.get("/bytes/70000", buffer: buffer) { |piece| n += piece.bytesize }; n == 70_000 },
      -> { client.get("/bytes/10").header_fields.size.positive? },
    ]
    run = ->(count) { count.times { |i| assert shapes[i % shapes.size].call, "request #{i}" } }
    run.call(WARMUP)
    GC.start
    grown = Array.new(PERIODS) do
      before = rss_kib
      run.call(REQUESTS)
      GC.start
      rss_kib - before
    end
    assert_operator grown.min, :<, TOLERANCE_KIB, "RSS grew #{grown.join(', ')} KiB over periods of #{REQUESTS} requests"
  end
end
