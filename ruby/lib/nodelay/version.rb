# frozen_string_literal: true

module Nodelay
  VERSION = "0.1.0"
end
