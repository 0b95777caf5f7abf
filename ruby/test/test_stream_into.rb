# frozen_string_literal: true

require_relative "test_helper"

# Bodies streamed into the caller's buffer (get(path, buffer: buf) { |piece| }):
# every piece read in place into that one String, which the block is given
# each time.
class TestStreamInto < Minitest::Test
  def setup
    @client = Nodelay::Client.new(base_url: TestServer.url, timeout: 5)
  end

  # [pieces copied, whether each piece was `buf` itself, the response].
  def stream_into(path, buf)
    pieces = []
    same = []
    r = @client.get(path, buffer: buf) do |piece|
      same << piece.equal?(buf)
      assert_equal Encoding::BINARY, piece.encoding
      pieces << piece.dup
    end
    [pieces, same, r]
  end

  def test_pieces_join_to_the_body_plain_chunked_gzip_and_larger_than_the_buffer
    whole = @client.get("/bytes/2000000").body
    buf = String.new
    %w[/bytes/2000000 /chunked/2000000 /gzip/2000000 /bytes/100 /gzip/100].each do |path|
      pieces, same, r = stream_into(path, buf)
      n = path[/\d+\z/].to_i
      assert_equal 200, r.status
      assert_nil r.body
      assert same.all?, path
      assert pieces.all? { |p| p.bytesize <= 64 * 1024 }, path
      assert_operator pieces.size, :>, 1, path if n > 64 * 1024
      assert_equal whole[0, n], pieces.join, path
      # The same pieces as the block without a buffer gives.
      fresh = []
      @client.get(path) { |p| fresh << p }
      assert_equal fresh.join, pieces.join, path
    end
    assert_equal 0, buf.bytesize, "empty once the body has ended"
  end

  def test_the_buffer_is_made_binary_and_its_capacity_kept
    buf = +"héllo, old contents"
    assert_equal Encoding::UTF_8, buf.encoding
    pieces, = stream_into("/bytes/300000", buf)
    assert_equal 300_000, pieces.sum(&:bytesize)
    assert_equal Encoding::BINARY, buf.encoding
    big = String.new(capacity: 1 << 20)
    pieces, = stream_into("/bytes/300000", big)
    assert pieces.all? { |p| p.bytesize <= 64 * 1024 }
  end

  def test_an_empty_body_never_calls_the_block
    buf = String.new("x")
    calls = 0
    r = @client.get("/bytes/0", buffer: buf) { calls += 1 }
    assert_equal [200, 0, ""], [r.status, calls, buf]
  end

  def test_what_the_block_does_to_the_buffer_is_undone_before_the_next_piece
    whole = @client.get("/bytes/1000000").body
    buf = String.new
    n = 0
    got = joined_into(@client, "/bytes/1000000", buf) do |piece|
      case (n += 1) % 4
      when 0 then piece.clear
      when 1 then piece.replace("short")
      when 2 then piece.force_encoding(Encoding::UTF_8)
      when 3 then piece << ("z" * 200_000)
      end
    end
    assert_equal whole, got
  end

  def test_break_closes_the_connection_and_the_client_goes_on
    buf = String.new
    seen = 0
    @client.get("/bytes/2000000", buffer: buf) do |piece|
      seen += piece.bytesize
      break
    end
    assert_operator seen, :>, 0
    assert_raises(RuntimeError) { @client.get("/bytes/2000000", buffer: buf) { raise "stop" } }
    buf << "still writable"
    assert_equal 100, @client.get("/bytes/100").body.bytesize
    pieces, = stream_into("/bytes/200000", buf)
    assert_equal 200_000, pieces.sum(&:bytesize)
  end

  def test_a_frozen_buffer_raises_before_any_request
    accepted = 0
    server = ScriptedServer.new do |c|
      accepted += 1
      c.close
    end
    assert_raises(FrozenError) { @client.get(server.url, buffer: "".freeze) { flunk } }
    assert_raises(FrozenError) { @client.get(server.url, buffer: String.new.freeze) { flunk } }
    assert_raises(TypeError) { @client.get(server.url, buffer: 42) { flunk } }
    assert_raises(ArgumentError) { @client.get(server.url, buffer: String.new) }
    sleep 0.1
    assert_equal 0, accepted
  ensure
    server&.stop
  end

  def test_the_block_freezing_the_buffer_stops_the_stream
    buf = String.new
    pieces = 0
    assert_raises(FrozenError) do
      @client.get("/bytes/2000000", buffer: buf) do |piece|
        pieces += 1
        piece.freeze
      end
    end
    assert_equal 1, pieces
    assert_equal 100, @client.get("/bytes/100").body.bytesize
  end

  # While the engine writes into the buffer (the GVL released), another
  # thread cannot change it: the buffer is locked as IO#readpartial locks its.
  def test_the_buffer_is_locked_while_a_piece_is_awaited
    server = ScriptedServer.new do |c|
      c.readpartial(65_536)
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n")
      sleep 1.0
      c.write("abcdef")
      c.close
    end
    buf = String.new
    writer = Thread.new do
      sleep 0.3
      buf << "x"
      :written
    rescue RuntimeError => e
      e
    end
    assert_equal "abcdef", joined_into(@client, server.url, buf)
    error = writer.value
    assert_kind_of RuntimeError, error
    assert_match(/locked/, error.message)
    buf << "unlocked again"
  ensure
    server&.stop
  end

  def test_an_interrupt_while_waiting_unlocks_the_buffer
    server = ScriptedServer.new do |c|
      c.readpartial(65_536)
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
      c.read
      c.close
    end
    buf = String.new
    pieces = []
    assert_raises(Timeout::Error) do
      Timeout.timeout(0.5) { @client.get(server.url, buffer: buf) { |p| pieces << p.dup } }
    end
    assert_equal ["abc"], pieces
    buf << "writable"
    assert_equal "writable", buf
  ensure
    server&.stop
  end

  def test_threads_each_with_their_buffer
    whole = @client.get("/bytes/500000").body
    threads = 4.times.map do
      Thread.new do
        buf = String.new
        got = +"".b
        3.times { @client.get("/chunked/500000", buffer: buf) { |p| got << p } }
        got
      end
    end
    threads.each { |t| assert_equal whole * 3, t.value }
  end

  def test_nodelay_get_takes_a_buffer
    buf = String.new
    total = 0
    Nodelay.get("#{TestServer.url}/bytes/300000", buffer: buf) { |piece| total += piece.bytesize }
    assert_equal 300_000, total
  end
end
