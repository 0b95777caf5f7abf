# frozen_string_literal: true

module Nodelay
  # A response (the class is made by the C extension): #status, #body (a
  # binary String; nil when the body was streamed to a block), #[] (the first
  # value of a header, looked up in the received bytes when asked, ASCII
  # case-insensitive), #header_values, #header_fields, #reason, #version.
  class Response
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

    def inspect = "#<Nodelay::Response #{status}>"
  end
end
