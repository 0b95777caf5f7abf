"""The tools requests users test and instrument with, over ``nodelay.ext.requests``.

Each test runs a tool's documented usage twice in the same run: on a plain
``requests.Session`` (the oracle) and on ``nodelay.ext.requests.Session``. A module-scoped
embedded server counts the requests it served, which shows that a mocked request never
reached the network and that a passed-through one did.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from conftest import expected_bytes
from nodelay import _core
from nodelay.ext._requests_body import EngineBody
from nodelay.ext.requests import Adapter, Session

SESSIONS = ("requests", "nodelay")


def _sent_by_engine(r: requests.Response) -> bool:
    """Whether nodelay's engine carried ``r`` (its body reader is the engine's)."""
    return isinstance(getattr(r.raw, "_original_response", None), EngineBody)


@pytest.fixture(scope="module")
def counting_server() -> Iterator[_core.TestServer]:
    """An embedded server of this module's own: ``requests()`` counts what reached it."""
    srv = _core.TestServer("127.0.0.1", 0, 1)
    yield srv
    srv.close()


@pytest.fixture(params=SESSIONS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _mount_if_nodelay(session: requests.Session, kind: str) -> requests.Session:
    """A session of any requests.Session class, with nodelay's adapter for the nodelay run."""
    if kind == "nodelay":
        session.mount("http://", Adapter())
        session.mount("https://", Adapter())
    session.trust_env = False
    return session


@pytest.fixture
def session(kind: str) -> Iterator[requests.Session]:
    s = requests.Session() if kind == "requests" else Session()
    s.trust_env = False
    with s:
        yield s


# -- responses --------------------------------------------------------------------------------


def test_responses_activate(session: requests.Session, counting_server: _core.TestServer) -> None:
    responses = pytest.importorskip("responses")
    url = f"{counting_server.url}/bytes/10"
    before = counting_server.requests()

    @responses.activate
    def run() -> None:
        responses.add(responses.GET, url, json={"mocked": True}, status=201)
        r = session.get(url)
        assert r.status_code == 201
        assert r.json() == {"mocked": True}
        assert len(responses.calls) == 1

    run()
    assert counting_server.requests() == before


def test_responses_passthru_reaches_the_server(
    session: requests.Session, counting_server: _core.TestServer
) -> None:
    responses = pytest.importorskip("responses")
    before = counting_server.requests()
    with responses.RequestsMock() as rsps:
        rsps.add_passthru(counting_server.url)
        r = session.get(f"{counting_server.url}/bytes/12")
        assert r.content == expected_bytes(12)
        assert _sent_by_engine(r) == isinstance(session, Session)
    assert counting_server.requests() == before + 1


def test_responses_unmatched_is_connection_error(session: requests.Session) -> None:
    responses = pytest.importorskip("responses")
    with responses.RequestsMock(assert_all_requests_are_fired=False):
        with pytest.raises(requests.exceptions.ConnectionError):
            session.get("http://127.0.0.1:9/nothing")


# -- requests-mock ----------------------------------------------------------------------------


def test_requests_mock_mocker(session: requests.Session, counting_server: _core.TestServer) -> None:
    requests_mock = pytest.importorskip("requests_mock")
    url = f"{counting_server.url}/bytes/10"
    before = counting_server.requests()
    with requests_mock.Mocker() as m:
        m.get(url, text="mocked")
        assert session.get(url).text == "mocked"
        assert m.call_count == 1
    assert counting_server.requests() == before


def test_requests_mock_real_http(
    session: requests.Session, counting_server: _core.TestServer
) -> None:
    requests_mock = pytest.importorskip("requests_mock")
    before = counting_server.requests()
    with requests_mock.Mocker(real_http=True) as m:
        m.get(f"{counting_server.url}/mocked", text="mocked")
        assert session.get(f"{counting_server.url}/mocked").text == "mocked"
        real = session.get(f"{counting_server.url}/bytes/9")
        assert real.content == expected_bytes(9)
        assert _sent_by_engine(real) == isinstance(session, Session)
    assert counting_server.requests() == before + 1


def test_requests_mock_fixture(
    requests_mock: object, session: requests.Session, counting_server: _core.TestServer
) -> None:
    url = f"{counting_server.url}/bytes/10"
    before = counting_server.requests()
    requests_mock.get(url, json={"from": "fixture"})  # type: ignore[attr-defined]
    assert session.get(url).json() == {"from": "fixture"}
    assert counting_server.requests() == before


def test_requests_mock_mounted_adapter(
    session: requests.Session, counting_server: _core.TestServer
) -> None:
    requests_mock = pytest.importorskip("requests_mock")
    adapter = requests_mock.Adapter()
    session.mount("mock://", adapter)
    adapter.register_uri("GET", "mock://api/thing", text="thing")
    before = counting_server.requests()
    assert session.get("mock://api/thing").text == "thing"
    real = session.get(f"{counting_server.url}/bytes/4")
    assert real.content == expected_bytes(4)
    assert _sent_by_engine(real) == isinstance(session, Session)
    assert counting_server.requests() == before + 1


# -- vcrpy ------------------------------------------------------------------------------------


def test_vcrpy_records_then_replays_with_the_server_stopped(kind: str, tmp_path: Path) -> None:
    vcr = pytest.importorskip("vcr")
    cassette = str(tmp_path / "cassette.yaml")
    srv = _core.TestServer("127.0.0.1", 0, 1)
    url = f"{srv.url}/bytes/30"
    try:
        with vcr.use_cassette(cassette, record_mode="once"):
            with _mount_if_nodelay(requests.Session(), kind) as s:
                recorded = s.get(url)
                assert recorded.content == expected_bytes(30)
                # vcrpy records at urllib3's connections: the adapter hands it the request.
                assert not _sent_by_engine(recorded)
        assert srv.requests() == 1
    finally:
        srv.close()
    assert Path(cassette).exists()
    with vcr.use_cassette(cassette, record_mode="none"):
        with _mount_if_nodelay(requests.Session(), kind) as s:
            assert s.get(url).content == expected_bytes(30)


# -- requests-cache ---------------------------------------------------------------------------


def test_requests_cache_cached_session(kind: str, counting_server: _core.TestServer) -> None:
    requests_cache = pytest.importorskip("requests_cache")
    url = f"{counting_server.url}/bytes/11"
    before = counting_server.requests()
    with _mount_if_nodelay(requests_cache.CachedSession(backend="memory"), kind) as s:
        first = s.get(url)
        second = s.get(url)
        assert _sent_by_engine(first) == (kind == "nodelay")
    assert first.content == second.content == expected_bytes(11)
    assert not first.from_cache
    assert second.from_cache
    assert counting_server.requests() == before + 1


# -- hishel -----------------------------------------------------------------------------------


def test_hishel_cache_adapter(kind: str, counting_server: _core.TestServer, tmp_path: Path) -> None:
    hishel_requests = pytest.importorskip("hishel.requests")
    hishel = pytest.importorskip("hishel")
    if kind == "nodelay":

        class CacheAdapter(hishel_requests.CacheAdapter, Adapter):  # type: ignore[misc, name-defined]
            """hishel's cache over nodelay's adapter (its misses go through ``Adapter``)."""

        adapter_class = CacheAdapter
    else:
        adapter_class = hishel_requests.CacheAdapter
    url = f"{counting_server.url}/bytes/13"
    before = counting_server.requests()
    with requests.Session() as s:
        s.trust_env = False
        adapter = adapter_class(storage=hishel.SqliteStorage(database_path=tmp_path / "h.db"))
        s.mount("http://", adapter)
        first = s.get(url)
        second = s.get(url)
    assert first.content == second.content == expected_bytes(13)
    assert isinstance(adapter, Adapter) == (kind == "nodelay")
    assert first.headers["X-Hishel-From-Cache"] == "false"
    assert second.headers["X-Hishel-From-Cache"] == "true"
    assert counting_server.requests() == before + 1


# -- OpenTelemetry ----------------------------------------------------------------------------


def test_opentelemetry_requests_instrumentation(
    session: requests.Session, counting_server: _core.TestServer
) -> None:
    instrumentation = pytest.importorskip("opentelemetry.instrumentation.requests")
    sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
    export = pytest.importorskip("opentelemetry.sdk.trace.export")
    in_memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")
    exporter = in_memory.InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    instrumentor = instrumentation.RequestsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        r = session.get(f"{counting_server.url}/headers")
        assert _sent_by_engine(r) == isinstance(session, Session)
    finally:
        instrumentor.uninstrument()
    (span,) = exporter.get_finished_spans()
    assert span.name == "GET"
    attributes = dict(span.attributes or {})
    status = attributes.get("http.response.status_code", attributes.get("http.status_code"))
    assert status == 200
    # The trace context was propagated through the transport to the server.
    sent = {name.lower(): value for name, value in r.json()["headers"].items()}
    assert "traceparent" in sent
    assert f"{span.context.trace_id:032x}" in str(sent["traceparent"])
