"""nodelay.ext.httpx and nodelay.ext.httpx2: the engine under httpx's and httpx2's clients.

Every behaviour test runs over both libraries, through nodelay's classes and through the
library's own transport (the oracle: what fails there is a wrong test), against the
embedded server or a scripted one.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
from conftest import expected_bytes
from nodelay import _core
from proxy_server import ProxyServer
from scripted import Recv, ScriptedServer, Send

LIBRARIES = ("httpx", "httpx2")


@dataclass
class Side:
    """The classes a test uses: nodelay's for a library, or the library's own."""

    lib: ModuleType
    name: str
    Client: Any
    AsyncClient: Any
    Transport: Any
    AsyncTransport: Any


def side_for(library: str, name: str) -> Side:
    lib = importlib.import_module(library)
    if name == "own":
        return Side(
            lib, name, lib.Client, lib.AsyncClient, lib.HTTPTransport, lib.AsyncHTTPTransport
        )
    ext = importlib.import_module(f"nodelay.ext.{library}")
    return Side(lib, name, ext.Client, ext.AsyncClient, ext.Transport, ext.AsyncTransport)


@pytest.fixture(
    params=[(lib, name) for lib in LIBRARIES for name in ("nodelay", "own")],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def side(request: pytest.FixtureRequest) -> Side:
    return side_for(*request.param)


@pytest.fixture(params=LIBRARIES)
def ext(request: pytest.FixtureRequest) -> ModuleType:
    """The nodelay bridge module of each library."""
    return importlib.import_module(f"nodelay.ext.{request.param}")


@pytest.fixture(scope="module")
def h2_server() -> Iterator[_core.TestServer]:
    """The embedded server speaking h2c (prior knowledge) next to HTTP/1.1."""
    srv = _core.TestServer("127.0.0.1", 0, 2, http2=True)
    yield srv
    srv.close()


def chunks(*pieces: bytes) -> Iterator[bytes]:
    yield from pieces


async def achunks(*pieces: bytes) -> AsyncIterator[bytes]:
    for piece in pieces:
        await asyncio.sleep(0)
        yield piece


# -- the classes -----------------------------------------------------------------------------------


def test_import_nodelay_imports_neither_library() -> None:
    code = (
        "import sys, nodelay\n"
        "print(sorted(m for m in ('httpx', 'httpx2', 'httpcore', 'httpcore2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("library", LIBRARIES)
def test_missing_library_names_the_extra(library: str) -> None:
    code = (
        f"import sys; sys.modules[{library!r}] = None\n"
        f"try:\n    import nodelay.ext.{library}\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert f"pip install nodelay[{library}]" in out.stdout


def test_classes_are_the_librarys(ext: ModuleType) -> None:
    lib = importlib.import_module(ext.__name__.rsplit(".", 1)[1])
    assert issubclass(ext.Transport, lib.HTTPTransport)
    assert issubclass(ext.AsyncTransport, lib.AsyncHTTPTransport)
    with ext.Client() as client:
        assert isinstance(client, lib.Client)
        assert type(client._transport) is ext.Transport


def test_a_patched_library_method_sees_every_request(
    ext: ModuleType, server: _core.TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tools patch ``HTTPTransport.handle_request`` on the library's class (pytest-httpx,
    vcrpy, OpenTelemetry): requests sent through nodelay's transports go through it."""
    lib = importlib.import_module(ext.__name__.rsplit(".", 1)[1])
    seen: list[str] = []
    shipped = lib.HTTPTransport.handle_request
    shipped_async = lib.AsyncHTTPTransport.handle_async_request

    def handle_request(transport: Any, request: Any) -> Any:
        seen.append(f"sync {request.url.path}")
        return shipped(transport, request)

    async def handle_async_request(transport: Any, request: Any) -> Any:
        seen.append(f"async {request.url.path}")
        return await shipped_async(transport, request)

    with ext.Client() as client:
        assert client.get(f"{server.url}/bytes/3").content == expected_bytes(3)
        monkeypatch.setattr(lib.HTTPTransport, "handle_request", handle_request)
        assert client.get(f"{server.url}/bytes/4").content == expected_bytes(4)
        monkeypatch.setattr(lib.AsyncHTTPTransport, "handle_async_request", handle_async_request)

        async def fetch() -> bytes:
            async with ext.AsyncClient() as aclient:
                return (await aclient.get(f"{server.url}/bytes/5")).content

        assert asyncio.run(fetch()) == expected_bytes(5)
        monkeypatch.undo()
        assert client.get(f"{server.url}/bytes/6").content == expected_bytes(6)
    assert seen == ["sync /bytes/4", "async /bytes/5"]


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_method_patched_before_import_sees_every_request(
    library: str, server: _core.TestServer
) -> None:
    """A tool that patched the library's class before nodelay.ext was imported is honoured
    as well (the transport then always calls the patched method)."""
    program = f"""
import {library} as lib
seen = []
shipped = lib.HTTPTransport.handle_request
def handle_request(transport, request):
    seen.append(request.url.path)
    return shipped(transport, request)
lib.HTTPTransport.handle_request = handle_request
import nodelay.ext.{library} as ext
with ext.Client() as client:
    assert client.get("{server.url}/bytes/7").status_code == 200
print(seen)
"""
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['/bytes/7']"


def test_proxy_transports_are_nodelays(ext: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "internal.example")
    for client in (ext.Client(), ext.Client(proxy="http://127.0.0.1:9", trust_env=False)):
        with client:
            transports = [t for t in client._mounts.values() if t is not None]
            assert transports
            assert all(type(t) is ext.Transport for t in transports)
    client = ext.AsyncClient(mounts={"http://": ext.AsyncTransport()})
    assert all(type(t) is ext.AsyncTransport for t in client._mounts.values() if t is not None)
    assert type(client._transport) is ext.AsyncTransport


def test_unsupported_options_are_refused(ext: ModuleType) -> None:
    with pytest.raises(ValueError, match="socket_options"):
        ext.Transport(socket_options=[(6, 1, 1)])
    with pytest.raises(ValueError, match="http1 and http2"):
        ext.Transport(http1=False)
    lib = importlib.import_module(ext.__name__.rsplit(".", 1)[1])
    with pytest.raises(ValueError, match="headers"):
        ext.Transport(proxy=lib.Proxy("http://127.0.0.1:9", headers={"X-A": "1"}))
    with pytest.raises(ValueError, match="ssl_context"):
        ext.Transport(
            proxy=lib.Proxy("https://127.0.0.1:9", ssl_context=ssl.create_default_context())
        )


# -- exchanges, sync and async ---------------------------------------------------------------------


def test_get(side: Side, server: _core.TestServer) -> None:
    with side.Client() as client:
        response = client.get(f"{server.url}/json/100", headers={"X-Test": "1"})
    assert response.status_code == 200
    assert response.http_version == "HTTP/1.1"
    assert response.reason_phrase == "OK"
    assert response.extensions["http_version"] == b"HTTP/1.1"
    assert response.headers["content-type"] == "application/json"
    assert response.json() == json.loads(response.content)


def test_a_small_async_body_ends_with_its_one_read(server: _core.TestServer) -> None:
    """The asyncio engine reports the end of a body with its last piece (``is_closed``),
    as the blocking one does, so the bridge reads a small body once; the connection is
    back in the pool by then."""
    from nodelay.ext import _engine

    async def read_once() -> tuple[bytes, bool, int]:
        engine = _core.AsyncEngine(_engine.engine_options())
        timeout = (5.0, 5.0, 5.0, 5.0, None)
        stream = await engine.open("GET", f"{server.url}/bytes/202", [], None, timeout)
        piece = await stream.read(_engine.READ_MAX_BYTES, _engine.READ_MIN_BYTES, False)
        return piece, stream.is_closed, engine.idle_connections()

    piece, ended, idle = asyncio.run(read_once())
    assert piece == expected_bytes(202)
    assert ended
    assert idle == 1


def test_async_get(side: Side, server: _core.TestServer) -> None:
    async def main() -> Any:
        async with side.AsyncClient() as client:
            return await client.get(f"{server.url}/bytes/5000")

    response = asyncio.run(main())
    assert response.status_code == 200
    assert response.content == expected_bytes(5000)


def test_request_sent_as_given(side: Side, server: _core.TestServer) -> None:
    with side.Client() as client:
        response = client.post(f"{server.url}/anything?q=1", content=b"abc", headers={"X-A": "b"})
    seen = response.json()
    names = [name for name, _ in seen["headers"]]
    assert seen["method"] == "POST" and seen["query"] == "q=1" and seen["body"] == "abc"
    assert ["x-a", "b"] in seen["headers"]
    # the library's default headers and nothing the engine adds on its own
    assert sorted(names) == sorted(
        ["host", "accept", "accept-encoding", "connection", "user-agent", "content-length", "x-a"]
    )


def test_get_sends_no_body_framing(side: Side, server: _core.TestServer) -> None:
    with side.Client() as client:
        seen = client.get(f"{server.url}/anything").json()
    names = {name for name, _ in seen["headers"]}
    assert "content-length" not in names and "transfer-encoding" not in names


def test_streamed_upload(side: Side, server: _core.TestServer) -> None:
    with side.Client() as client:
        response = client.post(f"{server.url}/echo", content=chunks(b"ab", b"", b"cd" * 50000))
    assert response.content == b"ab" + b"cd" * 50000


def test_async_streamed_upload(side: Side, server: _core.TestServer) -> None:
    async def main() -> Any:
        async with side.AsyncClient() as client:
            return await client.post(f"{server.url}/echo", content=achunks(b"ab", b"cd" * 50000))

    assert asyncio.run(main()).content == b"ab" + b"cd" * 50000


def test_h2_prior_knowledge(side: Side, h2_server: _core.TestServer) -> None:
    with side.Client(http1=False, http2=True) as client:
        plain = client.get(f"{h2_server.url}/bytes/1000")
        streamed = client.post(f"{h2_server.url}/echo", content=chunks(b"ab", b"cd"))
    assert plain.http_version == "HTTP/2" and plain.content == expected_bytes(1000)
    assert streamed.http_version == "HTTP/2" and streamed.content == b"abcd"

    async def main() -> Any:
        async with side.AsyncClient(http1=False, http2=True) as client:
            return await client.post(f"{h2_server.url}/echo", content=achunks(b"ab", b"cd"))

    response = asyncio.run(main())
    assert response.http_version == "HTTP/2" and response.content == b"abcd"


def test_response_streamed_as_it_arrives(side: Side, server: _core.TestServer) -> None:
    interval = 0.3
    with side.Client() as client:
        start = time.monotonic()
        with client.stream("GET", f"{server.url}/drip/4?ms={int(interval * 1000)}") as response:
            pieces = []
            for piece in response.iter_raw():
                pieces.append((time.monotonic() - start, piece))
    assert b"".join(p for _, p in pieces) == b"".join(b"data: %d\n\n" % i for i in range(4))
    # the first event is handed out before the last one was sent (3 intervals later)
    assert pieces[0][0] < 2 * interval < pieces[-1][0]


def test_async_response_streamed(side: Side, server: _core.TestServer) -> None:
    async def main() -> list[str]:
        async with side.AsyncClient() as client:
            async with client.stream("GET", f"{server.url}/drip/3?ms=10") as response:
                return [line async for line in response.aiter_lines() if line]

    assert asyncio.run(main()) == ["data: 0", "data: 1", "data: 2"]


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_content_coding_decoded_by_the_library(
    side: Side, server: _core.TestServer, coding: str
) -> None:
    with side.Client() as client:
        response = client.get(f"{server.url}/{coding}/3000")
    assert response.headers["content-encoding"] == coding
    assert response.content == expected_bytes(3000)
    assert int(response.headers.get("content-length", 0)) != 3000


def test_redirects_cookies_auth_hooks_stay_above(side: Side, server: _core.TestServer) -> None:
    seen: list[str] = []
    with side.Client(
        follow_redirects=True,
        auth=("user", "pass"),
        event_hooks={"request": [lambda request: seen.append(str(request.url))]},
    ) as client:
        redirected = client.get(f"{server.url}/redirect/2")
        client.get(f"{server.url}/cookies/set?flavour=oat")
        cookies = client.get(f"{server.url}/cookies").json()
        headers = dict(client.get(f"{server.url}/anything").json()["headers"])
    assert [r.status_code for r in redirected.history] == [302, 302]
    assert redirected.status_code == 200 and len(seen) >= 3
    assert cookies == {"cookies": {"flavour": "oat"}} or "oat" in json.dumps(cookies)
    assert headers["authorization"].startswith("Basic ")


# -- failures are the library's classes ------------------------------------------------------------


def test_read_timeout(side: Side, server: _core.TestServer) -> None:
    with side.Client(timeout=side.lib.Timeout(5.0, read=0.2)) as client:
        with pytest.raises(side.lib.ReadTimeout):
            client.get(f"{server.url}/delay/3000")

    async def main() -> None:
        async with side.AsyncClient(timeout=0.2) as client:
            await client.get(f"{server.url}/delay/3000")

    with pytest.raises(side.lib.ReadTimeout):
        asyncio.run(main())


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_connect_error(side: Side) -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    with side.Client() as client:
        with pytest.raises(side.lib.ConnectError) as info:
            client.get(url)
    assert info.value.request.url == url


def test_remote_protocol_error(side: Side) -> None:
    with ScriptedServer([Recv(), Send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")]) as srv:
        with side.Client() as client:
            with pytest.raises(side.lib.RemoteProtocolError):
                client.get(srv.url + "/")


def test_truncated_stream_raises_while_iterating(side: Side) -> None:
    with ScriptedServer([Recv(), Send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")]) as srv:
        with side.Client() as client:
            with client.stream("GET", srv.url + "/") as response:
                assert response.status_code == 200
                with pytest.raises(side.lib.RemoteProtocolError):
                    response.read()


# -- transport options -----------------------------------------------------------------------------


def test_uds(side: Side, unix_server: str) -> None:
    with side.Client(transport=side.Transport(uds=unix_server)) as client:
        response = client.get("http://example.org/path")
    assert response.text == "/path example.org unix"


def test_proxy(side: Side, server: _core.TestServer) -> None:
    with ProxyServer(auth=("user", "pa ss")) as proxy:
        with side.Client(proxy=proxy.url_with("user", "pa ss")) as client:
            response = client.get(f"{server.url}/bytes/10")
        assert response.content == expected_bytes(10)
        assert proxy.requests[0].target == f"{server.url}/bytes/10"


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_unreachable_proxy_is_connect_error(side: Side, scheme: str) -> None:
    """A proxy nothing listens on: the library's own transport fails to connect to it
    (ConnectError, not ProxyError), forwarding or tunnelling, and so does nodelay's."""
    with side.Client(proxy=f"http://127.0.0.1:{closed_port()}") as client:
        with pytest.raises(side.lib.ConnectError) as info:
            client.get(f"{scheme}://example.org/")
    assert not isinstance(info.value, side.lib.ProxyError)


def test_refused_tunnel_is_proxy_error(side: Side) -> None:
    """A proxy that answers CONNECT with a refusal: ProxyError, in both transports."""
    with ProxyServer(refuse_connect=403) as proxy:
        with side.Client(proxy=proxy.url) as client:
            with pytest.raises(side.lib.ProxyError):
                client.get("https://example.org/")


def test_verify_ca_file(side: Side, ca_file: str, identity: tuple[str, str]) -> None:
    srv = _core.TestServer("127.0.0.1", 0, 1, tls=True, cert_file=identity[0], key_file=identity[1])
    try:
        url = f"https://localhost:{srv.port}/bytes/3"
        with side.Client(verify=ssl.create_default_context(cafile=ca_file)) as client:
            assert client.get(url).content == b"abc"
        with side.Client() as client:
            with pytest.raises(side.lib.ConnectError):
                client.get(url)
    finally:
        srv.close()


# -- trace extension -------------------------------------------------------------------------------

TRACED = [
    "http11.receive_response_headers.complete",
    "http11.receive_response_body.started",
    "http11.receive_response_body.complete",
    "http11.response_closed.started",
    "http11.response_closed.complete",
]
"""The trace events nodelay's transport reports (the engine connects, sends and reads the
head in one call, so those phases have no events of their own), in httpcore's order."""


def in_order(wanted: list[str], events: list[str]) -> bool:
    remaining = iter(events)
    return all(name in remaining for name in wanted)


def test_trace_events(side: Side, server: _core.TestServer) -> None:
    events: list[str] = []
    heads: list[Any] = []

    def trace(name: str, info: dict[str, Any]) -> None:
        events.append(name)
        if name.endswith("receive_response_headers.complete"):
            heads.append(info["return_value"])

    with side.Client() as client:
        client.get(f"{server.url}/bytes/3", extensions={"trace": trace})
    assert in_order(TRACED, events)
    version, status, reason, headers = heads[0]
    assert (version, status, reason) == (b"HTTP/1.1", 200, b"OK")
    assert (b"content-length", b"3") in [(n.lower(), v) for n, v in headers]


def test_async_trace_events(side: Side, server: _core.TestServer) -> None:
    events: list[str] = []

    async def trace(name: str, info: dict[str, Any]) -> None:
        events.append(name)

    async def main() -> None:
        async with side.AsyncClient() as client:
            await client.get(f"{server.url}/bytes/3", extensions={"trace": trace})

    asyncio.run(main())
    assert in_order(TRACED, events)


# -- the GIL ---------------------------------------------------------------------------------------


def test_gil_released_while_waiting(ext: ModuleType) -> None:
    """The transport waits for the head and for each piece of the body without the GIL
    (tests/test_gil.py's witnesses: a pure-Python thread keeps running, and the scripted
    server, a thread of this process, can send the rest of its answer)."""
    from test_gil import BODY, gil_free, head_then_body, late_answer

    lib = importlib.import_module(ext.__name__.rsplit(".", 1)[1])
    timeout = lib.Timeout(10.0, read=3.0)
    with ScriptedServer(late_answer()) as srv, ext.Client(timeout=timeout) as client:
        with gil_free(f"{ext.__name__}.Client: the response head"):
            assert client.get(srv.url + "/").content == BODY
    with ScriptedServer(head_then_body(BODY, at_once=BODY[:10])) as srv:
        with ext.Client(timeout=timeout) as client, client.stream("GET", srv.url + "/") as r:
            with gil_free(f"{ext.__name__}.Client: the body"):
                assert r.read() == BODY

    async def main() -> bytes:
        async with ext.AsyncClient(timeout=timeout) as client:
            return (await client.get(srv.url + "/")).content  # type: ignore[no-any-return]

    with ScriptedServer(late_answer()) as srv:
        with gil_free(f"{ext.__name__}.AsyncClient: the response head"):
            assert asyncio.run(main()) == BODY
