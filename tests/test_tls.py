"""HTTPS: verification against a test CA (trustme), verify=False, client certificates,
the reasons certificate failures name (docs/hostile.md D20), pool separation (D21) and
the public warning class of ``verify=ssl.SSLContext``."""

from __future__ import annotations

import datetime
import http.server
import os
import ssl
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import nodelay
import nodelay.requests
import pytest
import trustme
from whoami_server import serving

pytestmark = pytest.mark.both_drivers


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        peer = self.request.getpeercert()
        body = b"client-cert" if peer else b"secure"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    connections = 0

    def get_request(self):  # type: ignore[no-untyped-def]
        sock, addr = super().get_request()
        self.connections += 1
        return sock, addr


@contextmanager
def tls_server(cert: trustme.LeafCert, client_ca: trustme.CA | None = None) -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(ctx)
    if client_ca is not None:
        client_ca.configure_trust(ctx)
        ctx.verify_mode = ssl.CERT_REQUIRED
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with serving(server):
        yield server


def url(server: _Server, host: str = "localhost") -> str:
    return f"https://{host}:{server.server_address[1]}/"


def test_verified_with_custom_ca_and_connection_reused(ca: trustme.CA, ca_file: str) -> None:
    with tls_server(ca.issue_cert("localhost")) as server, nodelay.Client(verify=ca_file) as c:
        for _ in range(5):
            r = c.get(url(server))
            assert r.status_code == 200
            assert r.content == b"secure"
        assert server.connections == 1


def test_ip_literal_verified_against_ip_san(ca: trustme.CA, ca_file: str) -> None:
    with tls_server(ca.issue_cert("127.0.0.1")) as server:
        r = nodelay.get(url(server, "127.0.0.1"), verify=ca_file)
        assert r.content == b"secure"


def test_unknown_issuer_names_reason(ca: trustme.CA) -> None:
    with tls_server(ca.issue_cert("localhost")) as server:
        with pytest.raises(nodelay.TLSError, match="unknown issuer") as info:
            nodelay.get(url(server))
        assert isinstance(info.value, nodelay.ConnectError)
        assert info.value.url == url(server)


def test_wrong_host_names_reason(ca: trustme.CA, ca_file: str) -> None:
    with tls_server(ca.issue_cert("other.example")) as server:
        with pytest.raises(nodelay.TLSError, match="not valid for this host name"):
            nodelay.get(url(server), verify=ca_file)


def test_expired_names_reason(ca: trustme.CA, ca_file: str) -> None:
    past = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=1)
    cert = ca.issue_cert("localhost", not_after=past)
    with tls_server(cert) as server:
        with pytest.raises(nodelay.TLSError, match="expired"):
            nodelay.get(url(server), verify=ca_file)


def test_verify_false_accepts_and_does_not_lend_connections(ca: trustme.CA) -> None:
    with tls_server(ca.issue_cert("localhost")) as server:
        with nodelay.Client(verify=False) as insecure, nodelay.Client() as secure:
            assert insecure.get(url(server)).content == b"secure"
            # The insecure client's idle connection must not serve a verifying client.
            with pytest.raises(nodelay.TLSError):
                secure.get(url(server))


def test_client_certificate(ca: trustme.CA, ca_file: str, tmp_path: Path) -> None:
    client_cert = ca.issue_cert("client@example")
    cert_path = tmp_path / "client.pem"
    key_path = tmp_path / "client.key"
    client_cert.cert_chain_pems[0].write_to_path(str(cert_path))
    client_cert.private_key_pem.write_to_path(str(key_path))
    with tls_server(ca.issue_cert("localhost"), client_ca=ca) as server:
        r = nodelay.get(url(server), verify=ca_file, cert=(str(cert_path), str(key_path)))
        assert r.content == b"client-cert"
        # TLS 1.3 servers refuse a missing client certificate with an alert after the
        # handshake: still a TLSError, not a plain read error.
        with pytest.raises(nodelay.TLSError, match="TLS error"):
            nodelay.get(url(server), verify=ca_file)


def test_bad_ca_file_is_reported(ca: trustme.CA, tmp_path: Path) -> None:
    no_certificate = tmp_path / "empty.pem"
    no_certificate.write_text("not a certificate\n")
    with tls_server(ca.issue_cert("localhost")) as server:
        with pytest.raises(nodelay.TLSError, match=r"no usable CA certificate in .*empty\.pem"):
            nodelay.get(url(server), verify=str(no_certificate))


@pytest.mark.sync_only("no request is sent: the error comes from the constructor")
@pytest.mark.filterwarnings("ignore::DeprecationWarning:httpx")
def test_missing_verify_or_cert_path_raises_when_built(
    identity: tuple[str, str], tmp_path: Path
) -> None:
    """As in httpx (the oracle, same arguments): ``FileNotFoundError`` from the client's
    and the transport's constructor, before any request; nodelay's names the path."""
    missing = str(tmp_path / "missing.pem")
    cert, _ = identity
    for kwargs in (
        {"verify": missing},
        {"cert": missing},
        {"cert": (cert, missing)},
        {"cert": (missing, cert)},
    ):
        for build in (httpx.Client, httpx.HTTPTransport, nodelay.Client, nodelay.HTTPTransport):
            with pytest.raises(FileNotFoundError) as info:
                # verify=True: httpx skips cert= when verify= is a path.
                build(verify=kwargs.get("verify", True), cert=kwargs.get("cert"))
            if build.__module__.startswith("nodelay"):
                assert info.value.filename == missing, (build, kwargs)
                assert missing in str(info.value)


def test_ssl_cert_file_only_with_trust_env(
    ca: trustme.CA, ca_file: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``SSL_CERT_FILE`` replaces the system trust store with ``trust_env=True`` and is
    ignored with ``trust_env=False``: httpx is the oracle, against the same server."""
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", ca_file)
    with tls_server(ca.issue_cert("localhost")) as server:
        for lib in (httpx, nodelay):
            with lib.Client() as c:
                assert c.get(url(server)).content == b"secure", lib
            with lib.Client(trust_env=False) as c, pytest.raises(lib.ConnectError):
                c.get(url(server))
        with pytest.raises(nodelay.TLSError, match="unknown issuer"):
            nodelay.get(url(server), trust_env=False)
        # requests never reads SSL_CERT_FILE (its own variables are REQUESTS_CA_BUNDLE and
        # CURL_CA_BUNDLE), nor does its facade.
        import requests

        for facade in (requests, nodelay.requests):
            with pytest.raises(facade.exceptions.SSLError):
                facade.get(url(server))
        # A directory of certificates, from SSL_CERT_DIR or verify=: OpenSSL's CApath
        # (httpx passes it to OpenSSL, which needs `openssl rehash` names: not compared).
        certs = tmp_path / "certs"
        certs.mkdir()
        (certs / "test-ca.pem").write_bytes(Path(ca_file).read_bytes())
        monkeypatch.delenv("SSL_CERT_FILE")
        monkeypatch.setenv("SSL_CERT_DIR", str(certs))
        with nodelay.Client() as c:
            assert c.get(url(server)).content == b"secure"
        with nodelay.Client(trust_env=False) as c, pytest.raises(nodelay.TLSError):
            c.get(url(server))
        with nodelay.Client(verify=str(certs), trust_env=False) as c:
            assert c.get(url(server)).content == b"secure"
        assert nodelay.requests.get(url(server), verify=str(certs)).content == b"secure"
        # A variable naming nothing is reported when the client is built, as in httpx.
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "nowhere.pem"))
        for lib in (httpx, nodelay):
            with pytest.raises(FileNotFoundError):
                lib.Client()
        nodelay.Client(trust_env=False).close()


@pytest.mark.sync_only("the request runs in a child process")
def test_trust_env_false_loads_the_system_store_while_ssl_cert_file_is_set(
    ca: trustme.CA, ca_file: str
) -> None:
    """In a fresh process whose first TLS client has ``trust_env=False`` while
    ``SSL_CERT_FILE`` is set, the engine loads the system store past the variable: the test
    CA is unknown there, and the store is not empty (that error would name it)."""
    code = (
        "import sys, nodelay\n"
        "try:\n"
        "    nodelay.get(sys.argv[1], trust_env=False)\n"
        "except nodelay.TLSError as e:\n"
        "    print(e)\n"
    )
    with tls_server(ca.issue_cert("localhost")) as server:
        run = subprocess.run(
            [sys.executable, "-c", code, url(server)],
            env={**os.environ, "SSL_CERT_FILE": ca_file},
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert "unknown issuer" in run.stdout, run.stdout + run.stderr


def test_verify_type_checked() -> None:
    with pytest.raises(TypeError):
        nodelay.Client(verify=3)  # type: ignore[arg-type]


@pytest.mark.sync_only("no request is sent: the warning comes from the constructor")
def test_ssl_context_warning_is_filtered_by_its_public_class() -> None:
    # A program silences (or escalates) the warnings of verify=ssl.SSLContext by the class
    # nodelay exports, as it would any other warning category.
    ctx = ssl.create_default_context()
    ctx.set_ciphers("ECDHE+AESGCM")  # rustls keeps its own suites: a warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", nodelay.SSLContextWarning)
        nodelay.Client(verify=ctx).close()
    assert caught == []
    with warnings.catch_warnings():
        warnings.simplefilter("error", nodelay.SSLContextWarning)
        with pytest.raises(nodelay.SSLContextWarning, match="cipher list"):
            nodelay.Client(verify=ctx)
    assert issubclass(nodelay.SSLContextWarning, UserWarning)
