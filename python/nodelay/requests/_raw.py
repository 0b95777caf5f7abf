"""``Response.raw``: a file-like object over a response body still on the connection."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from . import _errors

if TYPE_CHECKING:
    from .. import _models
    from .models import PreparedRequest

__all__ = ["RAW_READ_SIZE", "RawBody"]

RAW_READ_SIZE = 2**16
"""``raw.stream()``'s default piece size (urllib3's)."""


class RawBody:
    """``Response.raw``: a binary file-like object over the body as it comes off the
    connection (content codings left in place unless ``decode_content``), for a response
    sent with ``stream=True``. Once ``content`` or ``iter_content`` has read the body,
    ``read()`` gives ``b""``, as urllib3's response does once requests has read it.
    """

    def __init__(self, response: _models.Response | None, request: PreparedRequest | None) -> None:
        self._response = response
        self._request = request
        self._pieces: Iterator[bytes] | None = None
        self._buffer = bytearray()
        self._done = response is None
        self.decode_content = False
        self.closed = False

    @property
    def status(self) -> int:
        return 0 if self._response is None else self._response.status_code

    @property
    def headers(self) -> Mapping[str, str]:
        return {} if self._response is None else self._response.headers

    @property
    def reason(self) -> str:
        return "" if self._response is None else self._response.reason

    def _next_piece(self, decode: bool) -> bytes:
        assert self._response is not None
        if self._pieces is None:
            response = self._response
            self._pieces = response.iter_bytes() if decode else response.iter_raw()
        try:
            return next(self._pieces, b"")
        except _errors.NODELAY_ERRORS as exc:
            raise _errors.while_reading(exc, self._request) from exc

    def read(self, amt: int | None = None, decode_content: bool | None = None) -> bytes:
        """Up to ``amt`` bytes (all the rest for ``None``); ``b""`` at the end."""
        decode = self.decode_content if decode_content is None else decode_content
        while not self._done and (amt is None or len(self._buffer) < amt):
            piece = self._next_piece(decode)
            if not piece:
                self._done = True
                break
            self._buffer += piece
        if amt is None or amt >= len(self._buffer):
            out = bytes(self._buffer)
            self._buffer.clear()
        else:
            out = bytes(self._buffer[:amt])
            del self._buffer[:amt]
        return out

    def stream(
        self, amt: int | None = RAW_READ_SIZE, decode_content: bool | None = None
    ) -> Iterator[bytes]:
        """Pieces of up to ``amt`` bytes until the end of the body."""
        while chunk := self.read(amt, decode_content):
            yield chunk

    def __iter__(self) -> Iterator[bytes]:
        return self.stream()

    def readinto(self, b: bytearray | memoryview) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def readable(self) -> bool:
        return True

    def isclosed(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True
        if self._response is not None:
            self._response.close()

    def release_conn(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<nodelay.requests raw body [{self.status}]>"
