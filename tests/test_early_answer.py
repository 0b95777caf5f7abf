"""A server that answers (413, 401...) before the request body is complete, then closes or
stops reading: the client returns that answer, as curl and browsers do, instead of raising
``WriteError``, and never reuses the connection the upload was cut short on."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator

import nodelay
import pytest
from scripted import Close, Recv, ScriptedServer, Send, Sleep, read_head, response

Factory = Callable[..., ScriptedServer]

TOO_LARGE = response(413, b"too big!", [("Connection", "close")], reason="Content Too Large")
FRESH = response(body=b"fresh")
# Far more than loopback socket buffers hold: the upload cannot finish before the answer.
LARGE = 64 * 1024 * 1024
PIECE = 256 * 1024
# A correctness bound (the write timeout the client would otherwise run into is 10 s).
ANSWERED_WITHIN = 5.0


def _head_reader(heads: list[bytes]) -> Callable[[socket.socket], None]:
    """A script step that reads up to the end of the request head, leaving the body
    unread, and records the head in ``heads``."""

    def record_head(sock: socket.socket) -> None:
        buf = read_head(sock)
        if buf is not None:
            heads.append(buf[: buf.index(b"\r\n\r\n") + 4])

    return record_head


def _pieces(total: int, pulled: list[int]) -> Iterator[bytes]:
    piece = b"x" * PIECE
    for _ in range(total // PIECE):
        pulled[0] += PIECE
        yield piece


def _answer_then(heads: list[bytes], end: object) -> list[object]:
    return [_head_reader(heads), Send(TOO_LARGE), end]


@pytest.fixture
def client() -> Iterator[nodelay.Client]:
    with nodelay.Client(timeout=nodelay.Timeout(10.0)) as c:
        yield c


@pytest.mark.parametrize("end", [Close(), Sleep(8.0)], ids=["close", "hold"])
def test_streamed_upload_answered_early(
    scripted: Factory, client: nodelay.Client, end: object
) -> None:
    heads: list[bytes] = []
    srv = scripted(_answer_then(heads, end), [Recv(), Send(FRESH)])
    pulled = [0]
    start = time.monotonic()
    r = client.post(srv.url + "/upload", content=_pieces(LARGE, pulled))
    assert (r.status_code, r.content) == (413, b"too big!")
    assert time.monotonic() - start < ANSWERED_WITHIN
    assert pulled[0] < LARGE, "the whole body was pulled although the server had answered"
    assert heads[0].startswith(b"POST /upload HTTP/1.1\r\n")
    assert b"\r\nTransfer-Encoding: chunked\r\n" in heads[0]
    # The connection the upload was cut short on is not reused.
    assert client.post(srv.url + "/upload", content=b"small").content == b"fresh"
    assert srv.connections == 2


def test_in_memory_upload_answered_early_and_closed(
    scripted: Factory, client: nodelay.Client
) -> None:
    heads: list[bytes] = []
    srv = scripted(_answer_then(heads, Close()), [Recv(), Send(FRESH)])
    start = time.monotonic()
    r = client.post(srv.url + "/upload", content=b"x" * LARGE)
    assert (r.status_code, r.reason_phrase, r.content) == (413, "Content Too Large", b"too big!")
    assert time.monotonic() - start < ANSWERED_WITHIN
    assert f"\r\nContent-Length: {LARGE}\r\n".encode() in heads[0]
    assert client.post(srv.url + "/upload", content=b"small").content == b"fresh"
    assert srv.connections == 2


def test_file_upload_answered_early(
    scripted: Factory, client: nodelay.Client, tmp_path: object
) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "big.bin"
    with path.open("wb") as f:
        f.truncate(LARGE)
    heads: list[bytes] = []
    srv = scripted(_answer_then(heads, Close()), [Recv(), Send(FRESH)])
    with path.open("rb") as f:
        r = client.put(srv.url + "/upload", content=f)
    assert (r.status_code, r.content) == (413, b"too big!")
    assert heads[0].startswith(b"PUT /upload HTTP/1.1\r\n")


def test_a_server_that_closes_without_answering_is_still_a_write_error(
    scripted: Factory, client: nodelay.Client
) -> None:
    srv = scripted([_head_reader([]), Close()])
    with pytest.raises((nodelay.WriteError, nodelay.RemoteProtocolError, nodelay.ReadError)):
        client.post(srv.url + "/upload", content=b"x" * LARGE)
    assert srv.connections == 1
