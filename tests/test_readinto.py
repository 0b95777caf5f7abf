"""``Response.readinto(buffer)`` and ``iter_into(buffer)``: a streamed body read into one
caller-owned buffer again and again. The bytes are compared with ``iter_bytes`` of the
same body; plus the download counter and the stream states they share with it."""

from __future__ import annotations

import gzip
from collections.abc import Callable

import nodelay
import pytest
from nodelay import _core
from scripted import Recv, ScriptedServer, Send

PATTERN = b"abcdefghijklmnopqrstuvwxyz0123456789"


def pattern(n: int) -> bytes:
    return (PATTERN * (n // len(PATTERN) + 1))[:n]


def _iter_bytes(url: str) -> bytes:
    with nodelay.Client() as client, client.stream("GET", url) as r:
        return b"".join(r.iter_bytes())


@pytest.mark.parametrize("route", ["bytes", "gzip", "brotli", "chunked"])
@pytest.mark.parametrize("size", [0, 1, 1000, 300_000, 3_000_000])
def test_iter_into_gives_the_bytes_of_iter_bytes(
    server: _core.TestServer, route: str, size: int
) -> None:
    url = f"{server.url}/{route}/{size}"
    buffer = bytearray(64 * 1024)
    received = bytearray()
    with nodelay.Client() as client, client.stream("GET", url) as r:
        for n in r.iter_into(buffer):
            assert 0 < n <= len(buffer)
            received += buffer[:n]
        assert r.is_closed
    assert bytes(received) == _iter_bytes(url) == pattern(size)


def test_readinto_fills_a_small_buffer_piece_by_piece(server: _core.TestServer) -> None:
    buffer = bytearray(7)
    view = memoryview(buffer)
    received = bytearray()
    with nodelay.Client() as client, client.stream("GET", f"{server.url}/bytes/1000") as r:
        while n := r.readinto(view):
            received += view[:n]
        assert r.readinto(buffer) == 0  # the end stays the end
        assert r.is_closed
    assert bytes(received) == pattern(1000)


def test_the_engine_writes_into_the_callers_memory(server: _core.TestServer) -> None:
    # A window in the middle of a larger buffer: each piece lands in the window, and the
    # bytes around it are never touched.
    memory = bytearray(b"#" * 3000)
    window = memoryview(memory)[1000:2024]
    counts = []
    with nodelay.Client() as client, client.stream("GET", f"{server.url}/bytes/10000") as r:
        for n in r.iter_into(window):
            counts.append(n)
    assert sum(counts) == 10000
    assert memory[:1000] == b"#" * 1000 and memory[2024:] == b"#" * 976
    # The last piece is the body's tail, at the start of the window.
    assert bytes(window[: counts[-1]]) == pattern(10000)[-counts[-1] :]


def test_readinto_refuses_what_it_cannot_fill(server: _core.TestServer) -> None:
    with nodelay.Client() as client, client.stream("GET", f"{server.url}/bytes/10") as r:
        with pytest.raises(TypeError):
            r.readinto(b"0123456789")  # type: ignore[arg-type]  # read-only
        with pytest.raises(ValueError):
            r.readinto(bytearray())
        buffer = bytearray(100)
        assert r.readinto(buffer) == 10 and buffer[:10] == pattern(10)


def test_an_iter_into_left_early_closes_the_connection(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        with client.stream("GET", f"{server.url}/bytes/5000000") as r:
            next(r.iter_into(bytearray(1024)))
        assert r.is_closed
        assert client.get(f"{server.url}/bytes/10").content == pattern(10)


def test_stream_states_are_shared_with_the_iterators(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        with client.stream("GET", f"{server.url}/bytes/100") as r:
            assert sum(r.iter_into(bytearray(10))) == 100
            with pytest.raises(nodelay.StreamConsumed):
                list(r.iter_bytes())
            with pytest.raises(nodelay.ResponseNotRead):
                r.content  # noqa: B018
        with client.stream("GET", f"{server.url}/bytes/100") as r:
            r.read()
            with pytest.raises(nodelay.StreamConsumed):
                r.readinto(bytearray(10))
        with client.stream("GET", f"{server.url}/bytes/100") as r:
            pass
        with pytest.raises(nodelay.StreamClosed):
            list(r.iter_into(bytearray(10)))


def test_readinto_needs_a_sync_stream(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        r = client.get(f"{server.url}/bytes/10")
        with pytest.raises(nodelay.StreamError):
            r.readinto(bytearray(10))


def test_num_bytes_downloaded_counts_the_encoded_body(
    scripted: Callable[..., ScriptedServer],
) -> None:
    body = pattern(200_000)
    packed = gzip.compress(body)
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(packed)
    srv = scripted([Recv(), Send(head + packed)])
    with nodelay.Client() as client, client.stream("GET", srv.url + "/") as r:
        assert r.num_bytes_downloaded == 0
        buffer = bytearray(4096)
        received = bytearray()
        seen = []
        for n in r.iter_into(buffer):
            received += buffer[:n]
            seen.append(r.num_bytes_downloaded)
        assert bytes(received) == body
        assert seen == sorted(seen) and seen[-1] == len(packed)
        assert r.num_bytes_downloaded == len(packed)
