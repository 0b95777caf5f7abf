# frozen_string_literal: true

# The lab's Ruby worker (nodelay bench --lang ruby; bench/nodelay_bench/langs.py):
#
#     ruby worker.rb SPEC_JSON
#
# measures one Ruby client x one workload (warm-up, then the timed
# repetitions) and prints one JSON line, the object the Python worker
# (bench/nodelay_bench/worker.py) and the Perl worker print: {"reps": [...],
# "protocol", "peak_rss_kb", "chunks", "note", "latency_ms", "capped", ...},
# or {"skipped": why} when the client is not installed or cannot run the
# workload, or {"failed": why}. Every answer is checked (status, length, JSON
# document, echoed form, the session cookie): a wrong answer is an error, not
# a request.
#
# The nodelay gem is loaded from RUBYLIB (the lab puts ruby/lib and the
# extension's build directory there), or from NODELAY_EXT_DIR: the directory
# `ruby ruby/ext/nodelay/extconf.rb && make` ran in (nodelay_ext.so at its
# top) or one holding nodelay/nodelay_ext.so (make test-ruby's build/ruby).
require "json"
require "uri"
require "tmpdir"
require "fileutils"

# A run of this many failures in a row ends a repetition (the rest count as
# errors), as in the Python worker.
MAX_CONSECUTIVE_ERRORS = 20
# Seconds any client may wait for one answer.
TIMEOUT = 10
PERCENTILES = [50, 90, 99].freeze
# Seconds the real curl may take to read workload h's cookie file back.
CURL_TIMEOUT = 10

SPEC = JSON.parse(ARGV[0] || abort("usage: worker.rb SPEC_JSON"))
FORM = SPEC.fetch("form").to_h.freeze
FORM_BODY = SPEC.fetch("form_bodies").first.freeze
# The form as the server may echo it: in FORM's order or sorted, spaces as "+"
# or "%20" (Ethon's encoder, under typhoeus): each is the same form.
FORM_BODIES = SPEC.fetch("form_bodies").to_h { |b| [b, true] }.freeze
FORM_TYPE = { "Content-Type" => "application/x-www-form-urlencoded" }.freeze

def emit(result)
  puts JSON.generate(result)
  $stdout.flush
  exit!(0) # no at_exit work (a peer's runtime tearing down) can change the answer
end

def load_nodelay
  dir = ENV["NODELAY_EXT_DIR"]
  if dir && !dir.empty?
    dir = File.expand_path(dir)
    if File.file?(File.join(dir, "nodelay", "nodelay_ext.so"))
      $LOAD_PATH.unshift(dir)
    elsif File.file?(flat = File.join(dir, "nodelay_ext.so"))
      # `extconf.rb && make` leaves the library at the top of its directory,
      # but the gem requires "nodelay/nodelay_ext": give it that path.
      link_dir = Dir.mktmpdir("nodelay-ext-")
      FileUtils.mkdir_p(File.join(link_dir, "nodelay"))
      File.symlink(flat, File.join(link_dir, "nodelay", "nodelay_ext.so"))
      $LOAD_PATH.unshift(link_dir)
    end
  end
  require "nodelay"
ensure
  FileUtils.remove_entry(link_dir) if link_dir # the library stays loaded
end

# The JSON parser of workload b's check: the fastest one installed, the same
# for every client of the run without a JSON method of its own (nodelay's
# rows parse with Response#json, as the Python lab's use nodelay's json()).
JSON_PARSER, PARSE_JSON =
  begin
    require "oj"
    ["Oj #{Oj::VERSION}", ->(text) { Oj.load(text, mode: :strict) }]
  rescue LoadError
    begin
      require "yajl"
      ["yajl-ruby", ->(text) { Yajl::Parser.parse(text) }]
    rescue LoadError
      ["json #{JSON::VERSION}", ->(text) { JSON.parse(text) }]
    end
  end

# A client of the timed loop: get(url) -> [status, body];
# get_json(url) -> [status, document, body bytes] (the body parsed by the
# client's own JSON method, where it has one: workload b's check uses it);
# post_form(url, form = FORM, body = FORM_BODY) -> [status, body] (the form
# Hash through the client's own form API where it has one, else body, the
# same form encoded); stream(url) -> [status, [chunk sizes]] (the body given to a block
# as it arrives); protocol -> String; close.
class Client
  def initialize(get:, post_form:, get_json: nil, stream: nil, protocol: -> { "HTTP/1.1" }, close: -> {}, save: nil)
    @get, @get_json, @post_form, @stream = get, get_json, post_form, stream
    @protocol, @close, @save = protocol, close, save
  end

  attr_reader :save

  def get(url) = @get.call(url)
  def get_json(url) = @get_json.call(url)
  def parses_json? = !@get_json.nil?
  def post_form(url, form = FORM, body = FORM_BODY) = @post_form.call(url, form, body)
  def stream(url) = (@stream or raise NotImplementedError).call(url)
  def streams? = !@stream.nil?
  def protocol = @protocol.call
  def close = @close.call
end

# into: the body streamed into one String reused for every piece
# (get(url, buffer: buf) { |piece| }) instead of a new String per piece.
def nodelay_client(cookies: nil, into: false)
  options = { timeout: TIMEOUT }
  options[:cookies] = Nodelay::CookieJar.new(autosave: cookies) if cookies
  c = Nodelay::Client.new(**options)
  last = nil
  buffer = String.new(capacity: 64 * 1024) if into
  Client.new(
    get: ->(u) { last = c.get(u); [last.status, last.body] },
    get_json: ->(u) { last = c.get(u); [last.status, last.json, last.body.bytesize] },
    post_form: ->(u, form, _body) { last = c.post(u, form: form); [last.status, last.body] },
    stream: lambda { |u|
      sizes = []
      last = if into
               c.get(u, buffer: buffer) { |piece| sizes << piece.bytesize }
             else
               c.get(u) { |piece| sizes << piece.bytesize }
             end
      [last.status, sizes]
    },
    protocol: -> { last ? last.version : "?" },
    close: -> { c.close },
    save: -> { c.save_cookies },
  )
end

def net_http_client(uri)
  http = Net::HTTP.new(uri.host, uri.port)
  http.read_timeout = TIMEOUT
  http.start # keep-alive: every request of the row goes over this connection
  path = ->(u) { URI(u).request_uri }
  last = nil
  Client.new(
    get: ->(u) { last = http.get(path.call(u)); [last.code.to_i, last.body] },
    post_form: lambda { |u, form, _body|
      req = Net::HTTP::Post.new(path.call(u))
      req.set_form_data(form)
      last = http.request(req)
      [last.code.to_i, last.body]
    },
    stream: lambda { |u|
      sizes = []
      http.request_get(path.call(u)) do |res|
        last = res
        res.read_body { |chunk| sizes << chunk.bytesize }
      end
      [last.code.to_i, sizes]
    },
    protocol: -> { last ? "HTTP/#{last.http_version}" : "?" },
    close: -> { http.finish if http.started? },
  )
end

def faraday_client(adapter)
  conn = Faraday.new(request: { timeout: TIMEOUT }) do |f|
    f.request :url_encoded
    f.adapter adapter
  end
  Client.new(
    get: ->(u) { r = conn.get(u); [r.status, r.body] },
    post_form: ->(u, form, _body) { r = conn.post(u, form); [r.status, r.body] },
    stream: lambda { |u|
      sizes = []
      r = conn.get(u) { |req| req.options.on_data = ->(chunk, _total) { sizes << chunk.bytesize } }
      [r.status, sizes]
    },
    close: -> { conn.close },
  )
end

# Rows that differ from "nodelay" only in how a streamed body is handed out.
STREAM_ONLY = %w[nodelay-into].freeze

# Each client: [what to require, a constructor (the workload's URL -> Client),
# the row's note, whether one client may serve several threads at once].
# Workload f runs THREADS threads: on one shared client where the client is
# thread-safe, else one client per thread (as the Python worker does).
CLIENTS = {
  "nodelay" => [[], ->(_uri) { nodelay_client }, "", true],
  # One buffer per client: a client per thread.
  "nodelay-into" => [[], ->(_uri) { nodelay_client(into: true) },
                     "get(url, buffer: buf): every piece read into one reused String", false],
  "nodelay-faraday" => [%w[faraday nodelay/faraday], ->(_uri) { faraday_client(:nodelay) },
                        "Faraday %s + the nodelay adapter", true],
  "net-http" => [%w[net/http], ->(uri) { net_http_client(uri) }, "Net::HTTP#start (keep-alive)", false],
  "net-http-persistent" => [%w[net/http/persistent], lambda { |_uri|
    http = Net::HTTP::Persistent.new
    http.read_timeout = TIMEOUT
    last = nil
    Client.new(
      get: ->(u) { last = http.request(URI(u)); [last.code.to_i, last.body] },
      post_form: lambda { |u, form, _body|
        uri = URI(u)
        req = Net::HTTP::Post.new(uri.request_uri)
        req.set_form_data(form)
        last = http.request(uri, req)
        [last.code.to_i, last.body]
      },
      stream: lambda { |u|
        uri = URI(u)
        sizes = []
        http.request(uri, Net::HTTP::Get.new(uri.request_uri)) do |res|
          last = res
          res.read_body { |chunk| sizes << chunk.bytesize }
        end
        [last.code.to_i, sizes]
      },
      protocol: -> { last ? "HTTP/#{last.http_version}" : "?" },
      close: -> { http.shutdown },
    )
  }, "", false],
  "curb" => [%w[curb], lambda { |_uri|
    easy = Curl::Easy.new
    easy.timeout = TIMEOUT
    Client.new(
      get: lambda { |u|
        easy.url = u
        easy.http_get
        [easy.response_code, easy.body_str]
      },
      post_form: lambda { |u, _form, body|
        easy.url = u
        easy.http_post(body)
        [easy.response_code, easy.body_str]
      },
      stream: lambda { |u|
        sizes = []
        easy.url = u
        easy.on_body { |data| sizes << data.bytesize; data.bytesize }
        begin
          easy.http_get
        ensure
          easy.on_body # back to collecting the body
        end
        [easy.response_code, sizes]
      },
      close: -> { easy.close },
    )
  }, "hand-built body (Curl::Easy#http_post)", false],
  "excon" => [%w[excon], lambda { |uri|
    conn = Excon.new("#{uri.scheme}://#{uri.host}:#{uri.port}", persistent: true, read_timeout: TIMEOUT)
    Client.new(
      get: ->(u) { r = conn.get(path: URI(u).request_uri); [r.status, r.body] },
      post_form: lambda { |u, _form, body|
        r = conn.post(path: URI(u).request_uri, body: body, headers: FORM_TYPE)
        [r.status, r.body]
      },
      stream: lambda { |u|
        sizes = []
        r = conn.get(path: URI(u).request_uri, response_block: ->(chunk, _left, _total) { sizes << chunk.bytesize })
        [r.status, sizes]
      },
      close: -> { conn.reset },
    )
  }, "hand-built body", false],
  "typhoeus" => [%w[typhoeus], lambda { |_uri|
    Client.new(
      get: ->(u) { r = Typhoeus.get(u, timeout: TIMEOUT); [r.code, r.body] },
      post_form: ->(u, form, _body) { r = Typhoeus.post(u, body: form, timeout: TIMEOUT); [r.code, r.body] },
      stream: lambda { |u|
        sizes = []
        req = Typhoeus::Request.new(u, timeout: TIMEOUT)
        req.on_body { |chunk| sizes << chunk.bytesize }
        r = req.run
        [r.code, sizes]
      },
    )
  }, "", true],
  "httpclient" => [%w[httpclient], lambda { |_uri|
    c = HTTPClient.new
    c.receive_timeout = TIMEOUT
    Client.new(
      get: ->(u) { r = c.get(u); [r.status, r.body] },
      post_form: ->(u, form, _body) { r = c.post(u, body: form); [r.status, r.body] },
      stream: lambda { |u|
        sizes = []
        r = c.get(u) { |chunk| sizes << chunk.bytesize }
        [r.status, sizes]
      },
      close: -> { c.reset_all },
    )
  }, "", true],
  "http.rb" => [%w[http], lambda { |uri|
    c = HTTP.timeout(TIMEOUT).persistent("#{uri.scheme}://#{uri.host}:#{uri.port}")
    Client.new(
      get: ->(u) { r = c.get(u); [r.code, r.to_s] },
      post_form: ->(u, form, _body) { r = c.post(u, form: form); [r.code, r.to_s] },
      stream: lambda { |u|
        r = c.get(u)
        sizes = []
        r.body.each { |chunk| sizes << chunk.bytesize }
        [r.code, sizes]
      },
      close: -> { c.close },
    )
  }, "HTTP.persistent", false],
  "faraday" => [%w[faraday], ->(_uri) { faraday_client(Faraday.default_adapter) },
                "Faraday %s, default adapter", false],
  # A reference row, not a peer: the cheapest client written in Ruby (socket_client.rb,
  # beside this script).
  "ruby-socket" => [[File.join(__dir__, "socket_client")], lambda { |uri|
    c = SocketClient.new("#{uri.scheme}://#{uri.host}:#{uri.port}", TIMEOUT)
    Client.new(
      get: ->(u) { c.get(u) },
      post_form: ->(u, _form, body) { c.post_form(u, body) },
      close: -> { c.close },
    )
  }, "reference: one TCPSocket, one write, readpartial into a reused String, " \
     "Content-Length answers only (socket_client.rb)", false],
}.freeze

# Workload h's clients: the constructor of a client whose cookie jar lives in
# the Netscape file at path (read when made, written by #save): the file curl
# -b and the other fronts read.
COOKIES = {
  "nodelay" => ->(path) { nodelay_client(cookies: path) },
  "curb" => lambda { |path|
    easy = Curl::Easy.new
    easy.timeout = TIMEOUT
    easy.enable_cookies = true
    easy.cookiefile = path
    easy.cookiejar = path
    perform = lambda { |u, body|
      easy.url = u
      body ? easy.http_post(body) : easy.http_get
      [easy.response_code, easy.body_str]
    }
    Client.new(
      get: ->(u) { perform.call(u, nil) },
      post_form: ->(u, _form, body) { perform.call(u, body) },
      # libcurl writes COOKIEJAR when the handle is cleaned up.
      save: -> { easy.close },
    )
  },
  "httpclient" => lambda { |path|
    c = HTTPClient.new
    c.receive_timeout = TIMEOUT
    # httpclient's set_cookie_store would keep its own file format and drop
    # session cookies on save: its CookieManager over http-cookie's cookies.txt
    # saver keeps the login's session cookie in the file curl reads.
    FileUtils.touch(path)
    c.cookie_manager = HTTPClient::CookieManager.new(path, HTTP::CookieJar::CookiestxtSaver)
    Client.new(
      get: ->(u) { r = c.get(u); [r.status, r.body] },
      post_form: ->(u, form, _body) { r = c.post(u, body: form); [r.status, r.body] },
      save: -> { c.cookie_manager.save_cookies(true) },
    )
  },
}.freeze

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

# Runs up to n requests of op, stopping early when `cap` seconds have passed
# (the lab's time cap; nil: none). Returns [done, errors, body bytes, capped];
# each request's duration goes to latency.
def run_seq(op, n, latency, cap)
  errors = bytes = streak = 0
  start = now
  n.times do |i|
    t0 = now
    ok, size = begin
      op.call
    rescue StandardError
      [false, 0]
    end
    t1 = now
    latency << t1 - t0
    if ok
      bytes += size
      streak = 0
    else
      errors += 1
      streak += 1
      return [n, errors + (n - i - 1), bytes, false] if streak >= MAX_CONSECUTIVE_ERRORS
    end
    return [i + 1, errors, bytes, true] if cap && t1 - start >= cap && i + 1 < n
  end
  [n, errors, bytes, false]
end

# The same over `threads` threads, each taking its share of n (one latency
# list per thread, merged after).
def run_threads(ops, n, latency, cap)
  shares = Array.new(ops.size) { |i| n / ops.size + (i < n % ops.size ? 1 : 0) }
  parts = ops.zip(shares).map do |op, k|
    Thread.new do
      mine = []
      [run_seq(op, k, mine, cap), mine]
    end
  end.map(&:value)
  parts.each { |_, mine| latency.concat(mine) }
  results = parts.map(&:first)
  [results.sum { |r| r[0] }, results.sum { |r| r[1] }, results.sum { |r| r[2] }, results.any? { |r| r[3] }]
end

# User and system CPU seconds: the process CPU clock, split in the ratio
# Process.times gives (its ticks are coarse).
def cpu
  t = Process.times
  [Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID), t.utime, t.stime]
end

# The warm-up, then the timed repetitions: [reps, latencies (s), capped?].
def measure(run)
  cap = SPEC["pass_seconds"]
  run.call(SPEC.fetch("warmup"), [], cap)
  reps = []
  latency = []
  capped = false
  SPEC.fetch("repeat").times do
    GC.start # every repetition starts from a collected heap, for every client alike
    c0, u0, s0 = cpu
    t0 = now
    done, errors, bytes, cut = run.call(SPEC.fetch("n"), latency, cap)
    seconds = now - t0
    c1, u1, s1 = cpu
    user, sys = u1 - u0, s1 - s0
    total = c1 - c0
    share = user + sys > 0 ? user / (user + sys) : 1.0
    capped ||= cut
    reps << { seconds: seconds, requests: done - errors, bytes: bytes, cpu_user: total * share,
              cpu_sys: total * (1 - share), errors: errors }
  end
  [reps, latency, capped]
end

def summary(samples)
  return nil if samples.empty?

  ordered = samples.map { |s| s * 1000 }.sort
  out = PERCENTILES.to_h { |q| ["p#{q}", ordered[(q / 100.0 * ordered.size).ceil - 1]] }
  out.merge("max" => ordered.last, "mean" => ordered.sum / ordered.size, "n" => ordered.size)
end

def peak_rss_kb
  File.foreach("/proc/self/status") { |line| return Regexp.last_match(1).to_i if line =~ /\AVmHWM:\s+(\d+)/ }
  nil
end

def result(reps, latency, capped, protocol, note, chunks = nil)
  emit(reps: reps, protocol: protocol, peak_rss_kb: peak_rss_kb, chunks: chunks, note: note,
       latency_ms: summary(latency), connect_ms: nil, tls_ms: nil, capped: capped)
end

# Workload h, as worker.py's run_cookie_flow: log in (untimed), then GET
# /cookies and POST /anything/cookies alternating, each answer checked for the
# session cookie; then the cookie file is saved, and a fresh client of the
# same kind and the real curl -b must send the cookie from it.
def cookie_flow(make)
  dir = Dir.mktmpdir("nodelay-bench-cookies-")
  path = File.join(dir, "cookies.txt")
  get_url = SPEC.fetch("url")
  origin = get_url[%r{\Ahttps?://[^/]+}]
  client = make.call(path)
  login = SPEC.fetch("login_form").to_h
  status, body = client.post_form(origin + SPEC.fetch("login_path"), login, URI.encode_www_form(login))
  session = (PARSE_JSON.call(body).dig("cookies", "session") rescue nil)
  emit(failed: "login POST answered #{status}: #{body.to_s[0, 80]}") unless status == 200 && session.is_a?(String)
  get_body = JSON.generate({ "cookies" => { "session" => session } }, space: " ")
  needle = %(["cookie", "session=#{session}"])
  post_url = origin + SPEC.fetch("cookie_post_path")
  turn = false
  op = lambda {
    turn = !turn
    if turn
      s, d = client.get(get_url)
      [s == 200 && d == get_body, d.bytesize]
    else
      s, d = client.post_form(post_url)
      [s == 200 && d.include?(needle), d.bytesize]
    end
  }
  reps, latency, capped = measure(->(n, lat, cap) { run_seq(op, n, lat, cap) })
  protocol = client.protocol
  client.save.call
  fresh = make.call(path)
  s, d = fresh.get(get_url)
  emit(failed: "reloaded cookie file not sent: #{s} #{d.to_s[0, 80]}") unless s == 200 && d == get_body
  note = "cookie file reloaded; curl not found"
  if ENV.fetch("PATH", "").split(":").any? { |p| File.executable?(File.join(p, "curl")) }
    out = IO.popen(["curl", "-s", "-m", CURL_TIMEOUT.to_s, "-b", path, get_url], &:read)
    note = out == get_body ? "cookie file reloaded; curl -b sends it" : "cookie file reloaded; curl -b does NOT send it"
  end
  FileUtils.remove_entry(dir)
  result(reps, latency, capped, protocol, note)
end

name = SPEC.fetch("client")
requires, make, note, thread_safe = CLIENTS[name] || emit(skipped: "the ruby worker has no client #{name}")
if STREAM_ONLY.include?(name) && SPEC.fetch("variant") != "stream"
  emit(skipped: "streams only (workload d); otherwise the same as row nodelay")
end
begin
  load_nodelay if name.start_with?("nodelay")
  requires.each { |lib| require lib }
rescue LoadError => e
  emit(skipped: "#{e.message.split("\n").first} (not installed or not built: make bench-ruby)")
end
note = format(note, Faraday::VERSION) if note.include?("%s")
emit(skipped: "the ruby worker keeps one client per row") if SPEC["fresh_client"]
check = SPEC.fetch("check")
emit(skipped: "the ruby worker does not run check '#{check}'") unless %w[bytes json echo cookies].include?(check)
if check == "cookies"
  maker = COOKIES[name] or emit(skipped: "no cookie file support in this client")
  cookie_flow(maker)
end

uri = URI(SPEC.fetch("url"))
url = SPEC.fetch("url")
threads = SPEC.fetch("concurrency")
stream = SPEC.fetch("variant") == "stream"
size = SPEC["expect_length"]
sizes = []
responses = 0
clients = []
new_op = lambda do
  client = thread_safe && !clients.empty? ? clients.first : make.call(uri)
  clients << client unless clients.include?(client)
  if stream
    emit(skipped: "no streaming API in this client") unless client.streams?
    lambda {
      status, pieces = client.stream(url)
      sizes.concat(pieces)
      responses += 1
      total = pieces.sum
      [status == 200 && total == size, total]
    }
  elsif SPEC.fetch("method") == "POST"
    -> { s, d = client.post_form(url); [s == 200 && FORM_BODIES.key?(d), d.bytesize] }
  elsif check == "json" && client.parses_json?
    # "ok": true, a JSON boolean, in the document the client's own method parsed.
    -> { s, doc, n = client.get_json(url); [s == 200 && doc["ok"] == true, n] }
  elsif check == "json"
    -> { s, d = client.get(url); [s == 200 && PARSE_JSON.call(d)["ok"] == true, d.bytesize] }
  else
    -> { s, d = client.get(url); [s == 200 && d.bytesize == size, d.bytesize] }
  end
end

run = if threads > 1
        ops = Array.new(threads) { new_op.call }
        ->(n, lat, cap) { run_threads(ops, n, lat, cap) }
      else
        op = new_op.call
        ->(n, lat, cap) { run_seq(op, n, lat, cap) }
      end
reps, latency, capped = measure(run)
notes = [note]
notes << "parsed with #{clients.first.parses_json? ? "Response#json" : JSON_PARSER}" if check == "json"
if threads > 1
  notes << (thread_safe ? "#{threads} threads sharing one client" : "#{threads} threads, one client each")
end
chunks = unless sizes.empty?
           { chunks_per_response: sizes.size.fdiv(responses), mean: sizes.sum.fdiv(sizes.size),
             min: sizes.min, max: sizes.max }
         end
protocol = clients.first.protocol
clients.each(&:close)
result(reps, latency, capped, protocol, notes.reject(&:empty?).join("; "), chunks)
