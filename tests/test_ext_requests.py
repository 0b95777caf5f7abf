"""``nodelay.ext.requests``: requests' ``Session`` with nodelay's ``Adapter`` mounted.

Every test that makes a request runs twice in the same run: with a plain
``requests.Session`` (the oracle: a test that fails there is a wrong test) and with
``nodelay.ext.requests.Session``. The embedded server, scripted raw-socket servers and a
real proxy are the peers.
"""

from __future__ import annotations

import gzip
import io
import pickle
import shutil
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
from conftest import expected_bytes
from nodelay import _core
from nodelay.ext.requests import Adapter, Session
from proxy_server import ProxyServer
from scripted import Close, Recv, ScriptedServer, Send, SendSlowly, Sleep, response
from urllib3.util.retry import Retry

SESSIONS = ("requests", "nodelay")
SLOW_S = 3
"""Seconds the slow routes take: far above the read timeouts the tests set."""
SLOW_MS = SLOW_S * 1000
SHORT_TIMEOUT_S = 0.3


def _session(kind: str) -> requests.Session:
    return requests.Session() if kind == "requests" else Session()


@pytest.fixture(params=SESSIONS)
def session(request: pytest.FixtureRequest) -> Iterator[requests.Session]:
    """A plain ``requests.Session`` (the oracle) or nodelay's."""
    s = _session(request.param)
    s.trust_env = False  # the machine's proxy variables are no business of these tests
    with s:
        yield s


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def tls_server() -> Iterator[_core.TestServer]:
    srv = _core.TestServer("127.0.0.1", 0, 1, tls=True)
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    path.write_text(_core.test_ca_pem())
    return str(path)


def test_session_is_requests_session_with_adapter() -> None:
    s = Session()
    assert isinstance(s, requests.Session)
    for prefix in ("http://", "https://"):
        adapter = s.get_adapter(prefix + "example.org/")
        assert isinstance(adapter, Adapter)
        assert isinstance(adapter, requests.adapters.HTTPAdapter)
    # requests' own send(), not an override: what responses and vcrpy rely on.
    assert "send" not in Adapter.__dict__


def test_import_nodelay_does_not_import_requests() -> None:
    code = "import sys, nodelay, nodelay.requests; print('requests' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_get(session: requests.Session, server: _core.TestServer) -> None:
    r = session.get(f"{server.url}/bytes/202")
    assert r.status_code == 200
    assert r.reason == "OK"
    assert r.content == expected_bytes(202)
    assert r.headers["content-length"] == "202"
    assert isinstance(r, requests.Response)
    assert r.raw.headers["Content-Length"] == "202"
    assert r.url == f"{server.url}/bytes/202"
    assert r.raw.version == 11


def test_keep_alive(session: requests.Session) -> None:
    with ScriptedServer(
        [Recv(), Send(response(body=b"one")), Recv(), Send(response(body=b"two"))]
    ) as srv:
        url = f"http://127.0.0.1:{srv.port}/"
        assert session.get(url).content == b"one"
        assert session.get(url).content == b"two"
        assert srv.connections == 1


def _inflate(data: bytes) -> bytes:
    """A deflate body: zlib-wrapped (RFC 9110) or, as some servers send it, raw."""
    try:
        return zlib.decompress(data)
    except zlib.error:
        return zlib.decompress(data, -zlib.MAX_WBITS)


@pytest.mark.parametrize("route", ["gzip", "deflate"])
def test_content_decoded_as_requests_decodes(
    session: requests.Session, server: _core.TestServer, route: str
) -> None:
    r = session.get(f"{server.url}/{route}/5000")
    assert r.headers["content-encoding"] == route
    assert r.content == expected_bytes(5000)
    raw = session.get(f"{server.url}/{route}/5000", stream=True).raw.read(decode_content=False)
    assert raw != expected_bytes(5000)
    decoded = gzip.decompress(raw) if route == "gzip" else _inflate(raw)
    assert decoded == expected_bytes(5000)
    streamed = session.get(f"{server.url}/{route}/5000", stream=True)
    assert streamed.raw.read(decode_content=True) == expected_bytes(5000)


def test_stream_iter_content_and_lines(session: requests.Session, server: _core.TestServer) -> None:
    with session.get(f"{server.url}/chunked/100000", stream=True) as r:
        pieces = list(r.iter_content(chunk_size=4096))
    assert b"".join(pieces) == expected_bytes(100000)
    assert max(len(p) for p in pieces) <= 4096
    with ScriptedServer(
        [
            Recv(),
            Send(response(body=b"alpha\nbeta\r\ngamma", headers=[("Content-Type", "text/plain")])),
        ]
    ) as srv:
        with session.get(f"http://127.0.0.1:{srv.port}/", stream=True) as r:
            assert list(r.iter_lines()) == [b"alpha", b"beta", b"gamma"]


def test_copyfileobj_raw(
    session: requests.Session, server: _core.TestServer, tmp_path: Any
) -> None:
    target = tmp_path / "out.bin"
    with session.get(f"{server.url}/bytes/300000", stream=True) as r, open(target, "wb") as f:
        shutil.copyfileobj(r.raw, f)
    assert target.read_bytes() == expected_bytes(300000)


def test_raw_read_sizes(session: requests.Session, server: _core.TestServer) -> None:
    r = session.get(f"{server.url}/bytes/1000", stream=True)
    assert r.raw.read(10) == expected_bytes(10)
    assert r.raw.read() == expected_bytes(1000)[10:]
    assert r.raw.read(10) == b""


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        (lambda: {"data": {"a": "1", "b": "two"}}, b"a=1&b=two"),
        (lambda: {"data": "text body"}, b"text body"),
        (lambda: {"json": {"k": [1, 2]}}, b'{"k": [1, 2]}'),
        (lambda: {"data": (piece for piece in (b"gen", b"erated"))}, b"generated"),
        (lambda: {"data": io.BytesIO(b"file body")}, b"file body"),
    ],
    ids=["form", "str", "json", "generator", "file"],
)
def test_bodies(
    session: requests.Session,
    server: _core.TestServer,
    kwargs: Callable[[], dict[str, Any]],
    expected: bytes,
) -> None:
    r = session.post(f"{server.url}/echo", **kwargs())
    assert r.status_code == 200
    assert r.content == expected


def test_multipart_upload(session: requests.Session, server: _core.TestServer) -> None:
    r = session.post(f"{server.url}/anything", files={"f": ("a.txt", b"hello")}, data={"x": "1"})
    seen = r.json()
    sent_type = dict(seen["headers"])["content-type"]
    assert sent_type == r.request.headers["Content-Type"]
    assert seen["body"] == r.request.body.decode()
    assert 'name="f"; filename="a.txt"\r\n\r\nhello\r\n' in seen["body"]


def test_post_without_body_sends_zero_length(session: requests.Session) -> None:
    with ScriptedServer([Recv(), Send(response(body=b"ok"))]) as srv:
        session.post(f"http://127.0.0.1:{srv.port}/")
        head = srv.requests[0].lower()
        assert b"content-length: 0\r\n" in head


def test_cookies_and_redirects_stay_requests(
    session: requests.Session, server: _core.TestServer
) -> None:
    session.get(f"{server.url}/cookies/set?flavour=oat")
    assert session.cookies.get("flavour") == "oat"
    assert session.get(f"{server.url}/cookies").json() == {"cookies": {"flavour": "oat"}}
    r = session.get(f"{server.url}/redirect/2")
    assert [h.status_code for h in r.history] == [302, 302]
    assert r.url == f"{server.url}/redirect/0"


def test_refused_is_connection_error(session: requests.Session, closed_port: int) -> None:
    with pytest.raises(requests.exceptions.ConnectionError) as info:
        session.get(f"http://127.0.0.1:{closed_port}/")
    assert not isinstance(info.value, requests.exceptions.Timeout)


def test_read_timeout(session: requests.Session, server: _core.TestServer) -> None:
    started = time.monotonic()
    with pytest.raises(requests.exceptions.ReadTimeout):
        session.get(f"{server.url}/delay/{SLOW_MS}", timeout=(5, SHORT_TIMEOUT_S))
    assert time.monotonic() - started < SLOW_S


def test_connect_timeout(session: requests.Session) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    addr = listener.getsockname()
    fillers = []
    try:
        for _ in range(8):  # fill the accept queue: later connects hang
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(addr)
            fillers.append(filler)
        time.sleep(0.05)
        with pytest.raises(requests.exceptions.ConnectTimeout):
            session.get(f"http://{addr[0]}:{addr[1]}/", timeout=SHORT_TIMEOUT_S)
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def test_truncated_body_is_chunked_encoding_error(session: requests.Session) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
    with ScriptedServer([Recv(), Send(head + b"x" * 10), Close()]) as srv:
        with pytest.raises(requests.exceptions.ChunkedEncodingError):
            session.get(f"http://127.0.0.1:{srv.port}/")


def test_bad_gzip_is_content_decoding_error(session: requests.Session) -> None:
    body = b"this is not gzip at all"
    reply = response(body=body, headers=[("Content-Encoding", "gzip")])
    with ScriptedServer([Recv(), Send(reply)]) as srv:
        with pytest.raises(requests.exceptions.ContentDecodingError):
            session.get(f"http://127.0.0.1:{srv.port}/")


def test_stalled_body_read_timeout(session: requests.Session) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
    with ScriptedServer([Recv(), Send(head + b"x" * 10), Sleep(SLOW_S)]) as srv:
        r = session.get(f"http://127.0.0.1:{srv.port}/", stream=True, timeout=SHORT_TIMEOUT_S)
        with pytest.raises(requests.exceptions.ConnectionError):
            r.content  # noqa: B018  (requests' iter_content: a read timeout while reading)


def test_invalid_url(session: requests.Session) -> None:
    with pytest.raises(requests.exceptions.InvalidURL):
        session.get("http://127.0.0.1:99999/")


def test_tls_verify(session: requests.Session, tls_server: _core.TestServer, test_ca: str) -> None:
    url = f"https://localhost:{tls_server.port}/bytes/10"
    with pytest.raises(requests.exceptions.SSLError):
        session.get(url)  # requests trusts certifi's bundle, not the test CA
    assert session.get(url, verify=test_ca).content == expected_bytes(10)
    assert session.get(url, verify=False).content == expected_bytes(10)


def test_verify_differs_per_request_across_threads(
    session: requests.Session, tls_server: _core.TestServer, test_ca: str
) -> None:
    """Requests to one origin with different ``verify`` values at once: each is checked
    (or not) as its own call says, whatever the others do meanwhile."""
    url = f"https://localhost:{tls_server.port}/bytes/10"
    outcomes: dict[str, list[str]] = {"default": [], "test-ca": [], "off": []}
    verify: dict[str, Any] = {"default": True, "test-ca": test_ca, "off": False}

    def run(kind: str) -> None:
        for _ in range(10):
            try:
                session.get(url, verify=verify[kind]).raise_for_status()
                outcomes[kind].append("ok")
            except requests.exceptions.SSLError:
                outcomes[kind].append("ssl-error")

    threads = [threading.Thread(target=run, args=(kind,)) for kind in outcomes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes == {"default": ["ssl-error"] * 10, "test-ca": ["ok"] * 10, "off": ["ok"] * 10}


def test_tls_verify_directory(
    session: requests.Session, tls_server: _core.TestServer, test_ca: str, tmp_path: Any
) -> None:
    shutil.copy(test_ca, tmp_path / "test-ca.pem")
    if not isinstance(session.get_adapter("https://x/"), Adapter):
        # OpenSSL reads a capath by subject hash names only (c_rehash): give it one.
        out = subprocess.run(
            ["openssl", "x509", "-hash", "-noout", "-in", test_ca], capture_output=True, text=True
        )
        if out.returncode != 0:
            pytest.skip("openssl is not installed")
        shutil.copy(test_ca, tmp_path / f"{out.stdout.strip()}.0")
    url = f"https://localhost:{tls_server.port}/bytes/10"
    assert session.get(url, verify=str(tmp_path)).content == expected_bytes(10)


def test_missing_ca_bundle_and_cert_files(
    session: requests.Session, tls_server: _core.TestServer, tmp_path: Any
) -> None:
    url = f"https://localhost:{tls_server.port}/"
    with pytest.raises(OSError, match="invalid path"):
        session.get(url, verify=str(tmp_path / "missing.pem"))
    with pytest.raises(OSError, match="invalid path"):
        session.get(url, verify=False, cert=str(tmp_path / "missing-cert.pem"))


def test_proxy_from_environment_and_no_proxy(
    server: _core.TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for kind in SESSIONS:
        with ProxyServer() as proxy:
            monkeypatch.setenv("HTTP_PROXY", proxy.url)
            monkeypatch.setenv("NO_PROXY", "")
            with _session(kind) as s:
                assert s.get(f"{server.url}/bytes/5").content == expected_bytes(5)
            assert [req.target for req in proxy.requests] == [f"{server.url}/bytes/5"], kind
            monkeypatch.setenv("NO_PROXY", "127.0.0.1")
            with _session(kind) as s:
                assert s.get(f"{server.url}/bytes/6").content == expected_bytes(6)
            assert len(proxy.requests) == 1, kind  # bypassed


def test_proxy_argument_https_tunnel(
    session: requests.Session, tls_server: _core.TestServer, test_ca: str
) -> None:
    with ProxyServer() as proxy:
        url = f"https://localhost:{tls_server.port}/bytes/7"
        r = session.get(url, proxies={"https": proxy.url}, verify=test_ca)
        assert r.content == expected_bytes(7)
        assert proxy.requests[0].method == "CONNECT"


def test_refused_proxy_is_proxy_error(session: requests.Session, closed_port: int) -> None:
    with pytest.raises(requests.exceptions.ProxyError):
        session.get("http://example.invalid/", proxies={"http": f"http://127.0.0.1:{closed_port}"})


def test_status_retries_follow_urllib3_retry(session: requests.Session) -> None:
    unavailable = response(503, b"busy", reason="Service Unavailable")
    script = [
        Recv(),
        Send(unavailable),
        Recv(),
        Send(unavailable),
        Recv(),
        Send(response(body=b"ok")),
    ]
    with ScriptedServer(script) as srv:
        retry = Retry(total=3, status_forcelist=[503], backoff_factor=0)
        session.mount("http://", type(session.get_adapter("http://x/"))(max_retries=retry))
        r = session.get(f"http://127.0.0.1:{srv.port}/")
        assert r.content == b"ok"
        assert len(srv.requests) == 3


def test_connect_retries(session: requests.Session, closed_port: int) -> None:
    session.mount("http://", type(session.get_adapter("http://x/"))(max_retries=2))
    with pytest.raises(requests.exceptions.ConnectionError, match="Max retries exceeded"):
        session.get(f"http://127.0.0.1:{closed_port}/")


def test_session_and_adapter_pickle(server: _core.TestServer) -> None:
    s = pickle.loads(pickle.dumps(Session()))
    assert isinstance(s.get_adapter("http://x/"), Adapter)
    assert s.get(f"{server.url}/bytes/3").content == expected_bytes(3)


def test_threads_share_a_session(server: _core.TestServer) -> None:
    errors: list[BaseException] = []
    with Session() as s:

        def worker() -> None:
            try:
                for _ in range(20):
                    assert s.get(f"{server.url}/bytes/202").content == expected_bytes(202)
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


def test_http2_adapter(tls_server: _core.TestServer, test_ca: str) -> None:
    srv = _core.TestServer("127.0.0.1", 0, 1, tls=True, http2=True)
    try:
        with requests.Session() as s:
            s.mount("https://", Adapter(http2=True))
            r = s.get(f"https://localhost:{srv.port}/bytes/20", verify=test_ca)
            assert r.content == expected_bytes(20)
            assert r.raw.version == 20
    finally:
        srv.close()


def test_requests_ca_bundle_variable(
    tls_server: _core.TestServer, test_ca: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", test_ca)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    for kind in SESSIONS:
        with _session(kind) as s:
            r = s.get(f"https://localhost:{tls_server.port}/bytes/4")
            assert r.content == expected_bytes(4), kind


def test_utf8_location_is_followed_as_requests_follows_it(session: requests.Session) -> None:
    moved = "HTTP/1.1 301 Moved\r\nLocation: /café\r\nContent-Length: 0\r\n\r\n".encode()
    with ScriptedServer([Recv(), Send(moved), Recv(), Send(response(body=b"here"))]) as srv:
        r = session.get(f"http://127.0.0.1:{srv.port}/")
        assert r.content == b"here"
        assert r.url == f"http://127.0.0.1:{srv.port}/caf%C3%A9"
        assert srv.requests[1].startswith(b"GET /caf%C3%A9 HTTP/1.1\r\n")


def test_header_bytes_read_as_http_client_reads_them(session: requests.Session) -> None:
    """Each byte of a header field is one Latin-1 character, UTF-8 or not (http.client's
    view, which requests and the tools reading ``raw.headers`` and cookies rely on)."""
    head = b"HTTP/1.1 200 OK\r\nX-Latin: caf\xe9\r\nX-Utf8: caf\xc3\xa9\r\n"
    head += b"Set-Cookie: name=caf\xe9\r\nContent-Length: 2\r\n\r\nok"
    with ScriptedServer([Recv(), Send(head)]) as srv:
        r = session.get(f"http://127.0.0.1:{srv.port}/")
    assert r.headers["X-Latin"] == "caf\xe9"
    assert r.headers["X-Utf8"] == "caf\xc3\xa9"
    assert r.raw.headers["X-Latin"] == "caf\xe9"
    assert r.cookies["name"] == "caf\xe9"


def test_read_timeout_message_is_urllib3s(
    session: requests.Session, server: _core.TestServer
) -> None:
    with pytest.raises(requests.exceptions.ReadTimeout, match="Read timed out"):
        session.get(f"{server.url}/delay/{SLOW_MS}", timeout=SHORT_TIMEOUT_S)


def test_proxy_credentials_go_to_the_proxy_only(
    session: requests.Session, server: _core.TestServer
) -> None:
    with ProxyServer(auth=("user", "secret")) as proxy:
        url = f"{server.url}/headers"
        r = session.get(url, proxies={"http": proxy.url_with("user", "secret")})
        assert r.status_code == 200
        assert proxy.requests[0].header("Proxy-Authorization") is not None
        assert "proxy-authorization" not in r.json()["headers"]


def test_statuses_left_after_retries_are_retry_error(session: requests.Session) -> None:
    # One response per connection, said so: no client tries a connection the server closed.
    unavailable = response(
        503, b"busy", headers=[("Connection", "close")], reason="Service Unavailable"
    )
    with ScriptedServer([Recv(), Send(unavailable)]) as srv:
        retry = Retry(total=1, status_forcelist=[503], backoff_factor=0)
        session.mount("http://", type(session.get_adapter("http://x/"))(max_retries=retry))
        with pytest.raises(requests.exceptions.RetryError):
            session.get(f"http://127.0.0.1:{srv.port}/")
        assert len(srv.requests) == 2


def test_raw_read_waits_for_the_size_asked(session: requests.Session) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"
    script = [Recv(), Send(head), SendSlowly(b"abcdefghijkl", interval=0.02, chunk=3)]
    with ScriptedServer(script) as srv:
        r = session.get(f"http://127.0.0.1:{srv.port}/", stream=True)
        assert r.raw.read(5) == b"abcde"
        assert r.raw.read(5) == b"fghij"
        assert r.raw.read(5) == b"kl"


def test_pool_block_waits_for_a_connection() -> None:
    srv = _core.TestServer("127.0.0.1", 0, 1)
    try:
        with requests.Session() as s:
            s.mount("http://", Adapter(pool_maxsize=1, pool_block=True))
            statuses: list[int] = []
            threads = [
                threading.Thread(
                    target=lambda: statuses.append(s.get(f"{srv.url}/delay/200").status_code)
                )
                for _ in range(3)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert statuses == [200, 200, 200]
        assert srv.connections() == 1  # the others waited for the one connection
    finally:
        srv.close()
