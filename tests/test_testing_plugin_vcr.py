"""vcrpy over nodelay's own API: ``vcr.VCR(custom_patches=nodelay.testing.VCR_PATCHES)``.
Requests are recorded against a real embedded server, which is then stopped; the same
requests replay from the cassette, and a request the cassette lacks is refused by
vcrpy's record mode, never sent.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nodelay
import nodelay.requests
import pytest
from conftest import expected_bytes
from nodelay import _core
from nodelay._base import BaseClient
from nodelay.testing import VCR_PATCHES

vcr = pytest.importorskip("vcr")


def _observed(response: Any) -> tuple[int, str, bytes, str | None]:
    return (
        response.status_code,
        response.headers.get("content-type"),
        response.content,
        response.headers.get("x-custom"),
    )


def _exchanges(url: str) -> list[tuple[int, str, bytes, str | None]]:
    """The requests of one test run, through each nodelay path."""
    out = []
    with nodelay.Client() as client:
        out.append(_observed(client.get(f"{url}/json/2")))
        out.append(_observed(client.post(f"{url}/echo", content=b"hello cassette")))
        out.append(_observed(client.get(f"{url}/gzip/100")))
        with client.stream("GET", f"{url}/chunked/70000") as response:
            response.read()
            out.append(_observed(response))
        out.extend(_observed(r) for r in client.get_many([f"{url}/bytes/3", f"{url}/bytes/4"]))
    out.append(_observed(nodelay.get(f"{url}/status/404")))
    with nodelay.requests.Session() as session:
        out.append(_observed(session.get(f"{url}/bytes/5")))

    async def in_async() -> Any:
        async with nodelay.AsyncClient() as client:
            return await client.get(f"{url}/bytes/6")

    out.append(_observed(asyncio.run(in_async())))
    return out


RECORDED_REQUESTS = 9


def test_record_then_replay_with_the_server_stopped(tmp_path: Path) -> None:
    my_vcr = vcr.VCR(custom_patches=VCR_PATCHES)
    cassette_path = str(tmp_path / "nodelay.yaml")
    server = _core.TestServer("127.0.0.1", 0, 1)
    url = server.url
    try:
        with my_vcr.use_cassette(cassette_path) as cassette:
            live = _exchanges(url)
            assert len(cassette) == RECORDED_REQUESTS
        assert server.requests() == RECORDED_REQUESTS
    finally:
        server.close()
    with pytest.raises(nodelay.ConnectError):
        nodelay.get(f"{url}/bytes/1")  # the server is gone

    with my_vcr.use_cassette(cassette_path) as cassette:
        replayed = _exchanges(url)
        assert cassette.all_played and cassette.play_count == RECORDED_REQUESTS
    assert replayed == live
    assert live[1][2] == b"hello cassette"
    assert live[2][2] == expected_bytes(100)  # /gzip/100, decoded
    assert live[3][2] == expected_bytes(70000)
    assert BaseClient._intercept is None  # the cassette's patches are undone


def test_the_cassette_holds_the_decoded_body(tmp_path: Path, server: _core.TestServer) -> None:
    cassette_path = tmp_path / "gzip.yaml"
    with vcr.use_cassette(str(cassette_path), custom_patches=VCR_PATCHES):
        live = nodelay.get(f"{server.url}/gzip/300")
    assert live.headers["content-encoding"] == "gzip"
    cassette = vcr.cassette.Cassette.load(path=str(cassette_path))
    (response,) = cassette.responses
    assert response["body"]["string"] == live.content
    assert "Content-Encoding" not in response["headers"]
    assert response["headers"]["Content-Length"] == [str(len(live.content))]
    with vcr.use_cassette(str(cassette_path), custom_patches=VCR_PATCHES):
        replayed = nodelay.get(f"{server.url}/gzip/300")
    assert replayed.content == live.content == expected_bytes(300)
    assert "content-encoding" not in replayed.headers


def test_a_request_the_cassette_lacks_is_refused(tmp_path: Path, server: _core.TestServer) -> None:
    cassette_path = str(tmp_path / "one.yaml")
    with vcr.use_cassette(cassette_path, custom_patches=VCR_PATCHES):
        nodelay.get(f"{server.url}/bytes/2")
    before = server.requests()
    for mode in ("once", "none"):
        with vcr.use_cassette(cassette_path, custom_patches=VCR_PATCHES, record_mode=mode):
            assert nodelay.get(f"{server.url}/bytes/2").content == b"ab"
            with pytest.raises(vcr.errors.CannotOverwriteExistingCassetteException):
                nodelay.get(f"{server.url}/bytes/7")
    assert server.requests() == before


def test_new_episodes_are_added_to_the_cassette(tmp_path: Path, server: _core.TestServer) -> None:
    cassette_path = str(tmp_path / "episodes.yaml")
    with vcr.use_cassette(cassette_path, custom_patches=VCR_PATCHES):
        nodelay.get(f"{server.url}/bytes/2")
    before = server.requests()
    with vcr.use_cassette(
        cassette_path, custom_patches=VCR_PATCHES, record_mode="new_episodes"
    ) as cassette:
        assert nodelay.get(f"{server.url}/bytes/2").content == b"ab"
        assert nodelay.get(f"{server.url}/bytes/3").content == b"abc"
        assert len(cassette) == 2
    assert server.requests() == before + 1


def test_nodelay_mock_can_answer_inside_a_cassette_test(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The innermost seam wins: a cassette entered in a test using ``nodelay_mock``
    records what it sends, then the fixture's patches are back."""
    mock = request.getfixturevalue("nodelay_mock")
    mock.add_response(url="http://api.test/x", text="from the mock")
    assert nodelay.get("http://api.test/x").text == "from the mock"
    with vcr.use_cassette(
        str(tmp_path / "inner.yaml"), custom_patches=VCR_PATCHES, record_mode="none"
    ):
        with pytest.raises(vcr.errors.CannotOverwriteExistingCassetteException):
            nodelay.get("http://api.test/x")
    mock.add_response(url="http://api.test/x", text="again")
    assert nodelay.get("http://api.test/x").text == "again"
