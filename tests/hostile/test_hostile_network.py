"""docs/hostile.md I31-I32: network faults and slow peers."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator, Sequence

import nodelay
import pytest
from scripted import Close, Recv, Reset, Send, SendSlowly, Sleep, Step

from .conftest import (
    FAST,
    FRESH_BODY,
    FRESH_SCRIPT,
    TIMER_EARLY,
    TIMER_SLACK,
    Factory,
    expect_error,
    hostile_case,
    stopped_by_the_total,
)

pytestmark = pytest.mark.both_drivers


def _closed_port(family: socket.AddressFamily = socket.AF_INET) -> int:
    host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    with socket.socket(family) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


# -- I31: refused, reset -----------------------------------------------------------------------


def test_i31_connection_refused(client: nodelay.Client) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/"
    exc, _ = expect_error(lambda: client.get(url), nodelay.ConnectError, FAST)
    assert exc.url == url  # type: ignore[attr-defined]


def test_i31_connection_refused_ipv6(client: nodelay.Client) -> None:
    try:
        port = _closed_port(socket.AF_INET6)
    except OSError:
        pytest.skip("no IPv6 loopback")
    expect_error(lambda: client.get(f"http://[::1]:{port}/"), nodelay.ConnectError, FAST)


def test_i31_reset_instead_of_a_response(scripted: Factory, client: nodelay.Client) -> None:
    hostile_case(scripted, client, [Recv(), Reset()], nodelay.ReadError, poison=False)


def test_i31_reset_mid_headers(scripted: Factory, client: nodelay.Client) -> None:
    hostile_case(
        scripted,
        client,
        [Recv(), Send(b"HTTP/1.1 200 OK\r\nContent-Le"), Sleep(0.1), Reset()],
        nodelay.ReadError,
        poison=False,
    )


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n186a0\r\n",
        b"HTTP/1.0 200 OK\r\n\r\n",
    ],
    ids=["content-length", "content-length-unsized-read", "chunked", "close-delimited"],
)
def test_i31_reset_mid_body(scripted: Factory, client: nodelay.Client, head: bytes) -> None:
    # A close-delimited body ended by RST instead of FIN is not complete either.
    hostile_case(
        scripted,
        client,
        [Recv(), Send(head + b"x" * 5000), Sleep(0.1), Reset()],
        nodelay.ReadError,
        poison=False,
    )


def test_i31_closed_before_any_response_byte(scripted: Factory, client: nodelay.Client) -> None:
    hostile_case(
        scripted,
        client,
        [Recv(), Close()],
        nodelay.RemoteProtocolError,
        match="without sending a response",
        poison=False,
    )


def test_i31_closed_at_accept_before_the_request(scripted: Factory, client: nodelay.Client) -> None:
    # Whether the client reads EOF or the RST its request provoked is a race.
    hostile_case(
        scripted,
        client,
        [Close()],
        (nodelay.RemoteProtocolError, nodelay.ReadError),
        poison=False,
    )


# -- I32: silent and slow peers ----------------------------------------------------------------


def test_i32_server_never_answers(scripted: Factory, client: nodelay.Client) -> None:
    failure = hostile_case(
        scripted,
        client,
        [Recv(), Sleep(30.0)],
        nodelay.ReadTimeout,
        within=0.5 + TIMER_SLACK,
        timeout=nodelay.Timeout(5.0, read=0.5),
        poison=False,
    )
    assert failure.elapsed >= 0.45


def test_i32_server_never_reads_the_request(scripted: Factory, client: nodelay.Client) -> None:
    hostile_case(
        scripted,
        client,
        [Sleep(30.0)],
        nodelay.ReadTimeout,
        within=0.5 + TIMER_SLACK,
        timeout=nodelay.Timeout(5.0, read=0.5),
        poison=False,
    )


def test_i32_head_then_silence(scripted: Factory, client: nodelay.Client) -> None:
    hostile_case(
        scripted,
        client,
        [Recv(), Send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), Sleep(30.0)],
        nodelay.ReadTimeout,
        within=0.5 + TIMER_SLACK,
        timeout=nodelay.Timeout(5.0, read=0.5),
        poison=False,
    )


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n186a0\r\n",
        b"HTTP/1.0 200 OK\r\n\r\n",
    ],
    ids=["content-length", "chunked", "close-delimited"],
)
def test_i32_body_dripped_forever_stopped_by_total_deadline(
    scripted: Factory, client: nodelay.Client, head: bytes
) -> None:
    # A byte every 50 ms never trips the 1 s inactivity timeout; the total deadline must.
    stopped_by_the_total(
        scripted,
        client,
        [Recv(), Send(head), SendSlowly(b"x" * 100_000, interval=0.05)],
        read=1.0,
    )


def test_i32_total_deadline_covers_connect_send_and_receive(
    scripted: Factory, client: nodelay.Client
) -> None:
    # 0.6 s of silence before the head, then a slow head: neither alone exceeds read=1 s.
    wire = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    hostile_case(
        scripted,
        client,
        [Recv(), Sleep(0.6), SendSlowly(wire, interval=0.05)],
        nodelay.ReadTimeout,
        within=1.0 + TIMER_SLACK,
        timeout=nodelay.Timeout(5.0, read=1.0, total=1.0),
        poison=False,
    )


def test_i32_slow_but_steady_response_within_deadlines_succeeds(
    scripted: Factory, client: nodelay.Client
) -> None:
    wire = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"
    srv = scripted([Recv(), SendSlowly(wire, interval=0.01, chunk=4)])
    r = client.get(srv.url + "/", timeout=nodelay.Timeout(5.0, read=0.5, total=5.0))
    assert r.content == b"0123456789"


@pytest.fixture
def full_backlog() -> Iterator[int]:
    """A listener that never accepts, with its accept queue full: new SYNs are dropped, so
    a connect hangs until its timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(s)
    time.sleep(0.1)
    probe = socket.socket()
    probe.settimeout(0.3)
    try:
        probe.connect(("127.0.0.1", port))
        saturated = False
    except OSError:
        saturated = True
    finally:
        probe.close()
    try:
        if not saturated:
            pytest.skip("the accept queue could not be filled on this kernel")
        yield port
    finally:
        for s in fillers:
            s.close()
        listener.close()


def test_i32_connect_timeout(client: nodelay.Client, full_backlog: int) -> None:
    url = f"http://127.0.0.1:{full_backlog}/"
    _, elapsed = expect_error(
        lambda: client.get(url, timeout=nodelay.Timeout(5.0, connect=0.5)),
        nodelay.ConnectTimeout,
        0.5 + TIMER_SLACK,
        match=rf"^connect timeout of 0\.5 s while connecting to 127\.0\.0\.1:{full_backlog}$",
    )
    assert elapsed >= 0.45


def test_i32_write_timeout_when_the_server_never_reads(
    scripted: Factory, client: nodelay.Client
) -> None:
    body = b"x" * (64 * 1024 * 1024)  # far more than loopback socket buffers hold
    srv = scripted([Sleep(30.0)], FRESH_SCRIPT)
    _, elapsed = expect_error(
        lambda: client.post(srv.url + "/", content=body, timeout=nodelay.Timeout(5.0, write=0.5)),
        nodelay.WriteTimeout,
        0.5 + TIMER_SLACK + 1.0,
        match=r"^write timeout of 0\.5 s while sending the request$",
    )
    assert elapsed >= 0.45
    assert client.get(srv.url + "/").content == FRESH_BODY
    assert srv.connections == 2


# -- zero timeouts -----------------------------------------------------------------------------


def test_zero_read_timeout_is_a_read_timeout(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Sleep(1.0), Send(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")])
    expect_error(
        lambda: client.get(srv.url + "/", timeout=nodelay.Timeout(5.0, read=0)),
        nodelay.ReadTimeout,
        FAST,
    )


def test_zero_write_timeout_is_a_write_timeout(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Sleep(5.0)])
    expect_error(
        lambda: client.post(
            srv.url + "/", content=b"x" * (8 * 1024 * 1024), timeout=nodelay.Timeout(5.0, write=0)
        ),
        nodelay.WriteTimeout,
        FAST,
    )


def test_zero_connect_timeout_is_not_a_connect_error(
    scripted: Factory, client: nodelay.Client
) -> None:
    srv = scripted(FRESH_SCRIPT)
    try:
        r = client.get(srv.url + "/", timeout=nodelay.Timeout(5.0, connect=0))
    except nodelay.ConnectTimeout:
        return
    assert r.content == FRESH_BODY


# -- L36: the read timeout bounds the whole response head --------------------------------------

# A head of some 400 bytes: dripped a byte every 0.2 s it would take 80 s.
_LONG_HEAD = (
    b"HTTP/1.1 200 OK\r\n"
    + b"".join(b"X-Pad-%d: %s\r\n" % (i, b"y" * 24) for i in range(12))
    + b"Content-Length: 2\r\n\r\nok"
)
_DRIP = 0.2  # seconds between two bytes of a dripped response
_HEAD_READ = 1.0  # s: the read timeout of the cases whose head never completes


def _head_read_timeout(scripted: Factory, client: nodelay.Client, bad: Sequence[Step]) -> None:
    """``bad`` keeps the head coming, each piece within the read timeout (``_HEAD_READ``),
    the whole head never: the request must fail with the head's read timeout, not before."""
    failure = hostile_case(
        scripted,
        client,
        bad,
        nodelay.ReadTimeout,
        within=3.0,
        timeout=nodelay.Timeout(5.0, read=_HEAD_READ),
        match=r"^read timeout of 1\.0 s while waiting for the response head$",
        poison=False,
    )
    assert failure.elapsed >= _HEAD_READ - TIMER_EARLY


def test_l36_dripped_head_is_bounded_by_the_read_timeout(
    scripted: Factory, client: nodelay.Client
) -> None:
    # Each byte arrives well within the 1 s read timeout; the whole head never does.
    _head_read_timeout(scripted, client, [Recv(), SendSlowly(_LONG_HEAD, interval=_DRIP)])


def test_l36_interim_responses_share_the_head_deadline(
    scripted: Factory, client: nodelay.Client
) -> None:
    # 100 Continue every 0.6 s: each comes within the read timeout, the final head never.
    interim = b"HTTP/1.1 100 Continue\r\n\r\n"
    steps = [Recv()]
    for _ in range(8):
        steps += [Send(interim), Sleep(0.6)]
    _head_read_timeout(scripted, client, [*steps, Sleep(30.0)])


def test_l36_dripped_body_waits_per_read(scripted: Factory, client: nodelay.Client) -> None:
    # The body's bytes come 0.2 s apart, 1.6 s in all: each read is within the read timeout.
    body = b"01234567"
    head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)
    srv = scripted([Recv(), Send(head), SendSlowly(body, interval=_DRIP)])
    r = client.get(srv.url + "/", timeout=nodelay.Timeout(5.0, read=1.0))
    assert r.content == body


def test_l36_dripped_body_is_bounded_by_the_total(
    scripted: Factory, client: nodelay.Client
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
    stopped_by_the_total(
        scripted,
        client,
        [Recv(), Send(head), SendSlowly(b"x" * 1000, interval=_DRIP)],
        read=1.0,
        match=r"^total timeout of 1\.5 s exceeded while reading the response body$",
    )
