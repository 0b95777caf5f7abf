# frozen_string_literal: true

require "uri"
require "json"

module Nodelay
  # An HTTP client: a connection pool (keep-alive, TCP_NODELAY), TLS, HTTP/2
  # when asked, timeouts and a cookie jar, all in the engine. Thread-safe:
  # one client serves every thread; the GVL is released while a request
  # waits, and Thread#raise, Timeout.timeout and Ctrl-C interrupt it.
  class Client
    HTTP2_MODES = { false => 0, nil => 0, negotiate: 1, true => 1, prior_knowledge: 2 }.freeze
    TIMEOUT_KINDS = %i[connect read write pool total].freeze
    FORM_TYPE = "application/x-www-form-urlencoded"
    JSON_TYPE = "application/json"
    ABSOLUTE_URL = %r{\A[a-z][a-z0-9+.-]*://}i

    attr_reader :base_url, :headers, :accept_encoding

    # base_url: what a relative path is joined to. timeout: seconds for each
    # of connect, read, write and pool, or a Hash of some of those and
    # :total (a whole request); nil: the defaults (10 s connect, 30 s the
    # others). cookies: a CookieJar (default: in memory), or false for none.
    # http2: false (HTTP/1.1), true/:negotiate (h2 by ALPN over https),
    # :prior_knowledge (h2c). headers: sent with every request (a request's
    # own win). accept_encoding: sent when a request has no Accept-Encoding
    # (nil: every coding the engine decodes, which it then undoes; "": none).
    # verify/ca_file/proxy/no_proxy/user_agent/max_connections as their names
    # say. max_connections_per_host: connections open at once to one origin
    # (busy, idle and being opened). rate_limit: a Hash
    # { per_second:, burst: (default a fifth of a second's worth, at least
    # 1), per_host: (default true) }: requests started per second, per
    # origin or for the whole client; a request waits for its turn within
    # the pool timeout (Nodelay::PoolTimeout when its turn comes later).
    def initialize(base_url: nil, timeout: nil, cookies: CookieJar.new, http2: false, headers: {},
                   verify: true, ca_file: nil, proxy: nil, no_proxy: nil, user_agent: nil,
                   accept_encoding: nil, max_connections: nil, max_connections_per_host: nil,
                   rate_limit: nil)
      @base_url = base_url&.to_s&.chomp("/")
      @headers = headers.to_h { |k, v| [k.to_s, v.to_s] }.freeze
      @flat_headers = @headers.empty? ? nil : @headers.flatten.each(&:freeze).freeze
      # The same with a form's or a JSON body's Content-Type, built once: a POST
      # without headers of its own then costs no Hash and no Array.
      @form_headers = fields(nil, FORM_TYPE).each(&:freeze).freeze
      @json_headers = fields(nil, JSON_TYPE).each(&:freeze).freeze
      options = {
        verify: verify, ca_file: ca_file&.to_s, proxy: proxy&.to_s, no_proxy: no_proxy&.to_s,
        user_agent: user_agent&.to_s, accept_encoding: accept_encoding&.to_s,
        max_connections: max_connections, max_connections_per_host: max_connections_per_host,
        http2: HTTP2_MODES.fetch(http2) { raise ArgumentError, "http2: #{http2.inspect}" },
      }
      options.merge!(rate_options(rate_limit)) if rate_limit
      options.merge!(timeouts(timeout))
      options.merge!(cookies ? cookies.native_options : { cookies: false })
      @native = Native.new(options)
      # What the engine adds when a request has no Accept-Encoding ("": none).
      @accept_encoding = (accept_encoding&.to_s || Native::DEFAULT_ACCEPT_ENCODING).freeze
    end

    # get/head/post/put/patch/delete: #request with that method. The keywords
    # are passed by name rather than forwarded with **options: Ruby 3.1 then
    # builds no Hash per call and takes its fast path for keyword arguments
    # (about 1,200 fewer instructions per request).
    def get(path, params: nil, headers: nil, form: nil, json: nil, body: nil, buffer: nil, &block)
      request("GET", path, params: params, headers: headers, form: form, json: json, body: body, buffer: buffer, &block)
    end

    def head(path, params: nil, headers: nil, form: nil, json: nil, body: nil, buffer: nil)
      request("HEAD", path, params: params, headers: headers, form: form, json: json, body: body, buffer: buffer)
    end

    def post(path, params: nil, headers: nil, form: nil, json: nil, body: nil, buffer: nil, &block)
      # A form alone (the common POST) goes straight to #perform: no body or
      # buffer checks to make, and the form's headers as built once.
      if form && !block && params.nil? && headers.nil? && json.nil? && body.nil? && buffer.nil?
        return perform("POST", url(path, nil), @form_headers, encoded_body(form, nil).first, nil)
      end

      request("POST", path, params: params, headers: headers, form: form, json: json, body: body, buffer: buffer, &block)
    end

    def put(path, params: nil, headers: nil, form: nil, json: nil, body: nil, buffer: nil, &block)
      request("PUT", path, params: params, headers: headers, form: form, json: json, body: body, buffer: buffer, &block)
    end

    def patch(path, params: nil, headers: nil, form: nil, json: nil, body: nil, buffer: nil, &block)
      request("PATCH", path, params: params, headers: headers, form: form, json: json, body: body, buffer: buffer, &block)
    end

    def delete(path, params: nil, headers: nil, form: nil, json: nil, body: nil, buffer: nil, &block)
      request("DELETE", path, params: params, headers: headers, form: form, json: json, body: body, buffer: buffer, &block)
    end

    # Sends one request and returns its Response. params: a Hash or Array
    # added to the query string. headers: this request's. One body at most:
    # form: (a Hash, URL-encoded), json: (any object, JSON.generate) or body:
    # (a String, sent as is). With a block, the body is given to it in pieces
    # (Strings, decoded) as they arrive, and Response#body is nil. buffer: a
    # String every piece is then read into in place (as IO#readpartial's
    # outbuf): the block gets that same String each time, binary, its
    # contents replaced by the next piece (copy what it keeps); no String is
    # allocated per piece. Frozen: FrozenError before the request is sent.
    def request(method, path, params: nil, headers: nil, form: nil, json: nil, body: nil, buffer: nil,
                &block)
      one_body!(form, json, body)
      raise ArgumentError, "buffer: is for a body streamed to a block" if buffer && !block

      body, type = encoded_body(form, json) if form || !json.nil?
      # The client's own headers (with the body's type) as built once, unless
      # this request adds some.
      flat = headers ? fields(headers, type) : typed_headers(type)
      perform(method, url(path, params), flat, body&.to_s, buffer, &block)
    end

    # GETs every path of `paths` through one call into the engine and returns
    # one result per path, in that order: a Response, or the Nodelay::Error
    # of a request that failed (returned, not raised). See request_many.
    def get_many(paths, concurrency: nil, deadline: nil, params: nil, headers: nil)
      raise ArgumentError, "get_many: an Array of paths or URLs" unless paths.is_a?(Array)

      flat = headers ? fields(headers, nil) : @flat_headers
      requests = paths.map { |path| ["GET", url(path, params), flat, nil] }
      many(requests, concurrency, deadline)
    end

    # Sends every request of `requests` ([method, path] or [method, path,
    # { params:, headers:, form:, json:, body: }]) through one call into the
    # engine, which runs them at once: at most `concurrency` in flight
    # (default 32; the client's max_connections_per_host and rate_limit hold
    # too), each read whole, HTTP/2 ones as streams of one connection. With
    # `deadline` (seconds) the whole batch ends within it: a request still
    # running fails with a TimeoutError naming it. The GVL is released the
    # whole time, and Thread#raise, Timeout.timeout and Ctrl-C stop the batch
    # as they stop a request. Returns one result per request, in the order
    # given: a Response, or the Nodelay::Error of a request that failed
    # (returned, not raised; the others are unaffected).
    def request_many(requests, concurrency: nil, deadline: nil)
      raise ArgumentError, "request_many: an Array of requests" unless requests.is_a?(Array)

      prepared = requests.map do |method, path, options|
        options ||= {}
        unknown = options.keys - MANY_OPTIONS
        raise ArgumentError, "request_many: unknown option #{unknown.first.inspect}" unless unknown.empty?

        form, json, body = options.values_at(:form, :json, :body)
        one_body!(form, json, body)
        body, type = encoded_body(form, json) if form || !json.nil?
        flat = options[:headers] ? fields(options[:headers], type) : typed_headers(type)
        [method.to_s, url(path, options[:params]), flat, body&.to_s]
      end
      many(prepared, concurrency, deadline)
    end

    # Writes the cookie jar to its file now.
    def save_cookies = @native.save_cookies

    # Closes the pool's connections and frees the client (saving an autosaved
    # jar). Call it only when no request of this client is running.
    def close = @native.close

    private

    # Sends the request as assembled: `fields` is the flat [name, value, ...]
    # Array of its headers (nil: none). The one way to the engine, so a
    # library that intercepts requests (nodelay/webmock) hooks here.
    def perform(method, target, fields, body, buffer, &block)
      if block
        @native.stream(method, target, fields, body, buffer, &block)
      else
        @native.request(method, target, fields, body)
      end
    end

    # What a request_many item may carry.
    MANY_OPTIONS = %i[params headers form json body].freeze

    def one_body!(form, json, body)
      return unless (form.nil? ? 0 : 1) + (json.nil? ? 0 : 1) + (body.nil? ? 0 : 1) > 1

      raise ArgumentError, "give one of form:, json: and body:"
    end

    # The body of form: or json: and the Content-Type it implies.
    # The client's own header fields, with a Content-Type of +type+ when given,
    # as built once at construction.
    def typed_headers(type)
      case type
      when FORM_TYPE then @form_headers
      when JSON_TYPE then @json_headers
      else @flat_headers
      end
    end

    def encoded_body(form, json)
      if form
        [Native.encode_form(form) || URI.encode_www_form(form).freeze, FORM_TYPE]
      else
        [JSON.generate(json).freeze, JSON_TYPE]
      end
    end

    # Runs prepared [method, url, flat headers, body] requests as one batch.
    def many(requests, concurrency, deadline)
      unless concurrency.nil? || (concurrency.is_a?(Integer) && concurrency.between?(1, Native::MAX_BATCH_CONCURRENCY))
        raise ArgumentError, "concurrency: an Integer between 1 and #{Native::MAX_BATCH_CONCURRENCY}, not #{concurrency.inspect}"
      end
      raise ArgumentError, "deadline: seconds, not #{deadline.inspect}" unless deadline.nil? || (deadline.is_a?(Numeric) && deadline >= 0)

      @native.request_many(requests, concurrency || 0, deadline.nil? ? -1.0 : deadline.to_f).map do |outcome|
        outcome.is_a?(Array) ? Nodelay.error_for(*outcome) : outcome
      end
    end

    def timeouts(timeout)
      case timeout
      when nil then {}
      when Numeric then %i[connect read write pool].to_h { |k| [:"#{k}_timeout", timeout.to_f] }
      when Hash
        timeout.to_h do |kind, seconds|
          raise ArgumentError, "timeout: unknown kind #{kind.inspect}" unless TIMEOUT_KINDS.include?(kind)

          [:"#{kind}_timeout", seconds.nil? ? -1.0 : seconds.to_f]
        end
      else raise ArgumentError, "timeout: seconds or a Hash, not #{timeout.class}"
      end
    end

    RATE_KEYS = %i[per_second burst per_host].freeze

    # rate_limit: as the engine's rate_* options.
    def rate_options(rate_limit)
      raise ArgumentError, "rate_limit: a Hash, not #{rate_limit.class}" unless rate_limit.is_a?(Hash)

      unknown = rate_limit.keys - RATE_KEYS
      raise ArgumentError, "rate_limit: unknown key #{unknown.first.inspect}" unless unknown.empty?

      per_second = rate_limit.fetch(:per_second) { raise ArgumentError, "rate_limit: per_second is required" }
      raise ArgumentError, "rate_limit: per_second must be above 0" unless per_second.is_a?(Numeric) && per_second.positive?

      { rate_per_second: per_second.to_f, rate_burst: rate_limit[:burst],
        rate_per_host: rate_limit.fetch(:per_host, true) }
    end

    # The flat [name, value, ...] Array of the client's headers, this
    # request's (which win) and the Content-Type `type` unless one is there.
    def fields(headers, type)
      fields = @headers.dup
      headers&.each { |k, v| fields[k.to_s] = v.to_s }
      fields["Content-Type"] = type if type && fields.keys.none? { |k| k.casecmp?("content-type") }
      fields.empty? ? nil : fields.flatten
    end

    def url(path, params)
      path = path.to_s
      # Frozen when made here, so the extension need not make a frozen copy.
      target = if @base_url.nil? || (!path.start_with?("/") && path.match?(ABSOLUTE_URL))
                 path
               elsif path.start_with?("/")
                 (@base_url + path).freeze
               else
                 "#{@base_url}/#{path}".freeze
               end
      return target if params.nil? || params.empty?

      "#{target}#{target.include?("?") ? "&" : "?"}#{URI.encode_www_form(params)}".freeze
    end
  end
end
