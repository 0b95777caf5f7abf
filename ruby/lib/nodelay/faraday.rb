# frozen_string_literal: true

require "nodelay"
require "faraday"

module Nodelay
  # A Faraday adapter (`require "nodelay/faraday"`, then `f.adapter :nodelay`):
  # Faraday programs send through the nodelay engine. One Nodelay::Client per
  # set of connection options (timeouts, TLS, proxy) is kept for the adapter's
  # life, so requests reuse its kept-alive connections. Faraday keeps no
  # cookies, so these clients keep none either.
  class FaradayAdapter < ::Faraday::Adapter
    def initialize(app = nil, opts = {}, &block)
      super
      @clients = {}
      @lock = Mutex.new
    end

    def call(env)
      super
      client = client_for(env)
      body = env[:body]
      body = body.read if body.respond_to?(:read)
      request = env[:request]
      received = 0
      args = [env[:method].to_s.upcase, env[:url].to_s]
      options = { headers: env[:request_headers].to_h, body: body&.to_s }
      if request&.stream_response?
        response = client.request(*args, **options) { |piece| received = stream(request, piece, received) }
        # As Faraday's Net::HTTP adapter: an empty body is one empty piece.
        request.on_data.call(+"", 0) if received.zero?
      else
        response = client.request(*args, **options)
      end
      save_response(env, response.status, response.body || +"", nil, response.reason) do |headers|
        fill_headers(headers, response)
      end
      @app.call(env)
    rescue Nodelay::TimeoutError => e
      raise ::Faraday::TimeoutError, e
    rescue Nodelay::TLSError => e
      raise ::Faraday::SSLError, e
    rescue Nodelay::Error => e
      raise ::Faraday::ConnectionFailed, e
    end

    # Closes every client's connections.
    def close
      @lock.synchronize do
        @clients.each_value(&:close)
        @clients.clear
      end
    end

    private

    # Hands one piece to Faraday's on_data with the bytes received so far.
    def stream(request, piece, received)
      received += piece.bytesize
      request.on_data.call(piece, received)
      received
    end

    # The received fields as Faraday's Net::HTTP adapter gives them (what
    # Net::HTTPHeader#each_header yields): names lowercased, a repeated
    # field's values joined by ", " in received order (Set-Cookie too). A
    # body the engine decoded loses its Content-Encoding and keeps the
    # Content-Length of the encoded bytes, as Net::HTTP's own decoding
    # leaves them.
    def fill_headers(headers, response)
      decoded = response.decoded?
      response.header_fields.each do |name, value|
        key = name.downcase
        next if decoded && key == "content-encoding"

        headers[key] = headers.key?(key) ? "#{headers[key]}, #{value}" : value
      end
    end

    def client_for(env)
      options = client_options(env)
      @lock.synchronize { @clients[options] ||= Nodelay::Client.new(cookies: false, **options) }
    end

    def client_options(env)
      request = env[:request]
      timeout = { connect: request_timeout(:open, request), read: request_timeout(:read, request),
                  write: request_timeout(:write, request) }.compact
      ssl = env[:ssl]
      options = { timeout: timeout.empty? ? nil : timeout }
      if ssl
        options[:verify] = ssl.verify? if ssl.respond_to?(:verify?)
        options[:ca_file] = ssl.ca_file if ssl.ca_file
      end
      proxy = request&.proxy
      options[:proxy] = proxy.uri.to_s if proxy
      options
    end
  end
end

Faraday::Adapter.register_middleware(nodelay: Nodelay::FaradayAdapter)
