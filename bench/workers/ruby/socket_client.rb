# frozen_string_literal: true

require "socket"
require "io/wait"

# The lab's ruby-socket row (a reference, not a peer: bench/nodelay_bench/results.py
# REFERENCES): the cheapest keep-alive HTTP/1.1 client written in Ruby, so what is left
# per request is Ruby's own cost of a socket round trip through its IO (a method call, a
# String built and written, a wait and a read with the GVL released, the body handed out
# as a String). A client doing its I/O in native code can go below it.
# One TCPSocket with TCP_NODELAY to one origin; each request, head and body, goes out in
# one write; the answer is read with readpartial into a String reused for every request,
# its status line and Content-Length parsed by hand. It reads Content-Length framed
# answers only (the lab's servers send them for a, b, c, e and f): a chunked answer, a
# closed connection or bytes after the answer are errors, and it follows no redirect.
# docs/performance.md, "Ceilings".
class SocketClient
  # Bytes asked of each read: 64 KiB stays below glibc's mmap threshold, so the reused
  # buffer is never mapped and unmapped per request.
  READ_BYTES = 64 * 1024
  HEAD_END = "\r\n\r\n"
  # "HTTP/1.1 200 ": the status code's offset and the line's start.
  STATUS_PREFIX = "HTTP/1."
  STATUS_AT = 9
  CONTENT_LENGTH = /^content-length:[ \t]*(\d+)\r$/i

  # The error of an answer this client does not read.
  class Error < StandardError; end

  # origin: "http://host:port" (the only origin this client talks to).
  def initialize(origin, timeout)
    uri = URI(origin)
    raise Error, "ruby-socket: http:// only, not #{origin}" unless uri.scheme == "http"

    @origin = "#{uri.scheme}://#{uri.host}:#{uri.port}"
    @host = "Host: #{uri.host}:#{uri.port}\r\n"
    @timeout = timeout
    @sock = Socket.tcp(uri.host, uri.port, connect_timeout: timeout)
    @sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
    @buf = String.new(capacity: READ_BYTES)
    @piece = String.new(capacity: READ_BYTES)
  end

  # [status, body] of GET url.
  def get(url) = exchange("GET #{path(url)} HTTP/1.1\r\n#{@host}\r\n")

  # [status, body] of POST url with body (a urlencoded form).
  def post_form(url, body)
    exchange("POST #{path(url)} HTTP/1.1\r\n#{@host}Content-Type: application/x-www-form-urlencoded\r\n" \
             "Content-Length: #{body.bytesize}\r\n\r\n#{body}")
  end

  def close = @sock.close

  private

  def path(url)
    raise Error, "ruby-socket: one origin (#{@origin}), not #{url}" unless url.start_with?(@origin)

    url.byteslice(@origin.bytesize, url.bytesize)
  end

  def exchange(request)
    @sock.write(request)
    read(@buf)
    head_end = nil
    @buf << read(@piece) until (head_end = @buf.index(HEAD_END))
    raise Error, "ruby-socket: not an HTTP/1.x answer" unless @buf.start_with?(STATUS_PREFIX)

    found = CONTENT_LENGTH.match(@buf)
    raise Error, "ruby-socket: an answer without Content-Length" unless found && found.begin(0) < head_end

    length = found[1].to_i
    total = head_end + HEAD_END.bytesize + length
    @buf << read(@piece) while @buf.bytesize < total
    raise Error, "ruby-socket: bytes after the answer" if @buf.bytesize > total

    [@buf.byteslice(STATUS_AT, 3).to_i, @buf.byteslice(total - length, length)]
  end

  # The next bytes of the answer into `into` (its contents replaced), after waiting at
  # most @timeout seconds for them. Waiting first costs one poll, which a read on Ruby's
  # non-blocking socket would pay anyway after its first attempt found nothing.
  def read(into)
    raise Error, "ruby-socket: no answer in #{@timeout} s" unless @sock.wait_readable(@timeout)

    @sock.readpartial(READ_BYTES, into)
  end
end
