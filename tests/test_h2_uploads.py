"""Streamed request bodies (generators, file objects, async iterables) over HTTP/2: against
the embedded server by ALPN over TLS and by prior knowledge in cleartext, for ``Client``
and ``AsyncClient``. Each upload goes on the client's one HTTP/2 connection (never a second,
HTTP/1.1 one), under the server's flow-control windows (10 MiB is ten times hyper's 1 MiB
stream window), with ``Content-Length`` when the size is known; a server answering before
the body is all sent stops the upload (RFC 9113 §8.1); a failing body raises its own
exception and leaves the connection usable."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nodelay
import pytest
from nodelay import _core

# Larger than hyper's default HTTP/2 stream and connection windows (1 MiB each) and than
# the RFC's 64 KiB default: the upload must wait for WINDOW_UPDATEs to finish.
LARGE_BODY_BYTES = 10 * 1024 * 1024
PIECE_BYTES = 64 * 1024
# Generous bound for each request on a loaded machine.
TIMEOUT_S = 30.0


@dataclass
class Target:
    """An HTTP/2 server and the client options that reach it over HTTP/2."""

    server: _core.TestServer
    url: str
    options: dict[str, Any]


@pytest.fixture(params=["h2-tls", "h2c"])
def target(
    request: pytest.FixtureRequest, identity: tuple[str, str], ca_file: str
) -> Iterator[Target]:
    """A fresh server per test (its connection counter starts at 0): h2 chosen by ALPN
    (``http2=True``), or h2c with prior knowledge. Both ports also speak HTTP/1.1, so an
    upload sent over HTTP/1.1 would succeed there and only the version and the connection
    count tell."""
    if request.param == "h2-tls":
        srv = _core.TestServer(http2=True, tls=True, cert_file=identity[0], key_file=identity[1])
        url = srv.url.replace("127.0.0.1", "localhost")
        options: dict[str, Any] = {"http2": True, "verify": ca_file}
    else:
        srv = _core.TestServer(http2=True)
        url = srv.url
        options = {"http2": "prior_knowledge"}
    options["timeout"] = TIMEOUT_S
    yield Target(srv, url, options)
    srv.close()


def pattern(n: int) -> bytes:
    return bytes(i % 251 for i in range(n))


def pieces(total: int, size: int = PIECE_BYTES) -> Iterator[bytes]:
    data = pattern(total)
    for start in range(0, total, size):
        yield data[start : start + size]


async def apieces(total: int, size: int = PIECE_BYTES) -> AsyncIterator[bytes]:
    for piece in pieces(total, size):
        await asyncio.sleep(0)
        yield piece


def sent_headers(r: nodelay.Response) -> dict[str, str]:
    """The request headers ``/anything`` saw, by lowercase name."""
    return {name.lower(): value for name, value in r.json()["headers"]}


def assert_h2(r: nodelay.Response) -> None:
    assert r.http_version == "HTTP/2", "the upload went over HTTP/1.1"


# ---------------------------------------------------------------- sync Client


def test_generator_body(target: Target) -> None:
    with nodelay.Client(**target.options) as client:
        assert_h2(client.get(target.url + "/bytes/10"))
        r = client.post(target.url + "/anything", content=(p for p in [b"abc", b"", b"def"]))
        assert_h2(r)
        assert r.json()["body"] == "abcdef"
        # No length known: none announced, and no HTTP/1.1 transfer coding either.
        assert "content-length" not in sent_headers(r)
        assert "transfer-encoding" not in sent_headers(r)
    assert target.server.connections() == 1


def test_file_body_has_content_length(target: Target, tmp_path: Path) -> None:
    path = tmp_path / "upload.bin"
    path.write_bytes(pattern(300_000))
    with nodelay.Client(**target.options) as client:
        with path.open("rb") as f:
            r = client.post(target.url + "/echo", content=f)
        assert_h2(r)
        assert r.content == pattern(300_000)
        with path.open("rb") as f:
            f.seek(299_990)
            r = client.put(target.url + "/anything", content=f)
        assert_h2(r)
        assert sent_headers(r)["content-length"] == "10"
        assert r.json()["body_len"] == 10
    assert target.server.connections() == 1


def test_large_generator_body_under_flow_control(target: Target) -> None:
    with nodelay.Client(**target.options) as client:
        r = client.post(target.url + "/echo", content=pieces(LARGE_BODY_BYTES))
        assert_h2(r)
        assert len(r.content) == LARGE_BODY_BYTES
        assert r.content == pattern(LARGE_BODY_BYTES)
        # One piece far larger than any window goes out as the windows open.
        r = client.post(target.url + "/count", content=iter([pattern(3 * 1024 * 1024)]))
        assert_h2(r)
        assert r.json() == {"body_len": 3 * 1024 * 1024}
    assert target.server.connections() == 1


def test_empty_generator_body(target: Target) -> None:
    with nodelay.Client(**target.options) as client:
        r = client.post(target.url + "/echo", content=iter(()))
        assert_h2(r)
        assert r.status_code == 200
        assert r.content == b""
    assert target.server.connections() == 1


def test_multipart_with_a_large_file_over_h2(target: Target, tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    path.write_bytes(pattern(200_000))
    with nodelay.Client(**target.options) as client, path.open("rb") as f:
        r = client.post(target.url + "/anything", data={"a": "1"}, files={"f": f})
        assert_h2(r)
        assert r.json()["body_len"] == int(sent_headers(r)["content-length"])
    assert target.server.connections() == 1


def test_map_with_generator_bodies(target: Target) -> None:
    with nodelay.Client(**target.options) as client:
        items = [
            ("POST", target.url + "/echo", {"content": pieces(1000 * (i + 1))}) for i in range(3)
        ]
        responses = client.map(items)
        for i, r in enumerate(responses):
            assert_h2(r)
            assert r.content == pattern(1000 * (i + 1))
    assert target.server.connections() == 1


def test_early_answer_stops_the_upload(target: Target) -> None:
    """A read-only route answers a POST with 405 without reading the body (as a server
    answers 413 or 401): the client stops pulling the body once the answer is there (the
    server's windows would never open for the rest) and returns the answer, and the
    connection goes on serving."""
    pulled = 0
    total_pieces = LARGE_BODY_BYTES * 4 // PIECE_BYTES

    def body() -> Iterator[bytes]:
        nonlocal pulled
        for piece in pieces(LARGE_BODY_BYTES * 4):
            pulled += 1
            yield piece

    with nodelay.Client(**target.options) as client:
        r = client.post(target.url + "/status/200", content=body())
        assert_h2(r)
        assert r.status_code == 405
        assert pulled < total_pieces
        assert client.get(target.url + "/bytes/5").content == b"abcde"
    assert target.server.connections() == 1


class Boom(Exception):
    pass


def test_failing_generator_raises_its_error_and_the_connection_survives(target: Target) -> None:
    def body() -> Iterator[bytes]:
        yield from pieces(200_000)
        raise Boom("the body broke")

    with nodelay.Client(**target.options) as client:
        with pytest.raises(Boom, match="the body broke"):
            client.post(target.url + "/echo", content=body())
        # The failed stream was reset; the shared connection is intact.
        r = client.post(target.url + "/echo", content=pieces(100_000))
        assert_h2(r)
        assert r.content == pattern(100_000)
    assert target.server.connections() == 1


def test_alpn_choosing_http1_keeps_the_upload_on_the_connection_it_made(
    identity: tuple[str, str], ca_file: str
) -> None:
    """A server that offers only HTTP/1.1 by ALPN gets the upload over HTTP/1.1, on the
    connection the HTTP/2 attempt made (nothing of the body was pulled for it)."""
    srv = _core.TestServer(http2=False, tls=True, cert_file=identity[0], key_file=identity[1])
    url = srv.url.replace("127.0.0.1", "localhost")
    try:
        with nodelay.Client(http2=True, verify=ca_file, timeout=TIMEOUT_S) as client:
            r = client.post(url + "/echo", content=pieces(300_000))
            assert r.http_version == "HTTP/1.1"
            assert r.content == pattern(300_000)

        async def main() -> None:
            async with nodelay.AsyncClient(http2=True, verify=ca_file, timeout=TIMEOUT_S) as c:
                r = await c.post(url + "/echo", content=apieces(300_000))
                assert r.http_version == "HTTP/1.1"
                assert r.content == pattern(300_000)

        asyncio.run(main())
        assert srv.connections() == 2
    finally:
        srv.close()


# Frame types, flags and settings for the scripted server below (RFC 9113 §6).
_DATA, _HEADERS, _SETTINGS = 0x0, 0x1, 0x4
_END_STREAM, _ACK, _END_HEADERS = 0x1, 0x1, 0x4
_SETTINGS_INITIAL_WINDOW_SIZE = 0x4
_STATUS_200 = b"\x88"  # HPACK static table index 8 (RFC 7541 Appendix A)
# How long the server below waits before answering: ample for the client to be waiting
# for window by then (were it not, the test could only pass, never fail spuriously).
ANSWER_DELAY_S = 0.3


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        got = conn.recv(n - len(out))
        if not got:
            raise ConnectionError("client left")
        out += got
    return out


def _send_frame(conn: socket.socket, kind: int, flags: int, stream: int, payload: bytes) -> None:
    head = struct.pack(">I", len(payload))[1:] + struct.pack(">BBI", kind, flags, stream)
    conn.sendall(head + payload)


def _serve_closed_window(listener: socket.socket) -> None:
    """One h2c connection, in Python: announces a stream window of 0 (an upload must wait for
    window), and answers the first request ``ANSWER_DELAY_S`` after its HEADERS arrive."""
    conn, _ = listener.accept()
    conn.settimeout(TIMEOUT_S)
    with conn:
        try:
            _recv_exact(conn, 24)  # the client preface
            _send_frame(conn, _SETTINGS, 0, 0, struct.pack(">HI", _SETTINGS_INITIAL_WINDOW_SIZE, 0))
            while True:
                head = _recv_exact(conn, 9)
                length = int.from_bytes(head[:3], "big")
                kind, flags, stream = struct.unpack(">BBI", head[3:])
                _recv_exact(conn, length)
                if kind == _SETTINGS and not flags & _ACK:
                    _send_frame(conn, _SETTINGS, _ACK, 0, b"")
                if kind == _HEADERS:
                    break
            # Give the client time to start waiting for window; waking from the sleep
            # needs the GIL.
            time.sleep(ANSWER_DELAY_S)
            stream &= 0x7FFF_FFFF
            _send_frame(conn, _HEADERS, _END_HEADERS, stream, _STATUS_200)
            _send_frame(conn, _DATA, _END_STREAM, stream, b"answered")
            while conn.recv(65536):
                pass
        except (ConnectionError, OSError):
            pass


def test_waiting_for_window_does_not_hold_the_gil() -> None:
    """A server in a Python thread of this process can answer while the client waits for
    window: were the GIL held during that wait, the server could not run and the upload
    would end in a WriteTimeout instead of the server's answer."""
    listener = socket.create_server(("127.0.0.1", 0))
    server = threading.Thread(target=_serve_closed_window, args=(listener,), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/upload"
    try:
        timeout = nodelay.Timeout(TIMEOUT_S, write=5.0)
        with nodelay.Client(http2="prior_knowledge", timeout=timeout) as client:
            r = client.post(url, content=pieces(1024 * 1024))
            assert_h2(r)
            assert (r.status_code, r.content) == (200, b"answered")
    finally:
        listener.close()
        server.join(TIMEOUT_S)


# ---------------------------------------------------------------- AsyncClient


def run(main: Any) -> None:
    asyncio.run(main())


def test_async_generator_and_async_iterable_bodies(target: Target) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient(**target.options) as client:
            assert_h2(await client.get(target.url + "/bytes/10"))
            r = await client.post(target.url + "/anything", content=iter([b"abc", b"def"]))
            assert_h2(r)
            assert r.json()["body"] == "abcdef"
            assert "content-length" not in sent_headers(r)
            r = await client.post(target.url + "/echo", content=apieces(300_000))
            assert_h2(r)
            assert r.content == pattern(300_000)

    run(main)
    assert target.server.connections() == 1


def test_async_file_body(target: Target, tmp_path: Path) -> None:
    path = tmp_path / "upload.bin"
    path.write_bytes(pattern(300_000))

    async def main() -> None:
        async with nodelay.AsyncClient(**target.options) as client:
            with path.open("rb") as f:
                r = await client.post(target.url + "/anything", content=f)
            assert_h2(r)
            assert sent_headers(r)["content-length"] == "300000"
            assert r.json()["body_len"] == 300_000
            with path.open("rb") as f:
                r = await client.post(target.url + "/echo", content=f)
            assert r.content == pattern(300_000)

    run(main)
    assert target.server.connections() == 1


def test_async_large_body_under_flow_control(target: Target) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient(**target.options) as client:
            r = await client.post(target.url + "/echo", content=apieces(LARGE_BODY_BYTES))
            assert_h2(r)
            assert r.content == pattern(LARGE_BODY_BYTES)
            r = await client.post(target.url + "/echo", content=pieces(LARGE_BODY_BYTES))
            assert_h2(r)
            assert r.content == pattern(LARGE_BODY_BYTES)

    run(main)
    assert target.server.connections() == 1


def test_async_empty_bodies(target: Target) -> None:
    async def empty() -> AsyncIterator[bytes]:
        return
        yield b""

    async def main() -> None:
        async with nodelay.AsyncClient(**target.options) as client:
            for content in (empty(), iter(())):
                r = await client.post(target.url + "/echo", content=content)
                assert_h2(r)
                assert (r.status_code, r.content) == (200, b"")

    run(main)
    assert target.server.connections() == 1


def test_async_early_answer_stops_the_upload(target: Target) -> None:
    pulled = 0
    total = LARGE_BODY_BYTES * 4

    async def body() -> AsyncIterator[bytes]:
        nonlocal pulled
        async for piece in apieces(total):
            pulled += 1
            yield piece

    async def main() -> None:
        async with nodelay.AsyncClient(**target.options) as client:
            r = await client.post(target.url + "/status/200", content=body())
            assert_h2(r)
            assert r.status_code == 405
            assert pulled < total // PIECE_BYTES
            assert (await client.get(target.url + "/bytes/5")).content == b"abcde"

    run(main)
    assert target.server.connections() == 1


def test_async_failing_body_raises_its_error(target: Target) -> None:
    async def body() -> AsyncIterator[bytes]:
        async for piece in apieces(200_000):
            yield piece
        raise Boom("the async body broke")

    async def main() -> None:
        async with nodelay.AsyncClient(**target.options) as client:
            with pytest.raises(Boom, match="the async body broke"):
                await client.post(target.url + "/echo", content=body())
            r = await client.post(target.url + "/echo", content=apieces(100_000))
            assert_h2(r)
            assert r.content == pattern(100_000)

    run(main)
    assert target.server.connections() == 1
