# frozen_string_literal: true

module Nodelay
  # Where a client keeps its cookies. The jar itself lives in the engine (one
  # per client); this object says how: in memory (`CookieJar.new`), or also
  # in a Netscape cookies.txt file read when the client is made and written
  # after every response that changed it (`autosave: "cookies.txt"`), or
  # written only by Client#save_cookies (`file: "cookies.txt"`). curl
  # (`curl -b cookies.txt`), LWP's HTTP::Cookies::Netscape and nodelay all
  # read that file.
  class CookieJar
    attr_reader :path

    def initialize(autosave: nil, file: nil)
      raise ArgumentError, "give autosave: or file:, not both" if autosave && file

      @path = (autosave || file)&.to_s
      @autosave = !autosave.nil?
    end

    def autosave? = @autosave

    # The Native client options for this jar.
    def native_options
      { cookies: true, cookie_file: @path, cookie_autosave: @autosave }
    end
  end
end
