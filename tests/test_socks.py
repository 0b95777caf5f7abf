"""SOCKS proxies (RFC 1928, RFC 1929, SOCKS4/4A) against real third-party servers on
loopback (tests/socks_servers.py: microsocks for SOCKS5, Twisted's server for SOCKS4/4A),
with httpx (socksio) and requests (PySocks) as oracles in the same tests where they speak
the dialect: ``proxy=`` and the environment, the name resolved here (``socks5://``) or by
the proxy (``socks5h://``, ``socks4a://``, checked on the wire), credentials good and bad,
TLS and HTTP/2 through the tunnel, the proxy's refusal, an unreachable proxy."""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from ipaddress import ip_address

import httpx
import nodelay
import nodelay.requests
import pytest
import requests
from nodelay import _core
from socks_servers import Microsocks, TwistedSocks4

pytestmark = pytest.mark.both_drivers

_PROXY_ENV = [
    f"{name}{suffix}" for name in ("http", "https", "all", "no") for suffix in ("_proxy", "_PROXY")
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy variable from the machine running the tests leaks in."""
    for name in [*_PROXY_ENV, "REQUEST_METHOD"]:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def socks() -> Iterator[Microsocks]:
    with Microsocks() as server:
        yield server


@pytest.fixture
def socks_auth() -> Iterator[Microsocks]:
    with Microsocks(auth=("alice", "s3cret")) as server:
        yield server


@pytest.fixture
def socks4() -> Iterator[TwistedSocks4]:
    with TwistedSocks4() as server:
        yield server


@pytest.fixture(scope="module")
def origin() -> Iterator[_core.TestServer]:
    """Plain HTTP/1.1 and h2c (prior knowledge)."""
    srv = _core.TestServer(http2=True)
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def tls_origin() -> Iterator[_core.TestServer]:
    """HTTPS for ``localhost`` (the built-in certificate), HTTP/2 by ALPN."""
    srv = _core.TestServer(tls=True, http2=True)
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def test_ca() -> Iterator[str]:
    with tempfile.NamedTemporaryFile("w", suffix=".pem") as f:
        f.write(_core.test_ca_pem())
        f.flush()
        yield f.name


def by_name(srv: _core.TestServer, path: str = "/headers") -> str:
    """``srv``'s URL with the host as a name, ``localhost``, which the proxy or the client
    must resolve."""
    return srv.url.replace("127.0.0.1", "localhost") + path


def dead_url() -> str:
    """A loopback URL nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/"


def is_address(host: str) -> bool:
    try:
        ip_address(host)
    except ValueError:
        return False
    return True


# -- the two failures the issue reported ---------------------------------------------------


@pytest.mark.sync_only("nodelay.get is the sync entry point")
def test_all_proxy_socks5_in_the_environment_is_used_by_nodelay_get(
    socks: Microsocks, origin: _core.TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALL_PROXY", socks.url("socks5h"))
    url = by_name(origin)
    assert nodelay.get(url).status_code == 200
    # The oracles read the same variable the same way.
    assert httpx.get(url).status_code == 200
    assert requests.get(url, timeout=10).status_code == 200
    assert socks.targets() == [("localhost", origin.port)] * 3


def test_proxy_argument_takes_a_socks_url(socks: Microsocks, origin: _core.TestServer) -> None:
    with nodelay.Client(proxy=socks.url()) as client:
        response = client.get(origin.url + "/headers")
    assert response.status_code == 200
    assert socks.targets() == [("127.0.0.1", origin.port)]


# -- where the name is resolved -------------------------------------------------------------


def test_socks5h_sends_the_name_for_the_proxy_to_resolve(
    socks: Microsocks, origin: _core.TestServer
) -> None:
    url = by_name(origin)
    with nodelay.Client(proxy=socks.url("socks5h")) as client:
        ours = client.get(url)
    theirs = requests.get(url, proxies={"http": socks.url("socks5h")}, timeout=10)
    assert ours.status_code == theirs.status_code == 200
    # RFC 1928 §5 ATYP 3: microsocks logs the name it was given, for both clients.
    assert socks.targets() == [("localhost", origin.port)] * 2


def test_socks5_resolves_the_name_here_and_sends_an_address(
    socks: Microsocks, origin: _core.TestServer
) -> None:
    url = by_name(origin)
    with nodelay.Client(proxy=socks.url("socks5")) as client:
        ours = client.get(url)
    theirs = requests.get(url, proxies={"http": socks.url("socks5")}, timeout=10)
    assert ours.status_code == theirs.status_code == 200
    hosts = [host for host, _ in socks.targets()]
    assert len(hosts) == 2 and all(is_address(h) for h in hosts), hosts


def test_socks4a_sends_the_name_and_socks4_an_address(
    socks4: TwistedSocks4, origin: _core.TestServer
) -> None:
    url = by_name(origin)
    for scheme in ("socks4a", "socks4"):
        with nodelay.Client(proxy=socks4.url(scheme)) as client:
            ours = client.get(url)
        theirs = requests.get(url, proxies={"http": socks4.url(scheme)}, timeout=10)
        assert ours.status_code == theirs.status_code == 200
        host = f"localhost:{origin.port}"
        assert ours.json()["headers"]["host"] == theirs.json()["headers"]["host"] == host


def test_socks4_refusal_names_the_reply(socks4: TwistedSocks4) -> None:
    with nodelay.Client(proxy=socks4.url("socks4a")) as client:
        with pytest.raises(nodelay.ProxyError) as caught:
            client.get(dead_url())
    assert "request rejected or failed (SOCKS4 reply 0x5b)" in str(caught.value)
    with pytest.raises(requests.exceptions.ConnectionError, match="0x5b"):
        requests.get(dead_url(), proxies={"http": socks4.url("socks4a")}, timeout=10)


# -- credentials (RFC 1929) -------------------------------------------------------------------


def test_username_and_password(socks_auth: Microsocks, origin: _core.TestServer) -> None:
    proxy = socks_auth.url("socks5h", "alice:s3cret")
    url = by_name(origin)
    with nodelay.Client(proxy=proxy) as client:
        assert client.get(url).status_code == 200
    assert httpx.get(url, proxy=proxy).status_code == 200
    assert requests.get(url, proxies={"http": proxy}, timeout=10).status_code == 200
    assert socks_auth.targets() == [("localhost", origin.port)] * 3


def test_wrong_password_is_a_proxy_error_that_never_shows_it(
    socks_auth: Microsocks, origin: _core.TestServer
) -> None:
    proxy = socks_auth.url("socks5", "alice:wrong-pw")
    with nodelay.Client(proxy=proxy) as client:
        with pytest.raises(nodelay.ProxyError) as caught:
            client.get(origin.url)
    message = str(caught.value)
    assert "rejected the username and password" in message
    assert "wrong-pw" not in message and "alice" not in message
    with pytest.raises(httpx.ProxyError):
        httpx.get(origin.url, proxy=proxy)
    with pytest.raises(requests.exceptions.ConnectionError, match="authentication failed"):
        requests.get(origin.url, proxies={"http": proxy}, timeout=10)
    assert socks_auth.targets() == []


def test_missing_credentials_say_the_proxy_requires_them(
    socks_auth: Microsocks, origin: _core.TestServer
) -> None:
    with nodelay.Client(proxy=socks_auth.url()) as client:
        with pytest.raises(nodelay.ProxyError, match="requires authentication"):
            client.get(origin.url)
    with pytest.raises(httpx.ProxyError, match="NO ACCEPTABLE METHODS"):
        httpx.get(origin.url, proxy=socks_auth.url())


# -- refusals and an unreachable proxy --------------------------------------------------------


def test_refused_connect_is_a_proxy_error_naming_the_reply(socks: Microsocks) -> None:
    target = dead_url()
    with nodelay.Client(proxy=socks.url("socks5", "u:pw-xyz")) as client:
        with pytest.raises(nodelay.ProxyError) as caught:
            client.get(target)
    message = str(caught.value)
    # RFC 1928 §6 X'05'; microsocks maps ECONNREFUSED to it.
    assert "connection refused (SOCKS5 reply 0x05)" in message, message
    assert "pw-xyz" not in message
    with pytest.raises(httpx.ProxyError, match="Connection refused"):
        httpx.get(target, proxy=socks.url())


def test_unreachable_proxy_is_a_connect_error_as_in_httpx() -> None:
    proxy = dead_url().replace("http://", "socks5://u:pw-xyz@").rstrip("/")
    with nodelay.Client(proxy=proxy) as client:
        with pytest.raises(nodelay.ConnectError) as caught:
            client.get("http://localhost:1/")
    assert "proxy socks5://127.0.0.1:" in str(caught.value)
    assert "pw-xyz" not in str(caught.value)
    with pytest.raises(httpx.ConnectError):
        httpx.get("http://localhost:1/", proxy=proxy)


# -- TLS and HTTP/2 through the tunnel ----------------------------------------------------


def test_tls_through_socks_checks_the_target_name(
    socks: Microsocks, tls_origin: _core.TestServer, test_ca: str
) -> None:
    url = by_name(tls_origin)
    with nodelay.Client(proxy=socks.url("socks5h"), verify=test_ca) as client:
        ours = client.get(url)
    with httpx.Client(
        proxy=socks.url("socks5h"), verify=ssl.create_default_context(cafile=test_ca)
    ) as oracle:
        theirs = oracle.get(url)
    assert ours.status_code == theirs.status_code == 200
    assert ours.http_version == theirs.http_version == "HTTP/1.1"
    # Verification is against the target's name: the default trust store does not know
    # the test CA, whatever the proxy.
    with nodelay.Client(proxy=socks.url("socks5h")) as client:
        with pytest.raises(nodelay.ConnectError, match="certificate"):
            client.get(url)


def test_http2_by_alpn_through_socks(
    socks: Microsocks, tls_origin: _core.TestServer, test_ca: str
) -> None:
    url = by_name(tls_origin)
    with nodelay.Client(proxy=socks.url("socks5h"), verify=test_ca, http2=True) as client:
        first, second = client.get(url), client.get(url)
    with httpx.Client(
        proxy=socks.url("socks5h"), verify=ssl.create_default_context(cafile=test_ca), http2=True
    ) as oracle:
        theirs = oracle.get(url)
    assert first.http_version == second.http_version == theirs.http_version == "HTTP/2"
    # One tunnel each: nodelay's two requests shared one HTTP/2 connection.
    assert socks.targets() == [("localhost", tls_origin.port)] * 2


def test_h2c_prior_knowledge_through_socks(socks: Microsocks, origin: _core.TestServer) -> None:
    with nodelay.Client(proxy=socks.url("socks5h"), http2="prior_knowledge") as client:
        response = client.get(by_name(origin))
    assert (response.status_code, response.http_version) == (200, "HTTP/2")
    assert socks.targets() == [("localhost", origin.port)]


def test_keep_alive_through_the_tunnel(socks: Microsocks, origin: _core.TestServer) -> None:
    before = origin.connections()
    with nodelay.Client(proxy=socks.url("socks5h")) as client:
        for _ in range(3):
            assert client.get(by_name(origin)).status_code == 200
    assert origin.connections() - before == 1
    assert len(socks.targets()) == 1


# -- the environment and the other fronts --------------------------------------------------


def test_no_proxy_bypasses_a_socks_all_proxy(
    socks: Microsocks, origin: _core.TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("all_proxy", socks.url("socks5h"))
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with nodelay.Client() as client:
        assert client.get(origin.url + "/headers").status_code == 200  # direct
        assert client.get(by_name(origin)).status_code == 200  # through the proxy
    assert socks.targets() == [("localhost", origin.port)]


def test_https_proxy_variable_with_a_socks_url(
    socks: Microsocks,
    tls_origin: _core.TestServer,
    test_ca: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", socks.url("socks5h"))
    with nodelay.Client(verify=test_ca) as client:
        assert client.get(by_name(tls_origin)).status_code == 200
    with httpx.Client(verify=ssl.create_default_context(cafile=test_ca)) as oracle:
        assert oracle.get(by_name(tls_origin)).status_code == 200
    assert socks.targets() == [("localhost", tls_origin.port)] * 2


def test_a_mounted_transport_with_a_socks_proxy(
    socks: Microsocks, origin: _core.TestServer, driver: str
) -> None:
    kind = nodelay.AsyncHTTPTransport if driver == "async" else nodelay.HTTPTransport
    transport = kind(proxy=socks.url("socks5h"))
    with nodelay.Client(mounts={"http://localhost": transport}) as client:
        assert client.get(by_name(origin)).status_code == 200
        assert client.get(origin.url + "/headers").status_code == 200  # not mounted
    assert socks.targets() == [("localhost", origin.port)]


@pytest.mark.sync_only("nodelay.requests is synchronous")
def test_requests_facade_proxies_with_socks(socks: Microsocks, origin: _core.TestServer) -> None:
    proxies = {"http": socks.url("socks5h")}
    url = by_name(origin)
    ours = nodelay.requests.get(url, proxies=proxies, timeout=10)
    theirs = requests.get(url, proxies=proxies, timeout=10)
    assert ours.status_code == theirs.status_code == 200
    assert socks.targets() == [("localhost", origin.port)] * 2
    with pytest.raises(nodelay.requests.exceptions.ConnectionError):
        nodelay.requests.get(dead_url(), proxies={"http": socks.url()}, timeout=10)


# -- hostile proxies: every wait within the connect timeout -------------------------------


def test_a_silent_socks_proxy_is_a_connect_timeout(scripted) -> None:  # type: ignore[no-untyped-def]
    from scripted import Sleep

    silent = scripted([Sleep(5)])
    proxy = silent.url.replace("http://", "socks5h://")
    started = time.monotonic()
    with nodelay.Client(proxy=proxy, timeout=nodelay.Timeout(5, connect=0.3)) as client:
        with pytest.raises(nodelay.ConnectTimeout, match="waiting for proxy socks5h://"):
            client.get("http://localhost:1/")
    assert time.monotonic() - started < 3


def test_a_dripping_socks_proxy_cannot_stretch_the_connect_timeout(scripted) -> None:  # type: ignore[no-untyped-def]
    from scripted import SendSlowly, Sleep

    # Method choice, then a success reply, one byte every 0.1 s: 12 bytes, 1.2 s in all.
    drip = scripted(
        [SendSlowly(b"\x05\x00\x05\x00\x00\x01\x7f\x00\x00\x01\x00\x50", 0.1), Sleep(5)]
    )
    proxy = drip.url.replace("http://", "socks5h://")
    started = time.monotonic()
    with nodelay.Client(proxy=proxy, timeout=nodelay.Timeout(5, connect=0.5)) as client:
        with pytest.raises(nodelay.ConnectTimeout):
            client.get("http://localhost:1/")
    assert time.monotonic() - started < 3


def test_a_proxy_closing_mid_reply_is_a_proxy_error(scripted) -> None:  # type: ignore[no-untyped-def]
    from scripted import Close, Send

    def read(sock: socket.socket) -> None:
        sock.recv(64)  # read what the client sent, so closing sends FIN, not RST

    cut = scripted([read, Send(b"\x05\x00"), read, Send(b"\x05\x00\x00"), Close()])
    proxy = cut.url.replace("http://", "socks5h://")
    with nodelay.Client(proxy=proxy) as client:
        with pytest.raises(nodelay.ProxyError, match="closed the connection in the middle of"):
            client.get("http://localhost:1/")


@pytest.mark.sync_only("the command runs in its own process")
@pytest.mark.parametrize("how", ["-x", "ALL_PROXY"])
def test_the_command_through_socks_as_curl(
    socks: Microsocks, origin: _core.TestServer, how: str
) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    url = by_name(origin, "/bytes/64")
    env = {k: v for k, v in os.environ.items() if k.lower() not in _PROXY_ENV}
    args = []
    if how == "-x":
        args = ["-x", socks.url("socks5h")]
    else:
        env["ALL_PROXY"] = socks.url("socks5h")
    ours = subprocess.run(
        [sys.executable, "-m", "nodelay", "get", *args, url],
        capture_output=True,
        env=env,
        timeout=30,
    )
    theirs = subprocess.run([curl, "-s", *args, url], capture_output=True, env=env, timeout=30)
    assert ours.returncode == theirs.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout
    assert len(ours.stdout) == 64
    assert socks.targets() == [("localhost", origin.port)] * 2
