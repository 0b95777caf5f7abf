# frozen_string_literal: true

require_relative "test_helper"

# A client used before fork(2) serves the child too: the child opens its own
# connections (the engine's pool knows its process) instead of sharing the
# parent's sockets, and the parent's keep on working.
class TestFork < Minitest::Test
  def test_child_uses_its_own_connections
    skip "no fork here" unless Process.respond_to?(:fork)
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 5)
    expected = client.get("/bytes/1000").body
    before = connections(client)
    pid = fork do
      ok = 3.times.all? { client.get("/bytes/1000").body == expected }
      exit!(ok ? 0 : 1)
    end
    Process.wait(pid)
    assert $?.success?, "the child's requests failed"
    # The child's one connection, and none more: its 3 requests kept it alive.
    assert_equal before + 1, connections(client)
    3.times { assert_equal expected, client.get("/bytes/1000").body }
  end

  # Connections the server has accepted (the request asking is on one it
  # already counted: the client's kept-alive connection).
  def connections(client) = client.get("/stats").body[/"connections": (\d+)/, 1].to_i
end
