"""httpx's documented idioms (quickstart, clients, transports...), run with ``httpx``
itself and with ``nodelay`` imported in its place, in the same run: a test that fails on
httpx is a wrong test, one that fails on nodelay is a broken promise of issue 15.

Transport tests need no server: the app or handler answers in-process.
"""

from __future__ import annotations

import asyncio
import json
from types import ModuleType
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")


def _hello(hx: ModuleType) -> Any:
    def handler(request: Any) -> Any:
        return hx.Response(200, json={"text": "Hello, world!"})

    return handler


# -- quickstart, against httpbin -------------------------------------------------------------


def test_quickstart_requests_and_responses(hx: ModuleType, httpbin: str) -> None:
    r = hx.get(f"{httpbin}/get", params={"key1": "value1", "key2": ["value2", "value3"]})
    assert r.status_code == hx.codes.OK
    assert str(r.url) == f"{httpbin}/get?key1=value1&key2=value2&key2=value3"
    assert r.url.params.get_list("key2") == ["value2", "value3"]
    assert r.json()["args"] == {"key1": "value1", "key2": ["value2", "value3"]}
    assert r.headers["Content-Type"] == "application/json"
    r = hx.post(f"{httpbin}/post", data={"key1": "value1"})
    assert r.json()["form"] == {"key1": "value1"}
    r = hx.post(f"{httpbin}/post", json={"integer": 123, "list": ["a"]})
    assert r.json()["json"] == {"integer": 123, "list": ["a"]}
    r = hx.get(f"{httpbin}/headers", headers={"user-agent": "my-app/0.0.1"})
    assert r.json()["headers"]["User-Agent"] == "my-app/0.0.1"


def test_quickstart_status_redirects_and_auth(hx: ModuleType, httpbin: str) -> None:
    r = hx.get(f"{httpbin}/status/404")
    with pytest.raises(hx.HTTPStatusError) as caught:
        r.raise_for_status()
    assert caught.value.response.status_code == 404
    r = hx.get(f"{httpbin}/redirect/2", follow_redirects=True)
    assert r.status_code == 200 and [h.status_code for h in r.history] == [302, 302]
    assert r.url.path == "/get"
    r = hx.get(f"{httpbin}/redirect/1")
    assert r.status_code == 302 and r.headers["location"] == "/get"
    r = hx.get(f"{httpbin}/basic-auth/user/pass", auth=("user", "pass"))
    assert r.json() == {"authenticated": True, "user": "user"}


def test_client_cookies_and_base_url(hx: ModuleType, httpbin: str) -> None:
    with hx.Client(base_url=httpbin, cookies={"peanut": "butter"}) as client:
        assert client.get("/cookies").json() == {"cookies": {"peanut": "butter"}}
        client.get("/cookies/set", params={"jam": "strawberry"})
        assert client.cookies["jam"] == "strawberry"
        with client.stream("GET", "/bytes/1000") as r:
            assert sum(len(chunk) for chunk in r.iter_bytes()) == 1000


def test_async_client_against_httpbin(hx: ModuleType, httpbin: str) -> None:
    async def main() -> Any:
        async with hx.AsyncClient(base_url=httpbin) as client:
            return (await client.get("/get", params={"a": "1"})).json()["args"]

    assert asyncio.run(main()) == {"a": "1"}


# -- transports: MockTransport --------------------------------------------------------------


def test_mock_transport_answers_with_the_handlers_response(hx: ModuleType) -> None:
    with hx.Client(transport=hx.MockTransport(_hello(hx))) as client:
        r = client.get("https://example.org/")
    assert r.status_code == 200
    assert r.json() == {"text": "Hello, world!"}
    assert r.headers["content-type"] == "application/json"
    assert r.headers["content-length"] == str(len(r.content))
    assert str(r.url) == "https://example.org/"
    assert r.request.method == "GET"


def test_handler_sees_the_request_as_the_client_built_it(hx: ModuleType) -> None:
    seen: list[Any] = []

    def handler(request: Any) -> Any:
        seen.append(request)
        return hx.Response(201, text=request.method + " " + request.headers["x-token"])

    client = hx.Client(
        transport=hx.MockTransport(handler),
        base_url="https://api.example.org/v1",
        headers={"X-Token": "abc"},
        params={"page": "2"},
    )
    r = client.post("/items", json={"name": "x"})
    assert (r.status_code, r.text) == (201, "POST abc")
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    request = seen[0]
    assert str(request.url) == "https://api.example.org/v1/items?page=2"
    assert json.loads(request.content) == {"name": "x"}
    assert request.read() == request.content
    assert request.headers["content-type"] == "application/json"
    client.close()


def test_handler_exception_propagates(hx: ModuleType) -> None:
    def handler(request: Any) -> Any:
        raise hx.ConnectError("no route", request=request)

    with hx.Client(transport=hx.MockTransport(handler)) as client:
        with pytest.raises(hx.ConnectError) as caught:
            client.get("http://example.org/")
    assert caught.value.request.method == "GET"


def test_response_constructors(hx: ModuleType) -> None:
    assert hx.Response(200, content=b"abc").headers["content-length"] == "3"
    r = hx.Response(404, html="<p>x</p>")
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert r.text == "<p>x</p>" and r.is_error
    assert hx.Response(200, json=[1, "é"]).content == '[1,"é"]'.encode()
    request = hx.Request("GET", "https://example.org/a", params={"q": "1"})
    assert str(request.url) == "https://example.org/a?q=1"
    post = hx.Request("POST", "https://example.org/", json={"a": 1})
    assert post.headers["content-type"] == "application/json"
    assert json.loads(post.content) == {"a": 1}


# -- the flow above the transport: redirects, cookies, auth, hooks ------------------------------


def test_redirects_cookies_auth_and_hooks_work_through_a_transport(hx: ModuleType) -> None:
    def handler(request: Any) -> Any:
        path = str(request.url).split("example.org", 1)[1]
        if path == "/login":
            return hx.Response(302, headers={"Location": "/home", "Set-Cookie": "sid=42; Path=/"})
        return hx.Response(
            200,
            json={
                "cookie": request.headers.get("cookie"),
                "authorization": request.headers.get("authorization"),
            },
        )

    events: list[str] = []
    client = hx.Client(
        transport=hx.MockTransport(handler),
        follow_redirects=True,
        auth=("user", "pass"),
        event_hooks={
            "request": [lambda request: events.append("request")],
            "response": [lambda response: events.append(f"response {response.status_code}")],
        },
    )
    r = client.get("https://example.org/login")
    assert r.status_code == 200
    assert [h.status_code for h in r.history] == [302]
    assert r.json() == {"cookie": "sid=42", "authorization": "Basic dXNlcjpwYXNz"}
    assert client.cookies["sid"] == "42"
    assert events == ["request", "response 302", "request", "response 200"]
    client.close()


# -- custom transports and mounts ------------------------------------------------------------


def test_a_transport_subclass(hx: ModuleType) -> None:
    class HelloWorld(hx.BaseTransport):  # type: ignore[name-defined,misc]
        def handle_request(self, request: Any) -> Any:
            return hx.Response(200, json={"text": "Hello, world!", "url": str(request.url)})

    with hx.Client(transport=HelloWorld()) as client:
        assert client.get("https://x.example/").json()["url"] == "https://x.example/"


def test_mounts_route_by_url_pattern(hx: ModuleType) -> None:
    def answer(name: str) -> Any:
        return hx.MockTransport(lambda request: hx.Response(200, text=name))

    mounts = {
        "all://": answer("any"),
        "http://": answer("http"),
        "all://example.com": answer("example.com"),
        "all://*.example.com": answer("subdomain"),
        "all://*example.org": answer("org and subdomains"),
        "https://example.com:8443": answer("port"),
    }
    with hx.Client(mounts=mounts) as client:

        def served(url: str) -> str:
            return str(client.get(url).text)

        assert served("https://other.net/") == "any"
        assert served("http://other.net/") == "http"
        assert served("http://example.com/") == "example.com"
        assert served("https://www.example.com/") == "subdomain"
        assert served("https://example.org/") == "org and subdomains"
        assert served("https://a.example.org/") == "org and subdomains"
        assert served("https://example.com:8443/") == "port"
        assert served("https://example.com:443/") == "example.com"


def test_mount_patterns_need_a_url_form(hx: ModuleType) -> None:
    with pytest.raises(ValueError):
        hx.Client(mounts={"http": hx.MockTransport(_hello(hx))})


# -- WSGI and ASGI apps ----------------------------------------------------------------------


def _wsgi_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    if environ["PATH_INFO"] == "/boom":
        raise RuntimeError("boom")
    body = json.dumps(
        {
            "method": environ["REQUEST_METHOD"],
            "script_name": environ["SCRIPT_NAME"],
            "path": environ["PATH_INFO"],
            "query": environ["QUERY_STRING"],
            "host": environ["HTTP_HOST"],
            "remote": environ["REMOTE_ADDR"],
            "port": environ["SERVER_PORT"],
            "body": environ["wsgi.input"].read().decode(),
        }
    ).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("X-App", "wsgi")])
    return [body]


def test_wsgi_transport_calls_the_app(hx: ModuleType) -> None:
    transport = hx.WSGITransport(app=_wsgi_app, script_name="/sub", remote_addr="1.2.3.4")
    with hx.Client(transport=transport, base_url="http://testserver") as client:
        r = client.post("/a%20b?x=1", content=b"hi")
    assert r.headers["x-app"] == "wsgi"
    assert r.json() == {
        "method": "POST",
        "script_name": "/sub",
        "path": "/a b",
        "query": "x=1",
        "host": "testserver",
        "remote": "1.2.3.4",
        "port": "80",
        "body": "hi",
    }


def test_wsgi_app_exceptions(hx: ModuleType) -> None:
    with hx.Client(transport=hx.WSGITransport(app=_wsgi_app)) as client:
        with pytest.raises(RuntimeError, match="boom"):
            client.get("http://testserver/boom")


async def _asgi_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    assert scope["type"] == "http"
    if scope["path"] == "/boom":
        raise RuntimeError("boom")
    message = await receive()
    body = json.dumps(
        {
            "path": scope["path"],
            "query": scope["query_string"].decode(),
            "root_path": scope["root_path"],
            "client": list(scope["client"]),
            "body": message["body"].decode(),
        }
    ).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"x-app", b"asgi")]})
    await send({"type": "http.response.body", "body": body})


def test_asgi_transport_calls_the_app(hx: ModuleType) -> None:
    async def main() -> tuple[Any, int]:
        transport = hx.ASGITransport(app=_asgi_app, root_path="/r", client=("1.2.3.4", 5))
        async with hx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            r = await client.post("/p?q=1", content=b"data")
            try:
                await client.get("/boom")
            except RuntimeError:
                raised = 1
            else:
                raised = 0
        return r, raised

    r, raised = asyncio.run(main())
    assert r.headers["x-app"] == "asgi"
    assert r.json() == {
        "path": "/p",
        "query": "q=1",
        "root_path": "/r",
        "client": ["1.2.3.4", 5],
        "body": "data",
    }
    assert raised == 1


def test_asgi_app_exceptions_become_500_when_asked(hx: ModuleType) -> None:
    async def main() -> int:
        transport = hx.ASGITransport(app=_asgi_app, raise_app_exceptions=False)
        async with hx.AsyncClient(transport=transport) as client:
            return int((await client.get("http://testserver/boom")).status_code)

    assert asyncio.run(main()) == 500


def test_async_client_with_sync_and_async_handlers(hx: ModuleType) -> None:
    async def async_handler(request: Any) -> Any:
        await asyncio.sleep(0)
        return hx.Response(200, text="async")

    async def main() -> list[str]:
        texts = []
        for handler in (_hello(hx), async_handler):
            async with hx.AsyncClient(transport=hx.MockTransport(handler)) as client:
                texts.append((await client.get("https://example.org/")).text)
        return texts

    assert asyncio.run(main()) == ['{"text":"Hello, world!"}', "async"]


def test_async_transport_subclass(hx: ModuleType) -> None:
    class Echo(hx.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        async def handle_async_request(self, request: Any) -> Any:
            return hx.Response(200, content=await request.aread())

    async def main() -> bytes:
        async with hx.AsyncClient(transport=Echo()) as client:
            return bytes((await client.put("https://example.org/", content=b"xyz")).content)

    assert asyncio.run(main()) == b"xyz"


# -- data types: URL, QueryParams, Headers, Cookies ------------------------------------------


def test_url_parts(hx: ModuleType) -> None:
    url = hx.URL("HTTPS://user:p%40ss@Example.ORG:8443/a%20b/c?x=1&y=2&x=3#frag")
    assert url.scheme == "https"
    assert url.host == "example.org"
    assert url.port == 8443
    assert url.path == "/a b/c"
    assert url.raw_path == b"/a%20b/c?x=1&y=2&x=3"
    assert url.query == b"x=1&y=2&x=3"
    assert url.fragment == "frag"
    assert (url.username, url.password) == ("user", "p@ss")
    assert url.params["x"] == "1" and url.params.get_list("x") == ["1", "3"]
    assert hx.URL("http://example.org:80/").port is None
    assert hx.URL("http://example.org").path == "/"
    assert hx.URL("https://example.org/a") == "https://example.org/a"
    assert hx.URL("https://example.org/a") == hx.URL("https://example.org/a")
    assert hx.URL("/relative").is_relative_url
    assert hx.URL("https://example.org/a").is_absolute_url


def test_url_copies_and_joins(hx: ModuleType) -> None:
    url = hx.URL("https://example.org/path?a=1")
    assert str(url.copy_with(scheme="http")) == "http://example.org/path?a=1"
    assert str(url.copy_with(path="/other")) == "https://example.org/other?a=1"
    assert str(url.copy_with(host="example.com")) == "https://example.com/path?a=1"
    assert str(url.copy_with(params={"b": "2"})) == "https://example.org/path?b=2"
    assert str(url.copy_with(query=b"c=3")) == "https://example.org/path?c=3"
    assert str(url.copy_add_param("a", "2")) == "https://example.org/path?a=1&a=2"
    assert str(url.copy_set_param("a", "9")) == "https://example.org/path?a=9"
    assert str(url.copy_remove_param("a")) == "https://example.org/path"
    assert str(url.join("../x/y")) == "https://example.org/x/y"
    assert str(url.join("/z?q=1")) == "https://example.org/z?q=1"


def test_response_and_request_urls_are_urls(hx: ModuleType) -> None:
    def handler(request: Any) -> Any:
        assert isinstance(request.url, hx.URL)
        return hx.Response(200, text=f"{request.url.host} {request.url.path} {request.url.params}")

    with hx.Client(transport=hx.MockTransport(handler)) as client:
        r = client.get("https://example.org/search", params={"q": "a b"})
    assert r.text == "example.org /search q=a+b"
    assert isinstance(r.url, hx.URL)
    assert r.url.path == "/search" and r.url.params["q"] == "a b"
    assert r.request.url == "https://example.org/search?q=a+b"


def test_query_params(hx: ModuleType) -> None:
    params = hx.QueryParams("a=1&b=2&a=3")
    assert params["a"] == "1" and params.get("b") == "2" and params.get("c") is None
    assert params.get_list("a") == ["1", "3"]
    # Values are grouped by key, in the order keys first appear.
    assert params.multi_items() == [("a", "1"), ("a", "3"), ("b", "2")]
    assert list(params.keys()) == ["a", "b"]
    assert str(params) == "a=1&a=3&b=2"
    assert str(hx.QueryParams({"a": ["1", "2"], "b": "x y"})) == "a=1&a=2&b=x+y"
    assert params.set("a", "9").get_list("a") == ["9"]
    assert str(params.add("c", "4")) == "a=1&a=3&b=2&c=4"
    assert str(params.remove("a")) == "b=2"
    assert str(params.merge({"b": "5"})) == "a=1&a=3&b=5"
    assert hx.QueryParams("a=1&b=2") == hx.QueryParams({"b": "2", "a": "1"})
    assert "a" in params and len(params) == 2


def test_headers(hx: ModuleType) -> None:
    headers = hx.Headers([("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("X-One", "1")])
    assert headers["set-cookie"] == "a=1, b=2"
    assert headers.get_list("SET-COOKIE") == ["a=1", "b=2"]
    # httpx lower-cases the names multi_items() gives, nodelay keeps them as received
    # (docs/migrate-httpx.md): compared case-insensitively here.
    pairs = [(name.lower(), value) for name, value in headers.multi_items()]
    assert pairs == [("set-cookie", "a=1"), ("set-cookie", "b=2"), ("x-one", "1")]
    assert "x-one" in headers and headers.get("missing") is None
    assert hx.Headers({"A": "1"}) == {"a": "1"}


def test_cookies(hx: ModuleType) -> None:
    cookies = hx.Cookies()
    cookies.set("session", "abc", domain="example.org")
    cookies["plain"] = "1"
    assert cookies.get("session") == "abc" and cookies["plain"] == "1"

    def handler(request: Any) -> Any:
        return hx.Response(200, text=request.headers.get("cookie", ""))

    with hx.Client(transport=hx.MockTransport(handler), cookies=cookies) as client:
        sent = client.get("https://example.org/").text
    assert sorted(sent.split("; ")) == ["plain=1", "session=abc"]


# -- custom authentication flows -------------------------------------------------------------


def test_custom_auth_flows(hx: ModuleType) -> None:
    class HeaderAuth(hx.Auth):  # type: ignore[name-defined,misc]
        def __init__(self, token: str) -> None:
            self.token = token

        def auth_flow(self, request: Any) -> Any:
            request.headers["X-Authentication"] = self.token
            yield request

    class ChallengeAuth(hx.Auth):  # type: ignore[name-defined,misc]
        requires_response_body = True

        def auth_flow(self, request: Any) -> Any:
            response = yield request
            if response.status_code == 401:
                request.headers["X-Authentication"] = response.json()["nonce"]
                yield request

    def handler(request: Any) -> Any:
        token = request.headers.get("x-authentication")
        if token is None:
            return hx.Response(401, json={"nonce": "n-1"})
        return hx.Response(200, text=token)

    with hx.Client(transport=hx.MockTransport(handler)) as client:
        assert client.get("https://example.org/", auth=HeaderAuth("t-0")).text == "t-0"
        r = client.get("https://example.org/", auth=ChallengeAuth())
    assert (r.status_code, r.text) == (200, "n-1")


def test_next_request_of_a_redirect_not_followed(hx: ModuleType) -> None:
    def handler(request: Any) -> Any:
        path = request.url.path
        if path == "/a":
            return hx.Response(302, headers={"Location": "/b?x=1"})
        if path == "/form":
            return hx.Response(303, headers={"Location": "https://other.example/done"})
        return hx.Response(200, text=f"{request.method} {path}")

    with hx.Client(transport=hx.MockTransport(handler)) as client:
        r = client.get("https://example.org/a", headers={"Authorization": "Bearer t"})
        hop = r.next_request
        assert hop.method == "GET" and hop.url == "https://example.org/b?x=1"
        assert hop.headers["authorization"] == "Bearer t"
        assert client.send(hop).text == "GET /b"
        r = client.post("https://example.org/form", content=b"x", headers={"Authorization": "a"})
        hop = r.next_request
        assert (hop.method, str(hop.url)) == ("GET", "https://other.example/done")
        assert "authorization" not in hop.headers and hop.content == b""
        assert client.get("https://example.org/c").next_request is None
