"""One pool per client: a sync request (`get`), a batch (`get_many`, which runs on the
runtime) and the client's HTTP/2 connections take their connections from one pool. They
reuse each other's idle connections, and `Limits(max_connections=k)` bounds them together:
a request waiting for a slot another kind of request holds gets it when that one gives it
back, and fails with `PoolTimeout` when it does not in time. Connections are counted by
the embedded server, which counts the connections it accepted."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import nodelay
import pytest
from conftest import expected_bytes
from nodelay import _core

# How long a request holding the only slot takes, in ms: long enough for the other
# request to start waiting for the slot meanwhile.
HOLD_MS = 600
# How long the test waits for a background request to hold its connection (bounded).
HOLD_STARTS_WITHIN_S = 5.0
# Keep-alive expiry of the HTTP/2 connection that holds the only slot, in s: the checks
# that it holds it take well under this.
H2_EXPIRY_S = 2.0


def wait_for_connections(server: _core.TestServer, count: int) -> None:
    """Returns once `server` accepted `count` connections (a background request holds one)."""
    deadline = time.monotonic() + HOLD_STARTS_WITHIN_S
    while server.connections() < count:
        assert time.monotonic() < deadline, "the background request never connected"
        time.sleep(0.01)


def in_background(work: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    """Runs `work` on a thread; its result (or exception) lands in the returned list."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(work())
        except Exception as e:  # handed to the test thread
            outcome.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_a_batch_reuses_the_connection_a_request_left(server: _core.TestServer) -> None:
    url = f"{server.url}/bytes/7"
    with nodelay.Client() as client:
        assert client.get(url).content == expected_bytes(7)
        after_get = server.connections()
        rs = client.get_many([url] * 5, concurrency=1)
        assert [r.content for r in rs] == [expected_bytes(7)] * 5
        assert server.connections() == after_get


def test_a_request_reuses_the_connection_a_batch_left(server: _core.TestServer) -> None:
    url = f"{server.url}/bytes/7"
    with nodelay.Client() as client:
        rs = client.get_many([url] * 5, concurrency=1)
        assert [r.content for r in rs] == [expected_bytes(7)] * 5
        after_batch = server.connections()
        for _ in range(3):
            assert client.get(url).content == expected_bytes(7)
        # And back again: the connection goes to and fro between the two drivers.
        assert [r.content for r in client.get_many([url] * 2, concurrency=1)] == [
            expected_bytes(7)
        ] * 2
        assert client.get(url).content == expected_bytes(7)
        assert server.connections() == after_batch


def test_a_request_waits_for_the_slot_a_batch_holds(server: _core.TestServer) -> None:
    limits = nodelay.Limits(max_connections=1)
    timeout = nodelay.Timeout(10.0, pool=10.0)
    with nodelay.Client(limits=limits, timeout=timeout) as client:
        before = server.connections()
        thread, outcome = in_background(
            lambda: client.get_many([f"{server.url}/delay/{HOLD_MS}"], concurrency=1)
        )
        wait_for_connections(server, before + 1)
        # Every slot is the batch's: this waits, then takes the connection it leaves.
        assert client.get(f"{server.url}/bytes/5").content == expected_bytes(5)
        thread.join()
        [responses] = outcome
        assert isinstance(responses, list)
        assert responses[0].status_code == 200
        assert server.connections() - before == 1


def test_a_request_times_out_while_a_batch_holds_every_slot(server: _core.TestServer) -> None:
    limits = nodelay.Limits(max_connections=1)
    with nodelay.Client(limits=limits, timeout=nodelay.Timeout(10.0)) as client:
        before = server.connections()
        thread, outcome = in_background(
            lambda: client.get_many([f"{server.url}/delay/{HOLD_MS}"], concurrency=1)
        )
        wait_for_connections(server, before + 1)
        with pytest.raises(nodelay.PoolTimeout):
            client.get(f"{server.url}/bytes/5", timeout=nodelay.Timeout(10.0, pool=0.1))
        thread.join()
        assert isinstance(outcome[0], list)
        assert server.connections() - before == 1


def test_a_batch_waits_for_the_slot_a_request_holds(server: _core.TestServer) -> None:
    limits = nodelay.Limits(max_connections=1)
    timeout = nodelay.Timeout(10.0, pool=10.0)
    with nodelay.Client(limits=limits, timeout=timeout) as client:
        before = server.connections()
        thread, outcome = in_background(lambda: client.get(f"{server.url}/delay/{HOLD_MS}"))
        wait_for_connections(server, before + 1)
        # The batch's task waits on the runtime; the sync request's release wakes it.
        rs = client.get_many([f"{server.url}/bytes/5"] * 3, concurrency=2)
        assert [r.content for r in rs] == [expected_bytes(5)] * 3
        thread.join()
        assert getattr(outcome[0], "status_code", None) == 200
        assert server.connections() - before == 1


def test_an_http2_connection_holds_a_slot_a_batch_cannot_take(
    server: _core.TestServer, identity: tuple[str, str], ca_file: str
) -> None:
    srv = _core.TestServer(http2=True, tls=True, cert_file=identity[0], key_file=identity[1])
    try:
        # The HTTP/2 connection stays open (idle) for its keep-alive expiry, holding the
        # client's only slot meanwhile.
        limits = nodelay.Limits(max_connections=1, keepalive_expiry=H2_EXPIRY_S)
        timeout = nodelay.Timeout(10.0, pool=0.2)
        with nodelay.Client(http2=True, verify=ca_file, limits=limits, timeout=timeout) as c:
            h2_url = srv.url.replace("127.0.0.1", "localhost") + "/bytes/3"
            assert c.get(h2_url).http_version == "HTTP/2"
            before = server.connections()
            # `http://` stays on HTTP/1.1 with `http2=True`: it needs a slot of its own.
            with pytest.raises(nodelay.PoolTimeout):
                c.get_many([f"{server.url}/bytes/3"])
            with pytest.raises(nodelay.PoolTimeout):
                c.get(f"{server.url}/bytes/3")
            assert server.connections() == before
            # When the HTTP/2 connection expires, its slot goes to the waiting batch.
            rs = c.get_many([f"{server.url}/bytes/3"], timeout=nodelay.Timeout(10.0, pool=10.0))
            assert [r.content for r in rs] == [b"abc"]
    finally:
        srv.close()
