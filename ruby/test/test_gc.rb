# frozen_string_literal: true

require_relative "test_helper"
require "json"

# The extension's objects under a garbage collector that runs at every
# allocation (GC.stress) and one that moves objects (GC.compact), also while
# other threads wait in requests with the GVL released.
class TestGC < Minitest::Test
  def setup
    @client = Nodelay::Client.new(base_url: TestServer.url, timeout: 5)
    @expected = @client.get("/bytes/5000").body
  end

  def test_gc_stress_around_requests
    responses = []
    into_responses = []
    GC.stress = true
    begin
      3.times do
        responses << @client.get("/bytes/5000")
        responses << @client.post("/echo", form: { a: "b" * 40 }, headers: { "X-Test" => "t" })
        pieces = []
        @client.get("/gzip/5000") { |p| pieces << p }
        responses << pieces.join
        into_responses << joined_into(@client, "/bytes/200000", String.new)
      end
    ensure
      GC.stress = false
    end
    responses.each_slice(3) do |get, post, streamed|
      assert_equal [200, @expected, "5000"], [get.status, get.body, get["content-length"]]
      assert_equal "a=#{"b" * 40}", post.body
      assert_equal @expected, streamed
    end
    whole = @client.get("/bytes/200000").body
    into_responses.each { |into| assert_equal whole, into }
  end

  def test_compaction_between_and_during_requests
    skip "GC.compact is not supported here" unless GC.respond_to?(:compact)
    kept = 20.times.map { |i| @client.get("/bytes/#{i + 1}") }
    GC.compact
    kept.each_with_index { |r, i| assert_equal [@expected[0, i + 1], (i + 1).to_s], [r.body, r["content-length"]] }
    stop = false
    compactor = Thread.new do
      GC.compact until stop
    end
    begin
      40.times do |i|
        r = @client.get("/bytes/#{(i % 7) + 1}")
        assert_equal @expected[0, (i % 7) + 1], r.body
      end
      4.times.map { Thread.new { @client.get("/delay/50").status } }.each { |t| assert_equal 200, t.value }
      # Streams into one buffer each, moved around by the compactor between
      # pieces and pinned while the engine writes into it.
      whole = @client.get("/bytes/300000").body
      2.times.map do
        Thread.new do
          buf = String.new
          3.times.map { joined_into(@client, "/chunked/300000", buf) }
        end
      end.each { |t| t.value.each { |got| assert_equal whole, got } }
    ensure
      stop = true
      compactor.join
    end
    GC.compact
    kept.each_with_index { |r, i| assert_equal @expected[0, i + 1], r.body }
  end

  # The client's header Strings are short (their bytes inside the object)
  # and sent without copies; the engine reads them with the GVL released
  # while another thread compacts the heap, so they must stay where they are
  # (client.c pins them). The engine copies them at the start of the call, so
  # a run without the pins passes too most of the time: this checks the
  # bytes sent under compaction, not the pinning's timing.
  def test_compaction_while_the_engine_reads_the_client_headers
    skip "GC.compact is not supported here" unless GC.respond_to?(:compact)
    sent = 12.times.to_h { |i| ["X-Pin-#{i}", "v#{i}"] }
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 5, headers: sent)
    stop = false
    compactor = Thread.new { GC.compact until stop }
    begin
      60.times { assert_pinned_headers sent, client.get("/headers") }
      client.get_many(Array.new(20, "/headers"), concurrency: 4).each { |r| assert_pinned_headers sent, r }
    ensure
      stop = true
      compactor.join
    end
  end

  def assert_pinned_headers(sent, response)
    echoed = JSON.parse(response.body)["headers"].transform_keys(&:downcase)
    sent.each { |name, value| assert_equal value, echoed[name.downcase], name }
  end

  def test_compaction_inside_a_stream_into_a_buffer
    skip "GC.compact is not supported here" unless GC.respond_to?(:compact)
    whole = @client.get("/bytes/1000000").body
    buf = String.new
    n = 0
    got = joined_into(@client, "/gzip/1000000", buf) { GC.compact if (n += 1) % 3 == 1 }
    assert_equal whole, got
    GC.stress = true
    begin
      got = joined_into(@client, "/chunked/300000", buf)
    ensure
      GC.stress = false
    end
    assert_equal whole[0, 300_000], got
  end
end
