"""docs/hostile.md H28-H30: connection reuse (stale keep-alive, abandoned responses, an
exhausted pool)."""

from __future__ import annotations

import signal
import threading
import time

import nodelay
import pytest
from nodelay import _core
from scripted import Close, Recv, Reset, Send, SendSlowly, Sleep, Step, response

from .conftest import (
    FAST,
    FRESH_BODY,
    FRESH_SCRIPT,
    POISON,
    TIMER_SLACK,
    Factory,
    assert_fresh_connection,
    expect_error,
    hostile_case,
)

pytestmark = pytest.mark.both_drivers

FIRST = response(body=b"first")


# -- H28: the server closes an idle keep-alive connection -----------------------------------


@pytest.mark.parametrize("how", [Close(), Reset()], ids=["fin", "rst"])
def test_h28_idle_connection_closed_by_server(
    scripted: Factory, client: nodelay.Client, how: object
) -> None:
    srv = scripted([Recv(), Send(FIRST), how], FRESH_SCRIPT)  # type: ignore[list-item]
    assert client.get(srv.url + "/").content == b"first"
    srv.wait_finished(1)
    time.sleep(0.05)
    start = time.monotonic()
    assert client.get(srv.url + "/").content == FRESH_BODY  # no error surfaces
    assert time.monotonic() - start < FAST
    assert srv.connections == 2


@pytest.mark.parametrize("how", [Close(), Reset()], ids=["fin", "rst"])
def test_h28_get_retried_once_when_the_server_closes_on_reuse(
    scripted: Factory, client: nodelay.Client, how: object
) -> None:
    # The race: the server closes just as the reused connection carries the next request.
    srv = scripted([Recv(), Send(FIRST), Recv(), how], FRESH_SCRIPT)  # type: ignore[list-item]
    assert client.get(srv.url + "/").content == b"first"
    assert client.get(srv.url + "/").content == FRESH_BODY
    assert srv.connections == 2
    assert len(srv.conns[0].requests) == 2 and len(srv.conns[1].requests) == 1


@pytest.mark.parametrize(
    ("how", "cls"),
    [(Close(), nodelay.RemoteProtocolError), (Reset(), nodelay.ReadError)],
    ids=["fin", "rst"],
)
def test_h28_post_not_replayed_when_it_may_have_reached_the_server(
    scripted: Factory, client: nodelay.Client, how: object, cls: type[Exception]
) -> None:
    srv = scripted([Recv(), Send(FIRST), Recv(), how], FRESH_SCRIPT)  # type: ignore[list-item]
    assert client.get(srv.url + "/").content == b"first"
    expect_error(lambda: client.post(srv.url + "/pay", content=b"once"), cls, FAST)
    time.sleep(0.1)
    assert srv.connections == 1, "the POST was replayed on a new connection"
    posts = [r for r in srv.requests if r.startswith(b"POST")]
    assert len(posts) == 1
    assert_fresh_connection(client, srv)


def test_h28_get_retried_at_most_once(scripted: Factory, client: nodelay.Client) -> None:
    # Every reused connection dies on reuse; the retry goes to a fresh connection, which
    # also dies: the error surfaces instead of a retry loop.
    srv = scripted(
        [Recv(), Send(FIRST), Recv(), Close()],
        [Recv(), Close()],
    )
    assert client.get(srv.url + "/").content == b"first"
    expect_error(lambda: client.get(srv.url + "/"), nodelay.RemoteProtocolError, FAST)
    assert srv.connections == 2


# -- H29: a response abandoned half-read is never pooled ------------------------------------


def test_h29_read_timeout_mid_body_connection_not_pooled(
    scripted: Factory, client: nodelay.Client
) -> None:
    # The rest of the body (and a fake response) arrive after the client gave up.
    late = b"lo" + response(body=b"SMUGGLED")
    failure = hostile_case(
        scripted,
        client,
        [Recv(), Send(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel"), Sleep(0.8), Send(late)],
        nodelay.ReadTimeout,
        within=0.3 + TIMER_SLACK,
        timeout=nodelay.Timeout(5.0, read=0.3),
    )
    assert failure.elapsed >= 0.25


def test_h29_read_timeout_mid_chunked_body_not_pooled(
    scripted: Factory, client: nodelay.Client
) -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"
    hostile_case(
        scripted,
        client,
        [Recv(), Send(head), Sleep(0.8), Send(b"lo\r\n0\r\n\r\n")],
        nodelay.ReadTimeout,
        within=0.3 + TIMER_SLACK,
        timeout=nodelay.Timeout(5.0, read=0.3),
    )


def test_h29_decoding_error_connection_not_reused(
    scripted: Factory, client: nodelay.Client
) -> None:
    wire = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 9\r\n\r\nnot gzip!"
    hostile_case(scripted, client, [Recv(), Send(wire)], nodelay.DecodingError)


def _sigint_ready() -> int:
    """The main thread's id, for ``signal.pthread_kill`` (skips where signals cannot reach
    Python's default handler)."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are delivered to the main thread")
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is not Python's default handler here")
    return threading.get_ident()


# The body dripped after the signal: long enough that a Ctrl-C noticed only once the
# response is complete fails the FAST bound.
_DRIP_AFTER_SIGNAL = 20  # chunks of 5 bytes, 0.1 s apart: 2 s


def _mid_body_script(signal_step: Step) -> list[Step]:
    """Head, 10 body bytes, then ``signal_step`` (the client is certainly mid-body: it has
    the head and part of the body, the rest is still to come), then the slow rest."""
    body = b"x" * (10 + 5 * _DRIP_AFTER_SIGNAL)
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    return [
        Recv(),
        Send(head),
        Send(body[:10]),
        Sleep(0.05),
        signal_step,
        SendSlowly(body[10:], interval=0.1, chunk=5),
        Recv(timeout=5.0),
        Send(POISON),
    ]


def test_h29_ctrl_c_mid_body_abandons_the_connection(
    scripted: Factory, client: nodelay.Client
) -> None:
    # The signal is sent by the server's script once part of the body is out, not by a
    # timer started before the request: on a loaded machine such a timer could fire
    # before the request reached the server, or between the body's pieces.
    main = _sigint_ready()
    srv = scripted(
        _mid_body_script(lambda _sock: signal.pthread_kill(main, signal.SIGINT)), FRESH_SCRIPT
    )
    expect_error(
        lambda: client.get(srv.url + "/", timeout=nodelay.Timeout(10.0)), KeyboardInterrupt, FAST
    )
    assert_fresh_connection(client, srv)


@pytest.mark.sync_only(
    "a signal sent to another thread reaches an asyncio loop only through a wake-up fd,"
    " which the test's bare loop has not: not a client matter"
)
def test_h29_ctrl_c_noticed_while_not_blocked_in_a_read(
    scripted: Factory, client: nodelay.Client
) -> None:
    # A signal that lands while the main thread is not in a blocking syscall (processing
    # the bytes its last read returned) interrupts no read: Python's handler only notes
    # it. Delivered to another thread, the main thread's read is never interrupted at
    # all, which makes that race deterministic. The request must still end at once.
    _sigint_ready()
    srv = scripted(
        _mid_body_script(lambda _sock: signal.pthread_kill(threading.get_ident(), signal.SIGINT)),
        FRESH_SCRIPT,
    )
    expect_error(
        lambda: client.get(srv.url + "/", timeout=nodelay.Timeout(10.0)), KeyboardInterrupt, FAST
    )
    assert_fresh_connection(client, srv)


# -- H30: pool exhausted ----------------------------------------------------------------------


@pytest.mark.sync_only(
    "one Client shared by threads; the async counterpart is in test_async_client.py"
)
def test_h30_pool_timeout_when_every_connection_is_busy(scripted: Factory) -> None:
    slow = [Recv(), Sleep(1.5), Send(response(body=b"slow")), Recv(), Send(FIRST)]
    srv = scripted(slow)
    limits = nodelay.Limits(max_connections=1)
    with nodelay.Client(limits=limits, timeout=nodelay.Timeout(10.0, pool=0.3)) as c:
        results: list[bytes] = []
        busy = threading.Thread(target=lambda: results.append(c.get(srv.url + "/").content))
        busy.start()
        assert srv.wait_connections(1)
        time.sleep(0.05)
        _, elapsed = expect_error(
            lambda: c.get(srv.url + "/"), nodelay.PoolTimeout, 0.3 + TIMER_SLACK, "pool"
        )
        assert elapsed >= 0.25
        busy.join(10)
        assert results == [b"slow"]
        # The slot came back: the next request reuses the one connection.
        assert c.get(srv.url + "/").content == b"first"
        assert srv.connections == 1


@pytest.mark.sync_only(
    "one Client shared by threads; the async counterpart is in test_async_client.py"
)
def test_h30_waiter_served_when_a_connection_frees_up(server: _core.TestServer) -> None:
    limits = nodelay.Limits(max_connections=1)
    with nodelay.Client(limits=limits, timeout=nodelay.Timeout(10.0, pool=5.0)) as c:
        results: list[int] = []
        busy = threading.Thread(
            target=lambda: results.append(c.get(f"{server.url}/delay/300").status_code)
        )
        busy.start()
        time.sleep(0.1)
        start = time.monotonic()
        assert c.get(f"{server.url}/bytes/10").status_code == 200
        assert time.monotonic() - start < 0.3 + TIMER_SLACK
        busy.join(10)
        assert results == [200]


def test_h30_failed_requests_give_their_slot_back(scripted: Factory) -> None:
    # Each failure must free its pool slot, or a 1-connection pool would time out.
    srv = scripted([Recv(), Send(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n")], FRESH_SCRIPT)
    limits = nodelay.Limits(max_connections=1)
    with nodelay.Client(limits=limits, timeout=nodelay.Timeout(5.0, pool=0.5)) as c:
        expect_error(lambda: c.get(srv.url + "/"), nodelay.RemoteProtocolError, FAST)
        refused = f"http://127.0.0.1:{_closed_port()}/"
        for _ in range(3):
            expect_error(lambda: c.get(refused), nodelay.ConnectError, FAST)
        assert c.get(srv.url + "/").content == FRESH_BODY


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.sync_only(
    "one Client shared by threads; the async counterpart is in test_async_client.py"
)
def test_h28_retry_goes_to_a_fresh_connection_not_another_idle_one(scripted: Factory) -> None:
    # Two connections are opened by two overlapping requests and both go idle; each one
    # dies (closed without an answer) when it carries the next request.
    dies_on_reuse = [Recv(), Sleep(0.3), Send(FIRST), Recv(), Close()]
    srv = scripted(dies_on_reuse, dies_on_reuse, FRESH_SCRIPT)
    with nodelay.Client() as c:
        threads = [threading.Thread(target=lambda: c.get(srv.url + "/warm")) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert srv.connections == 2
        r = c.get(srv.url + "/", timeout=nodelay.Timeout(5.0))
        assert r.content == FRESH_BODY
