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
      args = [env[:method].to_s.upcase, env[:url].to_s]
      options = { headers: env[:request_headers].to_h, body: body&.to_s }
      response = if request&.stream_response?
                   received = 0
                   client.request(*args, **options) do |piece|
                     received += piece.bytesize
                     request.on_data.call(piece, received)
                   end
                 else
                   client.request(*args, **options)
                 end
      save_response(env, response.status, response.body || "", nil, response.reason) do |headers|
        response.header_fields.each { |name, value| headers[name] = value }
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
