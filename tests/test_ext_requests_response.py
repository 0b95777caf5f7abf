"""``Response.raw`` under ``nodelay.ext.requests``: urllib3's ``HTTPResponse`` as urllib3
itself leaves it.

Each test reads the same scripted reply through a plain ``requests.Session`` (urllib3 over
http.client: the oracle) and through nodelay's, with the same sequence of calls on
``r.raw``, and compares everything observable after each call: what it returned or
raised, ``tell()``, ``length_remaining``, ``isclosed()``, ``closed`` and ``data``.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from typing import Any

import pytest
import requests
import urllib3
from nodelay.ext.requests import Session
from scripted import Recv, ScriptedServer, Send, response

BODY = b"0123456789abcdefghijklmnopqrstuvwxyz"

Calls = Callable[[urllib3.HTTPResponse], list[Any]]


def _state(raw: urllib3.HTTPResponse) -> tuple[Any, ...]:
    # urllib3 counts no bytes in tell() when it reads chunks through http.client itself.
    told = None if raw.chunked else raw.tell()
    return (told, raw.length_remaining, raw.isclosed(), raw.closed, raw.chunked)


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        result = call()
    except Exception as exc:  # the class is the outcome compared
        return ("raised", type(exc).__name__)
    return list(result) if hasattr(result, "__next__") else result


def _trace(
    raw: urllib3.HTTPResponse, calls: list[Callable[[urllib3.HTTPResponse], Any]], state: bool
) -> Any:
    trace: list[Any] = [_state(raw), raw.status, raw.version, raw.reason, list(raw.headers.items())]
    for call in calls:
        trace.append(_outcome(lambda call=call: call(raw)))
        if state:
            trace.append(_state(raw))
    return trace


def _both(
    reply: bytes,
    calls: list[Callable[[urllib3.HTTPResponse], Any]],
    method: str = "GET",
    state: bool = True,
) -> tuple[Any, Any]:
    """The trace of ``calls`` on ``r.raw`` under requests' own adapter and under nodelay's
    (with the state after each call unless ``state`` is false)."""
    traces = []
    for session in (requests.Session(), Session()):
        with session, ScriptedServer([Recv(), Send(reply)]) as srv:
            session.trust_env = False
            r = session.request(method, f"http://127.0.0.1:{srv.port}/", stream=True)
            assert isinstance(r.raw, urllib3.HTTPResponse)
            traces.append(_trace(r.raw, calls, state))
    return traces[0], traces[1]


def _read_all_in(size: int) -> Callable[[urllib3.HTTPResponse], list[bytes]]:
    def read(raw: urllib3.HTTPResponse) -> list[bytes]:
        pieces = []
        while piece := raw.read(size):
            pieces.append(piece)
        pieces.append(raw.read(size))  # past the end
        return pieces

    return read


def _streamed(raw: urllib3.HTTPResponse, size: int) -> tuple[bytes, bool]:
    """stream(size) yields at most ``size`` bytes a piece (urllib3 also ends a piece at
    each chunk of a chunked body): the pieces may differ, their sum not."""
    pieces = list(raw.stream(size))
    return b"".join(pieces), all(0 < len(piece) <= size for piece in pieces)


GZIPPED = gzip.compress(BODY * 20)

REPLIES = {
    "length": response(body=BODY),
    "chunked": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5\r\n01234\r\n1f\r\n56789abcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n"
    ),
    "gzip": response(body=GZIPPED, headers=[("Content-Encoding", "gzip")]),
    "close-delimited": b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + BODY,
    "empty": response(body=b""),
    "two-lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 36\r\nContent-Length: 36\r\n\r\n" + BODY,
}

CALLS: dict[str, list[Callable[[urllib3.HTTPResponse], Any]]] = {
    "read": [lambda raw: raw.read(), lambda raw: raw.read()],
    "read-sizes-7": [_read_all_in(7)],
    "read-sizes-1000": [_read_all_in(1000)],
    "stream-5": [lambda raw: _streamed(raw, 5)],
    "stream-default": [lambda raw: _streamed(raw, 2**16)],
    "undecoded-then-rest": [
        lambda raw: raw.read(4, decode_content=False),
        lambda raw: raw.read(decode_content=False),
    ],
    "cached": [lambda raw: raw.read(cache_content=True), lambda raw: raw.data],
    "data": [lambda raw: raw.data, lambda raw: raw.data],
    "uncached-then-data": [lambda raw: raw.read(3), lambda raw: raw.data],
    "readinto": [lambda raw: raw.readinto(bytearray(10)), lambda raw: raw.read()],
    "drain": [lambda raw: raw.drain_conn(), lambda raw: raw.read()],
    "negative-size": [lambda raw: raw.read(-1)],
    "zero-size": [lambda raw: raw.read(0), lambda raw: raw.read()],
    "decoded-sizes": [lambda raw: raw.read(10, decode_content=True), _read_all_in(100)],
}


@pytest.mark.parametrize("calls", list(CALLS), ids=list(CALLS))
@pytest.mark.parametrize("reply", list(REPLIES), ids=list(REPLIES))
def test_raw_as_urllib3_leaves_it(reply: str, calls: str) -> None:
    oracle, ours = _both(REPLIES[reply], CALLS[calls])
    assert ours == oracle


def _read1_all(raw: urllib3.HTTPResponse) -> tuple[bytes, bool]:
    """read1 returns what is there, up to the size: the pieces may differ, their sum not."""
    pieces = [raw.read1(4)]
    while piece := raw.read1():
        pieces.append(piece)
    return b"".join(pieces), len(pieces[0]) <= 4


@pytest.mark.parametrize("reply", list(REPLIES), ids=list(REPLIES))
def test_read1_as_urllib3(reply: str) -> None:
    oracle, ours = _both(REPLIES[reply], [_read1_all], state=False)
    assert ours == oracle


@pytest.mark.parametrize(
    ("status", "method"), [(204, "GET"), (304, "GET"), (200, "HEAD")], ids=["204", "304", "head"]
)
def test_bodiless_answers(status: int, method: str) -> None:
    reply = f"HTTP/1.1 {status} X\r\nContent-Length: 5\r\n\r\n".encode()
    oracle, ours = _both(reply, [lambda raw: raw.read(), lambda raw: raw.read(3)], method)
    assert ours == oracle


BROKEN_CALLS: dict[str, Callable[[urllib3.HTTPResponse], Any]] = {
    "read": lambda raw: raw.read(decode_content=True),
    "read-sizes-7": lambda raw: [raw.read(7, decode_content=True) for _ in range(20)],
    "stream-5": lambda raw: list(raw.stream(5, decode_content=True)),
}


@pytest.mark.parametrize(
    "reply",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + BODY,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n01234\r\nzz",
        response(body=b"not gzip at all", headers=[("Content-Encoding", "gzip")]),
    ],
    ids=["short-length", "broken-chunks", "bad-gzip"],
)
@pytest.mark.parametrize("calls", list(BROKEN_CALLS))
def test_broken_bodies_raise_what_urllib3_raises(reply: bytes, calls: str) -> None:
    """The error, as urllib3 raises it; how much of the body came before it is not
    compared (http.client and the engine read in different pieces)."""
    oracle, ours = _both(reply, [BROKEN_CALLS[calls]], state=False)
    assert oracle[-1][0] == "raised"
    assert ours == oracle
