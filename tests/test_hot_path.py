"""``Client.get``'s run-time ``**kwargs`` signature behaves like the typed one."""

from __future__ import annotations

import nodelay
import pytest
from conftest import expected_bytes
from nodelay import _core


def test_get_refuses_arguments_it_does_not_take(client: nodelay.Client) -> None:
    for name in ("json", "content", "data", "files", "bogus"):
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'"):
            client.get("http://127.0.0.1:1/", **{name: b"x"})


def test_get_keyword_arguments_take_the_full_path(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    r = client.get(f"{server.url}/anything", params={"a": "1"}, headers={"X-T": "y"})
    data = r.json()
    assert data["query"] == "a=1"
    assert ["x-t", "y"] in data["headers"]
    assert client.get(f"{server.url}/bytes/9#frag").content == expected_bytes(9)
    with pytest.raises(TypeError):
        client.get()  # type: ignore[call-arg]


# -- the other request methods (session 3: the same run-time ``**kwargs`` path) -------------

_FORM = {"user": "bench", "note": "a b&c"}


def test_every_method_refuses_arguments_it_does_not_take(client: nodelay.Client) -> None:
    url = "http://127.0.0.1:1/"
    for method in ("head", "options", "delete"):
        for name in ("json", "content", "data", "files", "bogus"):
            with pytest.raises(
                TypeError, match=f"{method}\\(\\) got an unexpected keyword argument '{name}'"
            ):
                getattr(client, method)(url, **{name: b"x"})
    for method in ("post", "put", "patch"):
        with pytest.raises(
            TypeError, match=f"{method}\\(\\) got an unexpected keyword argument 'bogus'"
        ):
            getattr(client, method)(url, data=_FORM, bogus=1)
    with pytest.raises(TypeError, match="request\\(\\) got an unexpected keyword argument 'bogus'"):
        client.request("GET", url, bogus=1)


def _echo(response: nodelay.Response) -> tuple[str, str, list[list[str]]]:
    data = response.json()
    return data["method"], data["body"], data["headers"]


@pytest.mark.parametrize("method", ["post", "put", "patch"])
@pytest.mark.parametrize(
    "body", [{"data": _FORM}, {"content": b"raw bytes"}, {"json": {"a": [1, 2.5, None]}}, {}]
)
def test_body_methods_hot_path_sends_what_the_full_path_sends(
    client: nodelay.Client, server: _core.TestServer, method: str, body: dict[str, object]
) -> None:
    url = f"{server.url}/anything"
    fast = getattr(client, method)(url, **body)
    # An empty per-request header mapping changes nothing but takes the full path.
    full = getattr(client, method)(url, headers={}, **body)
    assert type(fast) is nodelay.Response and fast.status_code == 200
    assert _echo(fast) == _echo(full)
    assert fast.request is not None and full.request is not None
    assert fast.request.headers == full.request.headers
    assert fast.request.content == full.request.content


def test_request_hot_path_upper_cases_the_method(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    method, body, _ = _echo(client.request("post", f"{server.url}/anything", data=_FORM))
    assert (method, body) == ("POST", "user=bench&note=a+b%26c")
    assert _echo(client.request("delete", f"{server.url}/anything"))[0] == "DELETE"
    r = client.head(f"{server.url}/bytes/10")
    assert (r.status_code, r.content, r.headers["content-length"]) == (200, b"", "10")


def test_a_form_body_keeps_a_content_type_the_user_set(server: _core.TestServer) -> None:
    with nodelay.Client(headers={"Content-Type": "text/x-mine"}) as client:
        for _ in range(3):
            _, body, headers = _echo(client.post(f"{server.url}/anything", data=_FORM))
            assert ["content-type", "text/x-mine"] in headers
            assert [name for name, _ in headers].count("content-type") == 1
            assert body == "user=bench&note=a+b%26c"


def test_changed_default_headers_are_sent_at_once(server: _core.TestServer) -> None:
    """The engine reuses the encoding of a client's default header list while the list
    holds the same fields: every change must show in the very next request."""
    url = f"{server.url}/anything"
    with nodelay.Client() as client:
        for _ in range(3):
            assert ["x-later", "1"] not in _echo(client.get(url))[2]
        client.headers["X-Later"] = "1"
        assert ["x-later", "1"] in _echo(client.get(url))[2]
        assert ["x-later", "1"] in _echo(client.get(url))[2]
        client.headers["X-Later"] = "2"
        assert ["x-later", "2"] in _echo(client.get(url))[2]
        del client.headers["X-Later"]
        assert "x-later" not in [n for n, _ in _echo(client.get(url))[2]]
        client.headers = {"User-Agent": "mine"}  # type: ignore[assignment]
        headers = _echo(client.get(url))[2]
        assert ["user-agent", "mine"] in headers and ["accept", "*/*"] not in headers
        # A header that cannot be sent is refused however often the list was used before.
        client.headers["X-Bad"] = "a\r\nInjected: 1"
        for _ in range(3):
            with pytest.raises(nodelay.LocalProtocolError):
                client.get(url)
        del client.headers["X-Bad"]
        assert client.get(url).status_code == 200


def test_streamed_pieces_are_the_body(client: nodelay.Client, server: _core.TestServer) -> None:
    """Each piece is read straight into its own bytes object: sizes and content."""
    n = 1_000_003
    with client.stream("GET", f"{server.url}/bytes/{n}") as r:
        pieces = list(r.iter_bytes())
        assert r.is_closed
    assert b"".join(pieces) == expected_bytes(n)
    assert n / len(pieces) >= 64 * 1024  # big on average (test_trickle.py: what has arrived)
    assert all(type(p) is bytes and len(p) <= 256 * 1024 for p in pieces)
    with client.stream("GET", f"{server.url}/bytes/5") as r:
        assert list(r.iter_bytes()) == [expected_bytes(5)]
    with client.stream("GET", f"{server.url}/bytes/0") as r:
        assert list(r.iter_bytes()) == []
    # The connection went back to the pool each time (bodies read to the end).
    assert client._engine.idle_connections() == 1
