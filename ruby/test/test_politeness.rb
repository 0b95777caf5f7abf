# frozen_string_literal: true

require_relative "test_helper"

# Per-host politeness through the gem: the rate limit spaces a host's
# requests; a turn beyond the pool timeout is a PoolTimeout naming the rate;
# threads sharing a client with max_connections_per_host still all get answers.
class TestPoliteness < Minitest::Test
  def clock = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  def test_the_rate_limit_spaces_the_requests_to_a_host
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 5,
                                 rate_limit: { per_second: 20, burst: 1 })
    started = clock
    6.times { assert_equal 200, client.get("/bytes/10").status }
    # 5 waits of 50 ms after the first request.
    assert_operator clock - started, :>=, 0.24
  end

  def test_a_turn_beyond_the_pool_timeout_is_a_pool_timeout_naming_the_rate
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 0.2, rate_limit: { per_second: 2 })
    assert_equal 200, client.get("/bytes/10").status
    error = assert_raises(Nodelay::PoolTimeout) { client.get("/bytes/10") }
    assert_match(%r{rate limit of 2 requests/s \(burst 1\) to http://127\.0\.0\.1}, error.message)
  end

  def test_threads_share_max_connections_per_host
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 5, max_connections_per_host: 2)
    statuses = 4.times.map { Thread.new { 5.times.map { client.get("/delay/10").status } } }.flat_map(&:value)
    assert_equal [200] * 20, statuses
  end

  def test_bad_rate_limits_are_refused
    assert_raises(ArgumentError) { Nodelay::Client.new(rate_limit: { burst: 2 }) }
    assert_raises(ArgumentError) { Nodelay::Client.new(rate_limit: { per_second: 0 }) }
    assert_raises(ArgumentError) { Nodelay::Client.new(rate_limit: { per_second: 1, every: 2 }) }
  end
end
