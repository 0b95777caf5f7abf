# frozen_string_literal: true

require_relative "test_helper"

# Bodies streamed to a block (nodelay_response_read_chunk).
class TestStream < Minitest::Test
  def setup
    @client = Nodelay::Client.new(base_url: TestServer.url, timeout: 5)
  end

  def test_pieces_join_to_the_body_decoded
    whole = @client.get("/bytes/2000000").body
    %w[/bytes/2000000 /gzip/2000000 /chunked/2000000].each do |path|
      pieces = []
      r = @client.get(path) { |piece| pieces << piece }
      assert_equal 200, r.status
      assert_nil r.body
      assert_operator pieces.size, :>, 1, path
      assert pieces.all? { |p| p.bytesize <= 64 * 1024 }, path
      assert_equal whole, pieces.join, path
    end
  end

  def test_leaving_the_block_early_closes_and_the_client_goes_on
    seen = 0
    @client.get("/bytes/2000000") do |piece|
      seen += piece.bytesize
      break
    end
    assert_operator seen, :>, 0
    assert_raises(RuntimeError) { @client.get("/bytes/2000000") { raise "stop" } }
    assert_equal 100, @client.get("/bytes/100").body.bytesize
  end

  def test_nodelay_get_streams_too
    total = 0
    Nodelay.get("#{TestServer.url}/bytes/300000") { |piece| total += piece.bytesize }
    assert_equal 300_000, total
  end
end
