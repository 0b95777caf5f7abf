# frozen_string_literal: true

require_relative "test_helper"

# Servers that break HTTP get the specific errors (and messages) the Python
# front raises for the same bytes: one scripted server per case, answering
# one request with exactly these bytes and closing.
class TestHostile < Minitest::Test
  CASES = {
    "not HTTP" => ["SMTP ready\r\n\r\n", Nodelay::RemoteProtocolError, /not an HTTP\/1.x status line/],
    "closed before answering" => ["", Nodelay::RemoteProtocolError, /without sending a response/],
    "short body" => ["HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", Nodelay::RemoteProtocolError,
                     /received 5 of 100/],
    "bad chunk size" => ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                         Nodelay::RemoteProtocolError, /malformed chunked body/],
    "head too large" => ["HTTP/1.1 200 OK\r\nX: #{"a" * 300_000}\r\n\r\n", Nodelay::HeaderTooLarge, /exceeds/],
  }.freeze

  def setup
    @client = Nodelay::Client.new(timeout: 5)
  end

  def answering(bytes)
    server = ScriptedServer.new do |c|
      c.readpartial(65_536)
      c.write(bytes)
      c.close
    end
    yield server.url
  ensure
    server&.stop
  end

  CASES.each do |name, (bytes, error, message)|
    define_method("test_#{name.tr(" ", "_")}") do
      answering(bytes) do |url|
        e = assert_raises(error) { @client.get(url) }
        assert_match message, e.message
      end
      answering(bytes) do |url|
        e = assert_raises(error) { @client.get(url) { |_| nil } }
        assert_match message, e.message, "streamed"
      end
    end
  end
end
