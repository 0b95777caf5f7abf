"""docs/hostile.md E22-E24: redirects and credentials, as python/nodelay/_client.py does them:
credentials (Authorization, Proxy-Authorization, Cookie, and a caller's Host) are dropped
for good once a redirect leaves the origin; loops end in ``TooManyRedirects``; only http
and https are followed."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import nodelay
import pytest
import trustme
from scripted import Recv, ScriptedServer, Send, response

from .conftest import FAST, FRESH_SCRIPT, Factory, expect_error, tls_step

pytestmark = pytest.mark.both_drivers

SECRETS = {
    "Authorization": "Bearer s3cret",
    "Proxy-Authorization": "Basic cHJveHk6cGFzcw==",
    "Cookie": "session=s3cret",
}
SECRET_NAMES = [name.lower().encode() for name in SECRETS]


def redirect(location: str, status: int = 302) -> bytes:
    return response(status, headers=[("Location", location)], reason="Found")


def send_later(make: Callable[[], bytes]) -> Callable[[socket.socket], None]:
    """A step sending bytes computed when it runs (a URL not known when scripting)."""
    return lambda sock: sock.sendall(make())


def header_names(request: bytes) -> list[bytes]:
    head = request.split(b"\r\n\r\n", 1)[0]
    return [line.split(b":", 1)[0].strip().lower() for line in head.split(b"\r\n")[1:]]


def assert_no_secrets(request: bytes) -> None:
    names = header_names(request)
    leaked = [n for n in SECRET_NAMES if n in names]
    assert not leaked, f"credentials left the origin: {leaked}\n{request!r}"
    assert b"s3cret" not in request and b"cHJveHk6cGFzcw" not in request


def assert_has_secrets(request: bytes) -> None:
    names = header_names(request)
    assert all(n in names for n in SECRET_NAMES), request


# -- E22: credentials never leave the origin ---------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_e22_port_change_strips_credentials(scripted: Factory, status: int) -> None:
    b = scripted(FRESH_SCRIPT)
    a = scripted([Recv(), Send(redirect(f"{b.url}/landing", status))])
    with nodelay.Client(follow_redirects=True) as c:
        r = c.get(a.url + "/start", headers=SECRETS)
    assert r.content == b"fresh" and len(r.history) == 1
    assert_has_secrets(a.requests[0])
    assert_no_secrets(b.requests[0])


def test_e22_host_change_same_port_strips_credentials(scripted: Factory) -> None:
    # 127.0.0.1 and localhost are different origins even on the same socket.
    srv = scripted(
        [Recv(), send_later(lambda: redirect(f"http://localhost:{srv.port}/other"))],
        FRESH_SCRIPT,
    )
    with nodelay.Client(follow_redirects=True) as c:
        r = c.get(srv.url + "/", headers={**SECRETS, "Host": f"127.0.0.1:{srv.port}"})
    assert r.content == b"fresh"
    first, second = srv.requests
    assert_has_secrets(first)
    assert_no_secrets(second)
    # The caller's Host header belonged to the old origin: it must not be sent to the new one.
    assert f"Host: localhost:{srv.port}".encode() in second


def test_e22_https_to_http_downgrade_strips_credentials(
    scripted: Factory, ca: trustme.CA, ca_file: str
) -> None:
    plain = scripted(FRESH_SCRIPT)
    seen: list[bytes] = []
    location = f"http://localhost:{plain.port}/downgraded"
    secure = scripted([tls_step(ca.issue_cert("localhost"), [redirect(location)], seen)])
    with nodelay.Client(verify=ca_file, follow_redirects=True) as c:
        r = c.get(f"https://localhost:{secure.port}/", headers=SECRETS)
    assert r.content == b"fresh"
    assert_has_secrets(seen[0])
    assert_no_secrets(plain.requests[0])


def test_e22_https_other_port_strips_credentials(
    scripted: Factory, ca: trustme.CA, ca_file: str
) -> None:
    cert = ca.issue_cert("localhost")
    seen_a: list[bytes] = []
    seen_b: list[bytes] = []
    b = scripted([tls_step(cert, [response(body=b"b")], seen_b)])
    a = scripted([tls_step(cert, [redirect(f"https://localhost:{b.port}/")], seen_a)])
    with nodelay.Client(verify=ca_file, follow_redirects=True) as c:
        assert c.get(f"https://localhost:{a.port}/", headers=SECRETS).content == b"b"
    assert_has_secrets(seen_a[0])
    assert_no_secrets(seen_b[0])


def test_e22_credentials_never_restored_on_return_to_the_origin(scripted: Factory) -> None:
    b = scripted([Recv(), send_later(lambda: redirect(f"{a.url}/back"))])
    a = scripted(
        [
            Recv(),
            Send(redirect(f"{b.url}/away")),
            Recv(),
            Send(response(body=b"back")),
        ]
    )
    with nodelay.Client(follow_redirects=True) as c:
        r = c.get(a.url + "/", headers=SECRETS)
    assert r.content == b"back" and len(r.history) == 2
    first, back = a.requests
    assert_has_secrets(first)
    assert_no_secrets(b.requests[0])
    assert_no_secrets(back)


def test_e22_same_origin_redirect_keeps_credentials(scripted: Factory) -> None:
    srv = scripted([Recv(), Send(redirect("/next")), Recv(), Send(response(body=b"same"))])
    with nodelay.Client(follow_redirects=True) as c:
        assert c.get(srv.url + "/", headers=SECRETS).content == b"same"
    assert_has_secrets(srv.requests[1])


def test_e22_307_body_replayed_but_credentials_stripped(scripted: Factory) -> None:
    b = scripted(FRESH_SCRIPT)
    a = scripted([Recv(), Send(redirect(f"{b.url}/", 307))])
    with nodelay.Client(follow_redirects=True) as c:
        c.post(a.url + "/", content=b"payload", headers=SECRETS)
    assert b.requests[0].startswith(b"POST / ") and b.requests[0].endswith(b"payload")
    assert_no_secrets(b.requests[0])


def test_e22_client_default_credentials_stripped_too(scripted: Factory) -> None:
    b = scripted(FRESH_SCRIPT)
    a = scripted([Recv(), Send(redirect(f"{b.url}/"))])
    with nodelay.Client(headers=SECRETS, follow_redirects=True) as c:
        c.get(a.url + "/")
    assert_has_secrets(a.requests[0])
    assert_no_secrets(b.requests[0])


# -- E23: loops ------------------------------------------------------------------------------


def _loop_server(scripted: Factory, hops: int) -> ScriptedServer:
    steps = []
    for _ in range(hops):
        steps += [Recv(), Send(redirect("/loop"))]
    return scripted(steps)


def test_e23_redirect_loop(scripted: Factory) -> None:
    srv = _loop_server(scripted, 30)
    with nodelay.Session() as s:  # follows redirects, max 20
        start = time.monotonic()
        exc, _ = expect_error(lambda: s.get(srv.url + "/loop"), nodelay.TooManyRedirects, FAST)
    history = exc.history  # type: ignore[attr-defined]
    assert len(history) >= 20 and all(r.status_code == 302 for r in history)
    assert len(srv.requests) == 21  # the first request and 20 redirects, no more
    assert srv.connections == 1  # all on one kept-alive connection
    assert time.monotonic() - start < FAST


def test_e23_two_server_ping_pong(scripted: Factory) -> None:
    a = scripted([Recv(), send_later(lambda: redirect(f"{b.url}/"))] * 10)
    b = scripted([Recv(), Send(redirect(f"{a.url}/"))] * 10)
    with nodelay.Client(follow_redirects=True, max_redirects=5) as c:
        exc, _ = expect_error(lambda: c.get(a.url + "/"), nodelay.TooManyRedirects, FAST)
    assert len(a.requests) + len(b.requests) == 6
    assert exc.history  # type: ignore[attr-defined]


# -- E24: schemes other than http and https --------------------------------------------------


@pytest.mark.parametrize(
    "location",
    [
        "file:///etc/passwd",
        "ftp://127.0.0.1/",
        "gopher://127.0.0.1:70/",
        "data:text/plain,hello",
        "javascript:alert(1)",
        "ws://127.0.0.1/",
        "mailto:a@b.c",
        "unix:///var/run/docker.sock",
    ],
)
def test_e24_non_http_location_refused(scripted: Factory, location: str) -> None:
    srv = scripted([Recv(), Send(redirect(location))], FRESH_SCRIPT)
    with nodelay.Client(follow_redirects=True) as c:
        exc, _ = expect_error(lambda: c.get(srv.url + "/"), nodelay.UnsupportedProtocol, FAST)
    assert len(srv.requests) == 1
    assert "http" in str(exc)


def test_e24_scheme_relative_location_stays_http(scripted: Factory) -> None:
    b = scripted(FRESH_SCRIPT)
    a = scripted([Recv(), Send(redirect(f"//127.0.0.1:{b.port}/rel"))])
    with nodelay.Client(follow_redirects=True) as c:
        assert c.get(a.url + "/", headers=SECRETS).content == b"fresh"
    assert b.requests[0].startswith(b"GET /rel ")
    assert_no_secrets(b.requests[0])
