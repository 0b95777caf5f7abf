"""``AsyncClient`` through proxies where test_proxy.py goes through the module-level
helpers (sync only): docs/hostile.md G26 (a refused CONNECT sends nothing in cleartext), a
proxy that stalls its CONNECT answer, an unreachable proxy, and many tasks over one
keep-alive connection to a forwarding proxy."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import nodelay
import pytest
import trustme
from conftest import expected_bytes
from nodelay import _core
from proxy_server import ProxyServer
from test_proxy import clean_env, dead_port  # noqa: F401


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(main())


@pytest.fixture(scope="module")
def ca_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("async-proxy-ca") / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(path))
    yield str(path)


def test_g26_refused_connect_sends_nothing_in_cleartext(scripted, ca_file: str) -> None:  # type: ignore[no-untyped-def]
    from scripted import Recv, Send

    refuse = b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"
    proxy = scripted([Recv(), Send(refuse), Recv(timeout=2)])

    async def main() -> None:
        url = proxy.url.replace("http://", "http://u:hunter2@")
        async with nodelay.AsyncClient(proxy=url, verify=ca_file) as client:
            with pytest.raises(nodelay.ProxyError, match="407") as caught:
                await client.post("https://origin.test/login?user=me", content=b"password=secret")
            assert "hunter2" not in str(caught.value)

    run(main)
    [conn] = proxy.conns
    assert conn.done.wait(5)
    assert conn.eof, "the client closed the connection after the refusal"
    assert bytes(conn.received) == (
        b"CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n"
        b"Proxy-Authorization: Basic dTpodW50ZXIy\r\n\r\n"
    )


def test_stalling_proxy_is_a_connect_timeout(scripted, ca_file: str) -> None:  # type: ignore[no-untyped-def]
    from scripted import Recv, Sleep

    stall = scripted([Recv(), Sleep(5)])

    async def main() -> None:
        async with nodelay.AsyncClient(
            proxy=stall.url, verify=ca_file, timeout=nodelay.Timeout(0.3)
        ) as client:
            with pytest.raises(nodelay.ConnectTimeout):
                await client.get("https://localhost:1/")

    run(main)


def test_unreachable_proxy_is_a_proxy_error_without_credentials() -> None:
    async def main() -> None:
        proxy = f"http://user:secret@127.0.0.1:{dead_port()}"
        async with nodelay.AsyncClient(proxy=proxy) as client:
            with pytest.raises(nodelay.ProxyError) as caught:
                await client.get("http://example.invalid/")
            assert "secret" not in str(caught.value)

    run(main)


def test_tasks_share_keep_alive_connections_to_the_proxy(server: _core.TestServer) -> None:
    with ProxyServer() as proxy:

        async def main() -> None:
            async with nodelay.AsyncClient(proxy=proxy.url) as client:
                for _ in range(2):
                    responses = await asyncio.gather(
                        *(client.get(f"{server.url}/bytes/{i}") for i in range(1, 9))
                    )
                    assert [r.content for r in responses] == [
                        expected_bytes(i) for i in range(1, 9)
                    ]

        run(main)
        assert len(proxy.requests) == 16
        assert proxy.connections <= 8, "the second round reuses the first round's connections"


def test_proxy_under_uvloop(server: _core.TestServer) -> None:
    uvloop = pytest.importorskip("uvloop")
    with ProxyServer() as proxy:

        async def main() -> None:
            async with nodelay.AsyncClient(proxy=proxy.url) as client:
                # A sized stream (tests/proxy_server.py forwards Content-Length bodies only).
                body = b"upload" * 20_000
                r = await client.put(f"{server.url}/echo", content=io.BytesIO(body))
                assert r.content == body
                assert (await client.get(f"{server.url}/bytes/3")).content == b"abc"

        uvloop.run(main())
        assert [q.method for q in proxy.requests] == ["PUT", "GET"]
