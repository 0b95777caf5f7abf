"""docs/hostile.md F25: CR, LF or NUL in a URL, method, header name or value ->
``LocalProtocolError`` before anything is sent (nothing reaches the server)."""

from __future__ import annotations

import time

import nodelay
import pytest

from .conftest import FAST, FRESH_BODY, FRESH_SCRIPT, Factory

pytestmark = pytest.mark.both_drivers

INJECTIONS = ["\r\n", "\r", "\n", "\x00"]
SMUGGLE = "X-Injected: 1"


def _assert_nothing_sent(scripted: Factory, client: nodelay.Client, send: object) -> None:
    srv = scripted(FRESH_SCRIPT)
    start = time.monotonic()
    with pytest.raises(nodelay.LocalProtocolError) as info:
        send(srv.url)  # type: ignore[operator]
    assert type(info.value) is nodelay.LocalProtocolError
    assert time.monotonic() - start < FAST
    time.sleep(0.05)
    assert srv.connections == 0, "a connection was opened for a request that must not be sent"
    # The client is still usable.
    assert client.get(srv.url + "/").content == FRESH_BODY


@pytest.mark.parametrize("bad", INJECTIONS, ids=["crlf", "cr", "lf", "nul"])
def test_f25_url_path(scripted: Factory, client: nodelay.Client, bad: str) -> None:
    _assert_nothing_sent(scripted, client, lambda url: client.get(f"{url}/a{bad}{SMUGGLE}"))


@pytest.mark.parametrize("bad", INJECTIONS, ids=["crlf", "cr", "lf", "nul"])
def test_f25_url_query(scripted: Factory, client: nodelay.Client, bad: str) -> None:
    _assert_nothing_sent(scripted, client, lambda url: client.get(f"{url}/a?q=1{bad}{SMUGGLE}"))


@pytest.mark.parametrize("bad", INJECTIONS, ids=["crlf", "cr", "lf", "nul"])
def test_f25_url_host(scripted: Factory, client: nodelay.Client, bad: str) -> None:
    def send(url: str) -> None:
        host_url = url.replace("127.0.0.1", f"127.0.0.1{bad}")
        client.get(host_url + "/")

    _assert_nothing_sent(scripted, client, send)


@pytest.mark.parametrize("bad", INJECTIONS, ids=["crlf", "cr", "lf", "nul"])
def test_f25_method(scripted: Factory, client: nodelay.Client, bad: str) -> None:
    _assert_nothing_sent(scripted, client, lambda url: client.request(f"GET{bad}", url + "/"))


@pytest.mark.parametrize("method", ["GET /x HTTP/1.1", "G T", "", "GET(", "GÉT"])
def test_f25_method_not_a_token(scripted: Factory, client: nodelay.Client, method: str) -> None:
    _assert_nothing_sent(scripted, client, lambda url: client.request(method, url + "/"))


@pytest.mark.parametrize(
    "bad", [*INJECTIONS, " ", ":", ""], ids=["crlf", "cr", "lf", "nul", "space", "colon", "empty"]
)
def test_f25_header_name(scripted: Factory, client: nodelay.Client, bad: str) -> None:
    name = f"X-A{bad}" if bad else ""
    _assert_nothing_sent(scripted, client, lambda url: client.get(url + "/", headers={name: "1"}))


@pytest.mark.parametrize("bad", INJECTIONS, ids=["crlf", "cr", "lf", "nul"])
def test_f25_header_value(scripted: Factory, client: nodelay.Client, bad: str) -> None:
    _assert_nothing_sent(
        scripted, client, lambda url: client.get(url + "/", headers={"X-A": f"1{bad}{SMUGGLE}"})
    )


@pytest.mark.parametrize("bad", INJECTIONS, ids=["crlf", "cr", "lf", "nul"])
def test_f25_client_default_header_value(
    scripted: Factory, client: nodelay.Client, bad: str
) -> None:
    with nodelay.Client(headers={"X-Default": f"v{bad}{SMUGGLE}"}) as c:
        _assert_nothing_sent(scripted, client, lambda url: c.get(url + "/"))


@pytest.mark.parametrize("bad", INJECTIONS, ids=["crlf", "cr", "lf", "nul"])
def test_f25_host_header_override(scripted: Factory, client: nodelay.Client, bad: str) -> None:
    _assert_nothing_sent(
        scripted,
        client,
        lambda url: client.get(url + "/", headers={"Host": f"a{bad}{SMUGGLE}"}),
    )


def test_f25_post_body_may_contain_anything(scripted: Factory, client: nodelay.Client) -> None:
    # Bodies are framed by Content-Length: CR, LF and NUL in them are data, not injection.
    srv = scripted(FRESH_SCRIPT)
    body = b"\r\n\r\nGET /smuggled HTTP/1.1\r\n\x00"
    assert client.post(srv.url + "/", content=body).content == FRESH_BODY
    assert srv.requests[0].endswith(b"\r\n\r\n" + body)


def test_f25_params_are_percent_encoded(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted(FRESH_SCRIPT)
    client.get(srv.url + "/", params={"q": f"1\r\n{SMUGGLE}\x00"})
    request_line = srv.requests[0].split(b"\r\n", 1)[0]
    assert request_line == b"GET /?q=1%0D%0AX-Injected%3A+1%00 HTTP/1.1"


def test_f25_tab_in_url_refused(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted(FRESH_SCRIPT)
    with pytest.raises((nodelay.LocalProtocolError, nodelay.InvalidURL)):
        client.get(srv.url + "/ad\tmin")
    assert srv.connections == 0
