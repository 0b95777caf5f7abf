"""Event hooks (httpx's ``event_hooks``) and ``Client(max_decoded_size=)``."""

from __future__ import annotations

import nodelay
import pytest
from nodelay import _core

pytestmark = pytest.mark.both_drivers


def test_hooks_see_the_request_then_the_response(server: _core.TestServer) -> None:
    seen: list[tuple[str, object]] = []

    def on_request(request: nodelay.Request) -> None:
        seen.append(("request", (request.method, request.url)))

    def on_response(response: nodelay.Response) -> None:
        seen.append(("response", (response.status_code, response.request.url)))

    url = f"{server.url}/bytes/3"
    with nodelay.Client(event_hooks={"request": [on_request], "response": [on_response]}) as c:
        c.get(url)  # the no-argument fast path too
        c.post(f"{server.url}/echo", content=b"x")
    assert seen == [
        ("request", ("GET", url)),
        ("response", (200, url)),
        ("request", ("POST", f"{server.url}/echo")),
        ("response", (200, f"{server.url}/echo")),
    ]


def test_response_hook_may_raise_for_status(server: _core.TestServer) -> None:
    def check(response: nodelay.Response) -> None:
        response.raise_for_status()

    with nodelay.Client(event_hooks={"response": [check]}) as client:
        with pytest.raises(nodelay.HTTPStatusError) as info:
            client.get(f"{server.url}/status/404")
        assert info.value.response.status_code == 404
        with pytest.raises(nodelay.HTTPStatusError):
            with client.stream("GET", f"{server.url}/status/500"):
                pass
        assert client.get(f"{server.url}/status/200").status_code == 200


def test_event_hooks_are_mutable(server: _core.TestServer) -> None:
    calls: list[str] = []
    with nodelay.Client() as client:
        assert client.event_hooks == {"request": [], "response": []}
        client.get(f"{server.url}/bytes/1")
        client.event_hooks["request"].append(lambda r: calls.append("in place"))
        client.get(f"{server.url}/bytes/1")
        client.event_hooks = {"response": [lambda r: calls.append("assigned")]}
        client.get(f"{server.url}/bytes/1")
        assert client.event_hooks["request"] == []
        with pytest.raises(ValueError, match="unknown event hook"):
            client.event_hooks = {"requests": []}
    assert calls == ["in place", "assigned"]


def test_request_hook_can_add_a_header(server: _core.TestServer) -> None:
    def sign(request: nodelay.Request) -> None:
        request.headers["X-Signature"] = "abc"

    with nodelay.Client(event_hooks={"request": [sign]}) as client:
        r = client.get(f"{server.url}/headers")
    assert r.json()["headers"]["x-signature"] == "abc"
    assert r.request.headers["X-Signature"] == "abc"


def test_hooks_run_for_every_redirect_hop(server: _core.TestServer) -> None:
    statuses: list[int] = []
    with nodelay.Client(
        follow_redirects=True, event_hooks={"response": [lambda r: statuses.append(r.status_code)]}
    ) as client:
        r = client.get(f"{server.url}/redirect/2")
    assert r.status_code == 200
    assert statuses == [302, 302, 200]


def test_max_decoded_size_bounds_a_decompressed_body(server: _core.TestServer) -> None:
    with nodelay.Client(max_decoded_size=1000) as client:
        assert len(client.get(f"{server.url}/gzip/1000").content) == 1000
        with pytest.raises(nodelay.DecodingError):
            client.get(f"{server.url}/gzip/5000")
    with nodelay.Client() as client:
        assert len(client.get(f"{server.url}/gzip/5000").content) == 5000
