# frozen_string_literal: true

require "json"

module Nodelay
  # What a response object builds over its #status, #body and #header_fields:
  # the engine's Response, and the stubbed ones of nodelay/webmock.
  module ResponseMethods
    # The body parsed as JSON: what JSON.parse(body, symbolize_names:, **options)
    # returns or raises. The engine scans the bytes and the extension builds
    # the values in one pass (Native.json_fast); a document the scan does not
    # take (invalid JSON, an integer beyond 64 bits, a lone UTF-16 surrogate,
    # nesting deeper than JSON.parse's max_nesting of 100, bytes that are not
    # UTF-8, ...) is parsed by JSON.parse itself, as is every document when
    # another JSON.parse option is given. nil when the body was streamed to a
    # block, as #body.
    def json(symbolize_names: false, **options)
      doc = body
      return nil if doc.nil?

      if options.empty?
        value = Native.json_fast(doc, symbolize_names)
        return value unless Native::JSON_FALLBACK.equal?(value)
      end
      # A copy: JSON.parse (json 2.6) relabels a binary String it is given as
      # UTF-8 in place, and #body stays binary.
      JSON.parse(doc.dup, symbolize_names: symbolize_names, **options)
    end

    # 2xx.
    def success? = (200..299).cover?(status)

    # The headers as a Hash, names lowercased, repeated fields joined by
    # ", " (Set-Cookie by "\n", as a comma can be part of one). Built on each
    # call: use #[] for one header.
    def headers
      header_fields.each_with_object({}) do |(name, value), hash|
        key = name.downcase
        hash[key] = hash.key?(key) ? "#{hash[key]}#{key == "set-cookie" ? "\n" : ", "}#{value}" : value
      end
    end

    def inspect = "#<#{self.class} #{status}>"
  end

  # A response (the class is made by the C extension): #status, #body (a
  # binary String; nil when the body was streamed to a block), #json, #[]
  # (the first value of a header, looked up in the received bytes when asked,
  # ASCII case-insensitive), #header_values, #header_fields, #reason,
  # #version, #decoded? (the engine undid its content codings).
  class Response
    include ResponseMethods
  end
end
