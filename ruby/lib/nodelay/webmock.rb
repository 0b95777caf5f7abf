# frozen_string_literal: true

require "nodelay"
require "webmock"

module Nodelay
  # A response WebMock stubbed: what a Nodelay::Response answers, made from a
  # WebMock::Response instead of received bytes.
  class StubbedResponse
    include ResponseMethods

    attr_reader :status, :reason, :body, :header_fields

    def initialize(status, reason, body, header_fields)
      @status = status
      @reason = reason
      @body = body
      @header_fields = header_fields
    end

    def version = "HTTP/1.1"
    def decoded? = false
    def [](name) = header_values(name).first

    def header_values(name)
      wanted = name.to_s
      header_fields.filter_map { |field, value| value if field.casecmp?(wanted) }
    end
  end
end

module WebMock
  module HttpLibAdapters
    # WebMock for the nodelay engine (`require "nodelay/webmock"` after
    # `require "webmock"`): every request a Nodelay::Client sends, and so
    # every Faraday request through `f.adapter :nodelay`, is registered with
    # WebMock, answered by a stub when one matches, sent when real
    # connections are allowed, and refused with WebMock's
    # NetConnectNotAllowedError otherwise, as WebMock does for the libraries
    # it ships adapters for.
    class NodelayAdapter < HttpLibAdapter
      adapter_for :nodelay

      @enabled = false

      class << self
        def enable! = @enabled = true
        def disable! = @enabled = false
        def enabled? = @enabled

        # The request as WebMock sees it: its fields, and the Accept-Encoding
        # the engine adds to a request without one (`accept_encoding`).
        def signature(method, target, fields, body, accept_encoding)
          headers = {}
          (fields || []).each_slice(2) do |name, value|
            headers[name] = headers.key?(name) ? "#{headers[name]}, #{value}" : value
          end
          unless accept_encoding.empty? || headers.keys.any? { |k| k.casecmp?("accept-encoding") }
            headers["Accept-Encoding"] = accept_encoding
          end
          RequestSignature.new(method.downcase.to_sym, target, body: body, headers: headers)
        end

        # A stub's answer as a Nodelay response (or its error raised); a
        # block gets the body as one piece, as a streamed response would. The
        # body is the stub's as it is (a Content-Encoding is not undone).
        def stubbed(webmock_response, &block)
          raise Nodelay::ReadTimeout, "WebMock stub: timeout" if webmock_response.should_timeout

          webmock_response.raise_error_if_any
          status, reason = webmock_response.status
          fields = (webmock_response.headers || {}).flat_map do |name, value|
            Array(value).map { |v| [name.to_s, v.to_s] }
          end
          body = webmock_response.body.to_s.b
          if block
            block.call(body) unless body.empty?
            body = nil
          end
          Nodelay::StubbedResponse.new(status.to_i, reason.to_s, body, fields)
        end

        # A real response as a WebMock::Response, for WebMock's callbacks.
        def webmock_response(response, streamed)
          WebMock::Response.new(
            status: [response.status, response.reason],
            headers: response.header_fields.group_by(&:first).transform_values { |v| v.map(&:last).join(", ") },
            body: streamed ? "" : response.body.to_s,
          )
        end
      end

      # Prepended to Nodelay::Client: its one way to the engine.
      module ClientHook
        private

        def perform(method, target, fields, body, buffer, &block)
          return super unless NodelayAdapter.enabled?

          request = NodelayAdapter.signature(method, target, fields, body, accept_encoding)
          WebMock::RequestRegistry.instance.requested_signatures.put(request)
          if (stub = WebMock::StubRegistry.instance.response_for_request(request))
            response = NodelayAdapter.stubbed(stub, &block)
            WebMock::CallbackRegistry.invoke_callbacks({ lib: :nodelay }, request, stub)
            response
          elsif WebMock.net_connect_allowed?(request.uri)
            response = super
            if WebMock::CallbackRegistry.any_callbacks?
              WebMock::CallbackRegistry.invoke_callbacks(
                { lib: :nodelay, real_request: true }, request, NodelayAdapter.webmock_response(response, block)
              )
            end
            response
          else
            raise WebMock::NetConnectNotAllowedError, request
          end
        end
      end

      Nodelay::Client.prepend(ClientHook)
    end
  end
end

# WebMock.enable! (webmock/rspec and webmock/minitest call it) enables every
# adapter registered by then: loaded after it, this one starts in the state
# WebMock's own Net::HTTP adapter is in (its Net::HTTP class swapped in).
WebMock::HttpLibAdapters::NodelayAdapter.enable! if Net::HTTP.equal?(
  WebMock::HttpLibAdapters::NetHttpAdapter.instance_variable_get(:@webMockNetHTTP)
)
