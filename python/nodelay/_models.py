"""``Request`` and ``Response`` (``Headers`` are ``_headers``'s).

Objects coming from the engine stay raw until touched: a ``Response`` holds the native
``RawResponse`` and builds ``headers``, ``text``, ``elapsed``... on first access.
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
)

from . import _core
from ._content import DefaultEncoding, _charset, _known_encoding, _response_body, _utf8_json_error
from ._exceptions import HTTPStatusError, RequestNotRead, StreamError
from ._headers import Headers, _pairs
from ._redirects import PERMANENT_REDIRECT_STATUSES, REDIRECT_STATUSES
from ._streaming import (
    AsyncStreamRaw,
    GivenHead,
    IterStream,
    StreamRaw,
    aiter_lines,
    arechunk,
    iter_lines,
    rechunk,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import codecs
    import datetime
    from typing import Any, Protocol, TypeAlias

    from _typeshed import WriteableBuffer

    from ._cookies import CookieJar
    from ._headers import HeaderTypes
    from ._urltypes import URL

    _RequestRef: TypeAlias = "tuple[str, str, list[tuple[str, str]], object]"
    """(method, url, header pairs, body): a Request not built yet."""

    class _RawLike(Protocol):
        """What ``Response`` needs from ``nodelay._core.RawResponse``."""

        @property
        def status(self) -> int: ...
        @property
        def version(self) -> str: ...
        @property
        def reason(self) -> str: ...
        @property
        def url(self) -> str: ...
        @property
        def content(self) -> bytes: ...
        @property
        def elapsed(self) -> float: ...
        def headers(self) -> list[tuple[str, str]]: ...
        def header(self, name: str) -> str | None: ...


__all__ = ["Request", "Response"]


class Request:
    """A request as sent: ``method``, ``url`` (str, with the query), ``headers``, ``content``.

    ``headers`` are the ones nodelay passed to the engine; the engine adds ``Host`` and
    ``Content-Length`` on the wire.
    """

    __slots__ = (
        "_body",
        "_content",
        "_cookies",
        "_extensions",
        "_headers",
        "_pairs",
        "_url",
        "method",
    )

    method: str
    _url: str
    """The URL as given; ``url`` makes it a ``URL`` on first read."""
    _content: bytes | None
    """The body; None while a streamed body is not read (``content`` raises
    ``RequestNotRead``)."""
    _pairs: list[tuple[str, str]]
    _headers: Headers | None
    _body: object
    """What ``Client.send`` sends (set by ``build_request``): the encoded body, which
    may be streamed (an ``Upload``, an async iterable), or None: then ``content``."""
    _cookies: dict[str, str] | None
    """``build_request(cookies=)``: sent with this request, merged over the jar's."""
    _extensions: dict[str, Any] | None

    def __init__(
        self,
        method: str,
        url: object,
        *,
        params: Any = None,
        headers: HeaderTypes | None = None,
        content: bytes | str | None = None,
        data: Any = None,
        json: Any = None,
        extensions: dict[str, Any] | None = None,
    ) -> None:
        """httpx's ``Request(method, url, params=, headers=, content=, data=, json=)``:
        the body encoded as a client would (its ``Content-Type`` added when the headers
        have none; ``Host`` and ``Content-Length`` are the engine's, on the wire)."""
        from ._prepare import encode_body
        from ._urls import param_pairs, with_query

        self.method = method.upper()
        url = str(url)
        self._url = url if params is None else with_query(url, param_pairs(params))
        pairs = _pairs(headers)
        self._headers = None
        self._body = self._cookies = None
        self._extensions = extensions
        body, content_type = encode_body(self.method, content, data, json)
        if body is not None and type(body) is not bytes:
            raise TypeError("Request(content=...) takes bytes or str (streamed bodies: Client)")
        self._content = body or b""
        # Content-Length is left to the engine, which adds it on the wire.
        if content_type is not None and all(name.lower() != "content-type" for name, _ in pairs):
            pairs.append(("Content-Type", content_type))
        self._pairs = pairs

    @classmethod
    def _make(cls, method: str, url: str, pairs: list[tuple[str, str]], body: object) -> Request:
        """Cheap constructor for the client: ``pairs`` is shared, never mutated. A
        streamed body (``_core.Upload``) is kept in ``_body``: ``content`` raises
        ``RequestNotRead`` until ``read()`` reads it."""
        self = cls.__new__(cls)
        self.method = method
        self._url = url
        self._pairs = pairs
        self._headers = None
        self._cookies = self._extensions = None
        if type(body) is bytes or body is None:
            self._body = None
            self._content = body or b""
        else:
            self._body = body
            self._content = None
        return self

    @property
    def content(self) -> bytes:
        """The body; a streamed one (an iterator, a file) only after ``read()``."""
        content = self._content
        if content is None:
            raise RequestNotRead()
        return content

    @content.setter
    def content(self, value: bytes) -> None:
        self._content = value

    @property
    def extensions(self) -> dict[str, Any]:
        """httpx's per-request options (``"timeout"``: what the client allows this
        exchange), read by transports."""
        extensions = self._extensions
        if extensions is None:
            extensions = self._extensions = {}
        return extensions

    @extensions.setter
    def extensions(self, value: dict[str, Any]) -> None:
        self._extensions = value

    def read(self) -> bytes:
        """The body, a streamed one read whole (and kept as ``content``)."""
        content = self._content
        if content is None:
            body = self._body
            if type(body) is not _core.Upload:
                raise RequestNotRead("this request's async body is read with await aread()")
            content = self._content = body.read_all()
            self._body = None  # sent again (a redirect, a retry) as the bytes read
        return content

    async def aread(self) -> bytes:
        """``read()`` for async code: a streamed body is read on a worker thread (an
        async iterable is pulled on the event loop, which must stay free)."""
        if self._content is None:
            import asyncio

            return await asyncio.get_running_loop().run_in_executor(None, self.read)
        return self._content

    @property
    def headers(self) -> Headers:
        headers = self._headers
        if headers is None:
            headers = self._headers = Headers._from_list(self._pairs[:])
        return headers

    @headers.setter
    def headers(self, value: HeaderTypes) -> None:
        self._headers = Headers(value)

    def __repr__(self) -> str:
        return f"<Request({self.method!r}, {str(self._url)!r})>"

    @property
    def url(self) -> URL:
        """The URL (httpx's ``URL``, a ``str`` too), with the query."""
        url = self._url
        if type(url) is not _URL:
            url = self._url = _url_type()(url)
        return url  # type: ignore[return-value]

    @url.setter
    def url(self, value: str) -> None:
        self._url = value

    def __getstate__(self) -> tuple[str, str, list[tuple[str, str]], bytes]:
        pairs = self._headers._list if self._headers is not None else self._pairs
        return (self.method, str(self._url), pairs, self.read())

    def __setstate__(self, state: tuple[str, str, list[tuple[str, str]], bytes]) -> None:
        self.method, self._url, self._pairs, self._content = state
        self._headers = None
        self._body = self._cookies = self._extensions = None


_URL: type | None = None
"""``_urltypes.URL`` once loaded (it imports ``urllib.parse``: not at ``import nodelay``)."""


def _url_type() -> type[URL]:
    global _URL
    if _URL is None:
        from ._urltypes import URL

        _URL = URL
    return _URL


class _DetachedRaw(GivenHead):
    """Stands in for ``_core.RawResponse`` in responses built by users (tests, mocks)."""

    __slots__ = ("_pairs", "content", "elapsed", "reason", "status", "url", "version")

    def __init__(
        self,
        status: int,
        pairs: list[tuple[str, str]],
        content: bytes,
        url: str = "",
        version: str = "HTTP/1.1",
        reason: str = "",
        elapsed: float = 0.0,
    ) -> None:
        self.status = status
        self._pairs = pairs
        self.content = content
        self.url = url
        self.version = version
        self.reason = reason
        self.elapsed = elapsed


def _standard_reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _add_framing(pairs: list[tuple[str, str]], framing: tuple[str, str]) -> set[str]:
    """Appends ``framing`` (a ``Content-Length`` or ``Transfer-Encoding`` header) to a
    constructed response's ``pairs`` unless they frame the body already; returns the
    lower-cased names ``pairs`` had."""
    names = {name.lower() for name, _ in pairs}
    if "content-length" not in names and "transfer-encoding" not in names:
        pairs.append(framing)
    return names


class Response:
    """An HTTP response; the body is fully read.

    Engine responses wrap a ``nodelay._core.RawResponse`` and build every derived field on
    first access. ``Response(status_code, headers=..., content=..., request=...)`` builds one
    by hand (for tests and mocks).
    """

    # ``status_code`` and ``content`` are plain slots filled when the response is made: a
    # property costs a Python call per read (~600 instructions on 3.11, the two reads
    # every caller makes). A streamed response is a ``_StreamedResponse``, whose
    # ``content`` reads the body when asked.
    __slots__ = (
        "_encoding",
        "_headers",
        "_history",
        "_raw",
        "_request",
        "_text",
        "content",
        "status_code",
    )

    status_code: int
    content: bytes
    _raw: _RawLike
    _request: Request | _RequestRef | None
    _headers: Headers | None
    _history: list[Response] | None
    _encoding: str | DefaultEncoding | None
    """Set by ``encoding = ...``; else the client's ``default_encoding`` (set on the
    response by ``_flow`` when the client has one), or None (utf-8)."""
    _text: str | None

    def __init__(
        self,
        status_code: int,
        *,
        headers: HeaderTypes | None = None,
        content: bytes | str | Iterable[bytes] | AsyncIterable[bytes] | None = None,
        text: str | None = None,
        html: str | None = None,
        json: Any = None,
        stream: Iterable[bytes] | AsyncIterable[bytes] | None = None,
        request: Request | None = None,
        url: str | None = None,
        default_encoding: str | Callable[[bytes], str | None] = "utf-8",
    ) -> None:
        """httpx's constructor: ``content`` (bytes or str), ``text``, ``html`` or
        ``json`` as the body, with ``Content-Length`` and (for the last three) the
        ``Content-Type`` httpx gives them, unless ``headers`` has them.

        A streamed body (``content=`` an iterable of bytes, sent with
        ``Transfer-Encoding: chunked`` as httpx labels it, or ``stream=``, which adds
        no header) is read by ``read()`` / ``iter_bytes()`` (``aread()`` /
        ``aiter_bytes()`` for an async iterable), as a transport's response is."""
        pairs = _pairs(headers)
        raw: _DetachedRaw | IterStream
        if stream is None and content is not None and not isinstance(content, bytes | str):
            stream = content
            _add_framing(pairs, ("Transfer-Encoding", "chunked"))
            content = None
        if stream is not None:
            raw = IterStream(int(status_code), pairs, stream, url or "")
            if url is None and request is not None:
                raw.url = str(request.url)
            # ``content`` reads ``_raw.content``: ``ResponseNotRead`` until read.
            self.__class__ = _StreamedResponse
        else:
            given = content if isinstance(content, bytes | str) else None  # iterables: above
            body, content_type = _response_body(given, text, html, json)
            if body or content_type is not None:
                names = _add_framing(pairs, ("Content-Length", str(len(body))))
                if content_type is not None and "content-type" not in names:
                    pairs.append(("Content-Type", content_type))
            if url is None:
                url = request.url if request is not None else ""
            raw = _DetachedRaw(int(status_code), pairs, body, url)
            self.content = raw.content
        self._raw = raw
        self.status_code = raw.status
        self._request = request
        self._headers = None
        self._history = None
        self._encoding = None
        self._text = None
        if default_encoding != "utf-8":
            self._encoding = DefaultEncoding(default_encoding)

    # -- status ---------------------------------------------------------------------------

    @property
    def reason_phrase(self) -> str:
        """The reason phrase the server sent (the standard one when it sent none)."""
        return self._raw.reason or _standard_reason(self._raw.status)

    @property
    def reason(self) -> str:
        """requests' name for ``reason_phrase``."""
        return self.reason_phrase

    @property
    def http_version(self) -> str:
        """``"HTTP/1.1"`` or ``"HTTP/1.0"``."""
        return self._raw.version

    @property
    def is_informational(self) -> bool:
        return 100 <= self._raw.status < 200

    @property
    def is_success(self) -> bool:
        return 200 <= self._raw.status < 300

    @property
    def is_redirect(self) -> bool:
        """A 3xx status (see ``has_redirect_location`` for "can be followed")."""
        return 300 <= self._raw.status < 400

    @property
    def is_client_error(self) -> bool:
        return 400 <= self._raw.status < 500

    @property
    def is_server_error(self) -> bool:
        return 500 <= self._raw.status < 600

    @property
    def is_error(self) -> bool:
        return 400 <= self._raw.status < 600

    @property
    def ok(self) -> bool:
        """requests' name: True unless the status is 4xx or 5xx."""
        return not self.is_error

    @property
    def has_redirect_location(self) -> bool:
        """A 301/302/303/307/308 with a ``Location`` header."""
        return self._raw.status in REDIRECT_STATUSES and self._raw.header("location") is not None

    @property
    def is_permanent_redirect(self) -> bool:
        """requests' name: a 301 or 308 with a ``Location`` header."""
        raw = self._raw
        return raw.status in PERMANENT_REDIRECT_STATUSES and raw.header("location") is not None

    @property
    def links(self) -> dict[str, dict[str, str]]:
        """The ``Link`` header parsed, keyed by ``rel``:
        ``r.links["next"]["url"]`` for paginated APIs; ``{}`` without one."""
        value = self.headers.get("link")
        if not value:
            return {}
        from ._links import parse_links

        return parse_links(value)

    def raise_for_status(self) -> Response:
        """Raise ``HTTPStatusError`` for a 4xx or 5xx status; return ``self`` otherwise."""
        status = self._raw.status
        if status < 400 or status >= 600:
            return self
        kind = "Client error" if status < 500 else "Server error"
        message = (
            f"{kind} '{status} {self.reason_phrase}' for url '{self.url}'\n"
            f"For more information check: "
            f"https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/{status}"
        )
        raise HTTPStatusError(message, request=self.request, response=self)

    # -- metadata -------------------------------------------------------------------------

    @property
    def headers(self) -> Headers:
        headers = self._headers
        if headers is None:
            headers = self._headers = Headers._from_list(self._raw.headers())
        return headers

    @property
    def url(self) -> URL:
        """The URL of this response (for redirects, the last hop): httpx's ``URL``,
        which is a ``str`` too."""
        return _url_type()(self._raw.url)

    @property
    def next_request(self) -> Request | None:
        """For a redirect response (not followed): the request following it would
        send, with the same method, header and body rules as the client's redirects
        (httpx); ``client.send(response.next_request)`` sends it. ``None`` otherwise."""
        raw = self._raw
        location = raw.header("location") if raw.status in REDIRECT_STATUSES else None
        request = self._request_or_none()
        if location is None or request is None:
            return None
        from ._redirects import next_hop

        pairs = request._headers._list if request._headers is not None else request._pairs
        method, url, pairs, body, _ = next_hop(
            raw.status, request.method, str(request.url), location, pairs, request.content or None
        )
        return Request._make(method, url, pairs, body)

    @property
    def elapsed(self) -> datetime.timedelta:
        """Time from sending the request to the end of the body."""
        from datetime import timedelta

        return timedelta(seconds=self._raw.elapsed)

    @property
    def request(self) -> Request:
        """The request this response answers; ``RuntimeError`` for a response built by
        hand without ``request=`` (as in httpx)."""
        request = self._request_or_none()
        if request is None:
            raise RuntimeError("The request instance has not been set on this response.")
        return request

    @request.setter
    def request(self, value: Request) -> None:
        self._request = value

    def _request_or_none(self) -> Request | None:
        """``request``, or None where it was never set."""
        request = self._request
        if isinstance(request, tuple):
            request = self._request = Request._make(*request)
        return request

    @property
    def history(self) -> list[Response]:
        """Earlier responses of a redirect chain, oldest first."""
        history = self._history
        if history is None:
            history = self._history = []
        return history

    @history.setter
    def history(self, value: list[Response]) -> None:
        self._history = list(value)

    @property
    def cookies(self) -> CookieJar:
        """The cookies this response sets (its Set-Cookie fields read by the jar's rules,
        for its URL), as a new ``CookieJar``."""
        from ._cookies import from_response

        return from_response(self._raw)

    # -- body -----------------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        """The charset used by ``text``: set by you, else Content-Type's (when Python
        knows it), else the client's ``default_encoding`` (a name, or a function of the
        body's bytes such as a charset detector, called once the body is read), else
        utf-8."""
        encoding = self._encoding
        if encoding is None or isinstance(encoding, DefaultEncoding):
            charset = _charset(self._content_type())
            if charset is not None and _known_encoding(charset):
                return charset
            if encoding is None:
                return "utf-8"
            default = encoding.value
            if isinstance(default, str):
                return default
            if not self._body_read():
                return "utf-8"
            # httpx keeps what a detector said: it runs once per response.
            detected = self._encoding = default(self._raw.content) or "utf-8"
            return detected
        return encoding

    @encoding.setter
    def encoding(self, value: str | None) -> None:
        self._encoding = value
        self._text = None

    def _body_read(self) -> bool:
        raw = self._raw
        return raw.is_read if isinstance(raw, _STREAMED_ANY) else True

    @property
    def charset_encoding(self) -> str | None:
        """The ``charset`` of the Content-Type header, if it names one (httpx's name)."""
        return _charset(self._content_type())

    def _content_type(self) -> str | None:
        if self._headers is not None:
            return self._headers.get("content-type")
        return self._raw.header("content-type")

    @property
    def text(self) -> str:
        """The body decoded with ``encoding`` (undecodable bytes replaced)."""
        text = self._text
        if text is None:
            content = self._raw.content
            try:
                text = content.decode(self.encoding, errors="replace")
            except LookupError:  # unknown charset name from the server
                text = content.decode("utf-8", errors="replace")
            self._text = text
        return text

    def json(self, **kwargs: Any) -> Any:
        """``json.loads`` of the body (UTF-8/16/32 detected as RFC 8259 allows).

        Parsed in Rust straight into Python objects, with ``json.loads``'s results and
        errors (anything unusual is handed to ``json.loads`` itself); invalid UTF-8
        raises ``json.JSONDecodeError`` too. Keyword arguments go to ``json.loads``.
        """
        content = self._raw.content
        if kwargs or type(content) is not bytes:
            import json

            return json.loads(content, **kwargs)
        try:
            return _core.json_loads(content)
        except UnicodeDecodeError as exc:
            raise _utf8_json_error(content, exc) from exc

    @property
    def num_bytes_downloaded(self) -> int:
        """Bytes of the body taken from the connection so far, as received (content
        codings still applied), httpx's counter for download progress. For a body read
        whole by the engine: its size as sent (``Content-Length`` when the body was
        content-encoded, the body's size otherwise)."""
        raw = self._raw
        if isinstance(raw, _STREAMED_ANY):
            return raw.num_bytes_downloaded
        content = raw.content
        if raw.header("content-encoding") is not None:
            length = raw.header("content-length")
            if length is not None and length.isdigit():
                return int(length)
        return len(content)

    @property
    def is_stream_consumed(self) -> bool:
        """httpx's name: the streamed body was read or iterated (it is read only once)."""
        raw = self._raw
        return raw.is_consumed if isinstance(raw, _STREAMED_ANY) else False

    # -- streaming ------------------------------------------------------------------------
    # A response from ``client.stream(...)`` or ``request(..., stream=True)`` still has its
    # body on the connection; these read it piece by piece. On a response already read they
    # iterate over ``content``.

    def _pieces(self, decode: bool) -> Iterator[bytes]:
        raw = self._raw
        if isinstance(raw, StreamRaw | IterStream):
            return raw.pieces(decode=decode)
        content = raw.content
        return iter((content,) if content else ())

    def readinto(self, buffer: WriteableBuffer) -> int:
        """Read the next piece of the decoded body into ``buffer`` (a ``bytearray``,
        ``memoryview``...) and return how many bytes it filled, 0 at the end: what has
        arrived, up to ``len(buffer)`` bytes. The engine writes into the buffer itself:
        no object is made per piece. For responses of ``client.stream(...)`` or
        ``stream=True``."""
        return self._stream_for("readinto").readinto(buffer)

    def iter_into(self, buffer: WriteableBuffer) -> Iterator[int]:
        """The decoded body read into ``buffer`` again and again: yields how many bytes
        each piece filled (``buffer[:n]``), with no allocation per piece::

            buffer = bytearray(256 * 1024)
            with client.stream("GET", url) as r:
                for n in r.iter_into(buffer):
                    out.write(memoryview(buffer)[:n])
        """
        return self._stream_for("iter_into").fill(buffer)

    def _stream_for(self, name: str) -> StreamRaw:
        raw = self._raw
        if not isinstance(raw, StreamRaw):
            raise StreamError(
                f"{name}() reads a streamed response of the sync Client"
                " (client.stream(...) or stream=True)"
            )
        return raw

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        """The decoded body in chunks: as it arrives (never held back to fill a chunk; up
        to 256 KiB, 64 KiB and more while it keeps coming), or of exactly ``chunk_size``."""
        return rechunk(self._pieces(decode=True), chunk_size)

    def iter_raw(self, chunk_size: int | None = None) -> Iterator[bytes]:
        """The body as received, content codings (gzip, br...) left in place."""
        return rechunk(self._pieces(decode=False), chunk_size)

    def iter_text(self, chunk_size: int | None = None) -> Iterator[str]:
        """The body decoded with ``encoding``, chunk by chunk (multi-byte safe)."""
        decoder = self._text_decoder()
        for chunk in self.iter_bytes(chunk_size):
            if text := decoder.decode(chunk):
                yield text
        if text := decoder.decode(b"", True):
            yield text

    def _text_decoder(self) -> codecs.IncrementalDecoder:
        import codecs

        try:
            return codecs.getincrementaldecoder(self.encoding)(errors="replace")
        except LookupError:  # unknown charset name from the server
            return codecs.getincrementaldecoder("utf-8")(errors="replace")

    def iter_lines(self) -> Iterator[str]:
        """Lines of the text body, without line endings."""
        return iter_lines(self.iter_text())

    def iter_content(
        self, chunk_size: int | None = 1, decode_unicode: bool = False
    ) -> Iterator[bytes] | Iterator[str]:
        """requests' name: ``iter_bytes(chunk_size)``, or ``iter_text`` if ``decode_unicode``."""
        if decode_unicode:
            return self.iter_text(chunk_size)
        return self.iter_bytes(chunk_size)

    def read(self) -> bytes:
        """Read the rest of a streamed body (and return ``content``)."""
        raw = self._raw
        if isinstance(raw, StreamRaw | IterStream):
            return raw.read()
        return raw.content

    def close(self) -> None:
        """Release the connection: pooled when the body was read to the end, closed if not."""
        raw = self._raw
        if isinstance(raw, _STREAMED_ANY):
            raw.close()

    @property
    def is_closed(self) -> bool:
        raw = self._raw
        return raw.is_closed if isinstance(raw, _STREAMED_ANY) else True

    def _expect_read(self) -> Response:
        """httpx's ``client.stream(...)``: ``content`` before ``read()`` raises
        ``ResponseNotRead`` (requests' ``stream=True`` reads the body instead)."""
        raw = self._raw
        if isinstance(raw, StreamRaw):
            raw.must_read = True
        return self

    # -- async streaming (``AsyncClient``) ------------------------------------------------

    async def aread(self) -> bytes:
        """Read the rest of a streamed ``AsyncClient`` body (and return ``content``)."""
        raw = self._raw
        if isinstance(raw, AsyncStreamRaw | IterStream):
            return await raw.aread()
        return raw.content

    async def _apieces(self, decode: bool) -> AsyncIterator[bytes]:
        raw = self._raw
        if isinstance(raw, AsyncStreamRaw | IterStream):
            async for piece in raw.apieces(decode=decode):
                yield piece
            return
        if isinstance(raw, StreamRaw):
            raise StreamError("a response of the sync Client is iterated with iter_bytes()")
        if content := raw.content:
            yield content

    def aiter_bytes(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        """``iter_bytes`` for ``AsyncClient`` responses: ``async for chunk in ...``."""
        return arechunk(self._apieces(decode=True), chunk_size)

    def aiter_raw(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        """``iter_raw`` for ``AsyncClient`` responses (content codings left in place)."""
        return arechunk(self._apieces(decode=False), chunk_size)

    async def aiter_text(self, chunk_size: int | None = None) -> AsyncIterator[str]:
        """``iter_text`` for ``AsyncClient`` responses."""
        decoder = self._text_decoder()
        async for chunk in self.aiter_bytes(chunk_size):
            if text := decoder.decode(chunk):
                yield text
        if text := decoder.decode(b"", True):
            yield text

    def aiter_lines(self) -> AsyncIterator[str]:
        """``iter_lines`` for ``AsyncClient`` responses."""
        return aiter_lines(self.aiter_text())

    async def aclose(self) -> None:
        """``close()`` for ``AsyncClient`` responses."""
        raw = self._raw
        if isinstance(raw, IterStream):
            await raw.aclose()
        else:
            self.close()

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Response [{self._raw.status} {self.reason_phrase}]>"

    def __reduce__(self) -> tuple[Any, ...]:
        # A detached copy: the native RawResponse does not pickle (a stream is read first).
        raw = self._raw
        state = (
            raw.status,
            raw.headers(),
            raw.content,
            raw.url,
            raw.version,
            raw.reason,
            raw.elapsed,
            self._request_or_none(),
            self._history,
            self._encoding,
        )
        return (_unpickle_response, state)


class _StreamedResponse(Response):
    """A response whose body is still on the connection (``client.stream(...)``,
    ``stream=True``): ``content`` reads the rest of it when asked."""

    __slots__ = ()

    @property
    def content(self) -> bytes:  # type: ignore[override]
        return self._raw.content


_object_new = object.__new__
_RAW_RESPONSE = _core.RawResponse
_STREAMED = (StreamRaw, AsyncStreamRaw)
_STREAMED_ANY = (StreamRaw, AsyncStreamRaw, IterStream)


def _fill_response(
    self: Response,
    raw: _RawLike,
    request: Request | _RequestRef | None,
    status: int,
    content: bytes | None,
) -> Response:
    """Set the fields of ``self``, a response made by ``object.__new__`` (no field set
    yet), for the engine response ``raw``: the one place they are first set. ``content``
    is None for a streamed response (``_StreamedResponse.content`` reads the body)."""
    if content is not None:
        self.content = content
    self._raw = raw
    self.status_code = status
    self._request = request
    self._headers = None
    self._history = None
    self._encoding = None
    self._text = None
    return self


def _response_from_raw(raw: _RawLike, request: Request | _RequestRef | None) -> Response:
    """Wrap an engine response (one allocation, plain slot stores).

    ``request`` may be ``(method, url, pairs, body)``: the ``Request`` object is then only
    built if someone asks for it.
    """
    if type(raw) is _RAW_RESPONSE:  # the body read whole: allocated by the engine
        return _whole_response(raw, request)
    if isinstance(raw, _STREAMED):  # the body still on the connection
        return _fill_response(_object_new(_StreamedResponse), raw, request, raw.status, None)
    return _fill_response(_object_new(Response), raw, request, raw.status, raw.content)


# ``Engine.fetch`` (the client's hot path) returns the final ``Response``: the engine makes
# it as ``object.__new__(Response)`` does and calls these two functions, so it depends on
# their signatures only, never on a class layout.
_core.use_models(Response, _fill_response, Request._make)
_whole_response = _core.whole_response


def _unpickle_response(
    status: int,
    pairs: list[tuple[str, str]],
    content: bytes,
    url: str,
    version: str,
    reason: str,
    elapsed: float,
    request: Request | None,
    history: list[Response] | None,
    encoding: str | None,
) -> Response:
    response = _response_from_raw(
        _DetachedRaw(status, pairs, content, url, version, reason, elapsed), request
    )
    response._history = history
    response._encoding = encoding
    return response
