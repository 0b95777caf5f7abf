# frozen_string_literal: true

require_relative "test_helper"

# get_many / request_many: many requests through one engine call, results in
# input order, errors per request, the concurrency and the per-host limit as
# the embedded server counts them (/stats/in-flight: the most requests it
# answered at once, which only grows, so that test runs on a server of its
# own, from the lowest peak to the highest), the deadline, interrupts.
class TestMany < Minitest::Test
  def clock = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  def peak(base) = Nodelay::Client.new.get("#{base}/stats/in-flight").json["peak_in_flight"]

  def test_concurrency_and_the_per_host_limit_as_the_server_sees_them
    base = TestServer.start
    limited = Nodelay::Client.new(base_url: base, timeout: 10, max_connections_per_host: 2)
    results = limited.get_many(["/delay/300"] * 8, concurrency: 8)
    assert_equal [200] * 8, results.map(&:status)
    assert_equal 2, peak(base)
    client = Nodelay::Client.new(base_url: base, timeout: 10)
    assert_equal ["delayed"] * 9, client.get_many(["/delay/300"] * 9, concurrency: 3).map(&:body)
    assert_equal 3, peak(base)
    client.get_many(["/delay/300"] * 16, concurrency: 8)
    assert_equal 8, peak(base)
  end

  def test_results_in_input_order_with_errors_per_request
    refused = TCPServer.open("127.0.0.1", 0).then { |s| s.addr[1].tap { s.close } }
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 10)
    results = client.get_many(["/delay/200", "/bytes/3", "http://127.0.0.1:#{refused}/", "/gzip/2000",
                               "nowhere://x/", "/status/404"], concurrency: 4)
    assert_equal 6, results.size
    assert_equal "delayed", results[0].body
    assert_equal "abc", results[1].body
    assert_kind_of Nodelay::ConnectError, results[2]
    assert_equal 8, results[2].code
    assert_equal 2000, results[3].body.bytesize
    assert_equal "gzip", results[3]["Content-Encoding"]
    assert_kind_of Nodelay::UnsupportedProtocol, results[4]
    assert_equal 404, results[5].status
    assert_equal [], client.get_many([])
  end

  def test_headers_cookies_and_bodies
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 10, user_agent: "many/1.0",
                                 headers: { "X-Client" => "c" })
    client.get_many(["/headers"] * 3, headers: { "X-Batch" => "yes" }).each do |response|
      seen = response.json["headers"]
      assert_equal ["yes", "c", "many/1.0"], seen.values_at("x-batch", "x-client", "user-agent")
    end
    client.get_many(["/cookies/set?flavour=oat"])
    jar, own, form, json = client.request_many(
      [["GET", "/cookies"],
       ["GET", "/cookies", { headers: { "Cookie" => "flavour=rye" } }],
       ["POST", "/anything", { form: { a: 1, b: "x y" } }],
       ["PUT", "/anything", { json: { list: [1, 2] } }]], concurrency: 2
    )
    assert_equal "oat", jar.json["cookies"]["flavour"]
    assert_equal "rye", own.json["cookies"]["flavour"]
    assert_equal "a=1&b=x+y", form.json["body"]
    assert_equal ["PUT", '{"list":[1,2]}'], json.json.values_at("method", "body")
  end

  def test_a_deadline_ends_the_batch
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 10)
    started = clock
    results = client.get_many(["/bytes/1"] + ["/delay/5000"] * 3, concurrency: 2, deadline: 0.3)
    assert_operator clock - started, :<, 4
    assert_equal "a", results[0].body
    results[1..].each do |error|
      assert_kind_of Nodelay::TimeoutError, error
      assert_match(/total timeout of 0\.3 s/, error.message)
    end
  end

  def test_timeout_and_thread_raise_stop_the_batch_and_other_threads_run
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 10)
    started = clock
    assert_raises(Timeout::Error) { Timeout.timeout(0.3) { client.get_many(["/delay/10000"] * 4) } }
    assert_operator clock - started, :<, 5
    ticks = 0
    ticker = Thread.new { loop { ticks += 1; sleep 0.01 } }
    client.get_many(["/delay/300"] * 2)
    ticker.kill
    assert_operator ticks, :>, 5, "the GVL is released while the batch waits"
    assert_equal "ab", client.get("/bytes/2").body
  end

  def test_bad_arguments
    client = Nodelay::Client.new(base_url: TestServer.url)
    assert_raises(ArgumentError) { client.get_many("/bytes/1") }
    assert_raises(ArgumentError) { client.get_many(["/bytes/1"], concurrency: 0) }
    assert_raises(ArgumentError) { client.get_many(["/bytes/1"], concurrency: 5000) }
    assert_raises(ArgumentError) { client.get_many(["/bytes/1"], deadline: "soon") }
    assert_raises(ArgumentError) { client.request_many([["GET", "/", { buffer: +"" }]]) }
    assert_raises(ArgumentError) { client.request_many([["POST", "/", { form: {}, body: "x" }]]) }
  end
end
