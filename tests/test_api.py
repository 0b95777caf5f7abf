"""Module-level helpers: ``nodelay.get`` and friends."""

from __future__ import annotations

import nodelay
import pytest
from nodelay import _core


@pytest.mark.parametrize(
    ("func", "method"),
    [
        (nodelay.get, "GET"),
        (nodelay.options, "OPTIONS"),
        (nodelay.delete, "DELETE"),
        (nodelay.post, "POST"),
        (nodelay.put, "PUT"),
        (nodelay.patch, "PATCH"),
    ],
)
def test_helpers(server: _core.TestServer, func: object, method: str) -> None:
    r = func(f"{server.url}/anything/api", params={"p": "1"}, headers={"X-A": "b"})  # type: ignore[operator]
    data = r.json()
    assert data["method"] == method
    assert data["path"] == "/anything/api"
    assert data["query"] == "p=1"
    assert ["x-a", "b"] in data["headers"]


def test_head(server: _core.TestServer) -> None:
    r = nodelay.head(f"{server.url}/bytes/10")
    assert r.status_code == 200 and r.content == b""
    assert r.headers["content-length"] == "10"


def test_request_with_bodies(server: _core.TestServer) -> None:
    url = f"{server.url}/anything"
    assert nodelay.request("POST", url, content=b"abc").json()["body"] == "abc"
    assert nodelay.post(url, data={"a": "1"}).json()["body"] == "a=1"
    assert nodelay.put(url, json={"a": 1}).json()["body"] == '{"a":1}'
    assert nodelay.patch(url, content="é").json()["body"] == "é"


def test_helpers_do_not_follow_redirects_by_default(server: _core.TestServer) -> None:
    r = nodelay.get(f"{server.url}/redirect/1")
    assert r.status_code == 302 and r.has_redirect_location
    followed = nodelay.get(f"{server.url}/redirect/1", follow_redirects=True)
    assert followed.status_code == 200 and len(followed.history) == 1
    alias = nodelay.get(f"{server.url}/redirect/1", allow_redirects=True)
    assert alias.status_code == 200


def test_helpers_timeout(server: _core.TestServer) -> None:
    with pytest.raises(nodelay.ReadTimeout) as info:
        nodelay.get(f"{server.url}/delay/2000", timeout=0.2)
    assert info.value.request is not None
    assert info.value.url == f"{server.url}/delay/2000"


def test_helpers_reject_unknown_keywords_before_sending(server: _core.TestServer) -> None:
    before = server.requests()
    with pytest.raises(TypeError, match="bogus"):
        nodelay.get(f"{server.url}/bytes/1", bogus=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="content"):
        nodelay.get(f"{server.url}/bytes/1", content=b"x")  # type: ignore[call-arg]
    for func in (nodelay.head, nodelay.options, nodelay.delete):
        with pytest.raises(TypeError, match="json"):
            func(f"{server.url}/bytes/1", json={})  # type: ignore[operator]
    assert server.requests() == before


def test_helpers_pass_client_options_to_the_throwaway_client(server: _core.TestServer) -> None:
    # verify/cert/trust_env/proxy configure the client; a bad proxy URL fails there.
    with pytest.raises(ValueError, match="proxy"):
        nodelay.get(f"{server.url}/bytes/1", proxy="ftp://nowhere:1")
    r = nodelay.post(f"{server.url}/anything", content=b"ab", trust_env=False, verify=False)
    assert r.json()["body"] == "ab"
