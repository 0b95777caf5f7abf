"""Proxies (docs/hostile.md G26-G27) against a real loopback proxy (tests/proxy_server.py):
http forwarded in absolute form, https through CONNECT with the origin's certificate
checked, proxy credentials, keep-alive to the proxy, and the environment rules."""

from __future__ import annotations

import http.server
import json
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import nodelay
import pytest
import trustme
from nodelay import _core
from nodelay._proxy import engine_proxy_options, mask_url
from proxy_server import ProxyServer
from whoami_server import serving

pytestmark = pytest.mark.both_drivers

_ENV_NAMES = [
    f"{name}{suffix}" for name in ("http", "https", "all", "no") for suffix in ("_proxy", "_PROXY")
]
_ENV = [name.lower() if name.endswith("_proxy") else name for name in _ENV_NAMES]
_ENV_VARS = sorted({*_ENV, *(n.upper() for n in _ENV), "REQUEST_METHOD"})


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy variable from the machine running the tests leaks in."""
    for name in _ENV_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def proxy() -> Iterator[ProxyServer]:
    with ProxyServer() as srv:
        yield srv


def dead_port() -> int:
    """A loopback port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- an https origin that echoes the headers it received ----------------------------------


class _EchoHeaders(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._drain_body()  # answering before reading it would race the client's write
        body = json.dumps([[k, v] for k, v in self.headers.items()]).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _drain_body(self) -> None:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                self.rfile.read(size + 2)
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
        else:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def https_origin(ca: trustme.CA) -> Iterator[http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoHeaders)
    server.daemon_threads = True
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost").configure_cert(ctx)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with serving(server):
        yield server


def origin_headers(response: nodelay.Response) -> dict[str, str]:
    return {k.lower(): v for k, v in response.json()}


# -- http through the proxy -------------------------------------------------------------


def test_http_goes_through_the_proxy_in_absolute_form(
    proxy: ProxyServer, server: _core.TestServer
) -> None:
    with nodelay.Client(proxy=proxy.url) as client:
        r = client.get(f"{server.url}/anything/x?q=1")
    assert r.status_code == 200
    assert r.json()["path"] == "/anything/x"
    [seen] = proxy.requests
    assert (seen.method, seen.target) == ("GET", f"{server.url}/anything/x?q=1")
    assert seen.header("host") == server.url.removeprefix("http://")


def test_keep_alive_to_the_proxy_is_reused_across_origins(
    proxy: ProxyServer, server: _core.TestServer, other_server: _core.TestServer
) -> None:
    with nodelay.Client(proxy=proxy.url) as client:
        for url in (server.url, other_server.url, server.url, other_server.url):
            assert client.get(f"{url}/bytes/10").status_code == 200
    assert len(proxy.requests) == 4
    assert proxy.connections == 1


def test_post_body_is_forwarded(proxy: ProxyServer, server: _core.TestServer) -> None:
    with nodelay.Client(proxy=proxy.url) as client:
        r = client.post(f"{server.url}/echo", content=b"payload")
    assert r.content == b"payload"
    assert proxy.requests[0].method == "POST"


def test_chunked_body_is_forwarded(proxy: ProxyServer, server: _core.TestServer) -> None:
    with nodelay.Client(proxy=proxy.url) as client:
        r = client.post(f"{server.url}/echo", content=iter([b"pay", b"", b"load"]))
    assert r.content == b"payload"
    assert proxy.requests[0].header("transfer-encoding") == "chunked"


def test_proxy_credentials_go_to_the_proxy_only(server: _core.TestServer) -> None:
    with ProxyServer(auth=("user", "p@ss")) as proxy:
        url = f"http://user:p%40ss@127.0.0.1:{proxy.port}"
        r = nodelay.get(f"{server.url}/anything", proxy=url)
        assert r.status_code == 200
        # "user:p@ss" in base64; the origin never sees it.
        assert proxy.requests[0].header("proxy-authorization") == "Basic dXNlcjpwQHNz"
        assert "proxy-authorization" not in {k.lower() for k, _ in r.json()["headers"]}


def test_forwarding_proxy_refusing_credentials_answers_407(server: _core.TestServer) -> None:
    with ProxyServer(auth=("user", "right")) as proxy:
        r = nodelay.get(f"{server.url}/anything", proxy=proxy.url_with("user", "wrong"))
    # For a forwarded request the 407 is the response (as with requests and httpx).
    assert r.status_code == 407


# -- https through CONNECT --------------------------------------------------------------


def test_https_through_connect_is_verified_against_the_origin(
    proxy: ProxyServer, ca: trustme.CA, ca_file: str
) -> None:
    with https_origin(ca) as origin, nodelay.Client(proxy=proxy.url, verify=ca_file) as c:
        port = origin.server_address[1]
        for _ in range(3):
            r = c.get(f"https://localhost:{port}/secret")
            assert r.status_code == 200
    assert [(q.method, q.target) for q in proxy.requests] == [("CONNECT", f"localhost:{port}")]
    assert proxy.requests[0].header("host") == f"localhost:{port}"
    assert proxy.connections == 1, "the tunnel is pooled and reused"


def test_tunnel_checks_the_origin_certificate_name(
    proxy: ProxyServer, ca: trustme.CA, ca_file: str
) -> None:
    with https_origin(ca) as origin, nodelay.Client(proxy=proxy.url, verify=ca_file) as c:
        # The certificate is for "localhost", not for 127.0.0.1.
        with pytest.raises(nodelay.TLSError, match="not valid for this host name"):
            c.get(f"https://127.0.0.1:{origin.server_address[1]}/")


def test_tunnel_never_carries_proxy_authorization_to_the_origin(
    ca: trustme.CA, ca_file: str
) -> None:
    with ProxyServer(auth=("u", "p")) as proxy, https_origin(ca) as origin:
        r = nodelay.get(
            f"https://localhost:{origin.server_address[1]}/",
            proxy=proxy.url_with("u", "p"),
            verify=ca_file,
            headers={"Proxy-Authorization": "Basic bWU6c2VjcmV0", "X-Mine": "1"},
        )
        assert r.status_code == 200
        seen = origin_headers(r)
        assert seen.get("x-mine") == "1"
        assert "proxy-authorization" not in seen
        assert proxy.requests[0].header("proxy-authorization") == "Basic dTpw"


def test_connect_refused_with_407_is_a_proxy_error(ca: trustme.CA, ca_file: str) -> None:
    with ProxyServer(auth=("user", "right")) as proxy, https_origin(ca) as origin:
        url = f"https://localhost:{origin.server_address[1]}/"
        with pytest.raises(nodelay.ProxyError) as info:
            nodelay.get(url, proxy=proxy.url_with("user", "hunter2"), verify=ca_file)
        message = str(info.value)
        assert "407" in message and "refused the credentials" in message
        assert "hunter2" not in message and "hunter2" not in repr(info.value)
        assert info.value.url == url
        with pytest.raises(nodelay.ProxyError, match="requires credentials"):
            nodelay.get(url, proxy=proxy.url, verify=ca_file)


@pytest.mark.parametrize("status", [403, 500, 502])
def test_connect_refused_is_a_proxy_error_naming_the_status(
    status: int, ca: trustme.CA, ca_file: str
) -> None:
    with ProxyServer(refuse_connect=status) as proxy, https_origin(ca) as origin:
        with pytest.raises(nodelay.ProxyError, match=f": {status} Refused"):
            nodelay.get(
                f"https://localhost:{origin.server_address[1]}/",
                proxy=proxy.url,
                verify=ca_file,
            )


def test_unreachable_proxy_is_a_proxy_error_without_credentials() -> None:
    port = dead_port()
    with pytest.raises(nodelay.ProxyError) as info:
        nodelay.get("http://example.invalid/", proxy=f"http://me:hunter2@127.0.0.1:{port}")
    assert f"proxy http://127.0.0.1:{port}" in str(info.value)
    assert "hunter2" not in str(info.value)


def test_stalling_proxy_is_a_connect_timeout(scripted, ca_file: str) -> None:  # type: ignore[no-untyped-def]
    from scripted import Recv, Sleep

    stall = scripted([Recv(), Sleep(5)])
    with pytest.raises(nodelay.ConnectTimeout):
        nodelay.get(
            "https://localhost:1/", proxy=stall.url, verify=ca_file, timeout=nodelay.Timeout(0.3)
        )


def test_bad_proxy_urls_are_rejected_when_the_client_is_built() -> None:
    with pytest.raises(ValueError, match="unsupported proxy scheme 'ftp://'") as info:
        nodelay.Client(proxy="ftp://me:hunter2@127.0.0.1:1080")
    assert "hunter2" not in str(info.value)
    with pytest.raises(ValueError, match="invalid proxy URL") as info:
        nodelay.Client(proxy="http://me:hunter2@[::1")
    assert "hunter2" not in str(info.value)
    with pytest.raises(TypeError):
        nodelay.Client(proxy=3128)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown proxy key"):
        nodelay.Client(proxy={"ftp": "http://p:1"})


# -- the environment ----------------------------------------------------------------------


def test_http_proxy_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, proxy: ProxyServer, server: _core.TestServer
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    assert nodelay.get(f"{server.url}/bytes/3").status_code == 200
    assert len(proxy.requests) == 1


def test_lowercase_variables_win(
    monkeypatch: pytest.MonkeyPatch, proxy: ProxyServer, server: _core.TestServer
) -> None:
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead_port()}")
    monkeypatch.setenv("http_proxy", proxy.url)
    assert nodelay.get(f"{server.url}/bytes/3").status_code == 200
    assert len(proxy.requests) == 1


def test_empty_lowercase_variable_means_no_proxy(
    monkeypatch: pytest.MonkeyPatch, proxy: ProxyServer, server: _core.TestServer
) -> None:
    monkeypatch.setenv("http_proxy", "")
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    assert nodelay.get(f"{server.url}/bytes/3").status_code == 200
    assert proxy.requests == []


def test_all_proxy_is_the_fallback(
    monkeypatch: pytest.MonkeyPatch, proxy: ProxyServer, server: _core.TestServer
) -> None:
    monkeypatch.setenv("ALL_PROXY", proxy.url)
    assert nodelay.get(f"{server.url}/bytes/3").status_code == 200
    assert len(proxy.requests) == 1
    assert engine_proxy_options(None, True) == {
        "http_proxy": proxy.url,
        "https_proxy": proxy.url,
    }


def test_https_proxy_from_the_environment_tunnels(
    monkeypatch: pytest.MonkeyPatch, proxy: ProxyServer, ca: trustme.CA, ca_file: str
) -> None:
    monkeypatch.setenv("https_proxy", proxy.url)
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{dead_port()}")
    with https_origin(ca) as origin:
        r = nodelay.get(f"https://localhost:{origin.server_address[1]}/", verify=ca_file)
    assert r.status_code == 200
    assert proxy.requests[0].method == "CONNECT"


@pytest.mark.parametrize(
    "no_proxy", ["127.0.0.1", "*", "localhost,127.0.0.0/8", "example.com 127.0.0.1"]
)
def test_no_proxy_bypasses(
    monkeypatch: pytest.MonkeyPatch, no_proxy: str, proxy: ProxyServer, server: _core.TestServer
) -> None:
    monkeypatch.setenv("http_proxy", proxy.url)
    monkeypatch.setenv("NO_PROXY", no_proxy)
    assert nodelay.get(f"{server.url}/bytes/3").status_code == 200
    assert proxy.requests == []


@pytest.mark.sync_only("requests and its facade are blocking")
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_requests_facade_honours_no_proxy_star(
    monkeypatch: pytest.MonkeyPatch, proxy: ProxyServer, server: _core.TestServer, host: str
) -> None:
    """``NO_PROXY=*`` sends every request direct, in requests and httpx alike (the oracles,
    run against the same proxy and origin) and in ``nodelay.requests``."""
    import httpx
    import nodelay.requests
    import requests

    monkeypatch.setenv("http_proxy", proxy.url)
    url = f"http://{host}:{server.port}/bytes/3"
    gets = {"requests": requests.get, "httpx": httpx.get, "nodelay.requests": nodelay.requests.get}
    for name, get in gets.items():
        before = len(proxy.requests)
        assert get(url).status_code == 200, name
        assert len(proxy.requests) == before + 1, f"{name}: through the proxy without NO_PROXY"
    monkeypatch.setenv("NO_PROXY", "*")
    for name, get in gets.items():
        assert get(url).status_code == 200, name
    assert len(proxy.requests) == len(gets), "NO_PROXY=*: every request direct"


def test_no_proxy_with_port(
    monkeypatch: pytest.MonkeyPatch, proxy: ProxyServer, server: _core.TestServer
) -> None:
    monkeypatch.setenv("http_proxy", proxy.url)
    monkeypatch.setenv("no_proxy", "127.0.0.1:1")
    assert nodelay.get(f"{server.url}/bytes/3").status_code == 200
    assert len(proxy.requests) == 1, "another port: still proxied"
    monkeypatch.setenv("no_proxy", f"127.0.0.1:{server.port}")
    assert nodelay.get(f"{server.url}/bytes/3").status_code == 200
    assert len(proxy.requests) == 1, "this port: direct"


def test_cgi_ignores_uppercase_http_proxy(
    monkeypatch: pytest.MonkeyPatch, proxy: ProxyServer, server: _core.TestServer
) -> None:
    monkeypatch.setenv("REQUEST_METHOD", "GET")
    monkeypatch.setenv("HTTP_PROXY", proxy.url)  # may come from a "Proxy:" request header
    assert nodelay.get(f"{server.url}/bytes/3").status_code == 200
    assert proxy.requests == []
    monkeypatch.setenv("http_proxy", proxy.url)  # lowercase cannot come from a header
    assert nodelay.get(f"{server.url}/bytes/3").status_code == 200
    assert len(proxy.requests) == 1


def test_trust_env_false_ignores_the_environment(
    monkeypatch: pytest.MonkeyPatch, proxy: ProxyServer, server: _core.TestServer
) -> None:
    monkeypatch.setenv("ALL_PROXY", proxy.url)
    with nodelay.Client(trust_env=False) as client:
        assert client.get(f"{server.url}/bytes/3").status_code == 200
    assert proxy.requests == []


def test_explicit_proxy_wins_over_the_environment(
    monkeypatch: pytest.MonkeyPatch, proxy: ProxyServer, server: _core.TestServer
) -> None:
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{dead_port()}")
    monkeypatch.setenv("no_proxy", "*")
    with nodelay.Session(proxy=proxy.url) as session:
        assert session.get(f"{server.url}/bytes/3").status_code == 200
    assert len(proxy.requests) == 1


def test_unsupported_scheme_in_the_environment_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ALL_PROXY", "ftp://me:hunter2@127.0.0.1:1080")
    with pytest.raises(ValueError, match=r"\$ALL_PROXY") as info:
        nodelay.Client()
    assert "hunter2" not in str(info.value)
    nodelay.Client(trust_env=False).close()


def test_mapping_proxy_per_scheme(
    proxy: ProxyServer, server: _core.TestServer, ca: trustme.CA, ca_file: str
) -> None:
    assert engine_proxy_options({"all://": "p:1", "https": None}, True) == {"http_proxy": "p:1"}
    assert engine_proxy_options({"https": "p:1", "no_proxy": "a.test"}, True) == {
        "https_proxy": "p:1",
        "no_proxy": "a.test",
    }
    with (
        https_origin(ca) as origin,
        nodelay.Client(proxy={"http": proxy.url}, verify=ca_file) as client,
    ):
        assert client.get(f"https://localhost:{origin.server_address[1]}/").status_code == 200
        assert proxy.requests == [], "https goes direct"
        assert client.get(f"{server.url}/bytes/1").status_code == 200
        assert len(proxy.requests) == 1


def test_stream_with_proxy(proxy: ProxyServer, server: _core.TestServer) -> None:
    with nodelay.stream("GET", f"{server.url}/bytes/100", proxy=proxy.url) as r:
        assert len(r.read()) == 100
    assert len(proxy.requests) == 1


def test_mask_url() -> None:
    assert mask_url("http://u:p@h:1/x@y") == "http://***@h:1/x@y"
    assert mask_url("http://h:1") == "http://h:1"
    assert mask_url("u:p@h") == "***@h"


# -- nodelay get -x -----------------------------------------------------------------------


def test_cli_proxy_and_noproxy(
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
    proxy: ProxyServer,
    server: _core.TestServer,
) -> None:
    from nodelay._get import run

    url = f"{server.url}/bytes/5"
    assert run(["-s", "-x", proxy.url, url]) == 0
    assert capsysbinary.readouterr().out == b"abcde"
    assert len(proxy.requests) == 1
    assert run(["-s", "-x", proxy.url, "--noproxy", "127.0.0.1", url]) == 0
    monkeypatch.setenv("http_proxy", proxy.url)
    assert run(["-s", "--noproxy", "*", url]) == 0
    assert len(proxy.requests) == 1, "--noproxy sent both direct"
    assert run(["-s", url]) == 0
    assert len(proxy.requests) == 2, "the environment's proxy"


def test_cli_proxy_failures_exit_like_curl(ca: trustme.CA, ca_file: str) -> None:
    from nodelay._get import run

    assert run(["-s", "-x", f"127.0.0.1:{dead_port()}", "http://example.invalid/"]) == 7
    with ProxyServer(refuse_connect=407) as proxy, https_origin(ca) as origin:
        url = f"https://localhost:{origin.server_address[1]}/"
        assert run(["-s", "-x", proxy.url, url]) == 97


# -- https:// proxies (TLS to the proxy) --------------------------------------------------


@contextmanager
def tls_proxy(ca: trustme.CA) -> Iterator[ProxyServer]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost").configure_cert(ctx)
    with ProxyServer(tls=ctx, auth=("u", "p")) as proxy:
        yield proxy


def test_https_proxy_forwards_http(ca: trustme.CA, ca_file: str, server: _core.TestServer) -> None:
    with tls_proxy(ca) as proxy:
        url = proxy.url.replace("https://", "https://u:p@")
        with nodelay.Client(proxy=url, verify=ca_file) as client:
            for _ in range(2):
                assert client.get(f"{server.url}/bytes/4").content == b"abcd"
        assert [q.target for q in proxy.requests] == [f"{server.url}/bytes/4"] * 2
        assert proxy.connections == 1


def test_https_proxy_tunnels_https_tls_inside_tls(ca: trustme.CA, ca_file: str) -> None:
    with tls_proxy(ca) as proxy, https_origin(ca) as origin:
        url = proxy.url.replace("https://", "https://u:p@")
        port = origin.server_address[1]
        with nodelay.Client(proxy=url, verify=ca_file) as client:
            for _ in range(3):
                r = client.get(f"https://localhost:{port}/", headers={"X-Mine": "1"})
                assert origin_headers(r)["x-mine"] == "1"
        assert [(q.method, q.target) for q in proxy.requests] == [("CONNECT", f"localhost:{port}")]
        assert proxy.connections == 1


def test_https_proxy_certificate_is_checked(ca: trustme.CA, server: _core.TestServer) -> None:
    with tls_proxy(ca) as proxy, pytest.raises(nodelay.TLSError, match="proxy https://"):
        nodelay.get(f"{server.url}/bytes/1", proxy=proxy.url)  # system store: unknown CA


def test_g26_refused_connect_sends_nothing_in_cleartext(scripted, ca_file: str) -> None:  # type: ignore[no-untyped-def]
    from scripted import Recv, Send

    refuse = b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"
    proxy = scripted([Recv(), Send(refuse), Recv(timeout=2)])
    with pytest.raises(nodelay.ProxyError, match="407"):
        nodelay.post(
            "https://origin.test/login?user=me",
            proxy=proxy.url.replace("http://", "http://u:hunter2@"),
            content=b"password=secret",
            verify=ca_file,
        )
    [conn] = proxy.conns
    assert conn.done.wait(5)
    assert conn.eof, "the client closed the connection after the refusal"
    assert bytes(conn.received) == (
        b"CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n"
        b"Proxy-Authorization: Basic dTpodW50ZXIy\r\n\r\n"
    )


def test_streamed_uploads_go_through_the_proxy(
    proxy: ProxyServer, server: _core.TestServer, ca: trustme.CA, ca_file: str, tmp_path: Path
) -> None:
    payload = bytes(range(256)) * 1024  # 256 KiB: streamed from the file, not inlined
    path = tmp_path / "upload.bin"
    path.write_bytes(payload)
    with nodelay.Client(proxy=proxy.url, verify=ca_file) as client, path.open("rb") as f:
        r = client.put(f"{server.url}/echo", content=f)
        assert r.content == payload
        assert (proxy.requests[0].method, proxy.requests[0].target) == ("PUT", f"{server.url}/echo")
        with https_origin(ca) as origin:
            port = origin.server_address[1]
            r = client.request("GET", f"https://localhost:{port}/", content=iter([b"a", b"b"]))
            assert r.status_code == 200
        assert proxy.requests[-1].method == "CONNECT"
