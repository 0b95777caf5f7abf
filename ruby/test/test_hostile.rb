# frozen_string_literal: true

require_relative "test_helper"
require "zlib"

# Servers that break HTTP get the specific errors (and messages) the Python
# front raises for the same bytes (tests/hostile/, docs/hostile.md's
# numbering): one scripted server per case, answering one request with exactly
# these bytes, then closing or keeping the connection open (the error must
# then come from the bytes, not from the end of the stream). Each case is
# run whole, streamed to a block and streamed into one buffer (buffer:).
class TestHostile < Minitest::Test
  OK_HEAD = "HTTP/1.1 200 OK\r\n"
  CHUNKED_HEAD = "#{OK_HEAD}Transfer-Encoding: chunked\r\n\r\n".freeze
  def self.cl_head(value) = "#{OK_HEAD}Content-Length: #{value}\r\n\r\n"
  def self.response(body) = "#{cl_head(body.bytesize)}#{body}"

  # Seconds a refused case may take: the bytes decide it, no timeout does.
  FAST = 3.0

  # name => [bytes, class, message pattern or nil, keep the connection open?]
  CASES = {
    "not HTTP" => ["SMTP ready\r\n\r\n", Nodelay::RemoteProtocolError, /not an HTTP\/1.x status line/],
    "closed before answering" => ["", Nodelay::RemoteProtocolError, /without sending a response/],
    "short body" => ["HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", Nodelay::RemoteProtocolError,
                     /received 5 of 100/],
    "bad chunk size" => ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                         Nodelay::RemoteProtocolError, /malformed chunked body/],
    "head too large" => ["HTTP/1.1 200 OK\r\nX: #{"a" * 300_000}\r\n\r\n", Nodelay::HeaderTooLarge, /exceeds/],
  }.merge(
    # A2: Content-Length values that are not one decimal number.
    {
      "minus" => "-1", "plus sign" => "+5", "hex" => "0x10", "exponent" => "1e3",
      "20 digits" => "99999999999999999999", "u64 max+1" => "18446744073709551616",
      "list differs" => "5, 6", "empty value" => "", "empty list element" => "5,,5",
      "inner space" => "5 5", "fraction" => "5.0",
    }.to_h do |name, value|
      ["a2 content-length #{name}", ["#{cl_head(value)}hello", Nodelay::RemoteProtocolError, /Content-Length/]]
    end,
    { "a2 two content-lengths differ" => ["#{OK_HEAD}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
                                          Nodelay::RemoteProtocolError, /Content-Length/] },
    # A3: transfer codings other than one final "chunked".
    {
      "gzip, chunked" => "gzip, chunked", "chunked, gzip" => "chunked, gzip",
      "chunked twice" => "chunked, chunked", "identity" => "identity", "unknown" => "x-custom",
      "empty" => "", "with parameter" => "chunked;q=1", "misspelt" => "chunkedx",
    }.to_h do |name, value|
      ["a3 transfer-encoding #{name}",
       ["#{OK_HEAD}Transfer-Encoding: #{value}\r\n\r\n5\r\nhello\r\n0\r\n\r\n", Nodelay::RemoteProtocolError,
        /Transfer/]]
    end,
    # A4: malformed chunks; the server keeps the connection open.
    {
      "size 0x prefix" => "0x5\r\nhello\r\n0\r\n\r\n", "size plus sign" => "+5\r\nhello\r\n0\r\n\r\n",
      "size empty" => "\r\nhello\r\n0\r\n\r\n", "size bare LF" => "5\nhello\r\n0\r\n\r\n",
      "data bare LF" => "5\r\nhello\n0\r\n\r\n", "data longer than size" => "5\r\nhello!\r\n0\r\n\r\n",
      "size overflow" => "fffffffffffffffffffff\r\nx\r\n0\r\n\r\n",
      "extension NUL" => "5;a=\x00\r\nhello\r\n0\r\n\r\n", "trailer bare LF" => "5\r\nhello\r\n0\r\nX-T: 1\n\r\n",
    }.to_h do |name, body|
      ["a4 chunk #{name}", ["#{CHUNKED_HEAD}#{body}", Nodelay::RemoteProtocolError, /chunk/, true]]
    end,
    # A6: header lines that must not be guessed at.
    {
      "space before colon" => "Content-Length : 5\r\n", "tab before colon" => "Content-Length\t: 5\r\n",
      "no colon" => "Content-Length 5\r\n", "NUL in value" => "X-A: a\x00b\r\n", "CR in value" => "X-A: a\rb\r\n",
      "empty name" => ": 5\r\n", "obs-fold" => "X-A: 1\r\n folded\r\n", "leading whitespace" => " Content-Length: 5\r\n",
    }.to_h do |name, line|
      ["a6 header #{name}", ["#{OK_HEAD}#{line}Content-Length: 5\r\n\r\nhello", Nodelay::RemoteProtocolError, nil]]
    end,
    # A7: status lines.
    {
      "two-digit status" => "HTTP/1.1 20 OK", "four-digit status" => "HTTP/1.1 2000 OK",
      "HTTP/2.0 over h1" => "HTTP/2.0 200 OK", "HTTP/1.2" => "HTTP/1.2 200 OK", "lowercase" => "http/1.1 200 OK",
      "ICY" => "ICY 200 OK", "status not numeric" => "HTTP/1.1 2x0 OK",
      "no space after version" => "HTTP/1.1200 OK", "NUL in reason" => "HTTP/1.1 200 O\x00K",
    }.to_h do |name, line|
      ["a7 status #{name}", ["#{line}\r\nContent-Length: 0\r\n\r\n", Nodelay::RemoteProtocolError, nil]]
    end,
    {
      "a7 binary garbage" => [(0..255).map(&:chr).join, Nodelay::RemoteProtocolError, nil],
      "a8 129 header fields" => ["#{OK_HEAD}#{(0..128).map { |i| "X-H#{i}: v\r\n" }.join}Content-Length: 0\r\n\r\n",
                                 Nodelay::HeaderTooLarge, /128/],
      "a9 head cut" => ["#{OK_HEAD}Content-Length: 5\r\n", Nodelay::RemoteProtocolError,
                        /middle of the response head/],
      "a9 large body cut" => ["#{cl_head(1_000_000)}#{"x" * 300_000}", Nodelay::RemoteProtocolError,
                              /received 300000 of 1000000 bytes/],
      "a11 huge content-length" => ["#{cl_head(1_000_000_000_000)}tiny", Nodelay::RemoteProtocolError,
                                    /received 4 of 1000000000000/],
      "a13 fifty 100 continue" => ["#{"HTTP/1.1 100 Continue\r\n\r\n" * 50}#{response("late")}",
                                   Nodelay::RemoteProtocolError, /interim/],
    },
    # A9: a chunked body cut before its end.
    {
      "mid chunk" => "a\r\nabc", "mid u64-max chunk" => "ffffffffffffffff\r\nabc",
      "before last chunk" => "5\r\nhello\r\n", "before final CRLF" => "5\r\nhello\r\n0\r\n",
      "mid trailers" => "5\r\nhello\r\n0\r\nX-T: 1\r\n",
    }.to_h do |name, body|
      ["a9 chunked cut #{name}", ["#{CHUNKED_HEAD}#{body}", Nodelay::RemoteProtocolError,
                                  /chunked body cut after \d+ bytes/]]
    end,
  ).freeze

  def setup
    @client = Nodelay::Client.new(timeout: 5)
  end

  # A server answering each connection's first request with `bytes`, then
  # closing, or (keep_open) waiting for the client to close.
  def answering(bytes, keep_open: false)
    server = ScriptedServer.new do |c|
      c.readpartial(65_536)
      c.write(bytes)
      c.read if keep_open
      c.close
    end
    yield server.url
  ensure
    server&.stop
  end

  def assert_refused(error, message, &request)
    start = now
    e = assert_raises(error, &request)
    assert_match message, e.message if message
    assert_operator elapsed_since(start), :<, FAST, "decided by the bytes, not a timeout"
    e
  end

  CASES.each do |name, (bytes, error, message, keep_open)|
    define_method("test_#{name.gsub(/[^a-zA-Z0-9]+/, "_")}") do
      bytes = bytes.b
      answering(bytes, keep_open: keep_open) do |url|
        assert_refused(error, message) { @client.get(url) }
      end
      answering(bytes, keep_open: keep_open) do |url|
        assert_refused(error, message) { @client.get(url) { |_| nil } }
      end
      answering(bytes, keep_open: keep_open) do |url|
        assert_refused(error, message) { @client.get(url, buffer: String.new) { |_| nil } }
      end
    end
  end

  # A10: bytes past the Content-Length (a fake second response) are never
  # read as the next response: the next request goes out on a new connection.
  def test_a10_extra_bytes_never_read_as_the_next_response
    ["#{self.class.cl_head(5)}hello", "#{CHUNKED_HEAD}5\r\nhello\r\n0\r\n\r\n"].each do |first|
      connections = Queue.new
      server = ScriptedServer.new do |c|
        n = connections.size
        connections << c
        c.readpartial(65_536)
        if n.zero?
          c.write(first + self.class.response("SMUGGLED"))
          # A second request on this connection is answered with poison.
          c.write(self.class.response("POISON")) if (c.readpartial(65_536) rescue nil)
        else
          c.write(self.class.response("fresh"))
        end
        c.read
      end
      assert_equal "hello", @client.get(server.url).body
      assert_equal "fresh", @client.get(server.url).body
      assert_equal 2, connections.size
    ensure
      server&.stop
    end
  end

  # A12: HEAD, 204 and 304 with body headers: no body is read, and the
  # connection stays in sync for the next response on it.
  def test_a12_bodyless_responses_keep_the_connection_in_sync
    [
      ["HEAD", self.class.cl_head(1000)],
      ["HEAD", CHUNKED_HEAD],
      ["GET", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"],
      ["GET", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"],
    ].each do |method, head|
      server = ScriptedServer.new do |c|
        c.readpartial(65_536)
        c.write(head)
        c.readpartial(65_536)
        c.write(self.class.response("second"))
        c.read
      end
      r = @client.request(method, server.url)
      assert_equal "", r.body.to_s
      assert_equal "second", @client.get(server.url).body, "#{method} #{head.lines.first}"
    ensure
      server&.stop
    end
  end

  # B15: more than five content codings.
  def test_b15_six_layers_refused
    body = (1..6).reduce("deep") { |data, _| Zlib.gzip(data) }
    head = "#{OK_HEAD}Content-Encoding: gzip, gzip, gzip, gzip, gzip, gzip\r\nContent-Length: #{body.bytesize}\r\n\r\n"
    answering(head.b + body) { |url| assert_refused(Nodelay::DecodingError, /content codings/) { @client.get(url) } }
    answering(head.b + body) do |url|
      assert_refused(Nodelay::DecodingError, /content codings/) { @client.get(url) { |_| nil } }
    end
  end

  # B14: ~10 GiB of zeros in three gzip layers, a few KiB on the wire:
  # refused by the expansion ratio, whole and streamed.
  def test_b14_layered_gzip_bomb
    mib = 1 << 20
    z = Zlib::Deflate.new(Zlib::BEST_COMPRESSION, -Zlib::MAX_WBITS)
    block = z.deflate("\0" * mib, Zlib::FULL_FLUSH)
    inner = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff".b + block * 10_240 + z.finish +
            [0, (10_240 * mib) & 0xFFFF_FFFF].pack("VV")
    bomb = Zlib.gzip(Zlib.gzip(inner, level: 9), level: 9)
    assert_operator bomb.bytesize, :<, 64 * 1024
    wire = "#{OK_HEAD}Content-Encoding: gzip, gzip, gzip\r\nContent-Length: #{bomb.bytesize}\r\n\r\n".b + bomb
    answering(wire) { |url| assert_refused(Nodelay::DecodingError, /ratio/) { @client.get(url) } }
    answering(wire) { |url| assert_refused(Nodelay::DecodingError, /ratio/) { @client.get(url) { |_| nil } } }
  end

  # I31: a refused connection, a reset instead of a response.
  def test_i31_connection_refused
    port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }
    assert_refused(Nodelay::ConnectError, nil) { @client.get("http://127.0.0.1:#{port}/") }
  end

  def test_i31_reset_instead_of_a_response
    server = ScriptedServer.new do |c|
      c.readpartial(65_536)
      c.setsockopt(Socket::SOL_SOCKET, Socket::SO_LINGER, [1, 0].pack("ii"))
      c.close
    end
    assert_refused(Nodelay::ReadError, nil) { @client.get(server.url) }
  ensure
    server&.stop
  end

  # I32: a server that never answers: the read timeout, with its message.
  def test_i32_server_never_answers
    client = Nodelay::Client.new(timeout: { connect: 5, read: 1.0, write: 5, pool: 5 })
    server = ScriptedServer.new do |c|
      c.readpartial(65_536)
      c.read
    end
    start = now
    e = assert_raises(Nodelay::ReadTimeout) { client.get(server.url) }
    assert_match(/\Aread timeout of 1\.0 s while waiting for the response head\z/, e.message)
    assert_operator elapsed_since(start), :>=, 0.95
    assert_kind_of Timeout::Error, e
  ensure
    server&.stop
  end
end
