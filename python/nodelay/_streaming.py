"""Streamed response bodies: the adapter over ``_core.RawStream`` and the chunk, text and
line iterators behind ``Response.iter_bytes/iter_text/iter_lines/iter_raw``."""

from __future__ import annotations

from ._exceptions import StreamConsumed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from . import _core

__all__ = ["StreamRaw", "iter_lines", "rechunk"]


class StreamRaw:
    """Stands in for ``_core.RawResponse`` while the body is still on the connection.

    ``content`` reads the rest of the body on first access (requests' ``stream=True``
    behaviour); the iterators read it piece by piece instead.
    """

    __slots__ = ("_consumed", "_content", "_elapsed", "stream")

    def __init__(self, stream: _core.RawStream) -> None:
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
    def content(self) -> bytes:
        content = self._content
        if content is None:
            if self._consumed:
                raise StreamConsumed(
                    "the body was already iterated; it cannot be read again"
                )
            self._consumed = True
            content = self._content = self.stream.read_all()
            self._elapsed = self.stream.elapsed_now()
        return content

    @property
    def is_read(self) -> bool:
        return self._content is not None

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
            # closed, never pooled (HOSTILE.md H29).
            self.stream.close()


def rechunk(pieces: Iterable[bytes], chunk_size: int | None) -> Iterator[bytes]:
    """Re-cut ``pieces`` into chunks of exactly ``chunk_size`` (the last may be shorter)."""
    if chunk_size is None:
        yield from pieces
        return
    if chunk_size <= 0:
        raise ValueError("chunk_size must be a positive number of bytes")
    pending = bytearray()
    for piece in pieces:
        if not pending and len(piece) == chunk_size:
            yield piece
            continue
        pending += piece
        while len(pending) >= chunk_size:
            yield bytes(pending[:chunk_size])
            del pending[:chunk_size]
    if pending:
        yield bytes(pending)


def iter_lines(texts: Iterable[str]) -> Iterator[str]:
    """Lines (without their ending) of a text stream; ``\\n``, ``\\r\\n`` and ``\\r`` end a
    line, also when split across chunks."""
    pending = ""
    for text in texts:
        pending += text
        lines = pending.splitlines(keepends=True)
        # The last line is complete only if it ends with a newline that cannot be the first
        # half of a CRLF split across chunks.
        last = lines[-1] if lines else ""
        if last.endswith("\n"):
            pending = ""
        else:
            pending = lines.pop() if lines else ""
        for line in lines:
            yield line.rstrip("\r\n")
    if pending:
        yield pending.rstrip("\r\n")
