# frozen_string_literal: true

require_relative "test_helper"

require "zlib"
require "rbconfig"

begin
  require "nodelay/faraday"
  require "faraday/adapter/net_http"
rescue LoadError
  nil # Debian's ruby-faraday is not installed: the tests say so
end

# A loopback server that answers each request with what the block returns
# for the request's head (a String of header lines, lowercased names) and
# body: [status line + header lines, body]. Keeps the connection open for
# the next request.
def http_responder(&answer)
  ScriptedServer.new do |c|
    while (line = c.gets("\r\n\r\n"))
      head = line.downcase
      length = head[/^content-length: *(\d+)/, 1].to_i
      body = length.positive? ? c.read(length) : ""
      lines, payload = answer.call(head, body)
      c.write("#{lines}\r\nContent-Length: #{payload.bytesize}\r\n\r\n#{payload}")
    end
  end
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

  # The same program over Faraday's own Net::HTTP adapter and over nodelay.
  def both_adapters(url)
    %i[net_http nodelay].to_h do |adapter|
      [adapter, yield(Faraday.new(url: url, request: { timeout: 5 }) { |f| f.adapter adapter })]
    end
  end

  # A server that compresses only when asked (as Faraday's specs' server
  # does): each adapter asks, and gets the body and the headers Net::HTTP
  # leaves after decoding (no Content-Encoding, the encoded length).
  def test_accept_encoding_is_sent_and_the_body_decoded
    asked = []
    server = http_responder do |head, _|
      wanted = head[/^accept-encoding: *(.*)\r$/, 1].to_s
      asked << wanted
      if wanted.include?("gzip")
        ["HTTP/1.1 200 OK\r\nContent-Encoding: gzip", Zlib.gzip("hello " * 100)]
      else
        ["HTTP/1.1 200 OK", "hello " * 100]
      end
    end
    got = both_adapters(server.url) do |conn|
      r = conn.get("/")
      [r.body, r.headers["content-encoding"], r.headers["content-length"]]
    end
    assert_equal got[:net_http], got[:nodelay]
    assert_equal ["hello " * 100, nil, Zlib.gzip("hello " * 100).bytesize.to_s], got[:nodelay]
    assert_equal 2, asked.count { |a| a.include?("gzip") }, asked.inspect
    # The caller's own Accept-Encoding wins.
    both_adapters(server.url) { |conn| conn.get("/", nil, "Accept-Encoding" => "identity") }
    assert_equal %w[identity identity], asked.last(2)
  ensure
    server&.stop
  end

  # Repeated fields reach Faraday as Net::HTTP gives them: joined by ", ",
  # every Set-Cookie kept.
  def test_repeated_response_fields_are_joined_as_net_http_does
    server = http_responder do
      ["HTTP/1.1 200 OK\r\nSet-Cookie: a=1; Path=/\r\nX-Multi: one\r\nSet-Cookie: b=2\r\nX-Multi: two", "ok"]
    end
    got = both_adapters(server.url) { |conn| conn.get("/").headers.to_h }
    assert_equal got[:net_http], got[:nodelay]
    assert_equal ["a=1; Path=/, b=2", "one, two"], got[:nodelay].values_at("set-cookie", "x-multi")
  ensure
    server&.stop
  end

  def test_on_data_is_called_for_an_empty_body
    got = both_adapters(TestServer.url) do |conn|
      calls = []
      conn.get("/bytes/0") { |req| req.options.on_data = proc { |piece, n| calls << [piece, n] } }
      calls
    end
    assert_equal got[:net_http], got[:nodelay]
    assert_equal [["", 0]], got[:nodelay]
  end

  # The seed articles' login program: log in, keep both Set-Cookie fields
  # of the answer, send them with every request after.
  def test_login_flow_with_two_cookies
    server = http_responder do |head, body|
      if head.start_with?("post /login") && body == "user=me"
        ["HTTP/1.1 200 OK\r\nSet-Cookie: session=s1; Path=/; HttpOnly\r\nSet-Cookie: csrf=c1; Path=/", "in"]
      elsif head[/^cookie: *(.*)\r$/, 1].to_s.split("; ").sort == %w[csrf=c1 session=s1]
        ["HTTP/1.1 200 OK", "secret"]
      else
        ["HTTP/1.1 403 Forbidden", "no"]
      end
    end
    got = both_adapters(server.url) do |conn|
      login = conn.post("/login", "user=me")
      cookie = login.headers["set-cookie"].split(/, (?=[^;=]+=)/).map { |c| c.split(";").first }.join("; ")
      %w[/a /b].map { |path| conn.get(path, nil, "Cookie" => cookie).then { |r| [r.status, r.body] } }
    end
    assert_equal got[:net_http], got[:nodelay]
    assert_equal [[200, "secret"], [200, "secret"]], got[:nodelay]
  ensure
    server&.stop
  end
end

# `f.adapter :nodelay` in a program that loaded Faraday, then nodelay.
class TestFaradayRegistration < Minitest::Test
  def test_require_nodelay_registers_the_adapter
    skip "faraday is not installed (Debian: ruby-faraday)" unless defined?(Nodelay::FaradayAdapter)
    program = 'require "faraday"; require "nodelay"; ' \
              'print Faraday.new { |f| f.adapter :nodelay }.builder.adapter.klass'
    out = IO.popen([ruby_child_env, RbConfig.ruby, *$LOAD_PATH.first(2).flat_map { |d| ["-I", d] }, "-e", program],
                   err: %i[child out], &:read)
    assert_equal "Nodelay::FaradayAdapter", out
  end
end
