# frozen_string_literal: true

# What every test file shares: the built extension on the load path, minitest,
# and the embedded server (crates/nodelay-server, started once per process on
# a free loopback port and stopped when the tests have run).
$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
$LOAD_PATH.unshift(ENV.fetch("NODELAY_EXT_DIR", File.expand_path("../ext", __dir__)))
require "nodelay"
require "minitest/autorun"
require "timeout"
require "socket"

# The body of GET `target` streamed into `buf` (get(target, buffer: buf)),
# its pieces joined; each piece is then given to the block, if any, while it
# is still the buffer's content.
def joined_into(client, target, buf)
  got = +"".b
  client.get(target, buffer: buf) do |piece|
    got << piece
    yield piece if block_given?
  end
  got
end

module TestServer
  # Seconds to wait for the server's "listening on URL" line.
  START_TIMEOUT = 30

  def self.url
    @url ||= start
  end

  def self.start
    bin = ENV["NODELAY_SERVER"] or abort "NODELAY_SERVER: the nodelay-server binary (make test-ruby sets it)"
    io = IO.popen([bin, "--host", "127.0.0.1", "--port", "0"], err: File::NULL)
    # After the tests: the server is first asked for during the run, which
    # itself is an at_exit handler, too late to register another one.
    Minitest.after_run do
      Process.kill(:TERM, io.pid)
      Process.wait(io.pid)
    end
    Timeout.timeout(START_TIMEOUT) do
      while (line = io.gets)
        return Regexp.last_match(1).chomp("/") if line =~ /^listening on (\S+)/
      end
    end
    abort "nodelay-server printed no 'listening on' line"
  end
end

# A loopback TCP server run by a Ruby thread: each accepted connection is
# handed to the block (the test scripts the bytes). Stopped by #stop.
class ScriptedServer
  attr_reader :port

  def initialize(&handler)
    @server = TCPServer.new("127.0.0.1", 0)
    @port = @server.addr[1]
    @clients = Queue.new
    @thread = Thread.new do
      loop do
        client = @server.accept
        @clients << client
        Thread.new(client) { |c| handler.call(c) rescue nil }
      end
    rescue IOError, Errno::EBADF
      nil
    end
  end

  def url(path = "/") = "http://127.0.0.1:#{@port}#{path}"

  def stop
    @server.close
    @thread.join(1)
    @clients.close
    while (c = @clients.pop)
      c.close unless c.closed?
    end
  end
end

# The environment a child Ruby that loads the extension needs: under
# `make asan-ruby` the ASan runtime must be preloaded into it too (the suite
# takes LD_PRELOAD out of its own environment so other programs it starts,
# curl or the server, run without it).
def ruby_child_env = ENV["NODELAY_ASAN_PRELOAD"] ? { "LD_PRELOAD" => ENV["NODELAY_ASAN_PRELOAD"] } : {}

# Seconds since `start` (a monotonic clock).
def elapsed_since(start) = Process.clock_gettime(Process::CLOCK_MONOTONIC) - start
def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
