# frozen_string_literal: true

require_relative "test_helper"

# The GVL is released while a request waits, and an interrupt of the waiting
# thread stops it: against a server that accepts and never answers, the
# request would otherwise wait for its 10 s read timeout.
class TestInterrupt < Minitest::Test
  # Seconds within which an interrupted request must have returned: the
  # engine polls the abort flag every 50 ms; the rest is slack for a loaded
  # machine, far below the 10 s the request would otherwise wait.
  INTERRUPT_BOUND = 0.6

  def setup
    @silent = ScriptedServer.new { |c| c.read rescue nil } # reads, never answers
    @client = Nodelay::Client.new(timeout: 10)
  end

  def teardown
    @silent.stop
  end

  def test_timeout_timeout_interrupts_a_blocked_request
    start = now
    assert_raises(Timeout::Error) { Timeout.timeout(0.2) { @client.get(@silent.url) } }
    assert_operator elapsed_since(start), :<, 0.2 + INTERRUPT_BOUND
  end

  def test_thread_raise_interrupts_a_blocked_request
    started = Queue.new
    t = Thread.new do
      started << true
      @client.get(@silent.url)
    rescue ArgumentError => e
      e
    end
    started.pop
    sleep 0.1
    start = now
    t.raise(ArgumentError, "stop")
    assert_equal "stop", t.value.message
    assert_operator elapsed_since(start), :<, INTERRUPT_BOUND
  end

  # A process started in the background by a non-interactive shell (CI, `make test &`)
  # inherits SIGINT as ignored, and Ruby then leaves it ignored: each test that sends
  # SIGINT installs Ruby's own handler (which raises Interrupt) for its duration.
  def test_sigint_interrupts_a_blocked_request_in_the_main_thread
    previous = trap("INT", "DEFAULT")
    killer = Thread.new do
      sleep 0.2
      Process.kill(:INT, Process.pid)
    end
    start = now
    assert_raises(Interrupt) { @client.get(@silent.url) }
    assert_operator elapsed_since(start), :<, 0.2 + INTERRUPT_BOUND
    killer.join
  ensure
    trap("INT", previous)
  end

  # A process whose main thread is its only thread: Ruby's signal handler
  # calls the unblocking function itself (it is declared async-signal-safe),
  # with no helper Thread to do it.
  def test_sigint_interrupts_a_lone_main_thread
    assert_child_interrupted_by_sigint(<<~RUBY)
      abort "threads: \#{Thread.list.size}" unless Thread.list.size == 1
    RUBY
  end

  # A process whose other thread waits in a request too: with more than one
  # thread Ruby calls the main thread's unblocking function only from a
  # thread that holds or waits for the GVL or sleeps, and here none does. The
  # engine's abort check reads the thread's pending interrupts itself.
  def test_sigint_interrupts_the_main_thread_while_every_thread_waits
    assert_child_interrupted_by_sigint(<<~RUBY)
      other = Thread.new { client.get(#{"#{TestServer.url}/delay/5000".dump}) }
      sleep 0.05 until other.status == "sleep" || !other.alive?
      sleep 0.1
      abort "threads: \#{Thread.list.size}" unless Thread.list.size == 2
    RUBY
  end

  # A signal Ruby handles without raising (here SIGCHLD, from a child that
  # ends mid-request) still stops the request: the abort callback cannot run
  # Ruby code safely inside the engine's wait (docs/ruby.md). The error says
  # so, and the client goes on.
  def test_a_signal_handled_without_raising_fails_the_request_with_a_clear_error
    pid = spawn(RbConfig.ruby, "-e", "sleep 0.2")
    error = assert_raises(Nodelay::Interrupted) { @client.get("#{TestServer.url}/delay/3000") }
    assert_match(/handled without raising \(a child process that ended/, error.message)
    assert_equal 10, @client.get("#{TestServer.url}/bytes/10").body.bytesize
  ensure
    Process.wait(pid) if pid
  end

  # The same for an exception Thread.handle_interrupt defers: the request is
  # abandoned, its error says why, and the exception comes when the block ends.
  def test_an_exception_deferred_by_handle_interrupt_fails_the_request_with_a_clear_error
    inner = Queue.new
    t = Thread.new do
      Thread.handle_interrupt(ArgumentError => :never) do
        @client.get("#{TestServer.url}/delay/3000")
      rescue Nodelay::Interrupted => e
        inner << e
      end
      :not_raised
    rescue ArgumentError => e
      e
    end
    sleep 0.2
    t.raise(ArgumentError, "deferred")
    assert_equal "deferred", t.value.message
    assert_match(/or by an exception that Thread\.handle_interrupt defers/, inner.pop.message)
  end

  def test_an_interrupted_stream_is_closed_and_the_client_goes_on
    trickle = ScriptedServer.new do |c|
      c.readpartial(65_536)
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nfirst")
      sleep 5
    end
    got = +""
    start = now
    assert_raises(Timeout::Error) do
      Timeout.timeout(0.3) { @client.get(trickle.url) { |piece| got << piece } }
    end
    assert_operator elapsed_since(start), :<, 0.3 + INTERRUPT_BOUND
    assert_equal "first", got
    assert_equal 10, @client.get("#{TestServer.url}/bytes/10").body.bytesize
  ensure
    trickle&.stop
  end

  # Four threads on one client against a server that answers each request
  # after 300 ms: one at a time they would take 1.2 s.
  def test_threads_share_one_client_concurrently
    client = Nodelay::Client.new(base_url: TestServer.url, timeout: 5)
    client.get("/bytes/1")
    start = now
    bodies = 4.times.map { |i| Thread.new { client.get("/delay/300", params: { i: i }).status } }.map(&:value)
    assert_equal [200] * 4, bodies
    assert_operator elapsed_since(start), :<, 0.9, "the requests ran one after another"
  end

  private

  # Runs a child Ruby that first runs `setup` (with `client` in scope), then
  # prints "ready" just before its main thread's request to the silent
  # server blocks, and "interrupted" from its rescue; the SIGINT sent to it
  # must end the request within INTERRUPT_BOUND.
  def assert_child_interrupted_by_sigint(setup)
    child = <<~RUBY
      $LOAD_PATH.unshift(#{File.expand_path("../lib", __dir__).dump}, #{ENV.fetch("NODELAY_EXT_DIR").dump})
      require "nodelay"
      trap("INT", "DEFAULT")
      client = Nodelay::Client.new(timeout: 10)
      $stdout.sync = true
      #{setup}
      puts "ready"
      begin
        client.get(#{@silent.url.dump})
      rescue Interrupt
        puts "interrupted"
      end
    RUBY
    IO.popen(ruby_child_env, [RbConfig.ruby, "-e", child], "r") do |io|
      assert_equal "ready\n", io.gets
      sleep 0.2
      start = now
      Process.kill(:INT, io.pid)
      assert_equal "interrupted\n", io.gets
      assert_operator elapsed_since(start), :<, INTERRUPT_BOUND
    end
  end
end
