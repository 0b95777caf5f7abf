# The Ruby path of the hop counter (tools/hops.py runs it under gdb): Nodelay::Client#get,
# once to open the connection, then, after getpgid (gdb starts watching), the call studied.
# A TracePoint on C calls records each call into the extension (Nodelay's native classes)
# with the Ruby stack that made it, as tools/hops.py's Python recorder does.
require "json"
require "nodelay"

url, out = ARGV
calls = []

def front_call(client, url) = client.get(url)

def ruby_stack
  stack = []
  caller_locations(2).each do |loc|
    break if loc.label == "front_call" || loc.label.end_with?("#front_call")
    stack.unshift({ "function" => loc.label, "file" => loc.absolute_path || loc.path, "line" => loc.lineno })
  end
  stack
end

trace = TracePoint.new(:c_call, :c_return) do |tp|
  owner = tp.defined_class.to_s
  next unless owner.start_with?("Nodelay") || owner.include?("Nodelay::")
  if tp.event == :c_call
    calls << { "name" => tp.method_id.to_s, "start" => Process.clock_gettime(Process::CLOCK_MONOTONIC),
               "end" => nil, "stack" => ruby_stack }
  else
    open_call = calls.reverse.find { |c| c["name"] == tp.method_id.to_s && c["end"].nil? }
    open_call["end"] = Process.clock_gettime(Process::CLOCK_MONOTONIC) if open_call
  end
end

client = Nodelay::Client.new
warm = client.get(url)
abort "hops: #{url} answered #{warm.status}" unless warm.status == 200
Process.getpgid(0) # ready: gdb starts watching (tools/hops_gdb.py)
trace.enable
res = front_call(client, url)
trace.disable
abort "hops: #{url} answered #{res.status}" unless res.status == 200
File.write(out, JSON.generate(calls))
