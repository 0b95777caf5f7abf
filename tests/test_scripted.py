"""Byte-level scenarios against the scripted raw-socket server."""

from __future__ import annotations

import time
from collections.abc import Callable

import nodelay
import pytest
from scripted import Close, Recv, Reset, ScriptedServer, Send, Sleep, Step, response

pytestmark = pytest.mark.both_drivers

Factory = Callable[..., ScriptedServer]
OK = response(body=b"ok")
UA = f"nodelay/{nodelay.__version__}"


def _head_lines(request: bytes) -> tuple[list[str], bytes]:
    head, _, body = request.partition(b"\r\n\r\n")
    return head.decode("latin-1").split("\r\n"), body


# -- exact request bytes ------------------------------------------------------------------


def test_exact_get_bytes(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Send(OK)])
    r = client.get(f"{srv.url}/path/x?q=1&r=%20")
    assert r.status_code == 200 and r.content == b"ok"
    assert srv.received == [
        b"GET /path/x?q=1&r=%20 HTTP/1.1\r\n"
        + f"Host: 127.0.0.1:{srv.port}\r\n".encode()
        + f"User-Agent: {UA}\r\n".encode()
        + b"Accept: */*\r\n"
        + b"Accept-Encoding: gzip, deflate, br, zstd\r\n"
        + b"\r\n"
    ]


def test_exact_post_bytes(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Send(OK)])
    client.post(f"{srv.url}/submit", data={"a": "1"}, headers={"X-B": "2", "x-a": "1"})
    (request,) = srv.received
    lines, body = _head_lines(request)
    assert lines[0] == "POST /submit HTTP/1.1"
    assert lines[1] == f"Host: 127.0.0.1:{srv.port}"
    assert lines.count("Content-Length: 3") == 1
    ours = [line for line in lines[2:] if not line.startswith("Content-Length:")]
    assert ours == [
        f"User-Agent: {UA}",
        "Accept: */*",
        "Accept-Encoding: gzip, deflate, br, zstd",
        "X-B: 2",
        "x-a: 1",
        "Content-Type: application/x-www-form-urlencoded",
    ]
    assert body == b"a=1"
    assert len(srv.requests) == 1


def test_post_without_body_sends_content_length_zero(
    scripted: Factory, client: nodelay.Client
) -> None:
    srv = scripted([Recv(), Send(OK)])
    client.post(f"{srv.url}/p")
    lines, body = _head_lines(srv.received[0])
    assert "Content-Length: 0" in lines and body == b""


def test_binary_body_exact(scripted: Factory, client: nodelay.Client) -> None:
    payload = bytes(range(256)) * 300
    srv = scripted([Recv(), Send(OK)])
    client.put(f"{srv.url}/bin", content=payload)
    lines, body = _head_lines(srv.received[0])
    assert f"Content-Length: {len(payload)}" in lines
    assert body == payload


# -- malformed responses ------------------------------------------------------------------

HEAD_CL = b"HTTP/1.1 200 OK\r\nContent-Length: "
CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"

MALFORMED: dict[str, bytes] = {
    "status-code-two-digits": b"HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n",
    "status-code-not-numeric": b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",
    "status-line-http2-over-h1": b"HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n",
    "status-line-garbage": b"HELLO THERE\r\nContent-Length: 0\r\n\r\n",
    "http09-no-status-line": b"<html>hello</html>\n",
    "content-length-negative": HEAD_CL + b"-1\r\n\r\nhello",
    "content-length-plus": HEAD_CL + b"+5\r\n\r\nhello",
    "content-length-hex": HEAD_CL + b"0x10\r\n\r\nhello",
    "content-length-exponent": HEAD_CL + b"1e3\r\n\r\nhello",
    "content-length-20-digits": HEAD_CL + b"99999999999999999999\r\n\r\nhello",
    "content-length-conflict": HEAD_CL + b"5\r\nContent-Length: 6\r\n\r\nhello!",
    "content-length-conflict-list": HEAD_CL + b"5, 6\r\n\r\nhello!",
    "chunk-size-negative": CHUNKED + b"-1\r\nx\r\n0\r\n\r\n",
    "chunk-size-not-hex": CHUNKED + b"zz\r\nx\r\n0\r\n\r\n",
    "chunk-size-overflow": CHUNKED + b"fffffffffffffffffffff\r\nx\r\n0\r\n\r\n",
    "header-block-over-256k": (
        b"HTTP/1.1 200 OK\r\n"
        + b"".join(b"X-Big-%d: " % i + b"a" * 60_000 + b"\r\n" for i in range(5))
        + b"Content-Length: 0\r\n\r\n"
    ),
    "129-header-fields": (
        b"HTTP/1.1 200 OK\r\n"
        + b"".join(b"X-H%d: v\r\n" % i for i in range(128))
        + b"Content-Length: 0\r\n\r\n"
    ),
    "body-shorter-than-content-length": HEAD_CL + b"10\r\n\r\nabc",
    "chunked-cut-mid-chunk": CHUNKED + b"a\r\nabc",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_response(scripted: Factory, client: nodelay.Client, case: str) -> None:
    srv = scripted([Recv(), Send(MALFORMED[case]), Close()])
    url = f"{srv.url}/m"
    start = time.monotonic()
    with pytest.raises(nodelay.RemoteProtocolError) as info:
        client.get(url, timeout=nodelay.Timeout(5.0))
    assert time.monotonic() - start < 3.0
    assert info.value.url == url
    assert info.value.request is not None


def test_128_header_fields_are_fine(scripted: Factory, client: nodelay.Client) -> None:
    head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(127))
    srv = scripted([Recv(), Send(head + b"Content-Length: 2\r\n\r\nok")])
    r = client.get(f"{srv.url}/")
    assert len(r.headers.raw) == 128 and r.content == b"ok"


def test_close_before_any_response_byte(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Close()])
    with pytest.raises(nodelay.RemoteProtocolError):
        client.get(f"{srv.url}/")
    assert srv.connections == 1  # a fresh connection's failure is not retried


def test_reset_mid_response(scripted: Factory, client: nodelay.Client) -> None:
    partial = HEAD_CL + b"100000\r\n\r\n" + b"x" * 1000
    srv = scripted([Recv(), Send(partial), Sleep(0.1), Reset()])
    with pytest.raises((nodelay.ReadError, nodelay.RemoteProtocolError)):
        client.get(f"{srv.url}/")


def test_server_never_answers(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Sleep(10)])
    start = time.monotonic()
    with pytest.raises(nodelay.ReadTimeout):
        client.get(f"{srv.url}/", timeout=nodelay.Timeout(5.0, read=0.3))
    assert time.monotonic() - start < 1.3


def test_body_after_head_dripped_too_slowly(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Send(HEAD_CL + b"10\r\n\r\nab"), Sleep(10)])
    start = time.monotonic()
    with pytest.raises(nodelay.ReadTimeout):
        client.get(f"{srv.url}/", timeout=nodelay.Timeout(5.0, read=0.3))
    assert time.monotonic() - start < 1.3


# -- connection reuse -----------------------------------------------------------------------


def test_stale_keep_alive_closed_while_idle(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Send(OK), Close()], [Recv(), Send(response(body=b"second"))])
    assert client.get(f"{srv.url}/1").content == b"ok"
    assert srv.wait_finished(1)
    time.sleep(0.05)  # let the FIN reach the client socket
    assert client.get(f"{srv.url}/2").content == b"second"
    assert srv.connections == 2
    assert [r.split(b" ")[1] for r in srv.requests] == [b"/1", b"/2"]


def test_idempotent_request_retried_once_on_stale_connection(
    scripted: Factory, client: nodelay.Client
) -> None:
    # The server reads the second GET on the reused connection, then closes without a byte.
    srv = scripted([Recv(), Send(OK), Recv(), Close()], [Recv(), Send(response(body=b"2"))])
    assert client.get(f"{srv.url}/1").content == b"ok"
    assert client.get(f"{srv.url}/2").content == b"2"
    assert srv.connections == 2
    assert [r.split(b" ")[1] for r in srv.requests] == [b"/1", b"/2", b"/2"]


def test_post_not_replayed_on_stale_connection(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Send(OK), Recv(), Close()], [Recv(), Send(OK)])
    assert client.get(f"{srv.url}/1").content == b"ok"
    with pytest.raises(nodelay.RemoteProtocolError):
        client.post(f"{srv.url}/2", content=b"once")
    assert srv.connections == 1
    assert sum(r.startswith(b"POST ") for r in srv.requests) == 1


def test_client_connection_close_header_closes_every_connection(scripted: Factory) -> None:
    # The client's own Connection: close (RFC 9112 §9.6) holds on every request, also once
    # the engine reuses the client's encoded header fields: a connection answered
    # keep-alive is never used again (a request sent on it would get "reused").
    again = [Recv(), Send(OK), Recv(), Send(response(body=b"reused"))]
    srv = scripted(*[again] * 4)
    with nodelay.Client(headers={"Connection": "close"}) as client:
        bodies = [client.get(f"{srv.url}/{i}").content for i in range(4)]
    assert bodies == [b"ok"] * 4
    assert srv.connections == 4


# -- request validation: nothing reaches the wire -------------------------------------------

BAD_INPUTS: dict[str, dict[str, object]] = {
    "header-value-crlf": {"headers": {"X-A": "a\r\nX-Injected: 1"}},
    "header-value-lf": {"headers": {"X-A": "a\nX-Injected: 1"}},
    "header-value-cr": {"headers": {"X-A": "a\rb"}},
    "header-value-nul": {"headers": {"X-A": "a\x00b"}},
    "header-name-crlf": {"headers": {"X-A\r\nX-Injected": "1"}},
    "header-name-nul": {"headers": {"X-\x00A": "1"}},
    "method-crlf": {"method": "GET /x HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET"},
    "method-nul": {"method": "GE\x00T"},
    "url-crlf": {"path": "/x\r\nX-Injected: 1"},
    "url-lf-in-query": {"path": "/x?a=\nb"},
    "url-nul": {"path": "/x\x00y"},
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_local_protocol_error_sends_nothing(
    scripted: Factory, client: nodelay.Client, case: str
) -> None:
    bad = BAD_INPUTS[case]
    srv = scripted([Recv(), Send(OK)])
    method = str(bad.get("method", "GET"))
    url = srv.url + str(bad.get("path", "/bad"))
    headers = bad.get("headers")
    with pytest.raises(nodelay.LocalProtocolError) as info:
        client.request(method, url, headers=headers)  # type: ignore[arg-type]
    assert info.value.request is not None
    time.sleep(0.05)
    assert b"".join(srv.received) == b""
    # The client still works and the first bytes the server ever sees are a clean request.
    assert client.get(f"{srv.url}/good").content == b"ok"
    received = b"".join(srv.received)
    assert received.startswith(b"GET /good HTTP/1.1\r\n")
    assert received.count(b"HTTP/1.1") == 1
    assert b"Injected" not in received


def test_scripted_server_callable_step(scripted: Factory, client: nodelay.Client) -> None:
    def answer(sock: object) -> None:
        import socket

        assert isinstance(sock, socket.socket)
        sock.sendall(response(body=b"from callable"))

    steps: list[Step] = [Recv(), answer]
    srv = scripted(steps)
    assert client.get(f"{srv.url}/").content == b"from callable"


def test_http10_response_read_to_close(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Send(b"HTTP/1.0 200 Fine\r\nX-A: 1\r\n\r\nuntil close"), Close()])
    r = client.get(f"{srv.url}/")
    assert r.http_version == "HTTP/1.0"
    assert r.reason_phrase == "Fine"
    assert r.content == b"until close"
    assert r.headers["x-a"] == "1"


def test_response_header_names_kept_as_received(scripted: Factory, client: nodelay.Client) -> None:
    head = b"HTTP/1.1 201 Created\r\nX-MiXed-Case: v\r\nset-cookie: a=1\r\nSet-Cookie: b=2\r\n"
    srv = scripted([Recv(), Send(head + b"Content-Length: 0\r\n\r\n")])
    r = client.get(f"{srv.url}/")
    assert r.status_code == 201 and r.reason_phrase == "Created"
    assert r.headers.raw == [
        ("X-MiXed-Case", "v"),
        ("set-cookie", "a=1"),
        ("Set-Cookie", "b=2"),
        ("Content-Length", "0"),
    ]
    assert r.headers.get_list("SET-COOKIE") == ["a=1", "b=2"]
