"""``nodelay.requests`` byte-level checks: broken bodies, timeouts mid-body and the exact
request head, against scripted raw-socket servers. Like test_docs_requests.py, each test
runs under the real ``requests`` (the oracle) and under the facade."""

from __future__ import annotations

import importlib
import io
import pickle
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from scripted import Close, Recv, ScriptedServer, Send, Sleep, response

LIBRARIES = ("requests", "nodelay.requests")
STALL_S = 3.0
"""How long a scripted server stalls mid-body: well past the tests' 0.5 s read timeout."""

Scripted = Callable[..., ScriptedServer]

TRUNCATED = {
    "content-length": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc",
    "chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabc",
}


@pytest.fixture(params=LIBRARIES)
def requests(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(request.param)


@pytest.mark.parametrize("kind", sorted(TRUNCATED))
@pytest.mark.parametrize("stream", [False, True])
def test_truncated_body_is_chunked_encoding_error(
    requests: Any, scripted: Scripted, kind: str, stream: bool
) -> None:
    srv = scripted([Recv(), Send(TRUNCATED[kind]), Close()])
    with pytest.raises(requests.exceptions.ChunkedEncodingError) as info:
        r = requests.get(f"{srv.url}/", stream=stream, timeout=5)
        b"".join(r.iter_content(16))
    # Not a ConnectionError: ``except ConnectionError`` does not catch it under requests.
    assert not isinstance(info.value, requests.ConnectionError)


def test_undecodable_body_is_content_decoding_error(requests: Any, scripted: Scripted) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Encoding: gzip\r\n\r\nabcde"
    srv = scripted([Recv(), Send(head), Close()])
    with pytest.raises(requests.exceptions.ContentDecodingError):
        requests.get(f"{srv.url}/", timeout=5)


def test_read_timeout_mid_body(requests: Any, scripted: Scripted) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"
    srv = scripted([Recv(), Send(head), Sleep(STALL_S), Close()])
    # The head arrived in time; the body stalls. requests reports a read timeout while
    # reading a body as a ConnectionError (iter_content's translation).
    r = requests.get(f"{srv.url}/", stream=True, timeout=0.5)
    with pytest.raises(requests.ConnectionError):
        b"".join(r.iter_content(4))
    r.close()


def test_request_head_has_each_field_once(requests: Any, scripted: Scripted) -> None:
    ok = response(body=b"{}", headers=[("Content-Type", "application/json")])
    srv = scripted([Recv(), Send(ok), Recv(), Send(ok), Close()])
    with requests.Session() as s:
        s.cookies.set("session", "1")
        s.post(f"{srv.url}/form", data={"a": "1"}, headers={"X-One": "1"}, cookies={"c": "2"})
        prepared = requests.Request("PUT", f"{srv.url}/put", data=b"xyz").prepare()
        prepared.headers["Content-Length"] = "3"
        s.send(prepared)
    post, put = srv.requests
    head = post.split(b"\r\n\r\n", 1)[0].lower().split(b"\r\n")
    names = [line.split(b":", 1)[0] for line in head[1:]]
    assert head[0] == b"post /form http/1.1"
    for name in (b"host", b"user-agent", b"accept", b"content-length", b"content-type"):
        assert names.count(name) == 1, (name, names)
    assert names.count(b"cookie") == 1
    cookie = next(line for line in head if line.startswith(b"cookie:"))
    assert sorted(cookie[len(b"cookie:") :].strip().split(b"; ")) == [b"c=2", b"session=1"]
    assert post.endswith(b"\r\n\r\na=1")
    assert put.lower().count(b"\r\ncontent-length: 3\r\n") == 1 and put.endswith(b"xyz")


def test_response_pickles(requests: Any, scripted: Scripted) -> None:
    ok = response(body=b'{"a": 1}', headers=[("Content-Type", "application/json")])
    srv = scripted([Recv(), Send(ok), Close()])
    r = pickle.loads(pickle.dumps(requests.get(f"{srv.url}/", timeout=5)))
    assert r.status_code == 200 and r.json() == {"a": 1}
    assert r.headers["content-type"] == "application/json"


def test_cookie_jar_is_dict_like(requests: Any) -> None:
    jar = requests.cookies.RequestsCookieJar()
    jar["a"] = "1"
    jar.set("b", "2", domain="example.com", path="/x")
    assert jar["a"] == "1" and jar.get("b") == "2" and "b" in jar
    assert jar.get_dict() == {"a": "1", "b": "2"}
    assert jar.get_dict(domain="example.com") == {"b": "2"}
    assert sorted(jar.keys()) == ["a", "b"] and len(jar) == 2
    # Iterating gives the cookies themselves, with their attributes.
    assert sorted((c.name, c.value, c.path) for c in jar) == [("a", "1", "/"), ("b", "2", "/x")]
    jar.set("a", None)  # None removes, as in requests
    assert "a" not in jar
    jar.update({"c": "3"})
    assert requests.utils.dict_from_cookiejar(jar) == {"b": "2", "c": "3"}
    assert requests.cookies.cookiejar_from_dict({"d": "4"})["d"] == "4"


def test_connect_timeout_translation() -> None:
    # A connect timeout needs an address that drops SYNs, which loopback never does;
    # the translation table is checked directly (a ConnectTimeout is both a
    # ConnectionError and a Timeout in requests).
    import nodelay
    from nodelay.requests import _errors, exceptions

    # The class is the facade's, or its twin with requests' when requests is imported
    # (nodelay/requests/exceptions.py): the same name, an instance of both.
    err = _errors.while_sending(nodelay.ConnectTimeout("connect timed out"), None)
    assert type(err).__name__ == "ConnectTimeout" and isinstance(err, exceptions.ConnectTimeout)
    assert isinstance(err, exceptions.ConnectionError) and isinstance(err, exceptions.Timeout)
    err = _errors.while_sending(nodelay.TLSError("certificate verify failed"), None)
    assert type(err).__name__ == "SSLError" and isinstance(err, exceptions.SSLError)
    err = _errors.while_sending(nodelay.ProxyError("407"), None)
    assert type(err).__name__ == "ProxyError" and isinstance(err, exceptions.ProxyError)


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"http_proxy": "http://a:1"},
        {"HTTP_PROXY": "http://b:1"},
        {"HTTP_PROXY": "http://b:1", "http_proxy": ""},
        {"HTTPS_PROXY": "http://c:1", "all_proxy": "http://d:1", "NO_PROXY": "x"},
        {"HTTP_PROXY": "http://b:1", "REQUEST_METHOD": "GET"},
        {"http_proxy": "http://a:1", "REQUEST_METHOD": "GET"},
    ],
)
def test_environment_proxies_read_as_urllib_reads_them(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The facade reads the 8 proxy variables an http(s) request can use instead of
    # walking the environment as urllib does: same answer for those schemes.
    import os
    import urllib.request

    from nodelay.requests import utils

    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name == "REQUEST_METHOD":
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    expected = {
        k: v
        for k, v in urllib.request.getproxies_environment().items()
        if k in ("http", "https", "all", "no")
    }
    assert utils._proxies_from_environment() == expected


FACADE_MODULES = (
    "",
    "adapters",
    "api",
    "auth",
    "cookies",
    "exceptions",
    "hooks",
    "models",
    "sessions",
    "status_codes",
    "structures",
    "utils",
)
NOT_PROVIDED = {
    # urllib3 and packaging details (docs/migrate-requests.md says why).
    "": {"DependencyWarning", "NullHandler", "chardet_version", "charset_normalizer_version"},
    "exceptions": {"BaseHTTPError", "CompatJSONDecodeError"},
    "adapters": {"SOCKSProxyManager"},
    # http.cookiejar adapters: the facade's jar is nodelay's, not cookielib's.
    "cookies": {"MockRequest", "MockResponse"},
}


@pytest.mark.parametrize("module", FACADE_MODULES)
def test_facade_has_requests_public_classes_and_functions(module: str) -> None:
    # Every public class and function requests defines in a module (not the names it
    # imports from urllib3 or typing) exists in the facade module of the same name.
    real = importlib.import_module(f"requests.{module}" if module else "requests")
    facade = importlib.import_module(f"nodelay.requests.{module}".rstrip("."))
    defined_here = {
        name
        for name, value in vars(real).items()
        if not name.startswith("_")
        and callable(value)
        and getattr(value, "__module__", "") == real.__name__
    }
    if not module:  # the top level re-exports; check what it re-exports
        defined_here = {
            n for n in dir(real) if not n.startswith("_") and callable(getattr(real, n))
        }
        defined_here -= {"annotations", "check_compatibility"}
    missing = defined_here - set(dir(facade)) - NOT_PROVIDED.get(module, set())
    assert not missing


def test_facade_all_is_exactly_its_public_names() -> None:
    import types

    import nodelay.requests as facade

    public = {
        name
        for name, value in vars(facade).items()
        # Only identifiers: under pytest the package's modules are assertion-rewritten (the
        # pytest11 plugin makes nodelay a plugin distribution), which adds `@py_builtins`.
        if not name.startswith("_") and name != "annotations" and name.isidentifier()
    }
    assert set(facade.__all__) == public | {"__version__"}
    for name in facade.__all__:
        value = getattr(facade, name)
        assert (
            isinstance(value, (types.ModuleType, type))
            or callable(value)
            or name
            in (
                "codes",
                "__version__",
            )
        )


def test_session_pickles(requests: Any) -> None:
    s = requests.Session()
    s.cookies.set("a", "1")
    s.headers["X-Kept"] = "yes"
    s.mount("http://", requests.adapters.HTTPAdapter(max_retries=3))
    copy = pickle.loads(pickle.dumps(s))
    assert copy.cookies.get_dict() == {"a": "1"}
    assert copy.headers["X-Kept"] == "yes"
    assert copy.adapters["http://"].max_retries.total == 3


def test_hand_made_response(requests: Any) -> None:
    # Programs build responses by hand to test their own code.
    r = requests.Response()
    r.status_code = 200
    r.raw = io.BytesIO(b"line1\nline2\n")
    assert list(r.iter_lines()) == [b"line1", b"line2"] and r.ok
    r = requests.Response()
    r.status_code = 404
    r._content = b'{"a": 1}'
    assert r.json() == {"a": 1} and not r.ok
    with pytest.raises(requests.HTTPError):
        r.raise_for_status()
