"""``Response.raw`` under the adapter: urllib3's ``HTTPResponse`` over an engine stream.

It stays an ``urllib3.HTTPResponse`` (requests' code, responses, requests-cache, vcrpy and
every ``r.raw`` user rely on that class and its attributes); what it changes is cost, on
the path every request takes:

- construction sets urllib3's attributes directly from the engine's head (the header
  fields are scanned once, for ``Content-Length`` and ``Content-Encoding`` too), where
  urllib3's constructor re-parses them through generic mapping checks;
- ``read`` of a body without a content coding reads the engine straight into the bytes it
  returns. A body with a content coding, or any read after one, takes urllib3's own
  ``read`` (its decoders, its buffer), so decoding is urllib3's exactly as under requests.

Both keep urllib3's observable state (``length_remaining``, ``tell()``, ``data``, the
cached body, ``isclosed()``) and its errors: a failure while reading goes through urllib3's
own ``_error_catcher``, so it becomes the same ``ReadTimeoutError`` / ``ProtocolError`` /
``SSLError`` urllib3 raises. tests/test_ext_requests_response.py compares each with the
response urllib3 itself makes (over http.client) from the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from urllib3 import HTTPHeaderDict
from urllib3.response import BytesQueueBuffer, HTTPResponse

from ._requests_body import EngineBody

if TYPE_CHECKING:
    from urllib3.util.retry import Retry

    from .._core import RawStream

__all__ = ["EngineResponse"]

_HTTP_VERSIONS = {"HTTP/1.0": 10, "HTTP/1.1": 11, "HTTP/2": 20, "HTTP/2.0": 20}
"""``RawStream.version`` → ``HTTPResponse.version`` (http.client's numbers)."""

_NO_BODY_STATUSES = frozenset((204, 304))
"""Statuses whose response has no body whatever its head says (RFC 9110 §6.4.1), as
urllib3's ``_init_length`` counts them (with 1xx and answers to HEAD)."""


class EngineResponse(HTTPResponse):
    """urllib3's ``HTTPResponse`` whose ``_fp`` is an ``EngineBody`` over the engine's
    stream; ``_original_response`` is that same object, as http.client's response is
    under urllib3 (requests reads cookies from its ``msg``)."""

    def __init__(
        self,
        stream: RawStream,
        method: str,
        url: str,
        retries: Retry | None,
        decode_content: bool,
    ) -> None:
        # Each byte one Latin-1 character, as http.client gives header fields (requests
        # re-encodes Location that way before decoding it as UTF-8).
        headers = HTTPHeaderDict()
        content_length: str | None = None
        coded = chunked = False
        fields = stream.latin1_headers()
        for name, value in fields:
            headers.add(name, value)
            lower = name.lower()
            if lower == "content-length":
                content_length = value if content_length is None else f"{content_length}, {value}"
            elif lower == "content-encoding":
                coded = True
            elif lower == "transfer-encoding":
                chunked = True
        body = EngineBody(stream, fields)
        status = stream.status
        # BaseHTTPResponse's attributes.
        self.headers = headers
        self.status = status
        self.version = _HTTP_VERSIONS.get(stream.version, 11)
        self.version_string = stream.version
        self.reason = stream.reason
        self.decode_content = decode_content
        self._has_decoded_content = False
        self._request_url = url
        self.retries = retries  # the setter takes a redirect's location from its history
        # A body without a content coding needs no decoder: urllib3's _init_decoder
        # would find none (it looks only when the field is there).
        self._decoder = None
        self._decoder_initialized = not coded
        # HTTPResponse's attributes.
        self.enforce_content_length = True
        self.auto_close = True
        self._body = None
        self._uncached_read_occurred = False
        # http.client's response in urllib3's annotations; EngineBody stands in for it.
        self._fp = body  # type: ignore[assignment]
        self._original_response = body  # type: ignore[assignment]
        self._fp_bytes_read = 0
        self.msg = None
        self._pool = None
        self._connection = None
        self._sock_shutdown = None
        self.chunk_left = None
        if chunked:
            # urllib3 reads the coding list (and warns about a Content-Length beside it).
            self.chunked = "chunked" in (
                enc.strip() for enc in headers.get("transfer-encoding", "").lower().split(",")
            )
        else:
            self.chunked = False
        if not chunked and (
            content_length is None or (content_length.isascii() and content_length.isdigit())
        ):
            # One plain length or none: what urllib3's _init_length makes of it.
            length = None if content_length is None else int(content_length)
            if status in _NO_BODY_STATUSES or 100 <= status < 200 or method == "HEAD":
                length = 0
            self.length_remaining = length
        else:
            self.length_remaining = self._init_length(method)
        self._decoded_buffer = BytesQueueBuffer()

    def read(
        self,
        amt: int | None = None,
        decode_content: bool | None = None,
        cache_content: bool = False,
    ) -> bytes:
        """urllib3's ``read``; a body without a content coding is read from the engine
        directly (what urllib3's would do with no decoder, without its layers)."""
        if self._decoder is not None or not self._decoder_initialized or self._decoded_buffer:
            return super().read(amt, decode_content, cache_content)
        if amt is not None:
            if amt < 0:
                amt = None
            else:
                cache_content = False
        fp = self._fp
        if fp is None:
            return None  # type: ignore[return-value]  # as urllib3's (no body object)
        try:
            data = fp.read(amt) if not fp.closed else b""
        except BaseException:
            # urllib3's own mapping of a read failure (and its cleanup).
            with self._error_catcher():
                raise
        if data:
            self._fp_bytes_read += len(data)
            if self.length_remaining is not None:
                self.length_remaining -= len(data)
        elif amt:
            # The end of the body: urllib3's _raw_read ends it (closes, checks the length).
            self._raw_read(amt)
        if not cache_content:
            self._uncached_read_occurred = True
        elif amt is None and not self._uncached_read_occurred:
            self._body = data
        return data
