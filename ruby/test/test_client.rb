# frozen_string_literal: true

require_relative "test_helper"

# Requests against the embedded server: bodies, headers, request bodies,
# URLs, and the errors' classes.
class TestClient < Minitest::Test
  def setup
    @client = Nodelay::Client.new(base_url: TestServer.url, timeout: 5)
  end

  def test_get_known_length_body_and_head
    r = @client.get("/bytes/1000")
    assert_equal 200, r.status
    assert r.success?
    assert_equal 1000, r.body.bytesize
    assert_equal Encoding::BINARY, r.body.encoding
    assert_equal "1000", r["CONTENT-LENGTH"]
    assert_equal "1000", r.headers["content-length"]
    assert_nil r["x-absent"]
    assert_equal "OK", r.reason
    assert_equal "HTTP/1.1", r.version
    assert_equal r.body, @client.get("/bytes/1000").body, "same payload on the kept-alive connection"
  end

  def test_chunked_and_gzip_bodies
    assert_equal 500, @client.get("/chunked/500").body.bytesize
    gz = @client.get("/gzip/100000")
    assert_equal "gzip", gz["content-encoding"]
    assert_equal @client.get("/bytes/100000").body, gz.body
  end

  def test_status_is_not_an_exception
    r = @client.get("/status/404")
    assert_equal 404, r.status
    refute r.success?
  end

  def test_post_form_json_and_body
    r = @client.post("/echo", form: { name: "nodelay", lang: "ruby" })
    assert_equal "name=nodelay&lang=ruby", r.body
    assert_equal "application/x-www-form-urlencoded", r["content-type"]
    r = @client.post("/echo", json: { "a" => [1, 2] })
    assert_equal '{"a":[1,2]}', r.body
    assert_equal "application/json", r["content-type"]
    r = @client.put("/echo", body: "raw", headers: { "Content-Type" => "text/plain" })
    assert_equal ["raw", "PUT", "text/plain"], [r.body, r["x-echo-method"], r["content-type"]]
    assert_equal "DELETE", @client.delete("/echo")["x-echo-method"]
    assert_raises(ArgumentError) { @client.post("/echo", form: {}, body: "x") }
  end

  # The form encoder in C sends what URI.encode_www_form makes, and leaves the
  # pairs it does not handle (nil and Array values, ASCII-incompatible
  # Strings) to it.
  def test_form_bodies_are_uri_encode_www_form
    forms = [
      { "note" => "a b,é&=+%~*-._/?", sym: :v, 1 => 2.5, "bin" => "\xff\x00".b },
      [%w[k 1], %w[k 2]],
      { "latin" => "\xe9".dup.force_encoding("ISO-8859-1") },
      { "flag" => nil, "many" => %w[a b] },
      { "utf16".encode("UTF-16LE") => "x" },
      {},
      # Longer than the encoder's 1 KiB buffer, %XX escapes straddling its end.
      { "long" => "é ~" * 400, "k" * 700 => "v" * 1500 },
      (1..300).map { |i| ["f#{i}", "é #{i}"] },
    ]
    forms.each do |form|
      assert_equal URI.encode_www_form(form).b, @client.post("/echo", form: form).body, form.inspect
    end
  end

  # A form or JSON body's Content-Type goes with the client's own headers,
  # and yields to a Content-Type among them or among the request's.
  def test_body_types_with_client_headers
    client = Nodelay::Client.new(base_url: TestServer.url, headers: { "X-Default" => "d" })
    [[{ form: { a: 1 } }, "application/x-www-form-urlencoded"], [{ json: [1] }, "application/json"]].each do |body, type|
      r = client.post("/anything", **body)
      assert_match(/"content-type", "#{Regexp.escape(type)}"/i, r.body)
      assert_match(/"x-default", "d"/i, r.body)
      r = client.post("/anything", **body, headers: { "content-type" => "text/x-mine" })
      assert_match(/"content-type", "text\/x-mine"/i, r.body)
      refute_includes r.body, type
    end
    typed = Nodelay::Client.new(base_url: TestServer.url, headers: { "Content-Type" => "text/x-client" })
    r = typed.post("/anything", form: { a: 1 })
    assert_match(/"content-type", "text\/x-client"/i, r.body)
    refute_includes r.body, "urlencoded"
  end

  def test_head_has_no_body
    r = @client.head("/bytes/1000")
    assert_equal [200, ""], [r.status, r.body]
  end

  def test_params_headers_and_absolute_urls
    client = Nodelay::Client.new(base_url: "#{TestServer.url}/", headers: { "X-Default" => "d" })
    r = client.get("anything/x?a=1", params: { b: "2 3" }, headers: { "X-Test" => "test" })
    assert_includes r.body, '"query": "a=1&b=2+3"'
    assert_includes r.body, '"path": "/anything/x"'
    assert_match(/x-test.*test/i, r.body)
    assert_match(/x-default.*d/i, r.body)
    assert_equal 200, Nodelay.get("#{TestServer.url}/bytes/10").status
  end

  def test_errors_by_abi_code
    refused = TCPServer.new("127.0.0.1", 0).then { |s| s.addr[1].tap { s.close } }
    e = assert_raises(Nodelay::ConnectError) { @client.get("http://127.0.0.1:#{refused}/") }
    assert_equal [8, "connection failed"], [e.code, e.code_name]
    assert_kind_of Nodelay::TransportError, e
    assert_raises(Nodelay::UnsupportedProtocol) { @client.get("ftp://example.test/") }
  end

  def test_read_timeout_is_a_timeout_error_and_a_nodelay_error
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: { read: 0.2 })
    e = assert_raises(Nodelay::ReadTimeout) { client.get("/delay/3000") }
    assert_kind_of Timeout::Error, e
    assert_equal "read timeout", e.code_name
    caught = begin
      client.get("/delay/3000")
    rescue Nodelay::Error => e
      e
    end
    assert_instance_of Nodelay::ReadTimeout, caught
    refute Nodelay::ConnectError === caught, "only the base class takes the timeouts in"
  end

  def test_response_of_a_closed_client_stays_readable
    client = Nodelay::Client.new(base_url: TestServer.url)
    r = client.get("/bytes/10")
    client.close
    assert_equal ["10", 10], [r["content-length"], r.body.bytesize]
  end
end
