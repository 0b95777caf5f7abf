"""HTTP/2 against the embedded server: h2 by ALPN over TLS (a trustme CA), h2c with prior
knowledge, one connection shared by many threads, fallback to HTTP/1.1, and the response
features (decoding, cookies, redirects, streaming, timeouts) working as over HTTP/1.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import nodelay
import pytest
from children import exit_code_after_ctrl_c, forked_child_succeeds
from conftest import expected_bytes
from nodelay import _core

pytestmark = pytest.mark.both_drivers


def tls_server(identity: tuple[str, str], *, http2: bool) -> _core.TestServer:
    return _core.TestServer(http2=http2, tls=True, cert_file=identity[0], key_file=identity[1])


@pytest.fixture
def h2c_server() -> Iterator[_core.TestServer]:
    srv = _core.TestServer(http2=True)
    yield srv
    srv.close()


def local(url: str) -> str:
    """The server's URL by the name its certificate carries."""
    return url.replace("127.0.0.1", "localhost")


def test_alpn_negotiates_h2_over_tls(identity: tuple[str, str], ca_file: str) -> None:
    srv = tls_server(identity, http2=True)
    try:
        with nodelay.Client(http2=True, verify=ca_file) as client:
            for _ in range(3):
                r = client.get(local(srv.url) + "/bytes/202")
                assert r.http_version == "HTTP/2"
                assert r.status_code == 200
                assert r.reason_phrase == "OK"
                assert r.content == expected_bytes(202)
        assert srv.connections() == 1
    finally:
        srv.close()


def test_tls_verification_applies_to_h2(identity: tuple[str, str]) -> None:
    srv = tls_server(identity, http2=True)
    try:
        with nodelay.Client(http2=True) as client, pytest.raises(nodelay.ConnectError):
            client.get(local(srv.url) + "/bytes/1")
        with nodelay.Client(http2=True, verify=False) as client:
            assert client.get(local(srv.url) + "/bytes/1").http_version == "HTTP/2"
    finally:
        srv.close()


def test_falls_back_to_http1_when_the_server_offers_only_it(
    identity: tuple[str, str], ca_file: str
) -> None:
    srv = tls_server(identity, http2=False)
    try:
        with nodelay.Client(http2=True, verify=ca_file) as client:
            for _ in range(3):
                r = client.get(local(srv.url) + "/bytes/202")
                assert r.http_version == "HTTP/1.1"
                assert r.content == expected_bytes(202)
        # The connection ALPN made is the one HTTP/1.1 goes on, then kept alive.
        assert srv.connections() == 1
    finally:
        srv.close()


def test_prior_knowledge_over_cleartext(h2c_server: _core.TestServer) -> None:
    with nodelay.Client(http2="prior_knowledge") as client:
        r = client.get(h2c_server.url + "/json/100")
        assert r.http_version == "HTTP/2"
        assert isinstance(r.json(), dict)
        r = client.post(h2c_server.url + "/echo", content=b"x" * 100_000)
        assert r.content == b"x" * 100_000
        assert client.head(h2c_server.url + "/bytes/10").content == b""
        assert client.get(h2c_server.url + "/status/404").status_code == 404


def test_http2_true_keeps_http_urls_on_http1(h2c_server: _core.TestServer) -> None:
    with nodelay.Client(http2=True) as client:
        assert client.get(h2c_server.url + "/bytes/1").http_version == "HTTP/1.1"


def test_decoding_cookies_and_redirects_over_h2(h2c_server: _core.TestServer) -> None:
    with nodelay.Client(http2="prior_knowledge", follow_redirects=True) as client:
        for coding in ("gzip", "deflate", "brotli", "zstd"):
            r = client.get(f"{h2c_server.url}/{coding}/5000")
            assert r.http_version == "HTTP/2"
            assert r.content == expected_bytes(5000), coding
        client.get(h2c_server.url + "/cookies/set?a=1&b=2")
        assert client.get(h2c_server.url + "/cookies").json() == {"cookies": {"a": "1", "b": "2"}}
        r = client.get(h2c_server.url + "/redirect/3")
        assert r.status_code == 200
        assert len(r.history) == 3


@pytest.mark.sync_only("iter_bytes() is sync streaming; test_async_http2.py streams with aiter_*")
def test_streaming_over_h2(h2c_server: _core.TestServer) -> None:
    with nodelay.Client(http2="prior_knowledge") as client:
        with client.stream("GET", h2c_server.url + "/chunked/300000") as r:
            assert r.http_version == "HTTP/2"
            assert b"".join(r.iter_bytes()) == expected_bytes(300_000)
        with client.stream("GET", h2c_server.url + "/gzip/100000") as r:
            assert b"".join(r.iter_bytes()) == expected_bytes(100_000)
        # A stream closed before its end releases only its own stream.
        with client.stream("GET", h2c_server.url + "/bytes/5000000") as r:
            next(r.iter_bytes())
        assert client.get(h2c_server.url + "/bytes/3").content == expected_bytes(3)
    assert h2c_server.connections() == 1


def test_read_timeout_over_h2(h2c_server: _core.TestServer) -> None:
    with nodelay.Client(http2="prior_knowledge") as client:
        with pytest.raises(nodelay.ReadTimeout):
            client.get(h2c_server.url + "/delay/2000", timeout=nodelay.Timeout(5.0, read=0.2))
        # The connection is still shared and usable.
        assert client.get(h2c_server.url + "/bytes/3").status_code == 200


@pytest.mark.sync_only(
    "threads calling into one event loop: test_async_http2.py has the tasks' version"
)
def test_threads_share_one_connection(h2c_server: _core.TestServer) -> None:
    errors: list[BaseException] = []
    with nodelay.Client(http2="prior_knowledge") as client:

        def work() -> None:
            try:
                for _ in range(25):
                    r = client.get(h2c_server.url + "/bytes/202")
                    assert r.http_version == "HTTP/2"
                    assert r.content == expected_bytes(202)
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
    assert not errors
    assert h2c_server.connections() == 1
    assert h2c_server.requests() == 8 * 25


def test_invalid_http2_value() -> None:
    with pytest.raises(ValueError, match="http2"):
        nodelay.Client(http2="yes")  # type: ignore[arg-type]


def test_site_is_served_with_cache_headers(h2c_server: _core.TestServer) -> None:
    with nodelay.Client(http2="prior_knowledge") as client:
        r = client.get(h2c_server.url + "/site/")
        assert r.headers["content-type"] == "text/html; charset=utf-8"
        assert r.headers["cache-control"] == "public, max-age=3600"
        assert r.text.count('href="/site/') == 11
        assert client.get(h2c_server.url + "/site/499.html").status_code == 200


@pytest.mark.sync_only("the CLI uses Client")
def test_get_command_speaks_h2c(
    h2c_server: _core.TestServer, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    import argparse

    from nodelay import _get

    parser = argparse.ArgumentParser(prog="nodelay")
    _get.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["get", "-I", "--http2-prior-knowledge", f"{h2c_server.url}/bytes/10"])
    assert _get.main(args) == 0
    # HTTP/2 has no reason phrase; curl prints a space where it would be.
    assert capsysbinary.readouterr().out.startswith(b"HTTP/2 200 \r\n")


@pytest.mark.sync_only(
    "a forked child would run the session's event loop, whose epoll instance it shares"
    " with the parent; test_async_client.py forks an AsyncClient with a loop of its own"
)
def test_forked_child_gets_its_own_connection(h2c_server: _core.TestServer) -> None:
    url = f"{h2c_server.url}/bytes/64"
    with nodelay.Client(http2="prior_knowledge") as client:
        assert client.get(url).http_version == "HTTP/2"  # the shared connection exists
        forked_child_succeeds(
            lambda: all(client.get(url).content == expected_bytes(64) for _ in range(3)),
            lambda: client.get(url),
        )
        assert client.get(url).content == expected_bytes(64)
    assert h2c_server.connections() == 2


@pytest.mark.sync_only("Ctrl-C of a blocking call: about Client")
def test_ctrl_c_interrupts_an_h2_request(h2c_server: _core.TestServer) -> None:
    script = (
        "import sys, nodelay\n"
        "c = nodelay.Client(http2='prior_knowledge')\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    c.get(sys.argv[1] + '/delay/10000', timeout=30)\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(42)\n"
        "sys.exit(0)\n"
    )
    assert exit_code_after_ctrl_c(script, h2c_server.url) == 42


def test_a_proxied_request_stays_on_http1(h2c_server: _core.TestServer) -> None:
    """HTTP/2 is only spoken on direct routes: through a proxy the request goes as
    HTTP/1.1 in absolute form, never as h2c to the proxy."""
    from proxy_server import ProxyServer

    with ProxyServer() as proxy, nodelay.Client(http2="prior_knowledge", proxy=proxy.url) as client:
        r = client.get(h2c_server.url + "/bytes/3")
        assert (r.status_code, r.http_version, len(r.content)) == (200, "HTTP/1.1", 3)
        [seen] = proxy.requests
        assert seen.target == h2c_server.url + "/bytes/3"
