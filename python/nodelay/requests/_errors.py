"""nodelay's exceptions (``nodelay._exceptions``) as requests' (``.exceptions``).

requests wraps urllib3's errors the same way in ``HTTPAdapter.send`` (while sending) and in
``Response.iter_content`` (while reading a streamed body); the two tables below are those
two places. Classes are matched most specific first (the order of the tuples).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _exceptions as nd
from . import exceptions as rq

if TYPE_CHECKING:
    from .models import PreparedRequest

_WHILE_SENDING: tuple[tuple[type[Exception], type[rq.RequestException]], ...] = (
    (nd.ConnectTimeout, rq.ConnectTimeout),
    # urllib3 raises ReadTimeoutError for a write that stalls too; a pool that stays
    # full is requests' ConnectionError only with pool_block, so a Timeout is closest.
    (nd.TimeoutException, rq.ReadTimeout),
    (nd.TLSError, rq.SSLError),
    (nd.ProxyError, rq.ProxyError),
    (nd.UnsupportedProtocol, rq.InvalidSchema),
    (nd.LocalProtocolError, rq.InvalidHeader),
    (nd.TooManyRedirects, rq.TooManyRedirects),
    (nd.DecodingError, rq.ContentDecodingError),
    (nd.TransportError, rq.ConnectionError),
    (nd.InvalidURL, rq.InvalidURL),
    (nd.StreamConsumed, rq.StreamConsumedError),
    (nd.RequestError, rq.RequestException),
)

_WHILE_READING: tuple[tuple[type[Exception], type[rq.RequestException]], ...] = (
    # requests' iter_content: ProtocolError -> ChunkedEncodingError, DecodeError ->
    # ContentDecodingError, ReadTimeoutError and SSLError -> ConnectionError.
    (nd.DecodingError, rq.ContentDecodingError),
    (nd.TimeoutException, rq.ConnectionError),
    (nd.ProtocolError, rq.ChunkedEncodingError),
    (nd.NetworkError, rq.ChunkedEncodingError),
    (nd.StreamConsumed, rq.StreamConsumedError),
    (nd.RequestError, rq.ConnectionError),
)


def _translate(
    table: tuple[tuple[type[Exception], type[rq.RequestException]], ...],
    exc: Exception,
    request: PreparedRequest | None,
) -> Exception:
    for source, target in table:
        if isinstance(exc, source):
            return target(str(exc), request=request)
    return exc


def while_sending(exc: Exception, request: PreparedRequest | None) -> Exception:
    """The requests exception for ``exc`` raised by a send (``exc`` itself if none fits)."""
    return _translate(_WHILE_SENDING, exc, request)


def while_reading(exc: Exception, request: PreparedRequest | None) -> Exception:
    """The requests exception for ``exc`` raised while reading a streamed body."""
    return _translate(_WHILE_READING, exc, request)


NODELAY_ERRORS = (nd.RequestError, nd.InvalidURL, nd.StreamError)
"""What ``while_sending``/``while_reading`` translate (catch these around engine calls)."""
