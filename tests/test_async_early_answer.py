"""``AsyncClient`` uploads answered early (tests/test_early_answer.py for ``Client``): a
server that answers (413) before the request body is complete, then closes or stops
reading, gets its answer returned as the response, not a ``WriteError``; the connection the
upload was cut short on is never reused."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import nodelay
import pytest
from scripted import Close, Recv, ScriptedServer, Send, Sleep
from test_early_answer import ANSWERED_WITHIN, FRESH, LARGE, PIECE, Factory, _answer_then


async def _pieces(total: int, pulled: list[int]) -> AsyncIterator[bytes]:
    piece = b"x" * PIECE
    for _ in range(total // PIECE):
        pulled[0] += PIECE
        yield piece


def _sync_pieces(total: int, pulled: list[int]) -> Iterator[bytes]:
    piece = b"x" * PIECE
    for _ in range(total // PIECE):
        pulled[0] += PIECE
        yield piece


async def _post_then_small(srv: ScriptedServer, content: object) -> tuple[object, bytes]:
    async with nodelay.AsyncClient(timeout=nodelay.Timeout(10.0)) as client:
        r = await client.post(srv.url + "/upload", content=content)  # type: ignore[arg-type]
        answer = (r.status_code, r.reason_phrase, r.content)
        # The connection the upload was cut short on is not reused.
        again = await client.post(srv.url + "/upload", content=b"small")
        return answer, again.content


@pytest.mark.parametrize("end", [Close(), Sleep(8.0)], ids=["close", "hold"])
@pytest.mark.parametrize("source", ["async", "sync"])
def test_streamed_upload_answered_early(scripted: Factory, end: object, source: str) -> None:
    heads: list[bytes] = []
    srv = scripted(_answer_then(heads, end), [Recv(), Send(FRESH)])
    pulled = [0]
    content = _pieces(LARGE, pulled) if source == "async" else _sync_pieces(LARGE, pulled)
    start = time.monotonic()
    answer, again = asyncio.run(_post_then_small(srv, content))
    assert answer == (413, "Content Too Large", b"too big!")
    assert time.monotonic() - start < ANSWERED_WITHIN + 1
    assert pulled[0] < LARGE, "the whole body was pulled although the server had answered"
    assert heads[0].startswith(b"POST /upload HTTP/1.1\r\n")
    assert b"\r\nTransfer-Encoding: chunked\r\n" in heads[0]
    assert again == b"fresh"
    assert srv.connections == 2


def test_in_memory_upload_answered_early_and_closed(scripted: Factory) -> None:
    heads: list[bytes] = []
    srv = scripted(_answer_then(heads, Close()), [Recv(), Send(FRESH)])
    start = time.monotonic()
    answer, again = asyncio.run(_post_then_small(srv, b"x" * LARGE))
    assert answer == (413, "Content Too Large", b"too big!")
    assert time.monotonic() - start < ANSWERED_WITHIN
    assert f"\r\nContent-Length: {LARGE}\r\n".encode() in heads[0]
    assert again == b"fresh"
    assert srv.connections == 2


def test_a_server_that_closes_without_answering_is_still_a_write_error(
    scripted: Factory,
) -> None:
    from test_early_answer import _head_reader

    srv = scripted([_head_reader([]), Close()])

    async def main() -> None:
        async with nodelay.AsyncClient(timeout=nodelay.Timeout(10.0)) as client:
            await client.post(srv.url + "/upload", content=b"x" * LARGE)

    with pytest.raises((nodelay.WriteError, nodelay.RemoteProtocolError, nodelay.ReadError)):
        asyncio.run(main())
    assert srv.connections == 1
