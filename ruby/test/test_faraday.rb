# frozen_string_literal: true

require_relative "test_helper"

begin
  require "nodelay/faraday"
rescue LoadError
  nil # Debian's ruby-faraday is not installed: the tests say so
end

# Faraday programs on the engine through `f.adapter :nodelay`.
class TestFaraday < Minitest::Test
  def setup
    skip "faraday is not installed (Debian: ruby-faraday)" unless defined?(Nodelay::FaradayAdapter)
    @conn = Faraday.new(url: TestServer.url, request: { timeout: 5 }) do |f|
      f.request :url_encoded
      f.adapter :nodelay
    end
  end

  def test_get_post_and_headers
    r = @conn.get("/bytes/1000")
    assert_equal [200, 1000, "1000"], [r.status, r.body.bytesize, r.headers["Content-Length"]]
    assert r.success?
    r = @conn.post("/echo", { name: "nodelay" }, "X-Test" => "test")
    assert_equal ["name=nodelay", "application/x-www-form-urlencoded"], [r.body, r.headers["content-type"]]
    assert_includes @conn.get("/anything", q: "1").body, '"query": "q=1"'
  end

  def test_errors_are_faradays
    assert_raises(Faraday::TimeoutError) { @conn.get("/delay/3000") { |req| req.options.timeout = 0.2 } }
    refused = TCPServer.new("127.0.0.1", 0).then { |s| s.addr[1].tap { s.close } }
    assert_raises(Faraday::ConnectionFailed) { Faraday.new { |f| f.adapter :nodelay }.get("http://127.0.0.1:#{refused}/") }
  end

  def test_streamed_with_on_data
    pieces = []
    sizes = []
    @conn.get("/bytes/300000") do |req|
      req.options.on_data = proc { |piece, received| pieces << piece; sizes << received }
    end
    assert_equal 300_000, pieces.join.bytesize
    assert_equal 300_000, sizes.last
  end
end
