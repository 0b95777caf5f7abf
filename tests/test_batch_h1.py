"""The batch API over HTTP/1.1: each task keeps its connection from one request to the
next and gives it back to the client's pool at the end (bounded by ``max_connections``,
handed over at once when another request waits for a slot); an answer that ends the
connection (``Connection: close``, or a server that closes after answering) is never
reused for the next request."""

from __future__ import annotations

import time
from collections.abc import Callable

import nodelay
from conftest import expected_bytes
from nodelay import _core
from scripted import Close, Recv, ScriptedServer, Send, response


def test_tasks_keep_their_connections_and_give_them_back(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        before = server.connections()
        rs = client.get_many([f"{server.url}/bytes/20"] * 200, concurrency=4)
        assert [r.content for r in rs] == [expected_bytes(20)] * 200
        assert server.connections() - before <= 4
        # Given back at the end of the batch: the next batches open none.
        for _ in range(3):
            rs = client.get_many([f"{server.url}/bytes/3"] * 40, concurrency=4)
            assert [r.content for r in rs] == [b"abc"] * 40
        assert server.connections() - before <= 4


def test_distinct_urls_and_origins_in_one_batch(server: _core.TestServer) -> None:
    other = _core.TestServer()
    try:
        urls = [f"{(server if i % 3 else other).url}/bytes/{i % 50 + 1}?i={i}" for i in range(150)]
        with nodelay.Client() as client:
            before, before_other = server.connections(), other.connections()
            rs = client.get_many(urls, concurrency=6)
            assert [r.content for r in rs] == [expected_bytes(i % 50 + 1) for i in range(150)]
            assert [r.url for r in rs] == urls
            # A task switching origin gives its connection back to the pool: at most
            # six connections per origin.
            assert server.connections() - before <= 6
            assert other.connections() - before_other <= 6
    finally:
        other.close()


def test_a_slot_waiter_gets_a_kept_connection(server: _core.TestServer) -> None:
    # 16 tasks, 2 connections: tasks holding one hand it over while others wait, so
    # nobody runs into the (short) pool timeout.
    limits = nodelay.Limits(max_connections=2)
    timeout = nodelay.Timeout(5.0, pool=1.0)
    with nodelay.Client(limits=limits, timeout=timeout) as client:
        before = server.connections()
        started = time.monotonic()
        rs = client.get_many([f"{server.url}/bytes/9"] * 300, concurrency=16)
        assert [r.content for r in rs] == [expected_bytes(9)] * 300
        assert server.connections() - before <= 2
        assert time.monotonic() - started < 5.0


def test_a_connection_close_answer_is_not_reused(
    scripted: Callable[..., ScriptedServer],
) -> None:
    # Each connection would answer a second request with b"reused": the client must
    # not send one after "Connection: close".
    close = response(200, b"ok", [("Connection", "close")])
    srv = scripted(*[[Recv(), Send(close), Recv(), Send(response(200, b"reused"))]] * 6)
    with nodelay.Client() as client:
        rs = client.get_many([f"{srv.url}/{i}" for i in range(6)], concurrency=1)
    assert [r.content for r in rs] == [b"ok"] * 6
    assert len(srv.conns) == 6


def test_a_server_closing_after_each_answer(scripted: Callable[..., ScriptedServer]) -> None:
    # No "Connection: close", the server just closes: the kept connection is found
    # dead (or the GET goes again on a new one, once) and every request is answered.
    srv = scripted(*[[Recv(), Send(response(200, b"ok")), Close()]] * 10)
    with nodelay.Client() as client:
        rs = client.get_many([f"{srv.url}/{i}" for i in range(8)], concurrency=1)
    assert [r.content for r in rs] == [b"ok"] * 8


def test_no_keepalive_limits_keep_no_connection(server: _core.TestServer) -> None:
    # max_keepalive_connections=0: each connection closes after its response, in a
    # batch as anywhere else (a task does not keep one either).
    limits = nodelay.Limits(max_keepalive_connections=0)
    with nodelay.Client(limits=limits) as client:
        before = server.connections()
        rs = client.get_many([f"{server.url}/bytes/4"] * 12, concurrency=2)
        assert [r.content for r in rs] == [b"abcd"] * 12
        assert server.connections() - before == 12
