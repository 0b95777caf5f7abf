"""``Retry``: the policy itself, then retries through the client against scripted servers."""

from __future__ import annotations

import io
import socket
import time
from collections.abc import Iterator
from email.utils import formatdate

import nodelay
import pytest
from nodelay import Retry, _retry
from scripted import Close, Recv, ScriptedServer, Send, Sleep, response

pytestmark = pytest.mark.both_drivers

# ---------------------------------------------------------------- the policy


def test_int_retries_are_a_total() -> None:
    retry = _retry.build_retry(3)
    assert retry is not None
    assert (retry.total, retry.connect, retry.read, retry.status) == (3, None, None, None)
    assert _retry.build_retry(0) is None
    assert _retry.build_retry(None) is None
    with pytest.raises(TypeError):
        _retry.build_retry(True)
    with pytest.raises(ValueError):
        _retry.build_retry(-1)


def test_counters_run_out() -> None:
    retry: Retry | None = Retry(total=5, connect=1)
    error = nodelay.ConnectError("refused")
    assert retry is not None
    retry = retry.increment(error=error)
    assert retry is not None
    assert (retry.total, retry.connect) == (4, 0)
    assert retry.increment(error=error) is None, "connect=1 allows one connect retry"
    status_only = Retry(total=None, status=0)
    assert status_only.increment() is None


def test_backoff_doubles_after_the_first_retry_and_is_capped() -> None:
    retry: Retry | None = Retry(total=10, backoff_factor=0.5, backoff_max=3)
    waits = []
    for _ in range(5):
        assert retry is not None
        retry = retry.increment(error=nodelay.ReadError("x"))
        assert retry is not None
        waits.append(retry.backoff_time())
    assert waits == [0.0, 1.0, 2.0, 3.0, 3.0]


def test_short_names_are_aliases() -> None:
    retry = Retry(backoff=0.25, statuses=[503])
    assert retry.backoff_factor == retry.backoff == 0.25
    assert retry.status_forcelist == retry.statuses == frozenset({503})
    with pytest.raises(TypeError):
        Retry(backoff=1, backoff_factor=1)


def test_which_errors_and_statuses_are_retried() -> None:
    retry = Retry(status_forcelist=[502])
    assert retry.is_retry_error("POST", nodelay.ConnectError("refused"))
    assert retry.is_retry_error("POST", nodelay.ConnectTimeout("slow"))
    assert not retry.is_retry_error("POST", nodelay.ReadError("reset"))
    assert retry.is_retry_error("GET", nodelay.ReadError("reset"))
    assert not retry.is_retry_error("GET", nodelay.TLSError("bad certificate"))
    assert not retry.is_retry_error("GET", nodelay.DecodingError("bad gzip"))
    assert retry.is_retry_status("GET", 502, False)
    assert not retry.is_retry_status("POST", 502, False)
    assert retry.is_retry_status("GET", 503, True), "Retry-After on 413/429/503"
    assert not retry.is_retry_status("GET", 503, False)
    assert Retry(allowed_methods=None).is_retry_error("POST", nodelay.ReadError("reset"))


def test_retry_after_values() -> None:
    assert _retry.parse_retry_after(" 7 ") == 7.0
    soon = _retry.parse_retry_after(formatdate(time.time() + 30, usegmt=True))
    assert soon is not None and 25 < soon <= 30
    assert _retry.parse_retry_after(formatdate(time.time() - 30, usegmt=True)) == 0.0
    assert _retry.parse_retry_after("soon") is None
    assert _retry.parse_retry_after("-3") is None
    retry = Retry()
    assert retry.wait_for("100000") == _retry.RETRY_AFTER_MAX_SECONDS
    assert Retry(respect_retry_after=False).wait_for("5") == 0.0


# ---------------------------------------------------------------- through the client


def _closed_port() -> int:
    """A loopback port nothing listens on (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _counting(client: nodelay.Client) -> list[str]:
    sent: list[str] = []
    client.event_hooks["request"].append(lambda request: sent.append(request.method))
    return sent


def test_connect_errors_are_retried_for_any_method_then_re_raised() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/"
    with nodelay.Client(retries=Retry(total=2, backoff_factor=0.05)) as client:
        sent = _counting(client)
        started = time.monotonic()
        with pytest.raises(nodelay.ConnectError):
            client.post(url, content=b"x")
        elapsed = time.monotonic() - started
    assert sent == ["POST"] * 3
    assert elapsed >= 0.1, "the second retry waited backoff_factor * 2"


def test_read_error_retried_for_get() -> None:
    with (
        ScriptedServer([Recv(), Close()], [Recv(), Send(response(body=b"second"))]) as srv,
        nodelay.Client(retries=2) as client,
    ):
        r = client.get(srv.url + "/")
        assert r.content == b"second"
        assert srv.connections == 2


def test_read_error_not_retried_for_post() -> None:
    with (
        ScriptedServer([Recv(), Close()], [Recv(), Send(response(body=b"second"))]) as srv,
        nodelay.Client(retries=2) as client,
    ):
        with pytest.raises(nodelay.RemoteProtocolError):
            client.post(srv.url + "/", content=b"order=1")
        assert srv.connections == 1


def test_read_error_with_a_consumed_generator_is_not_replayed() -> None:
    def body() -> Iterator[bytes]:
        yield b"once"

    def read_chunked(sock: socket.socket) -> None:
        sock.settimeout(5)
        data = b""
        while not data.endswith(b"0\r\n\r\n"):
            piece = sock.recv(65536)
            if not piece:
                return
            data += piece

    with (
        ScriptedServer([read_chunked, Close()], [Recv(), Send(response(body=b"replayed"))]) as srv,
        nodelay.Client(retries=3) as client,
    ):
        with pytest.raises(nodelay.RemoteProtocolError):
            client.put(srv.url + "/", content=body())
        assert srv.connections == 1


def test_statuses_retried_then_success() -> None:
    unavailable = response(503, headers=[("Retry-After", "0")], reason="Unavailable")
    with (
        ScriptedServer(
            [Recv(), Send(unavailable), Close()], [Recv(), Send(response(body=b"ok"))]
        ) as srv,
        nodelay.Client(retries=Retry(total=3, status_forcelist=[503])) as client,
    ):
        r = client.get(srv.url + "/")
        assert (r.status_code, r.content) == (200, b"ok")
        assert len(srv.requests) == 2


def test_statuses_exhausted_return_the_last_response() -> None:
    unavailable = response(503, body=b"busy", reason="Unavailable")
    with (
        ScriptedServer([Recv(), Send(unavailable)]) as srv,
        nodelay.Client(retries=Retry(total=2, status_forcelist=[503])) as client,
    ):
        sent = _counting(client)
        r = client.get(srv.url + "/")
        assert (r.status_code, r.content) == (503, b"busy")
        assert sent == ["GET"] * 3
        with pytest.raises(nodelay.HTTPStatusError):
            r.raise_for_status()


def test_status_not_retried_for_post() -> None:
    with (
        ScriptedServer([Recv(), Send(response(503))]) as srv,
        nodelay.Client(retries=Retry(status_forcelist=[503])) as client,
    ):
        assert client.post(srv.url + "/", content=b"x").status_code == 503
        assert srv.connections == 1


def test_retry_after_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_retry, "RETRY_AFTER_MAX_SECONDS", 0.05)
    busy = response(429, headers=[("Retry-After", "3600")], reason="Too Many")
    with ScriptedServer([Recv(), Send(busy), Recv(), Send(response(body=b"ok"))]) as srv:
        with nodelay.Client(retries=1) as client:
            started = time.monotonic()
            r = client.get(srv.url + "/")
            assert r.status_code == 200
            assert 0.05 <= time.monotonic() - started < 2


def test_retry_after_never_sleeps_past_the_total_timeout() -> None:
    busy = response(503, headers=[("Retry-After", "60")], reason="Unavailable")
    with (
        ScriptedServer([Recv(), Send(busy)]) as srv,
        nodelay.Client(retries=3, timeout=nodelay.Timeout(5, total=1.0)) as client,
    ):
        started = time.monotonic()
        r = client.get(srv.url + "/")
        assert r.status_code == 503, "the wait would pass the deadline: last response"
        assert time.monotonic() - started < 0.5
        assert len(srv.requests) == 1


def test_retries_are_settable() -> None:
    with nodelay.Client() as client:
        assert client.retries is None
        client.retries = 4
        assert client.retries is not None and client.retries.total == 4
        client.retries = None
        assert client.retries is None


def test_connect_retry_resends_a_generator_body_nothing_was_pulled_from() -> None:
    pulled: list[bytes] = []

    def body() -> Iterator[bytes]:
        pulled.append(b"x")
        yield b"x"

    url = f"http://127.0.0.1:{_closed_port()}/"
    with nodelay.Client(retries=2) as client:
        sent = _counting(client)
        with pytest.raises(nodelay.ConnectError):
            client.post(url, content=body())
    assert sent == ["POST"] * 3, "nothing was pulled, so the stream could be offered again"
    assert pulled == []


def test_a_timed_out_streamed_upload_on_a_reused_connection_is_sent_once() -> None:
    # The upload can rewind (a seekable file) and the connection is a reused one, but a
    # timeout is a slow server, not a stale connection: the body must not go out again
    # (the second connection would answer it).
    with (
        ScriptedServer(
            [Recv(), Send(response(body=b"first")), Recv(), Sleep(5.0)],
            [Recv(), Send(response(body=b"replayed"))],
        ) as srv,
        nodelay.Client() as client,
    ):
        assert client.get(srv.url + "/").content == b"first"
        with pytest.raises(nodelay.ReadTimeout):
            client.put(
                srv.url + "/",
                content=io.BytesIO(b"the body, once"),
                timeout=nodelay.Timeout(5.0, read=0.5),
            )
        assert srv.connections == 1
        assert [r.endswith(b"the body, once") for r in srv.requests] == [False, True]
