"""A body that trickles (server-sent events, a streamed answer) is handed out as it
arrives: a piece never waits for more data to fill it. The embedded server's
``/drip/{n}?ms=T`` sends ``data: {i}\\n\\n`` events ``T`` ms apart, the first at once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import nodelay
import pytest
from nodelay import _core

EVENTS = b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
PAUSE_MS = 400
"""Between two events: long enough that the next one cannot have arrived with the first."""


@pytest.fixture(scope="module")
def h2c_server() -> Iterator[_core.TestServer]:
    srv = _core.TestServer(http2=True)
    yield srv
    srv.close()


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "h2c"])
def test_iter_bytes_hands_out_each_event_as_it_arrives(
    server: _core.TestServer, h2c_server: _core.TestServer, http2: bool
) -> None:
    base = h2c_server.url if http2 else server.url
    mode = "prior_knowledge" if http2 else False
    with nodelay.Client(http2=mode) as client:
        with client.stream("GET", f"{base}/drip/3?ms={PAUSE_MS}") as r:
            pieces = list(r.iter_bytes())
    assert pieces[0] == b"data: 0\n\n"  # not held back until the next event came
    assert b"".join(pieces) == EVENTS


def test_iter_lines_of_an_event_stream(server: _core.TestServer) -> None:
    with nodelay.Client() as client, client.stream("GET", f"{server.url}/drip/2?ms=300") as r:
        lines = r.iter_lines()
        assert next(lines) == "data: 0"
        assert list(lines) == ["", "data: 1", ""]


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "h2c"])
def test_aiter_bytes_hands_out_each_event_as_it_arrives(
    server: _core.TestServer, h2c_server: _core.TestServer, http2: bool
) -> None:
    base = h2c_server.url if http2 else server.url

    async def main() -> list[bytes]:
        mode = "prior_knowledge" if http2 else False
        async with nodelay.AsyncClient(http2=mode) as client:
            async with client.stream("GET", f"{base}/drip/3?ms={PAUSE_MS}") as r:
                return [piece async for piece in r.aiter_bytes()]

    pieces = asyncio.run(main())
    assert pieces[0] == b"data: 0\n\n"
    assert b"".join(pieces) == EVENTS


def test_a_fast_body_still_comes_in_big_pieces(server: _core.TestServer) -> None:
    # All of it is there at once: pieces grow to 64 KiB and more (BENCHMARKS d).
    n = 3_000_000
    with nodelay.Client() as client, client.stream("GET", f"{server.url}/bytes/{n}") as r:
        sizes = [len(p) for p in r.iter_bytes()]
    assert sum(sizes) == n
    assert sum(sizes) / len(sizes) >= 64 * 1024
