"""``client.build_request(...)`` then ``client.send(request)`` (httpx's two-step API)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import nodelay
import pytest
from conftest import expected_bytes
from nodelay import _core
from scripted import Recv, ScriptedServer, Send, response

pytestmark = pytest.mark.both_drivers


def test_build_request_merges_the_client_defaults(server: _core.TestServer) -> None:
    with nodelay.Client(
        base_url=server.url, params={"a": "1"}, headers={"X-Client": "c"}
    ) as client:
        request = client.build_request(
            "post", "/echo", params={"b": "2"}, headers={"X-Call": "r"}, json={"k": 1}
        )
        assert request.method == "POST"
        assert request.url == f"{server.url}/echo?a=1&b=2"
        assert request.headers["x-client"] == "c" and request.headers["x-call"] == "r"
        assert request.headers["content-type"] == "application/json"
        assert request.content == b'{"k":1}'
        r = client.send(request)
    assert r.status_code == 200 and r.content == b'{"k":1}'
    assert r.request is not None and r.request.url == request.url


def test_changes_made_before_send_are_sent(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        request = client.build_request("GET", f"{server.url}/headers")
        request.headers["X-Added"] = "yes"
        seen = dict(client.send(request).json()["headers"])
        assert seen.get("x-added") == "yes"
        request = client.build_request("POST", f"{server.url}/echo", content=b"old")
        request.content = b"new body"
        assert client.send(request).content == b"new body"


def test_a_request_made_by_hand(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        r = client.send(nodelay.Request("GET", f"{server.url}/bytes/5"))
        assert r.content == expected_bytes(5)
        r = client.send(nodelay.Request("PUT", f"{server.url}/echo", content="é"))
        assert r.content == "é".encode()
        # An empty POST still says Content-Length: 0, as client.post() does.
        assert client.send(nodelay.Request("POST", f"{server.url}/echo")).content == b""


def test_a_streamed_body_is_read_by_send(server: _core.TestServer, tmp_path: Path) -> None:
    payload = bytes(range(256)) * 512
    path = tmp_path / "up.bin"
    path.write_bytes(payload)
    with nodelay.Client() as client, path.open("rb") as f:
        request = client.build_request("PUT", f"{server.url}/echo", content=f)
        with pytest.raises(nodelay.RequestNotRead):  # kept for send, not read into memory
            request.content  # noqa: B018
        assert client.send(request).content == payload


def test_send_options(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(
        [
            Recv(),
            Send(response(302, headers=[("Location", "/next")], reason="Found")),
            Recv(),
            Send(response(200, b"followed")),
            Recv(),
            Send(response(302, headers=[("Location", "/next")], reason="Found")),
        ]
    )
    with nodelay.Client() as client:
        request = client.build_request("GET", srv.url + "/start")
        r = client.send(request, follow_redirects=True)
        assert (r.status_code, r.content, len(r.history)) == (200, b"followed", 1)
        assert client.send(request).status_code == 302  # the client's default: not followed


def test_send_adds_jar_and_request_cookies(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted([Recv(), Send(response(200, b"ok"))])
    with nodelay.Client(cookies={"jar": "1"}) as client:
        request = client.build_request("GET", srv.url, cookies={"call": "2"})
        assert client.send(request, auth=("u", "p")).content == b"ok"
    head = srv.requests[0].lower()
    assert b"cookie: jar=1; call=2\r\n" in head
    assert b"authorization: basic dtpw\r\n" in head


@pytest.mark.sync_only("iter_bytes() is sync streaming; an async response is read with aiter_bytes")
def test_stream_true_returns_before_the_body(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        r = client.send(client.build_request("GET", f"{server.url}/bytes/100000"), stream=True)
        try:
            assert sum(len(c) for c in r.iter_bytes()) == 100_000
        finally:
            r.close()


def test_bad_arguments_fail_before_sending() -> None:
    with nodelay.Client() as client:
        with pytest.raises(TypeError):
            client.build_request("POST", "http://127.0.0.1:1/", content=b"x", json={})
        with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
            client.build_request("GET", "http://127.0.0.1:1/", bogus=1)  # type: ignore[call-arg]
        with pytest.raises(nodelay.UnsupportedProtocol):
            client.send(nodelay.Request("GET", "ftp://127.0.0.1/"))


@pytest.mark.sync_only("drives an AsyncClient itself already")
def test_async_iterable_content_built_then_sent(server: _core.TestServer) -> None:
    import asyncio

    async def pieces():  # type: ignore[no-untyped-def]
        for part in (b"as", b"ync"):
            yield part

    async def main() -> bytes:
        async with nodelay.AsyncClient() as client:
            request = client.build_request("POST", f"{server.url}/echo", content=pieces())
            return (await client.send(request)).content

    assert asyncio.run(main()) == b"async"
