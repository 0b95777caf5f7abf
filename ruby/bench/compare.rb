# frozen_string_literal: true

# Ruby HTTP clients side by side on the lab's workloads (bench/nodelay_bench/workloads.py):
#
#   a  sequential 202-byte GETs on one keep-alive connection   (/bytes/202)
#   e  small urlencoded POSTs, the server echoing the body      (/echo)
#   b  16 KiB JSON GET + JSON.parse + check "ok"               (/json/16384)
#
#   ruby ruby/bench/compare.rb URL [--workloads a,e,b] [--clients nodelay,net-http,...]
#                                  [--requests N] [--json]
#
# URL is a running server (the embedded crates/nodelay-server, or nginx with the lab's
# files) in another process, so the CPU time measured here (the process clock) is the
# client's alone. Each row: requests per second (wall clock) and CPU microseconds per
# request, after a warm-up; every answer is checked, a wrong one aborts the row. A client
# whose gem is missing is skipped with the reason. --json prints one JSON line per row.
# The extension is loaded from NODELAY_EXT_DIR (make test-ruby's build/ruby) when set.
$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
$LOAD_PATH.unshift(ENV["NODELAY_EXT_DIR"]) if ENV["NODELAY_EXT_DIR"]
require "json"
require "uri"

# Requests timed per row, and the warm-up before them (connection made, caches hot).
REQUESTS = { "a" => 5000, "e" => 3000, "b" => 3000 }.freeze
WARMUP = 200
# Seconds any client may wait for one answer.
TIMEOUT = 10

FORM = {
  "user" => "bench", "action" => "update", "id" => "42",
  "note" => "a small urlencoded body, like a login or a form post",
}.freeze
FORM_BODY = URI.encode_www_form(FORM).freeze
# The same form in FORM's order, sorted by name, or with spaces as "%20" (Ethon's encoder,
# under typhoeus), as the lab's checks accept.
FORM_BODIES = [FORM_BODY, URI.encode_www_form(FORM.sort), FORM_BODY.gsub("+", "%20")].freeze
PATHS = { "a" => "/bytes/202", "e" => "/echo", "b" => "/json/16384" }.freeze

CHECKS = {
  "a" => ->(status, body) { status == 200 && body.bytesize == 202 },
  "e" => ->(status, body) { status == 200 && FORM_BODIES.include?(body) },
  "b" => ->(status, body) { status == 200 && JSON.parse(body)["ok"] == true },
}.freeze

# Each client: [gem to require, a builder taking the base URI and returning
# { get: ->(path) { [status, body] }, post_form: ->(path) { [status, body] } }].
CLIENTS = {
  "nodelay" => ["nodelay", lambda do |uri|
    c = Nodelay::Client.new(base_url: uri.to_s, timeout: TIMEOUT)
    { get: ->(p) { r = c.get(p); [r.status, r.body] },
      post_form: ->(p) { r = c.post(p, form: FORM); [r.status, r.body] } }
  end],
  "net-http" => ["net/http", lambda do |uri|
    http = Net::HTTP.new(uri.host, uri.port)
    http.read_timeout = TIMEOUT
    http.start # keep-alive: every request of the row goes over this connection
    { get: ->(p) { r = http.get(p); [r.code.to_i, r.body] },
      post_form: lambda { |p|
        req = Net::HTTP::Post.new(p)
        req.set_form_data(FORM)
        r = http.request(req)
        [r.code.to_i, r.body]
      } }
  end],
  "net-http-persistent" => ["net/http/persistent", lambda do |uri|
    http = Net::HTTP::Persistent.new
    http.read_timeout = TIMEOUT
    { get: ->(p) { r = http.request(uri + p); [r.code.to_i, r.body] },
      post_form: lambda { |p|
        u = uri + p
        req = Net::HTTP::Post.new(u.path)
        req.set_form_data(FORM)
        r = http.request(u, req)
        [r.code.to_i, r.body]
      } }
  end],
  "curb" => ["curb", lambda do |uri|
    easy = Curl::Easy.new
    easy.timeout = TIMEOUT
    base = uri.to_s.chomp("/")
    { get: lambda { |p|
        easy.url = base + p
        easy.http_get
        [easy.response_code, easy.body_str]
      },
      post_form: lambda { |p|
        easy.url = base + p
        easy.http_post(FORM_BODY)
        [easy.response_code, easy.body_str]
      } }
  end],
  "excon" => ["excon", lambda do |uri|
    conn = Excon.new(uri.to_s, persistent: true, read_timeout: TIMEOUT)
    { get: ->(p) { r = conn.get(path: p); [r.status, r.body] },
      post_form: lambda { |p|
        r = conn.post(path: p, body: FORM_BODY,
                      headers: { "Content-Type" => "application/x-www-form-urlencoded" })
        [r.status, r.body]
      } }
  end],
  "typhoeus" => ["typhoeus", lambda do |uri|
    base = uri.to_s.chomp("/")
    { get: ->(p) { r = Typhoeus.get(base + p, timeout: TIMEOUT); [r.code, r.body] },
      post_form: ->(p) { r = Typhoeus.post(base + p, body: FORM, timeout: TIMEOUT); [r.code, r.body] } }
  end],
  "httpclient" => ["httpclient", lambda do |uri|
    c = HTTPClient.new
    c.receive_timeout = TIMEOUT
    base = uri.to_s.chomp("/")
    { get: ->(p) { r = c.get(base + p); [r.status, r.body] },
      post_form: ->(p) { r = c.post(base + p, body: FORM); [r.status, r.body] } }
  end],
  "http.rb" => ["http", lambda do |uri|
    c = HTTP.timeout(TIMEOUT).persistent(uri.to_s.chomp("/"))
    { get: ->(p) { r = c.get(p); [r.code, r.to_s] },
      post_form: ->(p) { r = c.post(p, form: FORM); [r.code, r.to_s] } }
  end],
}.freeze

def cpu_now = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
def wall_now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

def run_row(name, workload, uri, requests)
  gem, build = CLIENTS.fetch(name)
  begin
    require gem
  rescue LoadError => e
    return { client: name, workload: workload, skipped: "#{gem} is not installed (#{e.message})" }
  end
  client = build.call(uri)
  call = workload == "e" ? client[:post_form] : client[:get]
  path = PATHS.fetch(workload)
  check = CHECKS.fetch(workload)
  WARMUP.times { check.call(*call.call(path)) or abort "#{name} #{workload}: wrong answer" }
  GC.start
  cpu0, wall0 = cpu_now, wall_now
  requests.times { check.call(*call.call(path)) or abort "#{name} #{workload}: wrong answer" }
  cpu, wall = cpu_now - cpu0, wall_now - wall0
  { client: name, workload: workload, requests: requests,
    req_s: (requests / wall).round, cpu_us: (cpu * 1e6 / requests).round(1) }
end

# One row, in its own process: `compare.rb --row CLIENT WORKLOAD URL REQUESTS`.
if ARGV.first == "--row"
  _, name, workload, url, requests = ARGV
  puts JSON.generate(run_row(name, workload, URI(url), Integer(requests)))
  exit
end

url = ARGV.shift or abort "usage: compare.rb URL [--workloads a,e,b] [--clients c,...] [--requests N] [--json]"
uri = URI(url.end_with?("/") ? url : "#{url}/")
workloads = %w[a e b]
clients = CLIENTS.keys
requests = nil
json = false
until ARGV.empty?
  case (arg = ARGV.shift)
  when "--workloads" then workloads = ARGV.shift.split(",")
  when "--clients" then clients = ARGV.shift.split(",")
  when "--requests" then requests = Integer(ARGV.shift)
  when "--json" then json = true
  else abort "compare.rb: unknown argument #{arg}"
  end
end

workloads.each do |w|
  clients.each do |name|
    # Each row in a fresh process: one client's loaded gems, heap and threads do not
    # weigh on the next one's CPU time.
    argv = [RbConfig.ruby, __FILE__, "--row", name, w, uri.to_s, (requests || REQUESTS.fetch(w)).to_s]
    line = IO.popen(argv, &:read)
    row = JSON.parse(line, symbolize_names: true) rescue { client: name, workload: w, failed: line }
    if json
      puts JSON.generate(row)
    elsif row[:req_s]
      printf("%-2s %-20s %8d req/s %8.1f us CPU/req\n", w, name, row[:req_s], row[:cpu_us])
    else
      printf("%-2s %-20s %s\n", w, name, row[:skipped] || row[:failed])
    end
  end
end
