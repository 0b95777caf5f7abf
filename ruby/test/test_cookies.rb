# frozen_string_literal: true

require_relative "test_helper"
require "tmpdir"
require "open3"

# The cookie jar: kept in memory by default, autosaved to a Netscape file
# that curl reads, loaded again by a new client.
class TestCookies < Minitest::Test
  def test_in_memory_by_default_and_none_when_false
    client = Nodelay::Client.new(base_url: TestServer.url)
    client.get("/cookies/set", params: { session: "abc123" })
    assert_includes client.get("/cookies").body, "abc123"
    off = Nodelay::Client.new(base_url: TestServer.url, cookies: false)
    off.get("/cookies/set", params: { session: "abc123" })
    refute_includes off.get("/cookies").body, "abc123"
  end

  def test_autosave_file_is_read_by_curl_and_by_a_new_client
    Dir.mktmpdir do |dir|
      path = File.join(dir, "cookies.txt")
      client = Nodelay::Client.new(base_url: TestServer.url, cookies: Nodelay::CookieJar.new(autosave: path))
      client.post("/login", form: { user: "seed-a" })
      client.get("/cookies/set", params: { session: "abc123" })
      text = File.read(path) # saved already, the client still open
      assert text.start_with?("# Netscape HTTP Cookie File"), text
      assert_match(/\tsession\tabc123$/, text)
      if system("curl --version >/dev/null 2>&1")
        curl = Open3.capture2("curl", "-s", "-b", path, "#{TestServer.url}/cookies")
        assert curl[1].success?
        assert_includes curl[0], "abc123"
      else
        warn "test_cookies: curl is not installed; the file is not read by curl"
      end
      again = Nodelay::Client.new(base_url: TestServer.url, cookies: Nodelay::CookieJar.new(autosave: path))
      assert_includes again.get("/cookies").body, "abc123"
    end
  end

  def test_file_jar_is_written_by_save_cookies
    Dir.mktmpdir do |dir|
      path = File.join(dir, "cookies.txt")
      client = Nodelay::Client.new(base_url: TestServer.url, cookies: Nodelay::CookieJar.new(file: path))
      client.get("/cookies/set", params: { k: "v" })
      refute File.exist?(path)
      client.save_cookies
      assert_match(/\tk\tv$/, File.read(path))
    end
  end
end
