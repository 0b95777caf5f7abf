# frozen_string_literal: true

require "timeout"

module Nodelay
  # What every nodelay exception carries: the ABI's error code (frozen, as
  # libcurl's CURLcode; docs/ffi.md) and its short name.
  module ErrorDetails
    attr_reader :code

    # "read timeout", "connect error", ...
    def code_name = Nodelay.code_name(code)
  end

  # Base class of nodelay's exceptions. `rescue Nodelay::Error` also catches
  # the timeout classes, which are Timeout::Error subclasses (Ruby has single
  # inheritance, so Nodelay::Error.=== accepts them explicitly).
  class Error < StandardError
    include ErrorDetails

    def self.===(other)
      super || (equal?(Nodelay::Error) && other.is_a?(Nodelay::TimeoutError))
    end
  end

  # A deadline passed: `rescue Timeout::Error` catches it as well.
  class TimeoutError < Timeout::Error
    include ErrorDetails
  end

  class ConnectTimeout < TimeoutError; end
  class ReadTimeout < TimeoutError; end
  class WriteTimeout < TimeoutError; end
  class PoolTimeout < TimeoutError; end

  # The request could not be made as asked.
  class RequestError < Error; end
  class InvalidURL < RequestError; end
  class UnsupportedProtocol < RequestError; end
  class InvalidArgument < RequestError; end
  class BodySourceError < RequestError; end

  # The network or the peer failed.
  class TransportError < Error; end
  class ConnectError < TransportError; end
  class TLSError < TransportError; end
  class ProxyError < TransportError; end
  class ReadError < TransportError; end
  class WriteError < TransportError; end
  class ClosedError < TransportError; end

  # Someone broke HTTP.
  class ProtocolError < Error; end
  class LocalProtocolError < ProtocolError; end
  class RemoteProtocolError < ProtocolError; end
  class HeaderTooLarge < ProtocolError; end
  class DecodingError < ProtocolError; end

  # The request was abandoned because the thread was interrupted by
  # something that raised nothing itself (a signal trap that returned).
  class Interrupted < Error; end
  class CookieFileError < Error; end
  class InternalError < Error; end

  # ABI code => class; the numbers are crates/nodelay-ffi's `nodelay_code`
  # and never change.
  CODES = {
    1 => InvalidURL,
    2 => UnsupportedProtocol,
    3 => LocalProtocolError,
    4 => ConnectTimeout,
    5 => ReadTimeout,
    6 => WriteTimeout,
    7 => PoolTimeout,
    8 => ConnectError,
    9 => TLSError,
    10 => ProxyError,
    11 => ReadError,
    12 => WriteError,
    13 => RemoteProtocolError,
    14 => HeaderTooLarge,
    15 => DecodingError,
    16 => Interrupted,
    17 => ClosedError,
    18 => BodySourceError,
    1000 => InvalidArgument,
    1001 => CookieFileError,
    1002 => InternalError,
  }.freeze

  # The exception of an ABI code, with its message (the code's name when
  # empty).
  def self.error_for(code, message)
    klass = CODES.fetch(code, Error)
    error = klass.new(message.empty? ? code_name(code) : message)
    error.instance_variable_set(:@code, code)
    error
  end

  # Called by the C extension (after the ABI call returned) to raise the
  # exception of a failed call.
  def self.raise_code(code, message)
    raise error_for(code, message)
  end
end
