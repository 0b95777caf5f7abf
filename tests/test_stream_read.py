"""``Response.read()`` (and ``content``) of a streamed response: the body read straight into
one ``bytes`` object, of the exact size when the Content-Length is known, grown while an
unknown-length body keeps coming; the result is byte-exact either way and the connection
goes back to the pool."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator

import nodelay
import pytest
from conftest import expected_bytes
from nodelay import _core
from scripted import Close, Recv, ScriptedServer, Send, response

# Around the first allocation of an unknown-length read (256 KiB) and its doublings.
SIZES = [0, 1, 202, 256 * 1024 - 1, 256 * 1024, 256 * 1024 + 1, 3 * 1024 * 1024 + 7]


@pytest.fixture
def own_server() -> Iterator[_core.TestServer]:
    """An embedded server of this test's own, so its connection count is the test's."""
    srv = _core.TestServer("127.0.0.1", 0, 1)
    yield srv
    srv.close()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("route", ["bytes", "chunked", "gzip"])
def test_read_is_byte_exact(own_server: _core.TestServer, route: str, size: int) -> None:
    with nodelay.Client() as c:
        for _ in range(2):
            with c.stream("GET", f"{own_server.url}/{route}/{size}") as r:
                assert r.read() == expected_bytes(size)
                assert r.is_closed
                assert r.content == expected_bytes(size)
    # Each read reached the end of the body: the connection was pooled and reused.
    assert own_server.connections() == 1


def test_content_of_a_stream_true_response(own_server: _core.TestServer) -> None:
    with nodelay.Client() as c:
        r = c.request("GET", f"{own_server.url}/bytes/70000", stream=True)
        assert r.content == expected_bytes(70000)


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def make(*scripts: list[object]) -> ScriptedServer:
        srv = ScriptedServer(*scripts)  # type: ignore[arg-type]
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.close()


@pytest.mark.parametrize("size", [0, 202, 600_000])
def test_read_of_a_close_delimited_body(scripted: Callable[..., ScriptedServer], size: int) -> None:
    body = expected_bytes(size)
    srv = scripted([Recv(), Send(response(200, body, content_length=False)), Close()])
    with nodelay.Client() as c, c.stream("GET", srv.url + "/") as r:
        assert r.read() == body


def test_read_of_a_gzip_body_with_a_content_length(
    scripted: Callable[..., ScriptedServer],
) -> None:
    """The Content-Length counts encoded bytes: the decoded body is longer and grows."""
    body = expected_bytes(2_000_000)
    encoded = gzip.compress(body)
    srv = scripted([Recv(), Send(response(200, encoded, [("Content-Encoding", "gzip")])), Close()])
    with nodelay.Client() as c, c.stream("GET", srv.url + "/") as r:
        assert r.read() == body


def test_read_of_a_body_shorter_than_its_content_length(
    scripted: Callable[..., ScriptedServer],
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
    srv = scripted([Recv(), Send(head + b"x" * 10), Close()])
    with nodelay.Client() as c, c.stream("GET", srv.url + "/") as r:
        with pytest.raises(nodelay.RemoteProtocolError):
            r.read()


def test_read_of_a_lying_huge_content_length(scripted: Callable[..., ScriptedServer]) -> None:
    """An announced terabyte is not allocated up front (docs/hostile.md A11): the read fails
    when the connection ends, having allocated only what arrived."""
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n"
    srv = scripted([Recv(), Send(head + b"x" * 10), Close()])
    with nodelay.Client() as c, c.stream("GET", srv.url + "/") as r:
        with pytest.raises(nodelay.RemoteProtocolError):
            r.read()


@pytest.mark.parametrize("http2", [False, True])
def test_the_last_piece_ends_the_body(http2: bool) -> None:
    """A piece that completes the body (all of its Content-Length, the end of an HTTP/2
    stream) ends it: ``is_closed`` is true and the connection is back in the pool before
    any further read, which then returns ``b""`` at once."""
    from nodelay.ext._engine import engine_options

    srv = _core.TestServer("127.0.0.1", 0, 1, http2=http2)
    engine = _core.Engine(engine_options(http1=not http2, http2=http2))
    try:
        stream = engine.open("GET", f"{srv.url}/bytes/202", [], None, (5.0, 5.0, 5.0, None, None))
        assert stream.read(65536, 65536, False) == expected_bytes(202)
        assert stream.is_closed
        if not http2:  # an HTTP/2 connection stays shared, never idle-pooled per stream
            assert engine.idle_connections() == 1
        assert stream.read(65536, 65536, False) == b""
    finally:
        engine.close()
        srv.close()
