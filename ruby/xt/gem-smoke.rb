# frozen_string_literal: true

# ruby xt/gem-smoke.rb SERVER_BINARY: the installed gem (whatever `require
# "nodelay"` finds first; run it with GEM_HOME/GEM_PATH set to the scratch
# install) against the embedded server: a plain GET, a gzip body decoded, a
# form POST echoed. Prints where the gem was loaded from.
require "nodelay"
require "timeout"

server = IO.popen([ARGV.fetch(0), "--host", "127.0.0.1", "--port", "0"], err: File::NULL)
begin
  url = Timeout.timeout(30) do
    found = nil
    while (line = server.gets)
      break if (found = line[/^listening on (\S+)/, 1])
    end
    found&.chomp("/") or abort "gem-smoke: the server printed no 'listening on' line"
  end
  client = Nodelay::Client.new(base_url: url)
  checks = {
    "GET /bytes/10" => client.get("/bytes/10").body.bytesize == 10,
    "GET /gzip/1000 decoded" => client.get("/gzip/1000").body.bytesize == 1000,
    "POST /echo" => client.post("/echo", form: { a: "1" }).body == "a=1",
  }
  puts "nodelay #{Nodelay::VERSION} from #{$LOADED_FEATURES.grep(/nodelay_ext/).first}"
  checks.each { |what, ok| puts "#{ok ? "ok" : "not ok"}: #{what}" }
  exit(checks.values.all? ? 0 : 1)
ensure
  Process.kill(:TERM, server.pid)
  Process.wait(server.pid)
end
