"""``AsyncClient`` itself: awaited requests, async streaming, cancellation that leaks
nothing, timeouts on time, uvloop, many concurrent requests on one client, fork.

The shared behaviour (methods, params, bodies, cookies, auth, redirects, decoding, hostile
servers) is covered by the ``Client`` test modules marked ``both_drivers``, whose tests
also run against ``AsyncClient`` (the ``async`` id; tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import nodelay
import pytest
from children import forked_child_succeeds
from conftest import expected_bytes
from nodelay import _core
from scripted import Close, Recv, ScriptedServer, Send, SendSlowly, Sleep, response

T = TypeVar("T")

# Scheduling slack for "on time" checks on a loaded 2-core machine.
SLACK = 0.8


def run(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(main())


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_get_and_methods(server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient(base_url=server.url) as client:
            r = await client.get("/bytes/202")
            assert r.status_code == 200 and r.content == expected_bytes(202)
            assert r.http_version == "HTTP/1.1"
            assert (await client.post("/echo", content=b"abc")).content == b"abc"
            assert (await client.put("/echo", json={"a": 1})).json() == {"a": 1}
            assert (await client.patch("/echo", data={"k": "v"})).content == b"k=v"
            assert (await client.delete("/anything")).json()["method"] == "DELETE"
            assert (await client.head("/bytes/10")).content == b""
            assert (await client.options("/anything")).json()["method"] == "OPTIONS"
            r = await client.request("GET", "/json/10", params={"q": "1"})
            assert r.json()["ok"] is True

    run(main)


def test_closed_client_refuses_requests(server: _core.TestServer) -> None:
    async def main() -> None:
        client = nodelay.AsyncClient()
        await client.get(f"{server.url}/bytes/1")
        await client.aclose()
        assert client.is_closed
        with pytest.raises(RuntimeError, match="AsyncClient is closed"):
            await client.get(f"{server.url}/bytes/1")

    run(main)


def test_errors_carry_url_and_request() -> None:
    async def main() -> None:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        url = f"http://127.0.0.1:{port}/x"
        async with nodelay.AsyncClient() as client:
            with pytest.raises(nodelay.ConnectError) as info:
                await client.get(url)
            assert info.value.url == url
            assert info.value.request is not None and info.value.request.url == url
            with pytest.raises(nodelay.UnsupportedProtocol):
                await client.get("ftp://127.0.0.1/")

    run(main)


# -- streaming ----------------------------------------------------------------------------


def test_stream_aiter_bytes_pieces_and_reuse(server: _core.TestServer) -> None:
    n = 3 << 20

    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            async with client.stream("GET", f"{server.url}/bytes/{n}") as r:
                assert r.status_code == 200
                sizes = []
                body = bytearray()
                async for chunk in r.aiter_bytes():
                    sizes.append(len(chunk))
                    body += chunk
            assert bytes(body) == expected_bytes(n)
            assert all(0 < s <= 256 * 1024 for s in sizes)
            assert n / len(sizes) >= 64 * 1024  # big on average: what has arrived
            assert r.is_closed
            # Read to the end: the connection went back to the pool.
            assert client._engine.idle_connections() == 1

    run(main)


@pytest.mark.parametrize("route", ["gzip", "deflate", "brotli", "zstd", "chunked"])
def test_stream_decodes_on_the_fly(server: _core.TestServer, route: str) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            async with client.stream("GET", f"{server.url}/{route}/300000") as r:
                chunks = [c async for c in r.aiter_bytes(chunk_size=1000)]
            assert b"".join(chunks) == expected_bytes(300000)
            assert all(len(c) == 1000 for c in chunks)
            if route != "chunked":
                async with client.stream("GET", f"{server.url}/{route}/300000") as r:
                    raw = b"".join([c async for c in r.aiter_raw()])
                assert len(raw) < 300000

    run(main)


def test_stream_text_lines_and_aread(server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            async with client.stream("GET", f"{server.url}/bytes/100") as r:
                text = "".join([t async for t in r.aiter_text()])
            assert text == expected_bytes(100).decode()
            async with client.stream("POST", f"{server.url}/echo", content=b"a\nb\r\nc") as r:
                assert [line async for line in r.aiter_lines()] == ["a", "b", "c"]
            r = await client.get(f"{server.url}/bytes/50", stream=True)
            with pytest.raises(nodelay.ResponseNotRead):
                _ = r.content
            assert await r.aread() == expected_bytes(50)
            assert r.content == expected_bytes(50) and r.text == r.content.decode()
            await r.aclose()
            async with client.stream("GET", f"{server.url}/bytes/10") as r:
                assert [c async for c in r.aiter_bytes()] == [expected_bytes(10)]
                with pytest.raises(nodelay.StreamConsumed):
                    await r.aread()
            # A whole response iterates its content.
            whole = await client.get(f"{server.url}/bytes/5")
            assert [c async for c in whole.aiter_bytes()] == [b"abcde"]

    run(main)


def test_half_read_stream_closes_its_connection(server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            before = server.connections()
            async with client.stream("GET", f"{server.url}/bytes/{4 << 20}") as r:
                async for _ in r.aiter_bytes():
                    break
            assert client._engine.idle_connections() == 0
            assert (await client.get(f"{server.url}/bytes/3")).content == b"abc"
            assert server.connections() - before == 2

    run(main)


def test_truncated_streamed_body_raises() -> None:
    script = [Recv(), Send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"), Close()]
    with ScriptedServer(script) as srv:

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                async with client.stream("GET", srv.url + "/") as r:
                    with pytest.raises(nodelay.RemoteProtocolError, match="received 3 of 100"):
                        async for _ in r.aiter_bytes():
                            pass
                with pytest.raises(nodelay.RemoteProtocolError):
                    await client.get(srv.url + "/")

        run(main)


# -- cancellation -------------------------------------------------------------------------


def test_cancelled_request_leaks_nothing(server: _core.TestServer) -> None:
    async def main() -> None:
        limits = nodelay.Limits(max_connections=1)
        async with nodelay.AsyncClient(limits=limits) as client:
            await client.get(f"{server.url}/bytes/1")  # runtime, loop bridge, one connection
            await client.aclose()
        async with nodelay.AsyncClient(limits=limits) as client:
            fds = open_fds()
            task = asyncio.ensure_future(client.get(f"{server.url}/delay/300"))
            await asyncio.sleep(0.1)
            assert open_fds() > fds  # the request's connection
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The half-used connection is closed, not pooled, and its slot is free: the
            # next request on this one-connection pool needs no pool wait.
            await asyncio.sleep(0.05)
            assert client._engine.idle_connections() == 0
            started = time.monotonic()
            r = await client.get(f"{server.url}/bytes/2", timeout=nodelay.Timeout(5.0, pool=1.0))
            assert r.content == b"ab" and time.monotonic() - started < 1.0
            await client.aclose()
            # Once the server finished its side, no descriptor is left open.
            await asyncio.sleep(0.5)
            assert open_fds() <= fds

    run(main)


def test_cancelled_stream_read_closes_the_connection() -> None:
    script = [Recv(), Send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab"), Sleep(3.0)]
    with ScriptedServer(script) as srv:

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                async with client.stream("GET", srv.url + "/") as r:
                    pieces = r.aiter_bytes()
                    assert await pieces.__anext__() == b"ab"  # what arrived comes at once
                    with pytest.raises(TimeoutError):
                        await asyncio.wait_for(pieces.__anext__(), 0.2)
                    assert client._engine.idle_connections() == 0
                assert r.is_closed

        run(main)


# -- timeouts -----------------------------------------------------------------------------


def test_read_timeout_on_time(server: _core.TestServer) -> None:
    async def main() -> None:
        async with nodelay.AsyncClient(timeout=nodelay.Timeout(5.0, read=0.2)) as client:
            started = time.monotonic()
            with pytest.raises(nodelay.ReadTimeout):
                await client.get(f"{server.url}/delay/2000")
            took = time.monotonic() - started
            assert 0.2 <= took < 0.2 + SLACK

    run(main)


def test_total_timeout_bounds_a_dripping_body() -> None:
    script = [Recv(), SendSlowly(response(body=b"x" * 100), 0.05)]
    with ScriptedServer(script) as srv:

        async def main() -> None:
            timeout = nodelay.Timeout(5.0, total=0.3)
            async with nodelay.AsyncClient(timeout=timeout) as client:
                started = time.monotonic()
                with pytest.raises(nodelay.TimeoutException):
                    await client.get(srv.url + "/")
                assert time.monotonic() - started < 0.3 + SLACK

        run(main)


def test_pool_timeout_when_the_only_connection_is_busy(server: _core.TestServer) -> None:
    async def main() -> None:
        limits = nodelay.Limits(max_connections=1)
        timeout = nodelay.Timeout(5.0, pool=0.2)
        async with nodelay.AsyncClient(limits=limits, timeout=timeout) as client:
            busy = asyncio.ensure_future(client.get(f"{server.url}/delay/1000"))
            await asyncio.sleep(0.1)
            started = time.monotonic()
            with pytest.raises(nodelay.PoolTimeout):
                await client.get(f"{server.url}/bytes/1")
            assert 0.2 <= time.monotonic() - started < 0.2 + SLACK
            assert (await busy).status_code == 200
            # A waiter is served as soon as the connection frees up.
            slow = asyncio.ensure_future(client.get(f"{server.url}/delay/200"))
            await asyncio.sleep(0.05)
            waiter = await client.get(f"{server.url}/bytes/1", timeout=nodelay.Timeout(5.0))
            assert waiter.status_code == 200 and (await slow).status_code == 200

    run(main)


# -- event loops, concurrency, fork ---------------------------------------------------------


def test_hundred_concurrent_gets_on_one_client(server: _core.TestServer) -> None:
    async def main() -> None:
        limits = nodelay.Limits(max_connections=32, max_keepalive=32)
        async with nodelay.AsyncClient(limits=limits) as client:
            before = server.connections()
            urls = [f"{server.url}/bytes/{100 + i}" for i in range(100)]
            responses = await asyncio.gather(*(client.get(u) for u in urls))
            for i, r in enumerate(responses):
                assert r.status_code == 200
                assert r.content == expected_bytes(100 + i), f"response {i} crossed"
            assert server.connections() - before <= 32

    run(main)


def test_works_under_uvloop(server: _core.TestServer) -> None:
    uvloop = pytest.importorskip("uvloop")

    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            responses = await asyncio.gather(
                *(client.get(f"{server.url}/bytes/{i}") for i in range(50))
            )
            assert [r.content for r in responses] == [expected_bytes(i) for i in range(50)]
            async with client.stream("GET", f"{server.url}/gzip/100000") as r:
                assert b"".join([c async for c in r.aiter_bytes()]) == expected_bytes(100000)
            task = asyncio.ensure_future(client.get(f"{server.url}/delay/2000"))
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    uvloop.run(main())


def test_uvloop_loops_in_turn_and_across_threads(server: _core.TestServer) -> None:
    """A uvloop loop records no running thread: a thread that ran one loop and then
    runs another, while the first runs on another thread, gets each request's future on
    the loop running it (a future of the other loop would refuse to be awaited)."""
    uvloop = pytest.importorskip("uvloop")

    async def fetch(count: int) -> int:
        async with nodelay.AsyncClient() as client:
            for i in range(count):
                r = await client.get(f"{server.url}/bytes/{i}")
                assert r.content == expected_bytes(i)
        return count

    first, second = uvloop.new_event_loop(), uvloop.new_event_loop()
    try:
        assert first.run_until_complete(fetch(3)) == 3  # this thread's loop was `first`
        moved: list[int] = []
        worker = threading.Thread(target=lambda: moved.append(first.run_until_complete(fetch(30))))
        worker.start()
        try:
            assert second.run_until_complete(fetch(30)) == 30
        finally:
            worker.join(30)
        assert moved == [30]
        assert first.run_until_complete(fetch(3)) == 3  # back on this thread
    finally:
        first.close()
        second.close()


def test_one_client_across_successive_loops(server: _core.TestServer) -> None:
    client = nodelay.AsyncClient()

    async def one() -> bytes:
        return (await client.get(f"{server.url}/bytes/4")).content

    assert asyncio.run(one()) == b"abcd"
    assert asyncio.run(one()) == b"abcd"  # a new loop: a new bridge, the same pool
    assert client._engine.idle_connections() == 1
    asyncio.run(client.aclose())


def test_loops_on_two_threads_share_one_client(server: _core.TestServer) -> None:
    import threading

    client = nodelay.AsyncClient()
    results: list[bytes] = []

    async def some(n: int) -> None:
        for _ in range(20):
            results.append((await client.get(f"{server.url}/bytes/{n}")).content)

    threads = [threading.Thread(target=asyncio.run, args=(some(n),)) for n in (3, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(results) == sorted([b"abc"] * 20 + [b"abcde"] * 20)


def test_forked_child_gets_a_fresh_runtime_and_an_empty_pool(server: _core.TestServer) -> None:
    client = nodelay.AsyncClient()

    async def get(n: int) -> Awaitable[bytes] | bytes:
        return (await client.get(f"{server.url}/bytes/{n}")).content

    assert asyncio.run(get(3)) == b"abc"
    assert client._engine.idle_connections() == 1
    forked_child_succeeds(
        lambda: client._engine.idle_connections() == 0 and asyncio.run(get(4)) == b"abcd",
        lambda: None,
    )
    # The parent's pooled connection still works.
    assert asyncio.run(get(5)) == b"abcde"


def test_async_event_hooks_are_awaited(server: _core.TestServer) -> None:
    seen: list[str] = []

    async def on_request(request: nodelay.Request) -> None:
        await asyncio.sleep(0)
        seen.append(f"request {request.url}")

    def on_response(response: nodelay.Response) -> None:
        seen.append(f"response {response.status_code}")

    async def main() -> None:
        hooks = {"request": [on_request], "response": [on_response]}
        async with nodelay.AsyncClient(event_hooks=hooks) as client:
            await client.get(f"{server.url}/bytes/1")

    run(main)
    assert seen == [f"request {server.url}/bytes/1", "response 200"]


def test_file_iterable_and_async_iterable_bodies(server: _core.TestServer, tmp_path: Any) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"0123456789" * 10_000)

    async def chunks() -> Any:
        for piece in (b"ab", b"cd"):
            await asyncio.sleep(0)
            yield piece

    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            url = f"{server.url}/echo"
            assert (await client.post(url, content=iter([b"a", b"b"]))).content == b"ab"
            assert (await client.post(url, content=chunks())).content == b"abcd"
            with path.open("rb") as f:
                assert (await client.put(url, content=f)).content == path.read_bytes()
            with path.open("rb") as f:
                r = await client.post(url, files={"doc": f}, data={"k": "v"})
            body = r.content
            assert b'name="doc"; filename="data.bin"' in body
            assert path.read_bytes() in body and b'name="k"' in body
            r = await client.post(url, files={"f": ("a.txt", b"hello")})
            assert b"hello" in r.content

    run(main)


def test_proxy_from_the_environment_is_used_not_ignored(
    monkeypatch: pytest.MonkeyPatch, server: _core.TestServer
) -> None:
    # A request that silently skipped a configured proxy would leave the intended network.
    from proxy_server import ProxyServer

    async def get(url: str, **kwargs: Any) -> int:
        async with nodelay.AsyncClient(**kwargs) as client:
            return (await client.get(url)).status_code

    with ProxyServer() as proxy:
        monkeypatch.setenv("http_proxy", proxy.url)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        assert asyncio.run(get(f"{server.url}/bytes/1")) == 200
        assert [q.target for q in proxy.requests] == [f"{server.url}/bytes/1"]
        assert asyncio.run(get(f"{server.url}/bytes/1", trust_env=False)) == 200
        assert len(proxy.requests) == 1, "trust_env=False ignores the environment"


def test_invalid_http2_value() -> None:
    with pytest.raises(ValueError, match="http2"):
        nodelay.AsyncClient(http2="yes")  # type: ignore[arg-type]


def test_methods_refuse_keywords_they_do_not_take_by_name() -> None:
    import asyncio

    async def main() -> None:
        url = "http://127.0.0.1:1/"  # nothing listens: a request sent would fail otherwise
        async with nodelay.AsyncClient() as client:
            for method in ("get", "head", "options", "delete"):
                for name in ("json", "content", "data", "files", "bogus"):
                    with pytest.raises(
                        TypeError,
                        match=f"{method}\\(\\) got an unexpected keyword argument '{name}'",
                    ):
                        await getattr(client, method)(url, **{name: b"x"})
            for method in ("post", "put", "patch"):
                with pytest.raises(
                    TypeError, match=f"{method}\\(\\) got an unexpected keyword argument 'bogus'"
                ):
                    await getattr(client, method)(url, data={"a": "1"}, bogus=1)

    asyncio.run(main())


def test_method_keywords_reach_the_request(server: _core.TestServer) -> None:
    import asyncio

    async def main() -> None:
        async with nodelay.AsyncClient() as client:
            r = await client.get(f"{server.url}/anything", params={"a": "1"}, headers={"X-T": "y"})
            data = r.json()
            assert data["query"] == "a=1" and ["x-t", "y"] in data["headers"]
            r = await client.put(f"{server.url}/anything", json={"k": 1}, params={"p": "2"})
            assert (r.json()["method"], r.json()["body"], r.json()["query"]) == (
                "PUT",
                '{"k":1}',
                "p=2",
            )
            r = await client.delete(f"{server.url}/anything", headers={"X-D": "1"})
            assert r.json()["method"] == "DELETE" and ["x-d", "1"] in r.json()["headers"]

    asyncio.run(main())
