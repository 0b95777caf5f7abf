"""Redirect following: history, limits, method changes, credential stripping."""

from __future__ import annotations

import nodelay
import pytest
from nodelay import _core

pytestmark = pytest.mark.both_drivers


def sent(data: dict[str, object], name: str) -> list[str]:
    headers = data["headers"]
    assert isinstance(headers, list)
    return [v for n, v in headers if n == name.lower()]


def redirect_to(server: _core.TestServer, target: str, status: int = 302) -> str:
    from urllib.parse import urlencode

    return f"{server.url}/redirect-to?{urlencode({'url': target, 'status_code': status})}"


def test_not_followed_by_default(server: _core.TestServer, client: nodelay.Client) -> None:
    r = client.get(f"{server.url}/redirect/2")
    assert r.status_code == 302
    assert r.is_redirect and r.has_redirect_location
    assert r.history == []


def test_follow_chain_and_history(server: _core.TestServer, client: nodelay.Client) -> None:
    r = client.get(f"{server.url}/redirect/3", follow_redirects=True)
    assert r.status_code == 200
    assert r.json() == {"redirected": True}
    assert r.url == f"{server.url}/redirect/0"
    assert [h.status_code for h in r.history] == [302, 302, 302]
    assert [h.url for h in r.history] == [
        f"{server.url}/redirect/3",
        f"{server.url}/redirect/2",
        f"{server.url}/redirect/1",
    ]
    assert [len(h.history) for h in r.history] == [0, 1, 2]
    assert r.request is not None and r.request.url == r.url


def test_allow_redirects_alias(server: _core.TestServer, client: nodelay.Client) -> None:
    assert client.get(f"{server.url}/redirect/1", allow_redirects=True).status_code == 200
    with nodelay.Client(follow_redirects=True) as following:
        assert following.get(f"{server.url}/redirect/1").status_code == 200
        r = following.get(f"{server.url}/redirect/1", allow_redirects=False)
        assert r.status_code == 302


def test_session_follows_by_default(server: _core.TestServer) -> None:
    with nodelay.Session() as session:
        assert isinstance(session, nodelay.Client)
        assert session.follow_redirects is True
        r = session.get(f"{server.url}/redirect/2")
        assert r.status_code == 200 and len(r.history) == 2
        assert session.get(f"{server.url}/redirect/2", follow_redirects=False).status_code == 302
    with nodelay.Client() as client:
        assert client.follow_redirects is False


def test_too_many_redirects(server: _core.TestServer) -> None:
    with nodelay.Client(max_redirects=2, follow_redirects=True) as client:
        assert client.get(f"{server.url}/redirect/2").status_code == 200
        with pytest.raises(nodelay.TooManyRedirects) as info:
            client.get(f"{server.url}/redirect/5")
    exc = info.value
    assert exc.url == f"{server.url}/redirect/3"
    assert exc.request is not None and exc.request.url == exc.url
    assert [r.status_code for r in exc.history] == [302, 302, 302]
    assert isinstance(exc, nodelay.RequestError)


def test_default_limit_is_twenty(server: _core.TestServer) -> None:
    with nodelay.Session() as session:
        assert session.max_redirects == 20
        assert len(session.get(f"{server.url}/redirect/20").history) == 20
        with pytest.raises(nodelay.TooManyRedirects):
            session.get(f"{server.url}/redirect/21")


@pytest.mark.parametrize("status", [301, 302, 303])
def test_post_becomes_get_without_body(server: _core.TestServer, status: int) -> None:
    with nodelay.Session() as session:
        r = session.post(redirect_to(server, "/anything/after", status), json={"a": 1})
        data = r.json()
        assert data["method"] == "GET"
        assert data["path"] == "/anything/after"
        assert data["body_len"] == 0
        assert sent(data, "content-type") == []
        assert sent(data, "content-length") == []
        assert r.history[0].status_code == status
        assert r.request is not None and r.request.method == "GET"


@pytest.mark.parametrize("status", [307, 308])
def test_307_308_keep_method_and_body(server: _core.TestServer, status: int) -> None:
    with nodelay.Session() as session:
        data = session.post(
            redirect_to(server, "/anything/kept", status),
            content=b"payload",
            headers={"Content-Type": "text/x"},
        ).json()
        assert data["method"] == "POST"
        assert data["body"] == "payload"
        assert sent(data, "content-type") == ["text/x"]


def test_303_turns_put_into_get(server: _core.TestServer) -> None:
    with nodelay.Session() as session:
        assert (
            session.put(redirect_to(server, "/anything", 303), content=b"x").json()["method"]
            == "GET"
        )
        # 302 keeps PUT (only POST is rewritten for 301/302).
        data = session.put(redirect_to(server, "/anything", 302), content=b"x").json()
        assert data["method"] == "PUT" and data["body"] == "x"


def test_relative_and_absolute_locations(
    server: _core.TestServer, other_server: _core.TestServer
) -> None:
    with nodelay.Session() as session:
        assert session.get(redirect_to(server, "anything/rel")).json()["path"] == "/anything/rel"
        r = session.get(redirect_to(server, f"{other_server.url}/anything/abs"))
        assert r.url == f"{other_server.url}/anything/abs"


def test_credentials_stripped_on_origin_change(
    server: _core.TestServer, other_server: _core.TestServer
) -> None:
    secrets = {"Authorization": "Bearer s3cret", "Cookie": "sid=1", "X-Keep": "k"}
    with nodelay.Session() as session:
        same = session.get(redirect_to(server, "/anything"), headers=secrets).json()
        assert sent(same, "authorization") == ["Bearer s3cret"]
        assert sent(same, "cookie") == ["sid=1"]
        # Hop to another origin, then back: the credentials never come back.
        back = redirect_to(server, "/anything/back")
        away = redirect_to(other_server, back)
        r = session.get(away, headers=secrets)
        data = r.json()
        assert r.url == f"{server.url}/anything/back"
        assert len(r.history) == 2
        assert sent(data, "authorization") == []
        assert sent(data, "cookie") == []
        assert sent(data, "x-keep") == ["k"]


@pytest.mark.parametrize(
    "target", ["file:///etc/passwd", "ftp://127.0.0.1/x", "javascript:alert(1)"]
)
def test_non_http_locations_refused(server: _core.TestServer, target: str) -> None:
    with nodelay.Session() as session, pytest.raises(nodelay.UnsupportedProtocol) as info:
        session.get(redirect_to(server, target))
    assert info.value.url is not None and info.value.url.startswith(target.split(":")[0])
