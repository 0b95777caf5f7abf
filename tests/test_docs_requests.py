"""The programs of requests' documentation (docs/user/quickstart.rst and advanced.rst),
in our own words, against PyPI's httpbin served by waitress on loopback.

Every test runs twice in the same run: under the real ``requests`` (the oracle: a test
that fails there is a wrong test) and under ``nodelay.requests``, the one-import-change
facade. The tests only use what the documentation promises, so both must agree.
"""

from __future__ import annotations

import gzip
import importlib
import io
import json
import os
import shutil
import socket
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from socks_servers import Microsocks

LIBRARIES = ("requests", "nodelay.requests")
SLOW_ENDPOINT_DELAY_S = 3
"""httpbin's ``/delay/n`` for the timeout tests: well past their 0.5 s read timeout."""


@pytest.fixture(params=LIBRARIES)
def requests(request: pytest.FixtureRequest) -> ModuleType:
    """``import requests`` or ``import nodelay.requests as requests``."""
    return importlib.import_module(request.param)


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# -- quickstart: make a request ------------------------------------------------------------


def test_every_verb(requests: Any, httpbin: str) -> None:
    assert requests.get(f"{httpbin}/get").status_code == 200
    assert requests.post(f"{httpbin}/post", data={"key": "value"}).json()["form"] == {
        "key": "value"
    }
    assert requests.put(f"{httpbin}/put", data={"key": "value"}).json()["form"] == {"key": "value"}
    assert requests.delete(f"{httpbin}/delete").status_code == 200
    head = requests.head(f"{httpbin}/get")
    assert head.status_code == 200 and head.content == b""
    assert requests.options(f"{httpbin}/get").status_code == 200
    assert requests.patch(f"{httpbin}/patch", data="x").json()["data"] == "x"
    # A custom verb goes out as given (httpbin answers 405 to it).
    r = requests.request("MKCOL", f"{httpbin}/anything", data={"path": "bar"})
    assert r.request.method == "MKCOL" and r.status_code == 405


def test_params_in_urls(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/get", params={"key1": "value1", "key2": "value2"})
    assert r.url == f"{httpbin}/get?key1=value1&key2=value2"
    # None values are dropped; a list repeats the key.
    r = requests.get(f"{httpbin}/get", params={"key1": "value1", "key2": None})
    assert r.url == f"{httpbin}/get?key1=value1"
    r = requests.get(f"{httpbin}/get", params={"key1": "value1", "key2": ["value2", "value3"]})
    assert r.url == f"{httpbin}/get?key1=value1&key2=value2&key2=value3"
    assert r.json()["args"] == {"key1": "value1", "key2": ["value2", "value3"]}
    # Params are added to a query the URL already has.
    r = requests.get(f"{httpbin}/get?a=1", params={"b": "2"})
    assert r.json()["args"] == {"a": "1", "b": "2"}


# -- response content ----------------------------------------------------------------------


def test_text_and_encoding(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/encoding/utf8")
    assert r.encoding == "utf-8"
    assert "∮ E⋅da = Q" in r.text
    r.encoding = "ISO-8859-1"  # the text is decoded again with the new encoding
    assert "∮" not in r.text and r.text.encode("ISO-8859-1") == r.content


def test_text_without_charset_is_latin1(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/response-headers", params={"Content-Type": "text/plain", "x": "é"})
    assert r.encoding == "ISO-8859-1"
    assert r.text == r.content.decode("ISO-8859-1")


def test_binary_content(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/image/png")
    assert r.content.startswith(b"\x89PNG\r\n\x1a\n")
    r = requests.get(f"{httpbin}/gzip")  # the body is decoded for you
    assert r.json()["gzipped"] is True


def test_json_content(requests: Any, httpbin: str) -> None:
    assert requests.get(f"{httpbin}/json").json()["slideshow"]["title"] == "Sample Slide Show"
    r = requests.get(f"{httpbin}/html")
    with pytest.raises(requests.exceptions.JSONDecodeError):
        r.json()
    with pytest.raises(ValueError):  # also a json.JSONDecodeError
        r.json()
    with pytest.raises(json.JSONDecodeError):
        r.json()


def test_raw_response_content(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/gzip", stream=True)
    first = r.raw.read(10)  # undecoded: gzip's magic number
    assert first[:2] == b"\x1f\x8b"
    rest = r.raw.read()
    assert json.loads(gzip.decompress(first + rest))["gzipped"] is True
    r = requests.get(f"{httpbin}/gzip", stream=True)
    assert json.loads(r.raw.read(decode_content=True))["gzipped"] is True
    # The recipe for saving a download: copy raw into a file, decoded.
    r = requests.get(f"{httpbin}/gzip", stream=True)
    r.raw.decode_content = True
    out = io.BytesIO()
    shutil.copyfileobj(r.raw, out)
    assert json.loads(out.getvalue())["gzipped"] is True
    # Without stream=True the body was read already: nothing is left on raw.
    assert requests.get(f"{httpbin}/gzip").raw.read() == b""


def test_stream_to_a_file(requests: Any, httpbin: str) -> None:
    out = io.BytesIO()
    r = requests.get(f"{httpbin}/bytes/5000?seed=1", stream=True)
    for chunk in r.iter_content(chunk_size=128):
        assert len(chunk) <= 128
        out.write(chunk)
    assert len(out.getvalue()) == 5000
    assert out.getvalue() == requests.get(f"{httpbin}/bytes/5000?seed=1").content


def test_iter_content_decode_unicode(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/encoding/utf8", stream=True)
    pieces = list(r.iter_content(chunk_size=7, decode_unicode=True))
    assert all(isinstance(p, str) for p in pieces)
    assert "∮ E⋅da = Q" in "".join(pieces)


# -- headers, bodies, files ----------------------------------------------------------------


def test_custom_headers(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/headers", headers={"user-agent": "my-app/0.0.1"})
    assert r.json()["headers"]["User-Agent"] == "my-app/0.0.1"
    assert r.request.headers["User-Agent"] == "my-app/0.0.1"


def test_form_bodies(requests: Any, httpbin: str) -> None:
    r = requests.post(f"{httpbin}/post", data=[("key1", "value1"), ("key1", "value2")])
    assert r.json()["form"] == {"key1": ["value1", "value2"]}
    r = requests.post(f"{httpbin}/post", data={"key1": ["value1", "value2"]})
    assert r.json()["form"] == {"key1": ["value1", "value2"]}
    r = requests.post(f"{httpbin}/post", data=json.dumps({"some": "data"}))
    assert r.json()["json"] == {"some": "data"}
    r = requests.post(f"{httpbin}/post", json={"some": "data"})
    assert r.json()["json"] == {"some": "data"}
    assert r.request.headers["Content-Type"] == "application/json"


def test_multipart_files(requests: Any, httpbin: str, tmp_path: Any) -> None:
    path = tmp_path / "report.xls"
    path.write_bytes(b"some,data,to,send\n")
    with open(path, "rb") as f:
        r = requests.post(f"{httpbin}/post", files={"file": f})
    assert r.json()["files"] == {"file": "some,data,to,send\n"}
    with open(path, "rb") as f:
        files = {
            "file": ("report.xls", f, "application/vnd.ms-excel", {"Expires": "0"}),
        }
        r = requests.post(f"{httpbin}/post", files=files, data={"field": "v"})
    assert r.json()["files"] == {"file": "some,data,to,send\n"}
    assert r.json()["form"] == {"field": "v"}
    r = requests.post(f"{httpbin}/post", files={"file": ("report.csv", "a,b\n")})
    assert r.json()["files"] == {"file": "a,b\n"}
    # Several files under one field name (advanced usage).
    multiple = [("images", ("a.png", b"AAA", "image/png")), ("images", ("b.png", b"BBB"))]
    r = requests.post(f"{httpbin}/post", files=multiple)
    assert r.json()["files"]["images"] in (["AAA", "BBB"], "AAA")  # httpbin keeps the first


def test_streaming_uploads(requests: Any, httpbin: str, tmp_path: Any) -> None:
    path = tmp_path / "massive-body"
    path.write_bytes(b"x" * 100_000)
    with open(path, "rb") as f:
        r = requests.post(f"{httpbin}/post", data=f)
    assert len(r.json()["data"]) == 100_000
    assert r.request.headers["Content-Length"] == "100000"

    def gen() -> Iterator[bytes]:
        yield b"hi"
        yield b"there"

    r = requests.post(f"{httpbin}/post", data=gen())
    assert r.json()["data"] == "hithere"
    assert r.request.headers["Transfer-Encoding"] == "chunked"


# -- status codes, headers, cookies --------------------------------------------------------


def test_status_codes(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/get")
    assert r.status_code == requests.codes.ok
    assert r.ok and r.reason == "OK"
    assert r.raise_for_status() is None
    bad = requests.get(f"{httpbin}/status/404")
    assert bad.status_code == requests.codes.not_found
    assert not bad.ok
    with pytest.raises(requests.exceptions.HTTPError) as info:
        bad.raise_for_status()
    assert info.value.response is bad
    assert str(info.value).startswith("404 Client Error: NOT FOUND for url: ")
    with pytest.raises(requests.HTTPError, match="500 Server Error"):
        requests.get(f"{httpbin}/status/500").raise_for_status()


def test_response_headers(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/response-headers", params={"X-Thing": "a"})
    assert r.headers["Content-Type"] == "application/json"
    assert r.headers.get("content-type") == "application/json"
    assert r.headers["x-thing"] == r.headers["X-THING"] == "a"


def test_response_cookies(requests: Any, httpbin: str) -> None:
    r = requests.get(
        f"{httpbin}/response-headers", params={"Set-Cookie": "example_cookie_name=working"}
    )
    assert r.cookies["example_cookie_name"] == "working"


def test_sending_cookies(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/cookies", cookies={"cookies_are": "working"})
    assert r.json() == {"cookies": {"cookies_are": "working"}}
    jar = requests.cookies.RequestsCookieJar()
    jar.set("tasty_cookie", "yum", domain="127.0.0.1", path="/cookies")
    jar.set("gross_cookie", "blech", domain="127.0.0.1", path="/elsewhere")
    r = requests.get(f"{httpbin}/cookies", cookies=jar)
    assert r.json() == {"cookies": {"tasty_cookie": "yum"}}
    assert jar.get_dict() == {"tasty_cookie": "yum", "gross_cookie": "blech"}
    assert requests.utils.dict_from_cookiejar(jar)["gross_cookie"] == "blech"


# -- redirection, timeouts, errors ---------------------------------------------------------


def test_redirects_and_history(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/redirect/2")
    assert r.url == f"{httpbin}/get" and r.status_code == 200
    assert [h.status_code for h in r.history] == [302, 302]
    assert isinstance(r.url, str)
    r = requests.get(f"{httpbin}/redirect/2", allow_redirects=False)
    assert r.status_code == 302 and r.history == [] and r.is_redirect
    # HEAD does not follow unless asked.
    assert requests.head(f"{httpbin}/redirect/1").status_code == 302
    r = requests.head(f"{httpbin}/redirect/1", allow_redirects=True)
    assert r.status_code == 200 and r.url == f"{httpbin}/get"
    # 303 turns POST into GET; 307 keeps the method and body.
    r = requests.post(f"{httpbin}/redirect-to", params={"url": "/anything", "status_code": 303})
    assert r.json()["method"] == "GET"
    r = requests.post(
        f"{httpbin}/redirect-to", params={"url": "/anything", "status_code": 307}, data="kept"
    )
    assert r.json()["method"] == "POST" and r.json()["data"] == "kept"


def test_too_many_redirects(requests: Any, httpbin: str) -> None:
    s = requests.Session()
    s.max_redirects = 3
    with pytest.raises(requests.TooManyRedirects):
        s.get(f"{httpbin}/redirect/5")
    with pytest.raises(requests.exceptions.RequestException):
        s.get(f"{httpbin}/redirect/5")
    s.close()


def test_read_timeout(requests: Any, httpbin: str) -> None:
    url = f"{httpbin}/delay/{SLOW_ENDPOINT_DELAY_S}"
    with pytest.raises(requests.exceptions.ReadTimeout):
        requests.get(url, timeout=0.5)
    with pytest.raises(requests.Timeout):
        requests.get(url, timeout=(5, 0.5))
    assert requests.get(f"{httpbin}/delay/0", timeout=5).status_code == 200


def test_connection_refused(requests: Any, closed_port: int) -> None:
    with pytest.raises(requests.ConnectionError) as info:
        requests.get(f"http://127.0.0.1:{closed_port}/", timeout=5)
    assert isinstance(info.value, requests.exceptions.RequestException)
    assert isinstance(info.value, IOError)
    assert info.value.request is not None


def test_bad_urls(requests: Any) -> None:
    with pytest.raises(requests.exceptions.MissingSchema):
        requests.get("example.com/path")
    with pytest.raises(requests.exceptions.InvalidURL):
        requests.get("http://")
    with pytest.raises(requests.exceptions.InvalidSchema):
        requests.get("ftp://example.com/")
    with pytest.raises(requests.exceptions.InvalidURL):
        requests.get("http://127.0.0.1:notaport/")
    with pytest.raises(ValueError):  # MissingSchema is a ValueError too
        requests.get("nowhere")


def test_invalid_headers(requests: Any, httpbin: str) -> None:
    with pytest.raises(requests.exceptions.InvalidHeader):
        requests.get(f"{httpbin}/get", headers={"X-Evil": "a\r\nInjected: 1"})
    with pytest.raises(requests.exceptions.InvalidHeader):
        requests.get(f"{httpbin}/get", headers={"X-Number": 1})
    with pytest.raises(ValueError):  # InvalidHeader is a ValueError too
        requests.get(f"{httpbin}/get", headers={" X-Space": "v"})


def test_exception_hierarchy(requests: Any) -> None:
    exc = requests.exceptions
    assert issubclass(exc.RequestException, IOError)
    assert issubclass(exc.ConnectTimeout, exc.ConnectionError)
    assert issubclass(exc.ConnectTimeout, exc.Timeout)
    assert issubclass(exc.ReadTimeout, exc.Timeout)
    assert issubclass(exc.SSLError, exc.ConnectionError)
    assert issubclass(exc.ProxyError, exc.ConnectionError)
    assert issubclass(exc.JSONDecodeError, exc.InvalidJSONError)
    for name in ("HTTPError", "TooManyRedirects", "ChunkedEncodingError", "ContentDecodingError"):
        assert issubclass(getattr(exc, name), exc.RequestException)
    assert requests.Timeout is exc.Timeout and requests.ConnectionError is exc.ConnectionError
    err = exc.HTTPError("boom", response=None)
    assert err.response is None and err.request is None


# -- advanced: sessions --------------------------------------------------------------------


def test_session_persists_cookies(requests: Any, httpbin: str) -> None:
    with requests.Session() as s:
        s.get(f"{httpbin}/cookies/set/sessioncookie/123456789")
        r = s.get(f"{httpbin}/cookies")
        assert r.json() == {"cookies": {"sessioncookie": "123456789"}}
        assert s.cookies.get_dict() == {"sessioncookie": "123456789"}
        # Method-level cookies are sent once and not kept.
        r = s.get(f"{httpbin}/cookies", cookies={"from-my": "browser"})
        assert r.json() == {"cookies": {"from-my": "browser", "sessioncookie": "123456789"}}
        assert "from-my" not in s.cookies


def test_session_settings_after_construction(requests: Any, httpbin: str) -> None:
    s = requests.Session()
    s.auth = ("user", "pass")
    s.headers.update({"x-test": "true"})
    s.params = {"always": "1"}
    r = s.get(f"{httpbin}/headers", headers={"x-test2": "true"})
    headers = r.json()["headers"]
    assert headers["X-Test"] == "true" and headers["X-Test2"] == "true"
    assert headers["Authorization"].startswith("Basic ")
    assert r.url.endswith("?always=1")
    assert s.get(f"{httpbin}/basic-auth/user/pass").status_code == 200
    # A None value at the request level removes a session header.
    r = s.get(f"{httpbin}/headers", headers={"x-test": None})
    assert "X-Test" not in r.json()["headers"]
    s.cookies.set("k", "v")
    assert s.get(f"{httpbin}/cookies").json() == {"cookies": {"k": "v"}}
    s.stream = True
    r = s.get(f"{httpbin}/stream/2")
    assert len(list(r.iter_lines())) == 2
    s.close()


def test_session_headers_replaced_and_removed(requests: Any, httpbin: str) -> None:
    with requests.Session() as s:
        s.headers["Accept"] = "application/json"
        s.headers["X-Gone"] = "soon"
        del s.headers["X-Gone"]
        headers = s.get(f"{httpbin}/headers").json()["headers"]
        assert "X-Gone" not in headers
        assert headers["Accept"] == "application/json"


def test_request_and_response_objects(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/get", headers={"X-Foo": "bar"})
    assert r.request.headers["X-Foo"] == "bar"
    assert r.request.method == "GET" and r.request.url == f"{httpbin}/get"
    assert r.elapsed.total_seconds() >= 0
    assert r.headers["content-type"] == "application/json"


# -- prepared requests ---------------------------------------------------------------------


def test_prepared_requests(requests: Any, httpbin: str) -> None:
    s = requests.Session()
    req = requests.Request(
        "POST", f"{httpbin}/post", data={"k": "v"}, headers={"X-Custom": "1"}, params={"q": "1"}
    )
    prepped = req.prepare()
    assert prepped.body == "k=v"
    assert prepped.headers["Content-Type"] == "application/x-www-form-urlencoded"
    prepped.body = "changed=yes"
    prepped.headers["Content-Length"] = str(len(prepped.body))
    del prepped.headers["X-Custom"]
    r = s.send(prepped, timeout=10)
    assert r.json()["form"] == {"changed": "yes"}
    assert "X-Custom" not in r.json()["headers"]
    assert r.json()["args"] == {"q": "1"}

    s.headers["X-Session"] = "yes"
    prepped = s.prepare_request(requests.Request("GET", f"{httpbin}/headers"))
    assert prepped.headers["X-Session"] == "yes"
    settings = s.merge_environment_settings(prepped.url, {}, None, None, None)
    assert set(settings) == {"proxies", "stream", "verify", "cert"}
    r = s.send(prepped, **settings)
    assert r.json()["headers"]["X-Session"] == "yes"
    s.close()


def test_prepared_json_and_files(requests: Any, httpbin: str) -> None:
    p = requests.Request("PUT", f"{httpbin}/put", json={"a": [1, 2]}).prepare()
    assert json.loads(p.body) == {"a": [1, 2]}
    p = requests.Request("POST", f"{httpbin}/post", files={"f": ("n.txt", b"data")}).prepare()
    assert p.headers["Content-Type"].startswith("multipart/form-data; boundary=")
    with requests.Session() as s:
        assert s.send(p).json()["files"] == {"f": "data"}


def test_send_without_following(requests: Any, httpbin: str) -> None:
    with requests.Session() as s:
        p = s.prepare_request(requests.Request("GET", f"{httpbin}/redirect/1"))
        r = s.send(p, allow_redirects=False)
        assert r.status_code == 302
        assert r.next is not None and r.next.url == f"{httpbin}/get"
        assert s.send(r.next).status_code == 200


# -- auth, hooks, adapters -----------------------------------------------------------------


def test_auth(requests: Any, httpbin: str) -> None:
    from_module = importlib.import_module(f"{requests.__name__}.auth")
    url = f"{httpbin}/basic-auth/user/pass"
    assert requests.get(url, auth=from_module.HTTPBasicAuth("user", "pass")).status_code == 200
    assert requests.get(url, auth=("user", "pass")).status_code == 200
    assert requests.get(url).status_code == 401
    digest = f"{httpbin}/digest-auth/auth/user/pass"
    r = requests.get(digest, auth=requests.auth.HTTPDigestAuth("user", "pass"))
    assert r.status_code == 200 and r.json() == {"authenticated": True, "user": "user"}
    assert [h.status_code for h in r.history] == [401]  # the challenge
    assert r.request.headers["Authorization"].startswith("Digest ")
    r = requests.get(digest, auth=requests.auth.HTTPDigestAuth("user", "wrong"))
    assert r.status_code == 401


def test_custom_auth(requests: Any, httpbin: str) -> None:
    class PizzaAuth(requests.auth.AuthBase):
        """Attaches HTTP Pizza Authentication to the given Request object."""

        def __init__(self, username: str) -> None:
            self.username = username

        def __call__(self, r: Any) -> Any:
            r.headers["X-Pizza"] = self.username
            return r

    r = requests.get(f"{httpbin}/headers", auth=PizzaAuth("kenneth"))
    assert r.json()["headers"]["X-Pizza"] == "kenneth"
    with requests.Session() as s:
        s.auth = PizzaAuth("margherita")
        assert s.get(f"{httpbin}/headers").json()["headers"]["X-Pizza"] == "margherita"


def test_event_hooks(requests: Any, httpbin: str) -> None:
    seen: list[str] = []

    def print_url(r: Any, *args: Any, **kwargs: Any) -> None:
        seen.append(r.url)

    def record_hook(r: Any, *args: Any, **kwargs: Any) -> Any:
        r.hook_called = True
        return r

    r = requests.get(f"{httpbin}/get", hooks={"response": [print_url, record_hook]})
    assert seen == [f"{httpbin}/get"] and r.hook_called is True
    with requests.Session() as s:
        s.hooks["response"].append(print_url)
        s.get(f"{httpbin}/redirect/1")
        # The hook sees every response, the redirect included.
        assert seen[1:] == [f"{httpbin}/redirect/1", f"{httpbin}/get"]


def test_mounted_adapters(requests: Any, httpbin: str, closed_port: int) -> None:
    adapters = importlib.import_module(f"{requests.__name__}.adapters")
    with requests.Session() as s:
        adapter = adapters.HTTPAdapter(max_retries=2, pool_connections=4, pool_maxsize=4)
        s.mount("http://", adapter)
        assert s.get_adapter(f"{httpbin}/get") is adapter
        assert s.get(f"{httpbin}/get").status_code == 200
        with pytest.raises(requests.ConnectionError):
            s.get(f"http://127.0.0.1:{closed_port}/", timeout=5)

    class TimeoutAdapter(adapters.HTTPAdapter):  # type: ignore[name-defined,misc]
        """A default timeout for every request (a common recipe)."""

        def send(self, request: Any, **kwargs: Any) -> Any:
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = 0.5
            return super().send(request, **kwargs)

    with requests.Session() as s:
        s.mount(f"{httpbin}/delay", TimeoutAdapter())
        with pytest.raises(requests.exceptions.ReadTimeout):
            s.get(f"{httpbin}/delay/{SLOW_ENDPOINT_DELAY_S}")
        assert s.get(f"{httpbin}/get").status_code == 200  # the default adapter


def test_urllib3_retry_object(requests: Any, httpbin: str, closed_port: int) -> None:
    retry = pytest.importorskip("urllib3.util.retry").Retry
    adapters = importlib.import_module(f"{requests.__name__}.adapters")
    with requests.Session() as s:
        s.mount("http://", adapters.HTTPAdapter(max_retries=retry(total=2, backoff_factor=0)))
        assert s.get(f"{httpbin}/get").status_code == 200
        with pytest.raises(requests.ConnectionError):
            s.get(f"http://127.0.0.1:{closed_port}/", timeout=5)
    # Statuses of status_forcelist are retried; once the retries are spent, RetryError.
    with requests.Session() as s:
        policy = retry(total=2, status_forcelist=[503], backoff_factor=0)
        s.mount("http://", adapters.HTTPAdapter(max_retries=policy))
        with pytest.raises(requests.exceptions.RetryError):
            s.get(f"{httpbin}/status/503")
        assert s.get(f"{httpbin}/status/500").status_code == 500  # not in the list
        policy = retry(total=2, status_forcelist=[503], backoff_factor=0, raise_on_status=False)
        s.mount("http://", adapters.HTTPAdapter(max_retries=policy))
        assert s.get(f"{httpbin}/status/503").status_code == 503


def test_socks_proxy(requests: Any, httpbin: str) -> None:
    # requests speaks SOCKS with its PySocks extra (requests[socks]); the facade's engine
    # speaks it itself. The same call works with both.
    pytest.importorskip("socks", reason="PySocks (requests[socks]) is not installed")
    with Microsocks() as proxy:
        r = requests.get(f"{httpbin}/get", proxies={"http": proxy.url("socks5h")})
        assert r.status_code == 200
        assert [host for host, _ in proxy.targets()] == ["127.0.0.1"]


# -- streaming, links, body workflow -------------------------------------------------------


def test_streaming_lines(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/stream/20", stream=True)
    lines = [line for line in r.iter_lines() if line]
    assert len(lines) == 20 and all(isinstance(line, bytes) for line in lines)
    assert json.loads(lines[3])["id"] == 3
    r = requests.get(f"{httpbin}/stream/3", stream=True)
    if r.encoding is None:
        r.encoding = "utf-8"
    decoded = list(r.iter_lines(decode_unicode=True))
    assert all(isinstance(line, str) for line in decoded) and len(decoded) == 3


def test_body_content_workflow(requests: Any, httpbin: str) -> None:
    with requests.get(f"{httpbin}/bytes/1000", stream=True) as r:
        assert int(r.headers["content-length"]) == 1000
        assert len(r.content) == 1000
    r = requests.get(f"{httpbin}/stream-bytes/3000?chunk_size=100", stream=True)
    assert sum(len(c) for c in r.iter_content(chunk_size=None)) == 3000
    r.close()


def test_link_headers(requests: Any, httpbin: str) -> None:
    link = '<https://api.example/page=2>; rel="next", <https://api.example/page=5>; rel="last"'
    r = requests.head(f"{httpbin}/response-headers", params={"Link": link})
    assert r.links["next"] == {"url": "https://api.example/page=2", "rel": "next"}
    assert r.links["last"]["url"] == "https://api.example/page=5"


def test_proxies(requests: Any, httpbin: str) -> None:
    from proxy_server import ProxyServer

    with ProxyServer() as proxy:
        r = requests.get(f"{httpbin}/get", proxies={"http": proxy.url})
        assert r.json()["url"] == f"{httpbin}/get"
        assert len(proxy.requests) == 1
        with requests.Session() as s:
            s.proxies = {"http": proxy.url}
            s.trust_env = False
            assert s.get(f"{httpbin}/get").status_code == 200
        assert len(proxy.requests) == 2


def test_tls_verify_path_set_after_construction(requests: Any, tmp_path: Any) -> None:
    from nodelay import _core

    ca = tmp_path / "ca.pem"
    ca.write_text(_core.test_ca_pem())
    server = _core.TestServer(tls=True)
    url = server.url.replace("127.0.0.1", "localhost") + "/bytes/10"
    try:
        with requests.Session() as s:
            s.trust_env = False  # REQUESTS_CA_BUNDLE must not decide
            with pytest.raises(requests.exceptions.SSLError):
                s.get(url, timeout=10)
            s.verify = str(ca)
            assert s.get(url, timeout=10).content == b"abcdefghij"
            assert requests.get(url, verify=False, timeout=10).status_code == 200
            with pytest.raises(OSError, match="invalid path"):
                s.get(url, verify=str(tmp_path / "missing.pem"), timeout=10)
    finally:
        server.close()


def test_environment_proxy_is_ignored_without_trust_env(
    requests: Any, httpbin: str, monkeypatch: pytest.MonkeyPatch, closed_port: int
) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{closed_port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with requests.Session() as s:
        with pytest.raises(requests.ConnectionError):
            s.get(f"{httpbin}/get", timeout=5)
        s.trust_env = False
        assert s.get(f"{httpbin}/get", timeout=5).status_code == 200


def test_module_level_stream_outlives_its_session(requests: Any, httpbin: str) -> None:
    r = requests.get(f"{httpbin}/stream-bytes/50000?chunk_size=1000", stream=True)
    assert len(b"".join(r.iter_content(4096))) == 50000
    assert os.environ.get("NODELAY_NEVER_SET") is None
