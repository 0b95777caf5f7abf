# frozen_string_literal: true

require_relative "test_helper"

begin
  require "webmock"
  require "nodelay/webmock"
  require "faraday"
  require "nodelay/faraday"
rescue LoadError
  nil # Debian's ruby-webmock or ruby-faraday is not installed: the tests say so
end

# WebMock sees the engine: stubs answer Nodelay::Client and Faraday's
# nodelay adapter, unstubbed requests go out only when WebMock allows it.
# WebMock is enabled for each test only, so the other files' tests (Faraday's
# Net::HTTP adapter as the reference) talk to real servers.
class TestWebMock < Minitest::Test
  include WebMock::API if defined?(WebMock::API)

  def setup
    skip "webmock is not installed (Debian: ruby-webmock)" unless defined?(WebMock::HttpLibAdapters::NodelayAdapter)
    WebMock.enable!
    WebMock.disable_net_connect!
  end

  def teardown
    return unless defined?(WebMock::HttpLibAdapters::NodelayAdapter)

    WebMock.reset!
    WebMock.allow_net_connect!
    WebMock.disable!
  end

  def test_a_stub_answers_the_client
    stub_request(:post, "http://api.test/items").with(body: "a=1", headers: { "X-Key" => "k" })
                                                 .to_return(status: 201, body: "made", headers: { "Set-Cookie" => %w[a=1 b=2] })
    r = Nodelay::Client.new(headers: { "X-Key" => "k" }).post("http://api.test/items", body: "a=1")
    assert_equal [201, "made", %w[a=1 b=2]], [r.status, r.body, r.header_values("set-cookie")]
    assert_requested :post, "http://api.test/items", times: 1
  end

  # WebMock sees the Accept-Encoding the engine adds (Faraday's specs stub
  # requests that must ask for gzip and deflate).
  def test_the_signature_carries_the_engines_accept_encoding
    stub_request(:get, "http://api.test/z").with(headers: { "Accept-Encoding" => "gzip, deflate, br, zstd" })
    assert_equal 200, Nodelay::Client.new.get("http://api.test/z").status
    stub_request(:get, "http://api.test/z").with { |req| !req.headers.key?("Accept-Encoding") }.to_return(status: 204)
    assert_equal 204, Nodelay::Client.new(accept_encoding: "").get("http://api.test/z").status
    assert_equal 200, Nodelay::Client.new.get("http://api.test/z", headers: { "Accept-Encoding" => "gzip, deflate, br, zstd" }).status
  end

  def test_a_stub_streams_to_a_block
    stub_request(:get, "http://api.test/big").to_return(body: "x" * 1000)
    pieces = []
    r = Nodelay::Client.new.get("http://api.test/big") { |piece| pieces << piece }
    assert_equal [nil, "x" * 1000], [r.body, pieces.join]
  end

  def test_unstubbed_requests_are_refused_or_sent_as_webmock_says
    url = "#{TestServer.url}/bytes/10"
    assert_raises(WebMock::NetConnectNotAllowedError) { Nodelay::Client.new.get(url) }
    WebMock.allow_net_connect!
    assert_equal 10, Nodelay::Client.new.get(url).body.bytesize
    # WebMock counts the refused request too, as for Net::HTTP.
    assert_requested :get, url, times: 2
  end

  def test_a_stub_timeout_is_a_nodelay_timeout
    stub_request(:get, "http://api.test/slow").to_timeout
    assert_raises(Nodelay::TimeoutError) { Nodelay::Client.new.get("http://api.test/slow") }
  end

  def test_faraday_through_the_nodelay_adapter
    skip "faraday is not installed (Debian: ruby-faraday)" unless defined?(Nodelay::FaradayAdapter)
    stub_request(:get, "http://api.test/x?q=1").to_return(body: "faraday", headers: { "Content-Type" => "text/plain" })
    conn = Faraday.new(url: "http://api.test") { |f| f.adapter :nodelay }
    r = conn.get("/x", q: 1)
    assert_equal ["faraday", "text/plain"], [r.body, r.headers["content-type"]]
    assert_raises(Faraday::TimeoutError) do
      stub_request(:get, "http://api.test/t").to_timeout
      conn.get("/t")
    end
  end
end
