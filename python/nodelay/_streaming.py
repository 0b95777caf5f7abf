"""Streamed response bodies: the adapters over ``_core.RawStream`` and
``_core.AsyncRawStream``, and the chunk and line iterators behind
``Response.iter_bytes/iter_text/iter_lines/iter_raw`` and their ``aiter_*`` twins."""

from __future__ import annotations

from ._exceptions import ResponseNotRead, StreamConsumed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Iterator

    from . import _core

__all__ = ["AsyncStreamRaw", "StreamRaw", "aiter_lines", "arechunk", "iter_lines", "rechunk"]


class _StreamedHead:
    """What the sync and async adapters share: the response head, read from the stream,
    and the state of the body (not read, being iterated, or read into ``_content``)."""

    __slots__ = ("_consumed", "_content", "_elapsed", "stream")

    stream: _core.RawStream | _core.AsyncRawStream

    def __init__(self, stream: _core.RawStream | _core.AsyncRawStream) -> None:
        self.stream = stream
        self._content: bytes | None = None
        self._elapsed: float | None = None
        self._consumed = False

    @property
    def status(self) -> int:
        return self.stream.status

    @property
    def version(self) -> str:
        return self.stream.version

    @property
    def reason(self) -> str:
        return self.stream.reason

    @property
    def url(self) -> str:
        return self.stream.url

    def headers(self) -> list[tuple[str, str]]:
        return self.stream.headers()

    def header(self, name: str) -> str | None:
        return self.stream.header(name)

    @property
    def elapsed(self) -> float:
        """Until the body is read: time to the response head; then time to its end."""
        return self._elapsed if self._elapsed is not None else self.stream.elapsed

    @property
    def is_read(self) -> bool:
        return self._content is not None


class StreamRaw(_StreamedHead):
    """Stands in for ``_core.RawResponse`` while the body is still on the connection.

    ``content`` reads the rest of the body on first access (requests' ``stream=True``
    behaviour); the iterators read it piece by piece instead.
    """

    __slots__ = ()

    stream: _core.RawStream

    def __init__(self, stream: _core.RawStream) -> None:
        super().__init__(stream)

    @property
    def content(self) -> bytes:
        content = self._content
        if content is None:
            if self._consumed:
                raise StreamConsumed("the body was already iterated; it cannot be read again")
            self._consumed = True
            content = self._content = self.stream.read_all()
            self._elapsed = self.stream.elapsed_now()
        return content

    def pieces(self, *, decode: bool) -> Iterator[bytes]:
        """The body as it arrives (pieces of 64-256 KiB), read once."""
        if self._content is not None:
            if self._content:
                yield self._content
            return
        if self._consumed:
            raise StreamConsumed("the body of this response was already iterated")
        self._consumed = True
        read = self.stream.read
        try:
            while piece := read(decode=decode):
                yield piece
        finally:
            self._elapsed = self.stream.elapsed_now()
            # An iteration stopped early leaves the body half-read: the connection is
            # closed, never pooled (docs/hostile.md H29).
            self.stream.close()


class AsyncStreamRaw(_StreamedHead):
    """``StreamRaw`` for ``AsyncClient``: the body is read with awaitable calls
    (``aread()``, ``aiter_bytes()``...); ``content`` before ``aread()`` raises
    ``ResponseNotRead``."""

    __slots__ = ()

    stream: _core.AsyncRawStream

    def __init__(self, stream: _core.AsyncRawStream) -> None:
        super().__init__(stream)

    @property
    def content(self) -> bytes:
        if self._content is None:
            raise ResponseNotRead(
                "the body of a streamed async response is not read yet: await response.aread()"
            )
        return self._content

    async def aread(self) -> bytes:
        content = self._content
        if content is None:
            if self._consumed:
                raise StreamConsumed("the body was already iterated; it cannot be read again")
            self._consumed = True
            content = self._content = await self.stream.read_all()
            self._elapsed = self.stream.elapsed_now()
        return content

    async def apieces(self, *, decode: bool) -> AsyncIterator[bytes]:
        """The body as it arrives (pieces of 64-256 KiB), read once."""
        if self._content is not None:
            if self._content:
                yield self._content
            return
        if self._consumed:
            raise StreamConsumed("the body of this response was already iterated")
        self._consumed = True
        read = self.stream.read
        try:
            while piece := await read(decode=decode):
                yield piece
        finally:
            self._elapsed = self.stream.elapsed_now()
            # Stopped early: the half-read connection is closed (docs/hostile.md H29).
            self.stream.close()


class _Rechunker:
    """Re-cuts pieces into chunks of exactly ``chunk_size`` (shared by the sync and async
    iterators)."""

    __slots__ = ("pending", "size")

    def __init__(self, chunk_size: int) -> None:
        if chunk_size <= 0:
            raise ValueError("chunk_size must be a positive number of bytes")
        self.size = chunk_size
        self.pending = bytearray()

    def feed(self, piece: bytes) -> list[bytes]:
        size, pending = self.size, self.pending
        if not pending and len(piece) == size:
            return [piece]
        pending += piece
        chunks = []
        while len(pending) >= size:
            chunks.append(bytes(pending[:size]))
            del pending[:size]
        return chunks

    def end(self) -> list[bytes]:
        return [bytes(self.pending)] if self.pending else []


def rechunk(pieces: Iterable[bytes], chunk_size: int | None) -> Iterator[bytes]:
    """Re-cut ``pieces`` into chunks of exactly ``chunk_size`` (the last may be shorter)."""
    if chunk_size is None:
        yield from pieces
        return
    cutter = _Rechunker(chunk_size)
    for piece in pieces:
        yield from cutter.feed(piece)
    yield from cutter.end()


async def arechunk(pieces: AsyncIterator[bytes], chunk_size: int | None) -> AsyncIterator[bytes]:
    """``rechunk`` over an async iterator."""
    cutter = None if chunk_size is None else _Rechunker(chunk_size)
    async for piece in pieces:
        if cutter is None:
            yield piece
            continue
        for chunk in cutter.feed(piece):
            yield chunk
    if cutter is not None:
        for chunk in cutter.end():
            yield chunk


class _LineSplitter:
    """Lines (without their ending) of a text stream fed chunk by chunk; ``\\n``,
    ``\\r\\n`` and ``\\r`` end a line, also when split across chunks."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        self.pending = ""

    def feed(self, text: str) -> list[str]:
        pending = self.pending + text
        lines = pending.splitlines(keepends=True)
        # The last line is complete only if it ends with a newline that cannot be the first
        # half of a CRLF split across chunks.
        last = lines[-1] if lines else ""
        if last.endswith("\n"):
            self.pending = ""
        else:
            self.pending = lines.pop() if lines else ""
        return [line.rstrip("\r\n") for line in lines]

    def end(self) -> list[str]:
        return [self.pending.rstrip("\r\n")] if self.pending else []


def iter_lines(texts: Iterable[str]) -> Iterator[str]:
    """Lines (without their ending) of a text stream; ``\\n``, ``\\r\\n`` and ``\\r`` end a
    line, also when split across chunks."""
    splitter = _LineSplitter()
    for text in texts:
        yield from splitter.feed(text)
    yield from splitter.end()


async def aiter_lines(texts: AsyncIterator[str]) -> AsyncIterator[str]:
    """``iter_lines`` over an async iterator."""
    splitter = _LineSplitter()
    async for text in texts:
        for line in splitter.feed(text):
            yield line
    for line in splitter.end():
        yield line
