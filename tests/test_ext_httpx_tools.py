"""The tools that ride on httpx's and httpx2's transport seam keep working with nodelay's
engine under the client: respx, pytest-httpx, vcrpy, OpenTelemetry's httpx
instrumentation and hishel's cache transport, each used as its documentation shows,
against real local servers. Each test runs with nodelay's classes and with the library's
own (the oracle), over every library the tool supports.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import expected_bytes
from nodelay import _core
from test_ext_httpx import Side, side_for

SIDES = ("nodelay", "own")


def sides(*libraries: str) -> Any:
    """``side`` parameters: each library the tool supports, by nodelay's classes and the
    library's own."""
    return pytest.mark.parametrize(
        "side",
        [side_for(lib, name) for lib in libraries for name in SIDES],
        ids=[f"{lib}-{name}" for lib in libraries for name in SIDES],
    )


@pytest.fixture
def own_server() -> Iterator[_core.TestServer]:
    """An embedded server of the test's own (the vcrpy test stops it)."""
    srv = _core.TestServer("127.0.0.1", 0, 1)
    yield srv
    srv.close()


# -- respx -----------------------------------------------------------------------------------------


@sides("httpx")
def test_respx_mocks_and_passes_through(side: Side, server: _core.TestServer) -> None:
    """respx's ``using="httpx"`` mocker (which patches the client's transport lookup)
    answers mocked routes and passes the rest through to the client's transport."""
    import respx

    with respx.mock(using="httpx", assert_all_called=True) as mock:
        route = mock.get("https://api.example.org/users/1").respond(200, json={"id": 1})
        mock.route(host="127.0.0.1").pass_through()
        with side.Client() as client:
            assert client.get("https://api.example.org/users/1").json() == {"id": 1}
            real = client.get(f"{server.url}/bytes/20")
    assert route.call_count == 1
    assert real.content == expected_bytes(20)


@sides("httpx")
def test_respx_async(side: Side) -> None:
    import respx

    async def main() -> Any:
        async with side.AsyncClient() as client:
            return await client.post("https://api.example.org/items", json={"a": 1})

    with respx.mock(using="httpx") as mock:
        mock.post("https://api.example.org/items").respond(201, text="made")
        response = asyncio.run(main())
    assert (response.status_code, response.text) == (201, "made")


# -- pytest-httpx ----------------------------------------------------------------------------------


@sides("httpx")
def test_pytest_httpx_mocks(side: Side, httpx_mock: Any) -> None:
    """pytest-httpx patches ``httpx.HTTPTransport.handle_request``, which nodelay's
    transport inherits: its mock answers."""
    httpx_mock.add_response(url="https://test_url/", json={"abc": "def"})
    with side.Client() as client:
        assert client.get("https://test_url/").json() == {"abc": "def"}


@sides("httpx")
def test_pytest_httpx_mocks_async(side: Side, httpx_mock: Any) -> None:
    httpx_mock.add_response(url="https://test_url/", status_code=418)

    async def main() -> int:
        async with side.AsyncClient() as client:
            return (await client.get("https://test_url/")).status_code  # type: ignore[no-any-return]

    assert asyncio.run(main()) == 418


# -- vcrpy -----------------------------------------------------------------------------------------


@sides("httpx", "httpx2")
def test_vcrpy_records_then_replays_offline(
    side: Side, own_server: _core.TestServer, tmp_path: Path
) -> None:
    import vcr

    cassette = str(tmp_path / "cassette.yaml")
    url = f"{own_server.url}/json/200"
    with vcr.use_cassette(cassette, record_mode="once"):
        with side.Client() as client:
            recorded = client.get(url)
    assert recorded.status_code == 200
    assert Path(cassette).read_text().count("uri:") == 1
    own_server.close()  # from here the network answers nothing

    with vcr.use_cassette(cassette, record_mode="none") as played:
        with side.Client() as client:
            replayed = client.get(url)
    assert played.play_count == 1
    assert replayed.status_code == 200 and replayed.content == recorded.content
    with side.Client() as client, pytest.raises(side.lib.ConnectError):
        client.get(url)  # the server is really gone


@sides("httpx", "httpx2")
def test_vcrpy_async(side: Side, own_server: _core.TestServer, tmp_path: Path) -> None:
    import vcr

    cassette = str(tmp_path / "cassette.yaml")
    url = f"{own_server.url}/bytes/64"

    async def get() -> Any:
        async with side.AsyncClient() as client:
            return await client.get(url)

    with vcr.use_cassette(cassette):
        recorded = asyncio.run(get())
    own_server.close()
    with vcr.use_cassette(cassette, record_mode="none"):
        replayed = asyncio.run(get())
    assert recorded.content == replayed.content == expected_bytes(64)


# -- OpenTelemetry ---------------------------------------------------------------------------------


def _instrumentor(side: Side) -> Any:
    from opentelemetry.instrumentation import httpx as otel_httpx

    name = (
        "HTTPX2ClientInstrumentor" if side.lib.__name__ == "httpx2" else "HTTPXClientInstrumentor"
    )
    return getattr(otel_httpx, name)


@pytest.fixture
def spans() -> Iterator[Any]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    exporter.provider = provider  # type: ignore[attr-defined]
    yield exporter
    exporter.clear()


def _span_facts(span: Any) -> tuple[str, int]:
    attributes = span.attributes
    url = attributes.get("url.full") or attributes.get("http.url")
    status = attributes.get("http.response.status_code") or attributes.get("http.status_code")
    return url, status


@sides("httpx", "httpx2")
def test_opentelemetry_instrumentor(side: Side, server: _core.TestServer, spans: Any) -> None:
    """``HTTPXClientInstrumentor().instrument()`` wraps ``HTTPTransport.handle_request`` on
    the class: a span for each request through nodelay's transport."""
    instrumentor = _instrumentor(side)()
    instrumentor.instrument(tracer_provider=spans.provider)
    try:
        with side.Client() as client:
            client.get(f"{server.url}/status/404")

        async def main() -> None:
            async with side.AsyncClient() as client:
                await client.get(f"{server.url}/bytes/3")

        asyncio.run(main())
    finally:
        instrumentor.uninstrument()
    finished = spans.get_finished_spans()
    assert [_span_facts(s) for s in finished] == [
        (f"{server.url}/status/404", 404),
        (f"{server.url}/bytes/3", 200),
    ]
    assert finished[0].name == "GET"


@sides("httpx", "httpx2")
def test_opentelemetry_instrument_client(side: Side, server: _core.TestServer, spans: Any) -> None:
    instrumentor = _instrumentor(side)
    with side.Client() as client:
        instrumentor.instrument_client(client, tracer_provider=spans.provider)
        client.get(f"{server.url}/bytes/3")
    assert [_span_facts(s) for s in spans.get_finished_spans()] == [(f"{server.url}/bytes/3", 200)]


# -- hishel ----------------------------------------------------------------------------------------


@sides("httpx", "httpx2")
def test_hishel_cache_transport_wraps_the_transport(
    side: Side, own_server: _core.TestServer, tmp_path: Path
) -> None:
    import hishel

    cache = importlib.import_module(f"hishel.{side.lib.__name__}")
    storage = hishel.SqliteStorage(database_path=str(tmp_path / "cache.db"))
    transport = cache.CacheTransport(next_transport=side.Transport(), storage=storage)
    url = f"{own_server.url}/bytes/100"
    with side.lib.Client(transport=transport) as client:
        first = client.get(url)
        second = client.get(url)
    assert first.content == second.content == expected_bytes(100)
    assert not first.extensions["caching"]["from_cache"]
    assert second.extensions["caching"]["from_cache"]
    assert own_server.requests() == 1


@sides("httpx", "httpx2")
def test_hishel_async(side: Side, own_server: _core.TestServer, tmp_path: Path) -> None:
    import hishel

    cache = importlib.import_module(f"hishel.{side.lib.__name__}")
    url = f"{own_server.url}/bytes/10"

    async def main() -> list[bool]:
        storage = hishel.AsyncSqliteStorage(database_path=str(tmp_path / "cache.db"))
        transport = cache.AsyncCacheTransport(next_transport=side.AsyncTransport(), storage=storage)
        async with side.lib.AsyncClient(transport=transport) as client:
            responses = [await client.get(url) for _ in range(2)]
        return [r.extensions["caching"]["from_cache"] for r in responses]

    assert asyncio.run(main()) == [False, True]
    assert own_server.requests() == 1
