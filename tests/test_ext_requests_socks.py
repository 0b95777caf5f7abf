"""SOCKS proxies in ``proxies=`` under ``nodelay.ext.requests``: the engine carries them.

Each test runs the same call through a plain ``requests.Session`` (urllib3 with PySocks:
the oracle) and through nodelay's ``Session``, against third-party SOCKS servers on
loopback (tests/socks_servers.py: microsocks for SOCKS5, Twisted's server for SOCKS4/4A).
What the proxy logged shows on the wire which side resolved the name; ``r.raw`` being an
``EngineResponse`` shows the engine, not urllib3, sent nodelay's request.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
import requests
from nodelay import _core
from nodelay.ext._requests_response import EngineResponse
from nodelay.ext.requests import Session
from socks_servers import Microsocks, TwistedSocks4

pytest.importorskip("socks", reason="PySocks (requests[socks]), requests' SOCKS support")

SESSIONS = ("requests", "nodelay")
TIMEOUT_S = 10


@pytest.fixture(params=SESSIONS)
def session(request: pytest.FixtureRequest) -> Iterator[requests.Session]:
    """A plain ``requests.Session`` (the oracle) or nodelay's."""
    s = requests.Session() if request.param == "requests" else Session()
    s.trust_env = False  # the machine's proxy variables are no business of these tests
    with s:
        yield s


@pytest.fixture
def socks() -> Iterator[Microsocks]:
    with Microsocks() as server:
        yield server


@pytest.fixture(scope="module")
def origin() -> Iterator[_core.TestServer]:
    srv = _core.TestServer()
    yield srv
    srv.close()


def _by_name(srv: _core.TestServer, path: str = "/headers") -> str:
    """``srv``'s URL with its host as a name, which the proxy or the client resolves."""
    return srv.url.replace("127.0.0.1", "localhost") + path


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/"


def _engine_sent(session: requests.Session, r: requests.Response) -> None:
    assert isinstance(r.raw, EngineResponse) == isinstance(session, Session)


@pytest.mark.parametrize("scheme", ["socks5h", "socks5"])
def test_socks5_where_the_name_is_resolved(
    session: requests.Session, socks: Microsocks, origin: _core.TestServer, scheme: str
) -> None:
    r = session.get(_by_name(origin), proxies={"http": socks.url(scheme)}, timeout=TIMEOUT_S)
    assert r.status_code == 200
    assert r.json()["headers"]["host"] == f"localhost:{origin.port}"
    _engine_sent(session, r)
    [(host, port)] = socks.targets()
    assert port == origin.port
    # RFC 1928 §5: socks5h sends the name (ATYP 3), socks5 an address resolved here.
    assert (host == "localhost") == (scheme == "socks5h")


@pytest.mark.parametrize("scheme", ["socks4a", "socks4"])
def test_socks4(session: requests.Session, origin: _core.TestServer, scheme: str) -> None:
    with TwistedSocks4() as proxy:
        r = session.get(_by_name(origin), proxies={"http": proxy.url(scheme)}, timeout=TIMEOUT_S)
    assert r.status_code == 200
    assert r.json()["headers"]["host"] == f"localhost:{origin.port}"
    _engine_sent(session, r)


def test_credentials_in_the_proxy_url(session: requests.Session, origin: _core.TestServer) -> None:
    with Microsocks(auth=("alice", "s3cret")) as proxy:
        url = proxy.url("socks5h", "alice:s3cret")
        r = session.get(_by_name(origin), proxies={"http": url}, timeout=TIMEOUT_S)
        assert r.status_code == 200
        _engine_sent(session, r)
        assert proxy.targets() == [("localhost", origin.port)]
        # RFC 1929: the proxy refuses other credentials, which never show in the error.
        wrong = proxy.url("socks5h", "alice:wrong-pw")
        with pytest.raises(requests.exceptions.ConnectionError) as caught:
            session.get(_by_name(origin), proxies={"http": wrong}, timeout=TIMEOUT_S)
        assert not isinstance(caught.value, requests.exceptions.ProxyError)
        assert "wrong-pw" not in str(caught.value)
        assert len(proxy.targets()) == 1


@pytest.fixture(scope="module")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    path.write_text(_core.test_ca_pem())
    return str(path)


def test_https_through_socks(session: requests.Session, socks: Microsocks, test_ca: str) -> None:
    srv = _core.TestServer(tls=True)
    try:
        proxies = {"https": socks.url("socks5h")}
        r = session.get(_by_name(srv), proxies=proxies, verify=test_ca, timeout=TIMEOUT_S)
        assert r.status_code == 200
        _engine_sent(session, r)
        assert socks.targets() == [("localhost", srv.port)]
        # The certificate is checked against the target's name, through the tunnel.
        with pytest.raises(requests.exceptions.SSLError):
            session.get(_by_name(srv), proxies=proxies, timeout=TIMEOUT_S)
    finally:
        srv.close()


def test_keep_alive_through_the_tunnel(
    session: requests.Session, socks: Microsocks, origin: _core.TestServer
) -> None:
    proxies = {"http": socks.url("socks5h")}
    for _ in range(3):
        assert session.get(origin.url + "/bytes/10", proxies=proxies).status_code == 200
    assert len(socks.targets()) == 1  # one tunnel, reused


def test_the_proxy_refusing_the_target_is_a_connection_error(
    session: requests.Session, socks: Microsocks
) -> None:
    with pytest.raises(requests.exceptions.ConnectionError) as caught:
        session.get(_dead_url(), proxies={"http": socks.url("socks5")}, timeout=TIMEOUT_S)
    # urllib3 raises a SOCKS refusal as a failure to connect, not as a proxy error.
    assert not isinstance(caught.value, requests.exceptions.ProxyError)


def test_an_unreachable_proxy_is_a_connection_error(session: requests.Session) -> None:
    proxy = _dead_url().replace("http://", "socks5h://").rstrip("/")
    with pytest.raises(requests.exceptions.ConnectionError) as caught:
        session.get("http://localhost:1/", proxies={"http": proxy}, timeout=TIMEOUT_S)
    assert not isinstance(caught.value, requests.exceptions.ProxyError)


def test_all_proxy_from_the_environment(
    session: requests.Session,
    socks: Microsocks,
    origin: _core.TestServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALL_PROXY", socks.url("socks5h"))
    session.trust_env = True
    r = session.get(_by_name(origin), timeout=TIMEOUT_S)
    assert r.status_code == 200
    _engine_sent(session, r)
    assert socks.targets() == [("localhost", origin.port)]
