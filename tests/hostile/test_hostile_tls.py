"""docs/hostile.md D20-D21: certificate failures name their reason; a ``verify=False`` client
never lends its connections to a verifying one. The TLS servers are scripted servers whose
step wraps the accepted socket with Python's ``ssl`` and certificates from ``trustme``."""

from __future__ import annotations

import datetime
import socket
from collections.abc import Callable
from pathlib import Path

import nodelay
import pytest
import trustme
from scripted import Close, Sleep, response

from .conftest import FAST, TIMER_SLACK, Factory, expect_error, tls_step

pytestmark = pytest.mark.both_drivers

OK = response(body=b"secure")


def https_url(srv: object, host: str = "localhost") -> str:
    return f"https://{host}:{srv.port}/"  # type: ignore[attr-defined]


def tls_ok(cert: trustme.LeafCert) -> Callable[[socket.socket], None]:
    return tls_step(cert, [OK] * 5)


def _past() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=1)


def _future() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=30)


CERTS: dict[str, tuple[Callable[[trustme.CA], trustme.LeafCert], bool, str]] = {
    # name: (certificate, trust the test CA?, reason the message must name)
    "expired": (lambda ca: ca.issue_cert("localhost", not_after=_past()), True, "expired"),
    "not-yet-valid": (
        lambda ca: ca.issue_cert("localhost", not_before=_future(), not_after=_future()),
        True,
        "not valid yet",
    ),
    "wrong-host": (lambda ca: ca.issue_cert("other.example"), True, "not valid for this host"),
    "unknown-issuer": (lambda ca: ca.issue_cert("localhost"), False, "unknown issuer"),
    "self-signed": (
        lambda ca: trustme.CA().issue_cert("localhost"),
        True,
        "self-signed|unknown issuer",
    ),
}


@pytest.mark.parametrize("case", sorted(CERTS))
def test_d20_certificate_failures_name_the_reason(
    scripted: Factory, ca: trustme.CA, ca_file: str, case: str
) -> None:
    make, trust, reason = CERTS[case]
    srv = scripted([tls_ok(make(ca))])
    with nodelay.Client(verify=ca_file if trust else True) as c:
        url = https_url(srv)
        exc, _ = expect_error(lambda: c.get(url), nodelay.TLSError, FAST, match=reason)
        assert isinstance(exc, nodelay.ConnectError)
        assert exc.url == url  # type: ignore[attr-defined]
        # Nothing was pooled: a second attempt handshakes (and fails) again.
        expect_error(lambda: c.get(url), nodelay.TLSError, FAST)
        assert srv.wait_connections(2)


def test_d20_ip_literal_not_matched_by_dns_name(
    scripted: Factory, ca: trustme.CA, ca_file: str
) -> None:
    srv = scripted([tls_ok(ca.issue_cert("localhost"))])
    with nodelay.Client(verify=ca_file) as c:
        expect_error(lambda: c.get(https_url(srv, "127.0.0.1")), nodelay.TLSError, FAST)


def test_d20_plain_http_server_on_https_url(scripted: Factory, client: nodelay.Client) -> None:
    def plain_http(sock: socket.socket) -> None:
        sock.recv(4096)  # a ClientHello is no HTTP request: answer 400, as servers do
        sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    srv = scripted([plain_http, Close()])
    expect_error(
        lambda: client.get(https_url(srv, "127.0.0.1")),
        (nodelay.TLSError, nodelay.ConnectError),
        FAST,
    )


def test_d20_handshake_that_never_completes_is_a_connect_timeout(
    scripted: Factory, client: nodelay.Client
) -> None:
    srv = scripted([Sleep(30.0)])
    _, elapsed = expect_error(
        lambda: client.get(https_url(srv), timeout=nodelay.Timeout(5.0, connect=0.5)),
        nodelay.ConnectTimeout,
        0.5 + TIMER_SLACK,
        match="TLS handshake",
    )
    assert elapsed >= 0.45


def test_d20_server_closes_during_handshake(scripted: Factory, client: nodelay.Client) -> None:
    def close_after_hello(sock: socket.socket) -> None:
        sock.recv(4096)  # the ClientHello
        sock.close()

    srv = scripted([close_after_hello])
    expect_error(lambda: client.get(https_url(srv)), (nodelay.ConnectError, nodelay.TLSError), FAST)


def test_d21_verify_false_does_not_lend_connections(
    scripted: Factory, ca: trustme.CA, ca_file: str
) -> None:
    srv = scripted([tls_ok(ca.issue_cert("localhost"))])
    url = https_url(srv)
    with nodelay.Client(verify=False) as insecure, nodelay.Client() as secure:
        assert insecure.get(url).content == b"secure"
        assert insecure.get(url).content == b"secure"
        assert srv.connections == 1  # the insecure client keeps and reuses its connection
        expect_error(lambda: secure.get(url), nodelay.TLSError, FAST, match="unknown issuer")
        assert srv.wait_connections(2)  # the verifying client made its own, and refused it
        assert insecure.get(url).content == b"secure"
    with nodelay.Client(verify=ca_file) as trusting:
        assert trusting.get(url).content == b"secure"


def test_d21_custom_ca_replaces_the_store(
    scripted: Factory, ca: trustme.CA, tmp_path: Path
) -> None:
    # A client trusting another CA refuses a certificate of this one.
    other = tmp_path / "other.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    srv = scripted([tls_ok(ca.issue_cert("localhost"))])
    with nodelay.Client(verify=str(other)) as c:
        expect_error(lambda: c.get(https_url(srv)), nodelay.TLSError, FAST)


def test_d20_missing_ca_file_is_an_error_not_an_insecure_client(
    scripted: Factory, ca: trustme.CA, tmp_path: Path
) -> None:
    srv = scripted([tls_ok(ca.issue_cert("localhost"))])
    missing = str(tmp_path / "nope.pem")
    # Refused when the client is built, naming the path (as httpx does): no client exists
    # that could fall back to the system store, and nothing reached the server.
    with pytest.raises(FileNotFoundError, match=r"nope\.pem"):
        nodelay.Client(verify=missing)
    assert srv.connections == 0
