"""``AsyncClient`` over HTTP/2 (h2c with prior knowledge against the embedded server): many
tasks on one shared connection, streaming with ``aiter_*``, cancelled tasks resetting their
streams without leaking them or descriptors, and uvloop."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import nodelay
import pytest
from conftest import expected_bytes
from nodelay import _core


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(main())


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def h2c_server() -> Iterator[_core.TestServer]:
    srv = _core.TestServer(http2=True)
    yield srv
    srv.close()


def test_tasks_share_one_connection(h2c_server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient(http2="prior_knowledge") as client:
            urls = [f"{h2c_server.url}/bytes/{100 + i}" for i in range(200)]
            responses = await asyncio.gather(*(client.get(u) for u in urls))
            for i, r in enumerate(responses):
                assert (r.status_code, r.http_version) == (200, "HTTP/2")
                assert r.content == expected_bytes(100 + i), f"response {i} crossed"

    run(main)
    assert h2c_server.connections() == 1
    assert h2c_server.requests() == 200


def test_streaming_text_and_lines_over_h2(h2c_server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient(http2="prior_knowledge") as client:
            async with client.stream("GET", f"{h2c_server.url}/chunked/300000") as r:
                assert r.http_version == "HTTP/2"
                assert b"".join([c async for c in r.aiter_bytes()]) == expected_bytes(300_000)
            async with client.stream("GET", f"{h2c_server.url}/gzip/100000") as r:
                text = "".join([t async for t in r.aiter_text()])
                assert text.encode() == expected_bytes(100_000)
            async with client.stream("GET", f"{h2c_server.url}/bytes/1000") as r:
                lines = [line async for line in r.aiter_lines()]
                assert "".join(lines).encode() == expected_bytes(1000)

    run(main)
    assert h2c_server.connections() == 1


def test_cancelled_tasks_reset_their_streams(h2c_server: _core.TestServer) -> None:
    """More cancelled requests than the server lets be open at once (hyper: 200 streams):
    were a cancelled stream kept open until the server's (10 s) answer, the requests after
    them would wait for a stream slot and time out."""

    async def main() -> None:
        async with nodelay.AsyncClient(http2="prior_knowledge", timeout=5.0) as client:
            assert (await client.get(f"{h2c_server.url}/bytes/1")).http_version == "HTTP/2"
            fds = open_fds()
            slow = [
                asyncio.ensure_future(client.get(f"{h2c_server.url}/delay/10000"))
                for _ in range(250)
            ]
            await asyncio.sleep(0.3)
            for task in slow:
                task.cancel()
            results = await asyncio.gather(*slow, return_exceptions=True)
            assert {type(r) for r in results} == {asyncio.CancelledError}
            # Streams abandoned half-read reset too.
            for _ in range(5):
                async with client.stream("GET", f"{h2c_server.url}/bytes/5000000") as r:
                    async for _chunk in r.aiter_bytes():
                        break
            quick = nodelay.Timeout(5.0, pool=2.0)
            responses = await asyncio.gather(
                *(client.get(f"{h2c_server.url}/bytes/10", timeout=quick) for _ in range(250))
            )
            assert all(r.content == expected_bytes(10) for r in responses)
            # A connection the server retired (see below) closes once its task sees the end.
            for _ in range(100):
                if open_fds() <= fds:
                    break
                await asyncio.sleep(0.02)
            assert open_fds() <= fds, "a descriptor leaked"

    run(main)
    # A burst of 250 resets may trip the server's rapid-reset guard (h2 answers it with
    # GOAWAY): the client then makes one new connection, never one per request.
    assert h2c_server.connections() <= 2


def test_read_timeout_leaves_the_connection_usable(h2c_server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient(http2="prior_knowledge") as client:
            with pytest.raises(nodelay.ReadTimeout):
                await client.get(
                    f"{h2c_server.url}/delay/2000", timeout=nodelay.Timeout(5.0, read=0.2)
                )
            assert (await client.get(f"{h2c_server.url}/bytes/3")).content == b"abc"

    run(main)
    assert h2c_server.connections() == 1


def test_h2_under_uvloop(h2c_server: _core.TestServer) -> None:
    uvloop = pytest.importorskip("uvloop")

    async def main() -> None:
        async with nodelay.AsyncClient(http2="prior_knowledge") as client:
            responses = await asyncio.gather(
                *(client.get(f"{h2c_server.url}/bytes/{i}") for i in range(50))
            )
            assert [r.content for r in responses] == [expected_bytes(i) for i in range(50)]
            assert {r.http_version for r in responses} == {"HTTP/2"}
            task = asyncio.ensure_future(client.get(f"{h2c_server.url}/delay/2000"))
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert (await client.get(f"{h2c_server.url}/bytes/2")).content == b"ab"

    uvloop.run(main())
    assert h2c_server.connections() == 1


def test_post_over_h2(h2c_server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient(http2="prior_knowledge") as client:
            r = await client.post(f"{h2c_server.url}/echo", content=b"x" * 100_000)
            assert (r.http_version, r.content) == ("HTTP/2", b"x" * 100_000)

    run(main)
