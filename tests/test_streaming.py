"""Streamed responses: ``client.stream()``, ``stream=True``, the iterators, on-the-fly
decoding, and what happens to the connection when a body is read or abandoned."""

from __future__ import annotations

import gzip
import time
import zlib
from collections.abc import Callable

import nodelay
import pytest
from nodelay import _core
from scripted import Recv, ScriptedServer, Send, SendSlowly

Scripted = Callable[..., ScriptedServer]
PATTERN = b"abcdefghijklmnopqrstuvwxyz0123456789"
MIN_PIECE = 64 * 1024


def pattern(n: int) -> bytes:
    return (PATTERN * (n // len(PATTERN) + 1))[:n]


def chunked(*parts: bytes, headers: str = "") -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
    head = f"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n{headers}\r\n"
    return head.encode() + body


def test_iter_bytes_large_pieces(server: _core.TestServer) -> None:
    n = 3_000_000
    with nodelay.Client() as client, client.stream("GET", f"{server.url}/bytes/{n}") as r:
        assert r.status_code == 200
        assert r.headers["content-length"] == str(n)
        pieces = list(r.iter_bytes())
    assert b"".join(pieces) == pattern(n)
    # What has arrived, grown towards 64 KiB with what is already there (a server that
    # falls behind for a moment gives a smaller piece): big on average.
    assert n / len(pieces) >= MIN_PIECE


def test_iter_bytes_exact_chunk_size(server: _core.TestServer) -> None:
    with nodelay.Client() as client, client.stream("GET", f"{server.url}/chunked/100000") as r:
        chunks = list(r.iter_bytes(chunk_size=7000))
    assert b"".join(chunks) == pattern(100_000)
    assert {len(c) for c in chunks[:-1]} == {7000}


@pytest.mark.parametrize("route", ["gzip", "deflate", "brotli", "zstd"])
def test_streamed_decoding(server: _core.TestServer, route: str) -> None:
    with nodelay.Client() as client, client.stream("GET", f"{server.url}/{route}/500000") as r:
        assert b"".join(r.iter_bytes()) == pattern(500_000)


def test_iter_raw_keeps_content_coding(server: _core.TestServer) -> None:
    with nodelay.Client() as client, client.stream("GET", f"{server.url}/gzip/100000") as r:
        raw = b"".join(r.iter_raw())
    assert gzip.decompress(raw) == pattern(100_000)


def test_iter_text_and_lines_across_chunk_boundaries(scripted: Scripted) -> None:
    # A CRLF and a two-byte UTF-8 character are each split across two chunks.
    srv = scripted(
        [
            Recv(),
            Send(
                chunked(
                    b"one\r",
                    b"\ntw\xc3",
                    b"\xa9o\nthree\rfour",
                    headers="Content-Type: text/plain; charset=utf-8\r\n",
                )
            ),
        ]
    )
    with nodelay.Client() as client, client.stream("GET", srv.url) as r:
        assert list(r.iter_lines()) == ["one", "twéo", "three", "four"]


def test_iter_text(scripted: Scripted) -> None:
    srv = scripted([Recv(), Send(chunked(b"caf\xc3", b"\xa9 ok"))])
    with nodelay.Client() as client, client.stream("GET", srv.url) as r:
        assert "".join(r.iter_text()) == "café ok"


def test_requests_style_stream_true(server: _core.TestServer) -> None:
    with nodelay.Session() as session:
        r = session.get(f"{server.url}/bytes/50000", stream=True)
        chunks = list(r.iter_content(chunk_size=8192))
        r.close()
    assert b"".join(chunks) == pattern(50_000)
    assert all(len(c) == 8192 for c in chunks[:-1])


def test_content_reads_the_rest_and_iterating_twice_fails(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        with client.stream("GET", f"{server.url}/bytes/1000") as r:
            assert r.read() == pattern(1000)
            assert r.content == pattern(1000)
            assert b"".join(r.iter_bytes()) == pattern(1000)  # iterates the read content
        with client.stream("GET", f"{server.url}/bytes/1000") as r:
            list(r.iter_bytes())
            with pytest.raises(nodelay.StreamConsumed):
                list(r.iter_bytes())


def test_fully_read_stream_reuses_connection(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        before = server.connections()
        for _ in range(5):
            with client.stream("GET", f"{server.url}/bytes/300000") as r:
                for _ in r.iter_bytes():
                    pass
        assert server.connections() - before == 1


def test_abandoned_stream_closes_its_connection(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        before = server.connections()
        with client.stream("GET", f"{server.url}/bytes/5000000") as r:
            next(r.iter_bytes())
        assert r.is_closed
        assert client.get(f"{server.url}/bytes/10").content == pattern(10)
        assert server.connections() - before == 2


def test_cut_body_raises_from_the_iterator(scripted: Scripted) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
    srv = scripted([Recv(), Send(head + b"x" * 1000)])
    with nodelay.Client() as client, client.stream("GET", srv.url) as r:
        with pytest.raises(nodelay.RemoteProtocolError, match="received 1000 of 100000"):
            for _ in r.iter_bytes():
                pass


def test_total_timeout_bounds_a_slow_stream(scripted: Scripted) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
    srv = scripted([Recv(), Send(head), SendSlowly(b"x" * 1000, 0.05)])
    timeout = nodelay.Timeout(5.0, total=0.5)
    started = time.monotonic()
    with nodelay.Client(timeout=timeout) as client, client.stream("GET", srv.url) as r:
        with pytest.raises(nodelay.ReadTimeout):
            for _ in r.iter_bytes():
                pass
    assert time.monotonic() - started < 2.0


def test_streamed_bomb_stops_at_the_ratio_guard(scripted: Scripted) -> None:
    inner = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [inner.compress(bytes(1 << 20)) for _ in range(256)]
    parts.append(inner.flush())
    bomb = gzip.compress(b"".join(parts), 9)
    head = f"HTTP/1.1 200 OK\r\nContent-Encoding: gzip, gzip\r\nContent-Length: {len(bomb)}\r\n\r\n"
    srv = scripted([Recv(), Send(head.encode() + bomb)])
    with nodelay.Client() as client, client.stream("GET", srv.url) as r:
        with pytest.raises(nodelay.DecodingError, match="ratio"):
            for _ in r.iter_bytes():
                pass


def test_stream_follows_redirects(server: _core.TestServer) -> None:
    with nodelay.Client(follow_redirects=True) as client:
        with client.stream("GET", f"{server.url}/redirect/2") as r:
            assert r.status_code == 200
            assert [h.status_code for h in r.history] == [302, 302]
            assert b"redirected" in r.read()


def test_module_level_stream(server: _core.TestServer) -> None:
    with nodelay.stream("GET", f"{server.url}/bytes/1234") as r:
        assert b"".join(r.iter_bytes()) == pattern(1234)
