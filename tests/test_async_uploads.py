"""``AsyncClient`` request bodies only it takes: async iterables of bytes for ``content=``,
sent with chunked coding as they are produced (the engine waits on the event loop for each
piece), errors of the iterable raised as is, and a cancelled upload releasing everything."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import nodelay
import pytest
from nodelay import _core


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(main())


async def pieces(*chunks: bytes, pause: float = 0.0) -> AsyncIterator[bytes]:
    for chunk in chunks:
        if pause:
            await asyncio.sleep(pause)
        yield chunk


def test_async_iterable_is_sent_chunked(server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            r = await client.post(
                f"{server.url}/anything",
                content=pieces(b"hello ", b"", b"async ", b"world", pause=0.01),
            )
            data = r.json()
            headers = {k: v for k, v in data["headers"]}
            assert headers.get("transfer-encoding") == "chunked"
            assert data["body"] == "hello async world"

    run(main)


def test_large_async_iterable_is_streamed(server: _core.TestServer) -> None:
    piece = bytes(range(256)) * 256  # 64 KiB

    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            r = await client.put(f"{server.url}/echo", content=pieces(*[piece] * 64))
            assert r.content == piece * 64

    run(main)


def test_streamed_response_to_a_streamed_upload(server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            async with client.stream(
                "PUT", f"{server.url}/echo", content=pieces(b"up", b"load")
            ) as r:
                assert b"".join([c async for c in r.aiter_bytes()]) == b"upload"
            with open(__file__, "rb") as f:
                async with client.stream("PUT", f"{server.url}/echo", content=f) as r:
                    body = b"".join([c async for c in r.aiter_bytes()])
            with open(__file__, "rb") as f:
                assert body == f.read()

    run(main)


def test_async_iterable_error_propagates_as_is(server: _core.TestServer) -> None:
    class Boom(Exception):
        pass

    async def failing() -> AsyncIterator[bytes]:
        yield b"first"
        raise Boom("async generator failed")

    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            with pytest.raises(Boom, match="async generator failed"):
                await client.post(f"{server.url}/echo", content=failing())
            assert (await client.post(f"{server.url}/echo", content=b"x")).content == b"x"

    run(main)


def test_async_iterable_of_non_bytes_is_a_type_error(server: _core.TestServer) -> None:
    async def words() -> AsyncIterator[Any]:
        yield "text"

    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            with pytest.raises(TypeError, match="must yield bytes"):
                await client.post(f"{server.url}/echo", content=words())

    run(main)


def test_cancelled_upload_releases_its_iterable(server: _core.TestServer) -> None:
    closed = asyncio.Event()

    async def endless() -> AsyncIterator[bytes]:
        try:
            while True:
                await asyncio.sleep(0.01)
                yield b"x" * 1024
        finally:
            closed.set()

    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            body = endless()
            task = asyncio.ensure_future(client.post(f"{server.url}/echo", content=body))
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The pending __anext__ was cancelled with the request: the generator closed.
            await asyncio.wait_for(closed.wait(), 5)
            assert (await client.get(f"{server.url}/bytes/2")).content == b"ab"

    run(main)


def test_async_iterable_cannot_be_replayed_on_307(server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient(follow_redirects=True) as client:
            with pytest.raises(nodelay.StreamConsumed):
                await client.post(
                    f"{server.url}/redirect-to?status_code=307&url=/echo", content=pieces(b"a")
                )

    run(main)


def test_file_upload_under_uvloop(server: _core.TestServer, tmp_path: Any) -> None:
    uvloop = pytest.importorskip("uvloop")
    payload = bytes(range(256)) * 2048  # 512 KiB
    path = tmp_path / "up.bin"
    path.write_bytes(payload)

    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            with path.open("rb") as f:
                r = await client.put(f"{server.url}/echo", content=f)
            assert r.content == payload
            r = await client.post(f"{server.url}/echo", content=pieces(b"a", b"b"))
            assert r.content == b"ab"

    uvloop.run(main())
