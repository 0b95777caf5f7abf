"""The body of an engine response as urllib3 reads it: the ``fp`` under ``urllib3.HTTPResponse``.

requests' adapter hands urllib3's response object to every caller (``Response.raw``), and
the tools around requests read it (``raw.read(decode_content=...)``, ``raw.stream``,
``raw._original_response.msg`` for cookies, requests-cache's serialiser). So the bridge
keeps urllib3's response class and gives it this object where http.client's response
would be: urllib3 does the content decoding (gzip, deflate, br, zstd), exactly as under
requests, and the engine only moves bytes. The engine is asked for the body as it came off
the connection (``decode=False``), framing removed.

Errors while reading are raised as the ones http.client raises (a timeout as
``TimeoutError``, anything else as ``http.client.HTTPException``), which urllib3 turns into
``ReadTimeoutError`` / ``ProtocolError`` and requests into ``ConnectionError`` /
``ChunkedEncodingError``.
"""

from __future__ import annotations

import http.client
from typing import TYPE_CHECKING

from .. import _exceptions as nd
from ._engine import READ_MAX_BYTES

if TYPE_CHECKING:
    from .._core import RawStream

__all__ = ["EngineBody"]


def _piece_size(wanted: int | None) -> int:
    return READ_MAX_BYTES if wanted is None else min(wanted, READ_MAX_BYTES)


class EngineBody:
    """A binary file-like object over a ``RawStream``, with the parts of
    ``http.client.HTTPResponse`` that urllib3 and requests touch (``msg``, ``isclosed``,
    ``read``, ``read1``, ``close``)."""

    __slots__ = ("_fields", "_msg", "_stream")

    def __init__(self, stream: RawStream, fields: list[tuple[str, str]]) -> None:
        """``fields``: the stream's ``latin1_headers()``, which the response read already."""
        self._stream = stream
        self._fields = fields
        self._msg: http.client.HTTPMessage | None = None

    @property
    def msg(self) -> http.client.HTTPMessage:
        """The header fields as http.client gives them (requests extracts cookies from
        them); built on first use."""
        if self._msg is None:
            msg = http.client.HTTPMessage()
            for name, value in self._fields:
                msg.set_raw(name, value)  # as parsed: no policy checks of each name
            self._msg = msg
        return self._msg

    @property
    def headers(self) -> http.client.HTTPMessage:
        return self.msg

    @property
    def closed(self) -> bool:
        return self._stream.is_closed

    def isclosed(self) -> bool:
        return self._stream.is_closed

    def readable(self) -> bool:
        return True

    def read(self, amt: int | None = None) -> bytes:
        """``amt`` bytes of the body, fewer only at its end (as http.client's ``read``);
        all the rest for ``None``; ``b""`` at the end. Each engine read asks for at most
        ``READ_MAX_BYTES``, so a large ``amt`` allocates no more than arrives."""
        stream = self._stream
        try:
            if amt is not None and amt <= 0:
                return b""
            size = _piece_size(amt)
            first = stream.read(size, size, False)
            # The engine ends the body with its last piece (is_closed), so a body
            # that fits in one piece is one read.
            if not first or (amt is not None and len(first) >= amt) or stream.is_closed:
                return first
            pieces = [first]
            got = len(first)
            while amt is None or got < amt:
                size = _piece_size(None if amt is None else amt - got)
                piece = stream.read(size, size, False)
                if not piece:
                    break
                pieces.append(piece)
                got += len(piece)
                if stream.is_closed:
                    break
            return b"".join(pieces)
        except nd.TimeoutException:
            raise  # a TimeoutError already: urllib3's ReadTimeoutError
        except (nd.RequestError, nd.StreamError) as exc:
            raise http.client.HTTPException(str(exc)) from exc

    def read1(self, amt: int | None = None) -> bytes:
        return self.read(READ_MAX_BYTES if amt is None or amt < 0 else amt)

    def close(self) -> None:
        """End the exchange; a body not read to the end closes its connection."""
        self._stream.close()

    def fileno(self) -> int:
        raise OSError("a nodelay response body has no file descriptor")

    def flush(self) -> None:
        pass
