"""httpx's "HTTP/2" page, run with ``httpx`` itself and with ``nodelay`` imported in its
place, in the same run, against PyPI's httpbin served by hypercorn (a third-party server
that speaks HTTP/2) over TLS with a test CA: ``http2=True`` negotiates HTTP/2 by ALPN, a
client without it speaks HTTP/1.1, and ``response.http_version`` says which was used.

Skipped, with the reason, without hypercorn, httpbin or httpx's ``h2`` extra."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import hypercorn_server
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("h2", reason="httpx's http2 extra (h2) is not installed")
hypercorn_asyncio = pytest.importorskip("hypercorn.asyncio", reason="hypercorn is not installed")
hypercorn_config = pytest.importorskip("hypercorn.config")
httpbin = pytest.importorskip("httpbin", reason="httpbin is not installed")

#: Each request's timeout: loopback answers come in milliseconds.
REQUEST_TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def h2bin(identity: tuple[str, str]) -> Iterator[str]:
    """httpbin (a WSGI app) under hypercorn with TLS; ALPN offers h2 and http/1.1."""
    cert, key = identity
    for port in hypercorn_server.serve(httpbin.app, mode="wsgi", certfile=cert, keyfile=key):
        yield f"https://localhost:{port}"


@pytest.fixture(scope="module")
def trust(ca_file: str) -> ssl.SSLContext:
    """The test CA as httpx 0.28 spells a custom CA: an ``ssl.SSLContext``."""
    return ssl.create_default_context(cafile=ca_file)


def test_http2_true_negotiates_http2(hx: ModuleType, h2bin: str, trust: Any) -> None:
    with hx.Client(http2=True, verify=trust, timeout=REQUEST_TIMEOUT_S) as client:
        response = client.get(h2bin + "/get", params={"page": "2"})
    assert response.status_code == 200
    assert response.http_version == "HTTP/2"
    assert response.json()["args"] == {"page": "2"}


def test_without_http2_the_client_speaks_http11(hx: ModuleType, h2bin: str, trust: Any) -> None:
    with hx.Client(verify=trust, timeout=REQUEST_TIMEOUT_S) as client:
        response = client.get(h2bin + "/get")
    assert (response.status_code, response.http_version) == (200, "HTTP/1.1")


def test_async_client_with_http2(hx: ModuleType, h2bin: str, trust: Any) -> None:
    async def main() -> list[tuple[int, str, str]]:
        async with hx.AsyncClient(http2=True, verify=trust, timeout=REQUEST_TIMEOUT_S) as client:
            responses = await asyncio.gather(
                *(client.get(h2bin + f"/anything/{i}") for i in range(8))
            )
        return [(r.status_code, r.http_version, r.json()["url"]) for r in responses]

    results = asyncio.run(main())
    assert [(status, version) for status, version, _ in results] == [(200, "HTTP/2")] * 8
    assert [url.rsplit("/", 1)[1] for _, _, url in results] == [str(i) for i in range(8)]


def test_post_and_headers_over_http2(hx: ModuleType, h2bin: str, trust: Any) -> None:
    with hx.Client(http2=True, verify=trust, timeout=REQUEST_TIMEOUT_S) as client:
        response = client.post(h2bin + "/post", json={"key": "value"}, headers={"X-Doc": "http2"})
    assert response.http_version == "HTTP/2"
    echoed = response.json()
    assert echoed["json"] == {"key": "value"}
    assert echoed["headers"]["X-Doc"] == "http2"
