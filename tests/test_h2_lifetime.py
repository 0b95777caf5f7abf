"""HTTP/2 connections under the client's Limits: they count towards max_connections
(with HTTP/1.1 ones), expire after keepalive_expiry when idle, and end on close()."""

from __future__ import annotations

import time
from collections.abc import Iterator

import nodelay
import pytest
from nodelay import _core


@pytest.fixture
def h2c_pair() -> Iterator[tuple[_core.TestServer, _core.TestServer]]:
    a, b = _core.TestServer(http2=True), _core.TestServer(http2=True)
    yield a, b
    a.close()
    b.close()


def test_h2_connections_count_towards_max_connections(
    h2c_pair: tuple[_core.TestServer, _core.TestServer],
) -> None:
    a, b = h2c_pair
    limits = nodelay.Limits(max_connections=1, keepalive_expiry=1.0)
    with nodelay.Client(http2="prior_knowledge", limits=limits) as client:
        assert client.get(a.url + "/bytes/10").http_version == "HTTP/2"
        started = time.monotonic()
        with pytest.raises(nodelay.PoolTimeout):
            client.get(b.url + "/bytes/10", timeout=nodelay.Timeout(5.0, pool=0.2))
        assert 0.2 <= time.monotonic() - started < 2.0
        assert b.connections() == 0
        # a's connection expires (GOAWAY) and frees the slot for the waiting request.
        r = client.get(b.url + "/bytes/10", timeout=nodelay.Timeout(5.0, pool=3.0))
        assert (r.status_code, r.http_version) == (200, "HTTP/2")


def test_idle_h2_connection_expires(
    h2c_pair: tuple[_core.TestServer, _core.TestServer],
) -> None:
    a, _ = h2c_pair
    limits = nodelay.Limits(keepalive_expiry=0.2)
    with nodelay.Client(http2="prior_knowledge", limits=limits) as client:
        client.get(a.url + "/bytes/10")
        client.get(a.url + "/bytes/10")
        assert a.connections() == 1
        time.sleep(0.6)
        assert client.get(a.url + "/bytes/10").http_version == "HTTP/2"
        assert a.connections() == 2


def test_busy_h2_connection_is_shared_not_expired(
    h2c_pair: tuple[_core.TestServer, _core.TestServer],
) -> None:
    a, _ = h2c_pair
    limits = nodelay.Limits(keepalive_expiry=0.3)
    with nodelay.Client(http2="prior_knowledge", limits=limits) as client:
        # A body read slowly over twice the expiry keeps its connection open.
        with client.stream("GET", a.url + "/bytes/1000") as r:
            time.sleep(0.7)
            assert len(r.read()) == 1000
        client.get(a.url + "/bytes/10")
        assert a.connections() == 1


def test_idle_async_h2_connection_expires(
    h2c_pair: tuple[_core.TestServer, _core.TestServer],
) -> None:
    import asyncio

    a, _ = h2c_pair
    limits = nodelay.Limits(keepalive_expiry=0.2)

    async def main() -> None:
        async with nodelay.AsyncClient(http2="prior_knowledge", limits=limits) as client:
            await client.get(a.url + "/bytes/10")
            await client.get(a.url + "/bytes/10")
            assert a.connections() == 1
            await asyncio.sleep(0.6)
            assert (await client.get(a.url + "/bytes/10")).http_version == "HTTP/2"
            assert a.connections() == 2

    asyncio.run(main())


def test_async_h2_connections_count_towards_max_connections(
    h2c_pair: tuple[_core.TestServer, _core.TestServer],
) -> None:
    import asyncio

    a, b = h2c_pair
    limits = nodelay.Limits(max_connections=1, keepalive_expiry=1.0)

    async def main() -> None:
        async with nodelay.AsyncClient(http2="prior_knowledge", limits=limits) as client:
            assert (await client.get(a.url + "/bytes/10")).http_version == "HTTP/2"
            started = time.monotonic()
            with pytest.raises(nodelay.PoolTimeout):
                await client.get(b.url + "/bytes/10", timeout=nodelay.Timeout(5.0, pool=0.2))
            assert 0.2 <= time.monotonic() - started < 2.0
            assert b.connections() == 0
            # a's connection expires (GOAWAY) and frees the slot for the waiting request.
            r = await client.get(b.url + "/bytes/10", timeout=nodelay.Timeout(5.0, pool=3.0))
            assert (r.status_code, r.http_version) == (200, "HTTP/2")

    asyncio.run(main())


def test_async_http1_request_waits_for_the_slot_of_an_h2_connection(
    server: _core.TestServer, tmp_path: object
) -> None:
    import asyncio
    from pathlib import Path

    ca = Path(str(tmp_path)) / "ca.pem"
    ca.write_text(_core.test_ca_pem())
    tls = _core.TestServer(http2=True, tls=True)
    limits = nodelay.Limits(max_connections=1, keepalive_expiry=1.0)

    async def main() -> None:
        # http2=True: h2 by ALPN for https, HTTP/1.1 for http, under one limit.
        async with nodelay.AsyncClient(http2=True, verify=str(ca), limits=limits) as client:
            https = tls.url.replace("127.0.0.1", "localhost")
            assert (await client.get(https + "/bytes/10")).http_version == "HTTP/2"
            with pytest.raises(nodelay.PoolTimeout):
                await client.get(server.url + "/bytes/10", timeout=nodelay.Timeout(5.0, pool=0.2))
            # The h2 connection expires and frees the slot for the HTTP/1.1 request.
            r = await client.get(server.url + "/bytes/10", timeout=nodelay.Timeout(5.0, pool=3.0))
            assert (r.status_code, r.http_version) == (200, "HTTP/1.1")

    try:
        asyncio.run(main())
    finally:
        tls.close()
