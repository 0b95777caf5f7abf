"""Streamed response bodies: the adapters over ``_core.RawStream`` and
``_core.AsyncRawStream``, and the chunk and line iterators behind
``Response.iter_bytes/iter_text/iter_lines/iter_raw`` and their ``aiter_*`` twins."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable

from ._exceptions import ResponseNotRead, StreamClosed, StreamConsumed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from _typeshed import WriteableBuffer

    from . import _core

__all__ = [
    "AsyncStreamRaw",
    "GivenHead",
    "IterStream",
    "StreamRaw",
    "aiter_lines",
    "arechunk",
    "iter_lines",
    "rechunk",
]


class _BodyState:
    """The state of a body read after the head: not read, being iterated, or read into
    ``_content``. Shared by the streams over a connection and ``IterStream``.

    The state errors are httpx's: a body iterated once raises ``StreamConsumed`` when
    read again, one closed before it was read raises ``StreamClosed``; ``content``
    before the body was read raises ``ResponseNotRead``."""

    # ``_closed``: closed by the caller (``close()``), as opposed to a body that ended: an
    # empty body's stream is finished at once, yet it can still be read (as b"").
    __slots__ = ("_closed", "_consumed", "_content")

    _content: bytes | None
    _consumed: bool
    _closed: bool

    @property
    def is_read(self) -> bool:
        return self._content is not None

    @property
    def is_consumed(self) -> bool:
        """The body was read or iterated (httpx's ``is_stream_consumed``)."""
        return self._consumed

    @property
    def content(self) -> bytes:
        if self._content is None:
            raise ResponseNotRead()
        return self._content

    def _start(self) -> None:
        """Marks the body as being read, or raises why it cannot be."""
        if self._consumed:
            raise StreamConsumed()
        if self._closed:
            raise StreamClosed()
        self._consumed = True

    def _read_before(self) -> bytes | None:
        """Begins an iteration of the body: the body when it was read before (the
        iteration yields it, unless empty, instead of reading), else ``None`` with the
        body marked as being read (``_start``)."""
        content = self._content
        if content is None:
            self._start()
        return content


class _StreamedHead(_BodyState):
    """What the sync and async adapters share: the response head, read from the stream,
    and the state of the body."""

    __slots__ = ("_elapsed", "must_read", "stream")

    stream: _core.RawStream | _core.AsyncRawStream

    def __init__(self, stream: _core.RawStream | _core.AsyncRawStream) -> None:
        self.stream = stream
        self._content: bytes | None = None
        self._elapsed: float | None = None
        self._consumed = False
        self._closed = False
        # httpx's ``client.stream(...)``: ``content`` before ``read()`` raises
        # ``ResponseNotRead`` (requests' ``stream=True`` reads the body instead).
        self.must_read = False

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
    def num_bytes_downloaded(self) -> int:
        """Bytes of the body taken from the connection so far, as received (before
        content decoding)."""
        return self.stream.raw_bytes_read

    @property
    def is_closed(self) -> bool:
        return self.stream.is_closed

    def close(self) -> None:
        """Ends the stream: its connection is pooled when the body was read to the
        end, closed if not."""
        self._closed = True
        self.stream.close()

    def _end(self) -> None:
        self._elapsed = self.stream.elapsed_now()
        # An iteration stopped early leaves the body half-read: the connection is
        # closed, never pooled (docs/hostile.md H29).
        self.stream.close()


class StreamRaw(_StreamedHead):
    """Stands in for ``_core.RawResponse`` while the body is still on the connection.

    ``read()`` reads the rest of the body; so does ``content`` on first access
    (requests' ``stream=True``) unless ``must_read`` is set (httpx's
    ``client.stream``: ``ResponseNotRead``). The iterators read it piece by piece.
    """

    __slots__ = ()

    stream: _core.RawStream

    def __init__(self, stream: _core.RawStream) -> None:
        super().__init__(stream)

    @property
    def content(self) -> bytes:
        content = self._content
        if content is None:
            if self.must_read:
                raise ResponseNotRead()
            content = self.read()
        return content

    def read(self) -> bytes:
        """The rest of the body, read once and kept."""
        content = self._content
        if content is None:
            self._start()
            content = self._content = self.stream.read_all()
            self._elapsed = self.stream.elapsed_now()
        return content

    def pieces(self, *, decode: bool) -> Iterator[bytes]:
        """The body as it arrives (pieces of 64-256 KiB), read once."""
        if (content := self._read_before()) is not None:
            if content:
                yield content
            return
        read = self.stream.read
        try:
            while piece := read(decode=decode):
                yield piece
        finally:
            self._end()

    def fill(self, buffer: WriteableBuffer) -> Iterator[int]:
        """``iter_into``: the body read into ``buffer`` again and again; yields how
        many bytes each read filled (0 never: the end stops the iteration)."""
        if self._content is not None:
            raise StreamConsumed()
        self._start()
        readinto = self.stream.readinto
        try:
            while n := readinto(buffer):
                yield n
        finally:
            self._end()

    def readinto(self, buffer: WriteableBuffer) -> int:
        """The next piece of the body read into ``buffer``; 0 at its end."""
        if self._content is not None:
            raise StreamConsumed()
        if not self._consumed:
            self._start()
        n = self.stream.readinto(buffer)
        if n == 0:
            self._end()
        return n


class AsyncStreamRaw(_StreamedHead):
    """``StreamRaw`` for ``AsyncClient``: the body is read with awaitable calls
    (``aread()``, ``aiter_bytes()``...); ``content`` before ``aread()`` raises
    ``ResponseNotRead``."""

    __slots__ = ()

    stream: _core.AsyncRawStream

    def __init__(self, stream: _core.AsyncRawStream) -> None:
        super().__init__(stream)

    async def aread(self) -> bytes:
        content = self._content
        if content is None:
            self._start()
            content = self._content = await self.stream.read_all()
            self._elapsed = self.stream.elapsed_now()
        return content

    async def apieces(self, *, decode: bool) -> AsyncIterator[bytes]:
        """The body as it arrives (pieces of 64-256 KiB), read once: ``StreamRaw.pieces``
        with each read awaited."""
        if (content := self._read_before()) is not None:
            if content:
                yield content
            return
        read = self.stream.read
        try:
            while piece := await read(decode=decode):
                yield piece
        finally:
            self._end()


class GivenHead:
    """The head of a response built in Python (by user code or a transport) rather than
    read by the engine: status, headers as a list of (name, value) pairs, url, version,
    reason and elapsed time. Base of ``IterStream`` and ``_models._DetachedRaw``, which
    declare its slots and set the fields: only one base of a class may have slots, and
    ``IterStream``'s other base, ``_BodyState``, has them."""

    __slots__ = ()

    status: int
    _pairs: list[tuple[str, str]]
    url: str
    version: str
    reason: str
    elapsed: float

    def headers(self) -> list[tuple[str, str]]:
        return self._pairs

    def header(self, name: str) -> str | None:
        lower = name.lower()
        for key, value in self._pairs:
            if key.lower() == lower:
                return value
        return None


class IterStream(GivenHead, _BodyState):
    """Stands in for ``_core.RawResponse`` in a response whose body is an iterable of
    bytes given by user code: ``Response(200, stream=...)`` or ``content=`` an
    iterator, as transports (``MockTransport`` handlers, custom ``BaseTransport``
    subclasses) return them. The body is read once, by ``read()`` / ``aread()`` or
    the iterators; an async iterable only by the async ones. Its bytes are taken as
    delivered: no content decoding is applied, so ``num_bytes_downloaded`` counts the
    same bytes."""

    __slots__ = (
        "_pairs",
        "elapsed",
        "must_read",
        "num_bytes_downloaded",
        "reason",
        "source",
        "status",
        "url",
        "version",
    )

    def __init__(
        self,
        status: int,
        pairs: list[tuple[str, str]],
        source: Iterable[bytes] | AsyncIterable[bytes],
        url: str,
    ) -> None:
        self.status = status
        self._pairs = pairs
        self.source = source
        self.url = url
        self.version = "HTTP/1.1"
        self.reason = ""
        self.elapsed = 0.0
        self._content: bytes | None = None
        self._consumed = False
        self._closed = False
        self.must_read = True
        self.num_bytes_downloaded = 0

    @property
    def is_closed(self) -> bool:
        return self._closed

    def _read_source_before(self, kind: type) -> bytes | None:
        """``_read_before`` for an iteration over ``source`` as a ``kind`` (``Iterable``
        for the sync iterators, ``AsyncIterable`` for the async ones): a source of the
        other kind is httpx's ``RuntimeError``, and leaves the body unread."""
        if self._content is None and not isinstance(self.source, kind):
            wrong = (
                "a sync iterator on an async" if kind is Iterable else "an async iterator on a sync"
            )
            raise RuntimeError(f"Attempted to call {wrong} stream.")
        return self._read_before()

    def read(self) -> bytes:
        if self._content is None:
            self._content = b"".join(self.pieces(decode=True))
        return self._content

    def pieces(self, *, decode: bool) -> Iterator[bytes]:
        if (content := self._read_source_before(Iterable)) is not None:
            if content:
                yield content
            return
        for piece in self.source:  # type: ignore[union-attr]  # an Iterable: checked above
            self.num_bytes_downloaded += len(piece)
            if piece:
                yield bytes(piece)
        self.close()

    async def aread(self) -> bytes:
        if self._content is None:
            self._content = b"".join([piece async for piece in self.apieces(decode=True)])
        return self._content

    async def apieces(self, *, decode: bool) -> AsyncIterator[bytes]:
        if (content := self._read_source_before(AsyncIterable)) is not None:
            if content:
                yield content
            return
        async for piece in self.source:  # type: ignore[union-attr]  # checked above
            self.num_bytes_downloaded += len(piece)
            if piece:
                yield bytes(piece)
        await self.aclose()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            close = getattr(self.source, "close", None)
            if close is not None and not isinstance(self.source, AsyncIterable):
                close()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            aclose = getattr(self.source, "aclose", None)
            if aclose is not None:
                await aclose()


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
