"""requests' test tools over the facade ``nodelay.requests``, with the settings
docs/requests-adapter.md gives for it (the facade's classes are not requests', so a tool
that patches requests' classes is pointed at the facade's).

Each test also runs on the real requests with the tool's default setting (the oracle). A
module-scoped embedded server counts the requests that reached it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import expected_bytes
from nodelay import _core

LIBRARIES = ("requests", "nodelay.requests")


@pytest.fixture(scope="module")
def counting_server() -> Iterator[_core.TestServer]:
    srv = _core.TestServer("127.0.0.1", 0, 1)
    yield srv
    srv.close()


@pytest.fixture(params=LIBRARIES)
def requests(request: pytest.FixtureRequest) -> ModuleType:
    """``import requests`` or ``import nodelay.requests as requests``."""
    return importlib.import_module(request.param)


def _responses_mock(responses: Any, requests: ModuleType, **kwargs: Any) -> Any:
    """``responses.RequestsMock`` with the facade's adapter as its target (the setting
    for nodelay.requests), or its defaults for requests."""
    if requests.__name__ == "nodelay.requests":
        send = requests.adapters.HTTPAdapter.send
        kwargs.update(target="nodelay.requests.adapters.HTTPAdapter.send", real_adapter_send=send)
    return responses.RequestsMock(**kwargs)


def test_responses_mock(requests: ModuleType, counting_server: _core.TestServer) -> None:
    responses = pytest.importorskip("responses")
    url = f"{counting_server.url}/bytes/10"
    before = counting_server.requests()
    with _responses_mock(responses, requests) as rsps:
        rsps.add(responses.GET, url, json={"mocked": True}, status=201)
        r = requests.get(url)
        assert r.status_code == 201
        assert r.json() == {"mocked": True}
        assert len(rsps.calls) == 1
    assert counting_server.requests() == before


def test_responses_passthru(requests: ModuleType, counting_server: _core.TestServer) -> None:
    responses = pytest.importorskip("responses")
    before = counting_server.requests()
    with _responses_mock(responses, requests) as rsps:
        rsps.add_passthru(counting_server.url)
        assert requests.get(f"{counting_server.url}/bytes/12").content == expected_bytes(12)
    assert counting_server.requests() == before + 1


def test_responses_cookies_reach_the_session(requests: ModuleType) -> None:
    responses = pytest.importorskip("responses")
    with _responses_mock(responses, requests) as rsps:
        rsps.add(responses.GET, "http://api.test/login", body="ok", headers={"Set-Cookie": "s=1"})
        with requests.Session() as s:
            r = s.get("http://api.test/login")
            assert r.cookies.get("s") == "1"
            assert s.cookies.get("s") == "1"


def test_requests_mock_mounted_adapter(
    requests: ModuleType, counting_server: _core.TestServer
) -> None:
    requests_mock = pytest.importorskip("requests_mock")
    adapter = requests_mock.Adapter()
    adapter.register_uri("GET", "mock://api/thing", text="thing")
    before = counting_server.requests()
    with requests.Session() as s:
        s.mount("mock://", adapter)
        assert s.get("mock://api/thing").text == "thing"
        assert s.get(f"{counting_server.url}/bytes/4").content == expected_bytes(4)
    assert counting_server.requests() == before + 1


def test_vcrpy_records_then_replays_with_the_server_stopped(
    requests: ModuleType, tmp_path: Path
) -> None:
    vcr = pytest.importorskip("vcr")
    from nodelay.testing import VCR_PATCHES

    recorder = vcr.VCR(custom_patches=VCR_PATCHES)
    cassette = str(tmp_path / "cassette.yaml")
    srv = _core.TestServer("127.0.0.1", 0, 1)
    url = f"{srv.url}/bytes/30"
    try:
        with recorder.use_cassette(cassette, record_mode="once"):
            assert requests.get(url).content == expected_bytes(30)
        assert srv.requests() == 1
    finally:
        srv.close()
    with recorder.use_cassette(cassette, record_mode="none"):
        assert requests.get(url).content == expected_bytes(30)
