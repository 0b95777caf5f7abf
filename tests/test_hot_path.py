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


# -- session 4: the engine builds the Response, handles the jar, encodes str forms ---------


def _fields(r: nodelay.Response) -> tuple[object, ...]:
    req = r.request
    assert req is not None
    return (
        type(r),
        r.status_code,
        r.content,
        r.reason_phrase,
        r.http_version,
        r.url,
        list(r.headers.multi_items()),
        r.history,
        r.encoding,
        r.text,
        r.is_closed,
        (req.method, req.url, list(req.headers.multi_items()), req.content),
    )


def test_the_engine_built_response_is_the_python_one(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    """``Engine.fetch`` returns what ``_response_from_raw`` made: same class, same fields,
    every lazy slot set (a missing one would raise AttributeError), pickles the same."""
    import pickle

    from nodelay._models import _response_from_raw

    url = f"{server.url}/bytes/202"
    r = client.get(url)
    pairs = client._headers._list
    raw = client._engine.request("GET", url, pairs, None, client._ttuple)
    made = _response_from_raw(raw, ("GET", url, pairs, None))
    assert _fields(r)[1:] == _fields(made)[1:] and type(r) is nodelay.Response
    assert r.elapsed.total_seconds() > 0 and r.cookies == {}
    for name in nodelay.Response.__slots__:
        getattr(r, name)
    copy = pickle.loads(pickle.dumps(r))
    assert _fields(copy)[1:] == _fields(r)[1:]
    posted = client.post(f"{server.url}/anything", data=_FORM)
    assert posted.request is not None and posted.request.content == b"user=bench&note=a+b%26c"
    r.encoding = "latin-1"
    assert r.encoding == "latin-1"


def test_the_engine_depends_on_constructors_not_on_a_class_layout(
    client: nodelay.Client, server: _core.TestServer
) -> None:
    """``_core.use_models`` takes the response class (only made as ``object.__new__``
    makes an instance, no slot layout) and two callables; the first ones registered
    (``nodelay._models``'s) stay: a later call is ignored."""

    def other_fill(
        response: nodelay.Response,
        raw: _core.RawResponse,
        request: object,
        status: int,
        content: bytes,
    ) -> nodelay.Response:
        raise AssertionError("a later use_models call must be ignored")

    def other_request(method: str, url: str, pairs: object, body: object) -> nodelay.Request:
        raise AssertionError("a later use_models call must be ignored")

    _core.use_models(nodelay.Response, other_fill, other_request)
    r = client.get(f"{server.url}/bytes/202")
    assert type(r) is nodelay.Response and r.status_code == 200 and len(r.content) == 202


def test_jar_cookies_on_the_hot_path(server: _core.TestServer, tmp_path: object) -> None:
    """The jar's Cookie header is added by the engine call (the user's own Cookie header
    wins), Set-Cookie fields are stored and the jar's autosave runs, as before."""
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    path = tmp_path / "cookies.txt"
    jar = nodelay.CookieJar(autosave=str(path))
    with nodelay.Client(cookies=jar) as client:
        assert _echo(client.get(f"{server.url}/anything"))[2].count(["cookie", "a=1"]) == 0
        client.get(f"{server.url}/cookies/set?a=1")
        assert path.exists() and "\ta\t1" in path.read_text()
        r = client.get(f"{server.url}/anything")
        assert ["cookie", "a=1"] in _echo(r)[2]
        assert r.request is not None and r.request.headers["cookie"] == "a=1"
        assert client._headers._list == r.request.headers.multi_items()[:-1]
        mine = client.get(f"{server.url}/anything", headers={"Cookie": "mine=2"})
        assert ["cookie", "mine=2"] in _echo(mine)[2]
        client.headers["COOKIE"] = "own=3"
        headers = _echo(client.post(f"{server.url}/anything", data=_FORM))[2]
        assert ["cookie", "own=3"] in headers and ["cookie", "a=1"] not in headers


def test_an_engine_error_names_the_request_sent() -> None:
    """A failed hot-path request's exception carries the request as sent (with the jar's
    Cookie header), as the Python path filled it in."""
    with nodelay.Client(cookies={"k": "v"}) as client:
        url = "http://127.0.0.1:1/x"
        with pytest.raises(nodelay.ConnectError) as info:
            client.get(url)
        request = info.value.request
        assert request is not None and (request.method, request.url) == ("GET", url)
        assert request.headers["cookie"] == "k=v"
        with pytest.raises(nodelay.ConnectError) as info:
            client.post(url, data=_FORM)
        assert info.value.request is not None
        assert info.value.request.content == b"user=bench&note=a+b%26c"
    closed = nodelay.Client()
    closed.close()
    with pytest.raises(RuntimeError, match="closed"):
        closed.get(url)


class _Str(str):
    __slots__ = ()


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"a": "1"},
        {"a b": "1&2", "é": "~*/+", "": ""},
        {"n": 1},
        {"f": 1.5, "t": True, "z": None},
        {"l": ["1", 2]},
        {1: "x"},
        {_Str("s"): "v"},
        {"s": _Str("v")},
    ],
)
def test_form_dicts_encode_as_the_pairs_do(data: dict[object, object]) -> None:
    from urllib.parse import urlencode

    from nodelay._urls import param_pairs

    pairs = param_pairs(data)  # type: ignore[arg-type]
    fast = _core.form_encode_dict(data)
    all_str = all(type(k) is str and type(v) is str for k, v in data.items())
    assert (fast is not None) == all_str
    if fast is not None:
        assert fast == _core.form_encode(pairs) == urlencode(pairs).encode("ascii")
    with pytest.raises(UnicodeEncodeError):
        _core.form_encode_dict({"bad": "\ud800"})


def test_form_posts_of_every_dict_shape(client: nodelay.Client, server: _core.TestServer) -> None:
    url = f"{server.url}/anything"
    for data, body in (
        ({"a": "1", "b": "x y"}, "a=1&b=x+y"),
        ({"n": 1, "t": True}, "n=1&t=true"),
        ({"l": ["1", "2"]}, "l=1&l=2"),
        ({}, ""),
    ):
        method, sent, headers = _echo(client.post(url, data=data))
        assert (method, sent) == ("POST", body)
        assert ["content-type", "application/x-www-form-urlencoded"] in headers


def test_a_repeated_url_is_sent_as_the_same_request(server: _core.TestServer) -> None:
    """The engine reuses the prepared bytes of the last body-less request while the
    method, the URL text and the default headers are the same: any change shows."""
    url = f"{server.url}/anything?q=1"
    with nodelay.Client() as client:
        for _ in range(3):
            assert _echo(client.get(url))[0] == "GET"
        assert _echo(client.delete(url))[0] == "DELETE"
        assert client.head(url).content == b""
        assert _echo(client.get("".join([url])))[0] == "GET"  # equal text, another object
        other = _echo(client.get(f"{server.url}/anything?q=2"))
        assert ["host", server.url.split("//")[1]] in other[2]
        assert client.get(url).json()["query"] == "q=1"
        client.headers["X-New"] = "1"
        assert ["x-new", "1"] in _echo(client.get(url))[2]
