"""Transports under nodelay's clients: what httpx does not define (the engine as a
transport keeps the hot path, mounts next to the engine, closing) and what the flow
above a transport owes both drivers."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import nodelay
import pytest
from conftest import expected_bytes
from nodelay import _core


def _calls_per_get(client: nodelay.Client, url: str, n: int = 50) -> tuple[int, int]:
    """(Python calls, C calls) per ``client.get(url)`` on a warm connection."""
    client.get(url)
    counts = {"call": 0, "c_call": 0}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event in counts:
            counts[event] += 1

    get = client.get
    sys.setprofile(profile)
    try:
        for _ in range(n):
            get(url)
    finally:
        sys.setprofile(None)
    # The loop's own ``range`` iteration makes no calls; ``sys.setprofile(None)`` is one.
    return counts["call"] // n, (counts["c_call"] - 1) // n


def test_no_transport_and_the_engine_transport_keep_the_hot_path(
    server: _core.TestServer,
) -> None:
    """A client without transports makes as many calls per ``get`` as before transports
    existed: the ``get`` closure, ``Engine.fetch`` and the function that fills the
    ``Response`` the engine allocated (docs/binding.md); ``HTTPTransport`` as
    ``transport=`` makes the same."""
    url = f"{server.url}/bytes/10"
    with nodelay.Client() as client:
        plain = _calls_per_get(client, url)
    assert plain == (2, 1)
    # The engine as a transport is the client's engine: the same hot path.
    with nodelay.Client(transport=nodelay.HTTPTransport()) as client:
        assert client._engine is client._adopted._engine
        assert _calls_per_get(client, url) == plain
    # Any other transport routes through the flow (a mock never reaches the engine).
    mock = nodelay.MockTransport(lambda request: nodelay.Response(200))
    with nodelay.Client(transport=mock) as client:
        assert client._routed and not client._plain
        assert client.get(url).content == b""


def test_mounts_and_the_engine_share_one_client(server: _core.TestServer) -> None:
    mock = nodelay.MockTransport(lambda request: nodelay.Response(200, text="mocked"))
    mounts = {"all://example.org": mock, "http://127.0.0.1": nodelay.HTTPTransport()}
    with nodelay.Client(mounts=mounts) as client:
        assert client.get("http://example.org/").text == "mocked"
        # Matched by no mount: the client's own engine.
        assert client.get(f"{server.url}/bytes/4").content == expected_bytes(4)
        r = client.get(f"{server.url}/anything", params={"a": "1"})
        assert r.json()["query"] == "a=1"
        assert str(r.request.url).endswith("/anything?a=1")


def test_http_transport_mounted_sends_with_the_clients_timeouts(server: _core.TestServer) -> None:
    transport = nodelay.HTTPTransport()
    seen: list[dict[str, Any]] = []

    class Spy(nodelay.BaseTransport):
        def handle_request(self, request: nodelay.Request) -> nodelay.Response:
            seen.append(request.extensions["timeout"])
            return transport.handle_request(request)

    with nodelay.Client(transport=Spy(), timeout=nodelay.Timeout(3.0, connect=1.5)) as client:
        r = client.post(f"{server.url}/anything", json={"k": 1})
    assert r.json()["body"] == '{"k":1}'
    assert seen == [{"connect": 1.5, "read": 3.0, "write": 3.0, "pool": 3.0}]


def test_http_transport_retries_connection_failures_only(unused_port: int) -> None:
    with nodelay.Client(transport=nodelay.HTTPTransport(retries=1)) as client:
        assert not client._adopted and client._routed
        with pytest.raises(nodelay.ConnectError) as caught:
            client.get(f"http://127.0.0.1:{unused_port}/")
    assert caught.value.request is not None


@pytest.fixture
def unused_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_closing_the_client_closes_its_transports() -> None:
    closed: list[str] = []

    class Closing(nodelay.MockTransport):
        def close(self) -> None:
            closed.append("sync")

        async def aclose(self) -> None:
            closed.append("async")

    handler = lambda request: nodelay.Response(204)  # noqa: E731
    client = nodelay.Client(transport=Closing(handler), mounts={"all://a.b": Closing(handler)})
    client.close()
    assert closed == ["sync", "sync"]
    with pytest.raises(RuntimeError, match="Client is closed"):
        client.get("http://a.b/")

    async def main() -> None:
        async with nodelay.AsyncClient(transport=Closing(handler)):
            pass

    asyncio.run(main())
    assert closed[2:] == ["async"]


def test_async_client_runs_the_flow_through_a_transport() -> None:
    """Redirects, cookies and retries by status on the async driver too."""
    calls: list[str] = []

    async def handler(request: nodelay.Request) -> nodelay.Response:
        calls.append(str(request.url))
        if str(request.url).endswith("/start"):
            return nodelay.Response(307, headers={"Location": "/end", "Set-Cookie": "a=1"})
        if len(calls) == 2:
            return nodelay.Response(503, headers={"Retry-After": "0"})
        return nodelay.Response(200, text=request.headers.get("cookie", ""))

    async def main() -> nodelay.Response:
        retry = nodelay.Retry(total=2, status_forcelist=[503], allowed_methods=None)
        transport = nodelay.MockTransport(handler)
        async with nodelay.AsyncClient(
            transport=transport, follow_redirects=True, retries=retry
        ) as client:
            return await client.post("http://h.test/start", content=b"x")

    r = asyncio.run(main())
    assert (r.status_code, r.text) == (200, "a=1")
    assert calls == ["http://h.test/start", "http://h.test/end", "http://h.test/end"]


# -- uds= and local_address= on the engine ---------------------------------------------------


def test_uds_sends_every_request_to_the_unix_socket(unix_server: str) -> None:
    transport = nodelay.HTTPTransport(uds=unix_server)
    with nodelay.Client(transport=transport) as client:
        assert client._adopted is transport  # still the hot path
        assert client.get("http://svc.local/ping?x=1").text == "/ping?x=1 svc.local unix"
        assert client.get("http://other:8080/b").text == "/b other:8080 unix"
        assert client._engine.idle_connections() == 2  # one per origin, both on the socket

    async def main() -> str:
        async with nodelay.AsyncClient(
            transport=nodelay.AsyncHTTPTransport(uds=unix_server)
        ) as client:
            return (await client.get("http://svc.local/a")).text

    assert asyncio.run(main()) == "/a svc.local unix"


def test_uds_to_a_missing_socket_is_a_connect_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "absent.sock")
    with nodelay.Client(transport=nodelay.HTTPTransport(uds=missing)) as client:
        with pytest.raises(nodelay.ConnectError, match=r"absent\.sock"):
            client.get("http://svc.local/")


def test_local_address_binds_the_source_address(tcp_port: int) -> None:
    url = f"http://127.0.0.1:{tcp_port}/"
    with nodelay.Client(transport=nodelay.HTTPTransport(local_address="127.0.0.2")) as client:
        assert client.get(url).text.endswith(" 127.0.0.2")
    with nodelay.Client() as client:
        assert client.get(url).text.endswith(" 127.0.0.1")

    async def main() -> str:
        transport = nodelay.AsyncHTTPTransport(local_address="127.0.0.2")
        async with nodelay.AsyncClient(transport=transport) as client:
            return (await client.get(url)).text

    assert asyncio.run(main()).endswith(" 127.0.0.2")
    with pytest.raises(ValueError, match="local_address"):
        nodelay.HTTPTransport(local_address="not-an-ip")
