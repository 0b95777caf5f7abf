"""``Client`` against the embedded server: methods, URLs, params, headers, bodies."""

from __future__ import annotations

import json
from typing import Any

import nodelay
import pytest
from conftest import expected_bytes
from nodelay import _core

pytestmark = pytest.mark.both_drivers

METHODS = ["GET", "HEAD", "OPTIONS", "DELETE", "POST", "PUT", "PATCH"]


def sent_headers(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The header list ``/anything`` reports (lowercase names, in received order)."""
    return [(name, value) for name, value in data["headers"]]


def sent(data: dict[str, Any], name: str) -> list[str]:
    return [v for n, v in sent_headers(data) if n == name.lower()]


def test_get_bytes(server: _core.TestServer, client: nodelay.Client) -> None:
    r = client.get(f"{server.url}/bytes/1000")
    assert r.status_code == 200
    assert r.content == expected_bytes(1000)
    assert r.headers["content-length"] == "1000"
    assert r.headers["Content-Length"] == "1000"
    assert r.http_version == "HTTP/1.1"
    assert r.reason_phrase == "OK"
    assert r.url == f"{server.url}/bytes/1000"
    assert r.elapsed.total_seconds() > 0
    assert r.request is not None
    assert r.request.method == "GET" and r.request.url == r.url
    assert r.history == []
    assert repr(r) == "<Response [200 OK]>"


@pytest.mark.parametrize("n", [0, 1, 35, 36, 37, 65536, 1_000_003])
def test_sizes(server: _core.TestServer, client: nodelay.Client, n: int) -> None:
    assert client.get(f"{server.url}/bytes/{n}").content == expected_bytes(n)
    assert client.get(f"{server.url}/chunked/{n}").content == expected_bytes(n)


def test_json(server: _core.TestServer, client: nodelay.Client) -> None:
    r = client.get(f"{server.url}/json/300")
    assert len(r.content) >= 300
    assert r.json()["ok"] is True
    assert json.loads(r.text)["ok"] is True


@pytest.mark.parametrize("method", METHODS)
def test_every_method(server: _core.TestServer, client: nodelay.Client, method: str) -> None:
    r = client.request(method, f"{server.url}/anything/m")
    assert r.status_code == 200
    if method == "HEAD":
        assert r.content == b""
        return
    data = r.json()
    assert data["method"] == method
    assert data["path"] == "/anything/m"
    if method in ("POST", "PUT", "PATCH"):
        assert sent(data, "content-length") == ["0"]
    else:
        assert sent(data, "content-length") == []


def test_method_helpers(server: _core.TestServer, client: nodelay.Client) -> None:
    url = f"{server.url}/anything"
    assert client.get(url).json()["method"] == "GET"
    assert client.options(url).json()["method"] == "OPTIONS"
    assert client.delete(url).json()["method"] == "DELETE"
    assert client.head(url).status_code == 200
    for helper, method in ((client.post, "POST"), (client.put, "PUT"), (client.patch, "PATCH")):
        data = helper(url, content=b"xyz").json()
        assert data["method"] == method
        assert data["body"] == "xyz"


def test_lowercase_method_is_uppercased(server: _core.TestServer, client: nodelay.Client) -> None:
    assert client.request("post", f"{server.url}/anything").json()["method"] == "POST"


def test_default_headers(server: _core.TestServer, client: nodelay.Client) -> None:
    data = client.get(f"{server.url}/anything").json()
    names = [n for n, _ in sent_headers(data)]
    assert names[0] == "host"
    assert sent_headers(data)[1:4] == [
        ("user-agent", f"nodelay/{nodelay.__version__}"),
        ("accept", "*/*"),
        ("accept-encoding", "gzip, deflate, br, zstd"),
    ]
    assert client.headers == {
        "User-Agent": f"nodelay/{nodelay.__version__}",
        "Accept": "*/*",
        "Accept-Encoding": "gzip, deflate, br, zstd",
    }


def test_client_headers_override_in_place(server: _core.TestServer) -> None:
    with nodelay.Client(headers={"X-Client": "c", "user-agent": "mine/1"}) as client:
        assert client.headers.raw == [
            ("user-agent", "mine/1"),
            ("Accept", "*/*"),
            ("Accept-Encoding", "gzip, deflate, br, zstd"),
            ("X-Client", "c"),
        ]
        data = client.get(f"{server.url}/anything").json()
        assert sent_headers(data)[1:] == [
            ("user-agent", "mine/1"),
            ("accept", "*/*"),
            ("accept-encoding", "gzip, deflate, br, zstd"),
            ("x-client", "c"),
        ]
        data = client.get(
            f"{server.url}/anything",
            headers={"x-CLIENT": "r", "Accept": None, "X-Extra": "e"},
        ).json()
        assert sent_headers(data)[1:] == [
            ("user-agent", "mine/1"),
            ("accept-encoding", "gzip, deflate, br, zstd"),
            ("x-client", "r"),
            ("x-extra", "e"),
        ]
        # Per-request headers did not leak into the client.
        assert client.headers["x-client"] == "c"
        data = client.get(
            f"{server.url}/anything", headers=[("X-Multi", "1"), ("x-multi", "2")]
        ).json()
        assert sent(data, "x-multi") == ["1", "2"]


def test_mutating_client_headers_applies_to_next_request(
    server: _core.TestServer, client: nodelay.Client
) -> None:
    first = client.get(f"{server.url}/anything")
    client.headers["X-Later"] = "yes"
    data = client.get(f"{server.url}/anything").json()
    assert sent(data, "x-later") == ["yes"]
    assert first.request is not None and "x-later" not in first.request.headers
    del client.headers["X-Later"]
    assert sent(client.get(f"{server.url}/anything").json(), "x-later") == []
    client.headers = {"Only": "this"}
    data = client.get(f"{server.url}/anything").json()
    assert [n for n, _ in sent_headers(data)] == ["host", "only"]


def test_response_headers_case_insensitive(
    server: _core.TestServer, client: nodelay.Client
) -> None:
    r = client.post(f"{server.url}/echo", content=b"x", headers={"Content-Type": "a/b"})
    assert r.headers["CONTENT-TYPE"] == "a/b"
    assert r.headers["x-echo-method"] == "POST"
    assert r.headers.get("X-Echo-Method") == "POST"
    assert "X-ECHO-METHOD" in r.headers


def test_params(server: _core.TestServer) -> None:
    with nodelay.Client(params={"a": "1", "b": "2"}) as client:
        data = client.get(f"{server.url}/anything?x=0", params={"b": "3", "c": ["4", "5"]}).json()
        assert data["query"] == "x=0&a=1&b=3&c=4&c=5"
        assert client.get(f"{server.url}/anything").json()["query"] == "a=1&b=2"
        assert client.params == (("a", "1"), ("b", "2"))
        client.params = None
        assert client.get(f"{server.url}/anything").json()["query"] == ""


def test_params_forms(server: _core.TestServer, client: nodelay.Client) -> None:
    url = f"{server.url}/anything"
    assert client.get(url, params="q=a+b&r=1").json()["query"] == "q=a+b&r=1"
    assert client.get(url, params=[("k", "v1"), ("k", "v2")]).json()["query"] == "k=v1&k=v2"
    assert client.get(url, params={"s": "a b&c"}).json()["query"] == "s=a+b%26c"
    assert client.get(url + "#frag").json()["path"] == "/anything"


def test_base_url(server: _core.TestServer, other_server: _core.TestServer) -> None:
    with nodelay.Client(base_url=f"{server.url}/anything/base") as client:
        assert client.base_url == f"{server.url}/anything/base/"
        assert client.get("x").json()["path"] == "/anything/base/x"
        assert client.get("/x/y").json()["path"] == "/anything/base/x/y"
        assert client.get("/x", params={"p": "1"}).json()["query"] == "p=1"
        absolute = client.get(f"{other_server.url}/anything/abs")
        assert absolute.url == f"{other_server.url}/anything/abs"
        assert absolute.json()["path"] == "/anything/abs"
        client.base_url = f"{server.url}/anything/"
        assert client.get("z").json()["path"] == "/anything/z"


def test_content_bytes_and_str(server: _core.TestServer, client: nodelay.Client) -> None:
    body = bytes(range(256)) * 10
    r = client.post(f"{server.url}/echo", content=body)
    assert r.content == body
    data = client.post(f"{server.url}/anything", content="héllo").json()
    assert data["body"] == "héllo"
    assert data["body_len"] == len("héllo".encode())
    assert sent(data, "content-type") == []


def test_data_form(server: _core.TestServer, client: nodelay.Client) -> None:
    data = client.post(f"{server.url}/anything", data={"a": "1", "b": ["x y", "z&"], "c": 3}).json()
    assert data["body"] == "a=1&b=x+y&b=z%26&c=3"
    assert sent(data, "content-type") == ["application/x-www-form-urlencoded"]
    assert sent(data, "content-length") == [str(len(data["body"]))]
    pairs = client.put(f"{server.url}/anything", data=[("k", "1"), ("k", "2")]).json()
    assert pairs["body"] == "k=1&k=2"


def test_data_str_is_raw_content(server: _core.TestServer, client: nodelay.Client) -> None:
    data = client.post(f"{server.url}/anything", data="raw=body").json()
    assert data["body"] == "raw=body"
    assert sent(data, "content-type") == []


def test_json_body(server: _core.TestServer, client: nodelay.Client) -> None:
    payload = {"a": [1, 2, {"b": None}], "é": True}
    data = client.patch(f"{server.url}/anything", json=payload).json()
    assert data["body"] == '{"a":[1,2,{"b":null}],"é":true}'
    assert json.loads(data["body"]) == payload
    assert sent(data, "content-type") == ["application/json"]


def test_explicit_content_type_wins(server: _core.TestServer, client: nodelay.Client) -> None:
    data = client.post(
        f"{server.url}/anything", json=[1], headers={"content-type": "application/vnd.x+json"}
    ).json()
    assert sent(data, "content-type") == ["application/vnd.x+json"]


def test_only_one_body_argument(server: _core.TestServer, client: nodelay.Client) -> None:
    with pytest.raises(TypeError):
        client.post(f"{server.url}/anything", content=b"a", json={"a": 1})
    with pytest.raises(TypeError):
        client.post(f"{server.url}/anything", data={"a": "1"}, content=b"a")


def test_text_and_charset(server: _core.TestServer, client: nodelay.Client) -> None:
    body = "naïve café".encode("latin-1")
    r = client.post(
        f"{server.url}/echo", content=body, headers={"Content-Type": "text/plain; charset=latin-1"}
    )
    assert r.encoding == "latin-1"
    assert r.text == "naïve café"
    r.encoding = "utf-8"
    assert "\ufffd" in r.text
    plain = client.post(f"{server.url}/echo", content="naïve".encode())
    assert plain.encoding == "utf-8" and plain.text == "naïve"


def test_raise_for_status(server: _core.TestServer, client: nodelay.Client) -> None:
    ok = client.get(f"{server.url}/status/204")
    assert ok.raise_for_status() is ok
    assert client.get(f"{server.url}/status/302").raise_for_status().status_code == 302
    for code, kind in (
        (404, "Client error"),
        (418, "Client error"),
        (500, "Server error"),
        (503, "Server error"),
    ):
        r = client.get(f"{server.url}/status/{code}")
        assert r.status_code == code and not r.ok and r.is_error
        with pytest.raises(nodelay.HTTPStatusError) as info:
            r.raise_for_status()
        assert info.value.response is r
        assert info.value.request is not None
        assert info.value.request.url == f"{server.url}/status/{code}"
        assert str(info.value).startswith(f"{kind} '{code} ")


def test_closed_client(server: _core.TestServer) -> None:
    client = nodelay.Client()
    assert client.get(f"{server.url}/bytes/1").status_code == 200
    client.close()
    assert client.is_closed
    with pytest.raises(RuntimeError, match="Client is closed"):
        client.get(f"{server.url}/bytes/1")
    with pytest.raises(RuntimeError, match="Client is closed"):
        client.post(f"{server.url}/anything", json={})
    client.close()  # idempotent
    with nodelay.Client() as ctx:
        ctx.get(f"{server.url}/bytes/1")
    with pytest.raises(RuntimeError):
        ctx.get(f"{server.url}/bytes/1")


def test_keep_alive_reuse(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        before = server.connections()
        for i in range(50):
            assert client.get(f"{server.url}/bytes/{i}").content == expected_bytes(i)
        assert server.connections() - before == 1


def test_keep_alive_reuse_after_bodies(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        before = server.connections()
        client.post(f"{server.url}/echo", content=b"x" * 100_000)
        client.get(f"{server.url}/chunked/70000")
        client.head(f"{server.url}/bytes/100")
        client.get(f"{server.url}/status/404")
        client.get(f"{server.url}/bytes/3")
        assert server.connections() - before == 1


def test_connection_refused_is_connect_error() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    url = f"http://127.0.0.1:{port}/x"
    with nodelay.Client() as client, pytest.raises(nodelay.ConnectError) as info:
        client.get(url)
    assert info.value.url == url
    assert info.value.request is not None and info.value.request.url == url


@pytest.mark.parametrize("url", ["/relative", "127.0.0.1:9/x", "http://", "ftp://127.0.0.1/"])
def test_unusable_urls(client: nodelay.Client, url: str) -> None:
    with pytest.raises((nodelay.UnsupportedProtocol, nodelay.InvalidURL)):
        client.get(url)


def test_response_fields_stay_lazy(server: _core.TestServer, client: nodelay.Client) -> None:
    r = client.get(f"{server.url}/json/10")
    # Nothing derived is built until asked for (the hot path allocates only the Response).
    assert r._headers is None
    assert isinstance(r._request, tuple)
    assert r.status_code == 200 and r.json()["ok"] is True
    assert r.text and r.encoding == "utf-8"
    assert r._headers is None, "text/encoding must read Content-Type without building Headers"
    assert r.headers["content-type"].startswith("application/json")
    assert r._headers is not None
    assert r.request is not None and r._request is r.request


def test_fast_path_shares_the_default_header_list(
    server: _core.TestServer, client: nodelay.Client
) -> None:
    r1 = client.get(f"{server.url}/bytes/1")
    r2 = client.get(f"{server.url}/bytes/2")
    assert isinstance(r1._request, tuple) and isinstance(r2._request, tuple)
    assert r1._request[2] is r2._request[2] is client.headers._list
    client.headers["X-New"] = "1"
    r3 = client.get(f"{server.url}/bytes/3")
    assert isinstance(r3._request, tuple)
    assert r3._request[2] is not r1._request[2]
    assert r1.request is not None and "x-new" not in r1.request.headers
    assert r3.request is not None and r3.request.headers["x-new"] == "1"


def test_repeated_response_headers(server: _core.TestServer, client: nodelay.Client) -> None:
    r = client.get(f"{server.url}/cookies/set", params={"a": "1", "b": "2"})
    assert r.status_code == 200
    cookies = r.headers.get_list("set-cookie")
    assert len(cookies) == 2
    assert cookies[0].startswith("a=1") and cookies[1].startswith("b=2")
    assert r.headers["Set-Cookie"] == ", ".join(cookies)
    assert [v for n, v in r.headers.multi_items() if n.lower() == "set-cookie"] == cookies


def test_headers_route(server: _core.TestServer, client: nodelay.Client) -> None:
    data = client.get(f"{server.url}/headers", headers={"X-Probe": "42"}).json()
    received = {name.lower(): value for name, value in data["headers"].items()}
    assert received["x-probe"] == "42"
    assert received["user-agent"] == f"nodelay/{nodelay.__version__}"


def test_close_releases_idle_connections(server: _core.TestServer) -> None:
    client = nodelay.Client()
    engine = client._engine
    client.get(f"{server.url}/bytes/1")
    assert engine.idle_connections() == 1
    client.close()
    assert engine.idle_connections() == 0


def test_no_keepalive_means_a_connection_per_request(server: _core.TestServer) -> None:
    with nodelay.Client(limits=nodelay.Limits(max_keepalive=0)) as client:
        before = server.connections()
        for _ in range(5):
            assert client.get(f"{server.url}/bytes/3").content == b"abc"
        assert server.connections() - before == 5


def test_module_helpers_use_a_fresh_connection_each(server: _core.TestServer) -> None:
    before = server.connections()
    for _ in range(3):
        assert nodelay.get(f"{server.url}/bytes/2").content == b"ab"
    assert server.connections() - before == 3
