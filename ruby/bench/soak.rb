# frozen_string_literal: true

# A million requests through one Nodelay::Client, printing the process's RSS
# and open file descriptors at intervals: they must stay flat (issue 16's
# "a million requests leave RSS flat", docs/hostile.md K35).
#
#   ruby ruby/bench/soak.rb URL [REQUESTS]
#
# URL is a running embedded server (crates/nodelay-server). The requests
# cycle through the shapes the extension handles differently: a small GET
# with a header looked up, a form POST, a JSON POST, a body read in place
# (64 KiB, past the inline buffer), a gzip body, a streamed body, and an
# error (404 is not one; a refused connection is). The extension is loaded
# from NODELAY_EXT_DIR when set (make test-ruby's build/ruby).
$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
$LOAD_PATH.unshift(ENV["NODELAY_EXT_DIR"]) if ENV["NODELAY_EXT_DIR"]
require "nodelay"
require "socket"

# Requests between two RSS lines.
REPORT_EVERY = Integer(ENV.fetch("SOAK_REPORT_EVERY", 100_000))

def rss_kib = File.read("/proc/self/status")[/^VmRSS:\s+(\d+)/, 1].to_i
def open_fds = Dir.children("/proc/self/fd").size

url = ARGV[0] or abort "usage: soak.rb URL [REQUESTS]"
total = Integer(ARGV[1] || 1_000_000)
client = Nodelay::Client.new(base_url: url, timeout: 10)
refused = "http://127.0.0.1:#{TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] }}/"
form = { "user" => "soak", "note" => "a small form" }
shapes = [
  -> { client.get("/bytes/202")["content-length"] == "202" },
  -> { client.post("/echo", form: form).body == "user=soak&note=a+small+form" },
  -> { client.post("/echo", json: { "n" => 1 }).body == '{"n":1}' },
  -> { client.get("/bytes/65536").body.bytesize == 65_536 },
  -> { client.get("/gzip/5000").body.bytesize == 5000 },
  -> { n = 0; client.get("/bytes/20000") { |piece| n += piece.bytesize }; n == 20_000 },
  lambda do
    client.get(refused)
    false
  rescue Nodelay::ConnectError
    true
  end,
]
start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
puts format("%9s %9s %5s %7s", "requests", "RSS KiB", "fds", "seconds")
total.times do |i|
  if (i % REPORT_EVERY).zero?
    puts format("%9d %9d %5d %7.1f", i, rss_kib, open_fds, Process.clock_gettime(Process::CLOCK_MONOTONIC) - start)
    $stdout.flush
  end
  shapes[i % shapes.size].call or abort "request #{i}: wrong answer"
end
GC.start
puts format("%9d %9d %5d %7.1f", total, rss_kib, open_fds, Process.clock_gettime(Process::CLOCK_MONOTONIC) - start)
