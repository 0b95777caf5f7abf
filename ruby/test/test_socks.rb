# frozen_string_literal: true

require_relative "test_helper"
require "tempfile"

# A SOCKS proxy URL is accepted wherever an http:// one is (the engine speaks
# SOCKS5/5h/4/4a, docs/guide/proxies.md), checked against microsocks, a
# third-party SOCKS5 server (Debian package microsocks), which logs each
# tunnel as "connected to HOST:PORT" with HOST as the client sent it.
class TestSocks < Minitest::Test
  # Seconds microsocks has to start listening.
  START_TIMEOUT = 10

  def setup
    @microsocks = ENV.fetch("PATH", "").split(":").map { |d| File.join(d, "microsocks") }
                     .find { |f| File.executable?(f) }
    skip "microsocks is not installed (Debian package microsocks)" unless @microsocks
    @socks = []
  end

  def teardown
    (@socks || []).each do |pid, _, log|
      Process.kill(:TERM, pid)
      Process.wait(pid)
      log.close!
    end
  end

  def free_port
    server = TCPServer.new("127.0.0.1", 0)
    server.addr[1]
  ensure
    server&.close
  end

  # Starts microsocks (requiring `auth` when given); returns its port and log.
  def start_socks(auth = nil)
    port = free_port
    log = Tempfile.new("microsocks")
    args = [@microsocks, "-i", "127.0.0.1", "-p", port.to_s]
    args += ["-u", auth[0], "-P", auth[1]] if auth
    pid = Process.spawn(*args, out: log.path, err: %i[child out])
    @socks << [pid, port, log]
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + START_TIMEOUT
    begin
      TCPSocket.new("127.0.0.1", port).close
    rescue SystemCallError
      raise "microsocks did not start" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

      sleep 0.02
      retry
    end
    [port, log]
  end

  def targets(log)
    File.read(log.path).scan(/connected to (\S+)$/).flatten
  end

  def test_socks5h_sends_the_name_to_the_proxy
    port, log = start_socks
    by_name = TestServer.url.sub("127.0.0.1", "localhost")
    client = Nodelay::Client.new(base_url: by_name, timeout: 5, proxy: "socks5h://127.0.0.1:#{port}")
    response = client.get("/bytes/10")
    assert_equal 200, response.status
    assert_equal 10, response.body.bytesize
    assert_equal ["localhost:#{by_name[/\d+\z/]}"], targets(log)
  end

  def test_credentials_good_and_bad
    port, = start_socks(%w[alice s3cret])
    good = Nodelay::Client.new(base_url: TestServer.url, timeout: 5,
                               proxy: "socks5://alice:s3cret@127.0.0.1:#{port}")
    assert_equal 200, good.get("/bytes/1").status
    bad = Nodelay::Client.new(base_url: TestServer.url, timeout: 5,
                              proxy: "socks5://alice:wrong-pw@127.0.0.1:#{port}")
    error = assert_raises(Nodelay::ProxyError) { bad.get("/bytes/1") }
    assert_match(/rejected the username and password/, error.message)
    refute_match(/wrong-pw/, error.message)
  end
end
