"""``Request``, ``PreparedRequest`` and ``Response`` with requests' attributes.

A ``PreparedRequest`` is built in Python exactly as requests builds it (URL quoting, params,
form/JSON/multipart bodies, Content-Length, auth, Cookie header), so what a program reads
or changes on it is what is sent. A ``Response`` wraps the nodelay ``Response`` the engine
returned: status, headers and body come from it, and requests' differences (``text``
charset rules, ``iter_lines`` yielding bytes, ``raw``, exceptions) are applied here.
"""

from __future__ import annotations

import datetime
import json as _json
from collections.abc import Callable, Iterable, Iterator, Mapping
from http.cookiejar import CookieJar as _StdCookieJar
from typing import IO, TYPE_CHECKING, Any, ClassVar, TypeAlias
from urllib.parse import urlsplit, urlunsplit

from .. import CookieJar, _core
from .._redirects import PERMANENT_REDIRECT_STATUSES, REDIRECT_STATUSES
from . import _errors
from ._bodies import encode_files, encode_params
from ._raw import RawBody
from .auth import HTTPBasicAuth
from .cookies import RequestsCookieJar, cookiejar_from_dict
from .exceptions import (
    HTTPError,
    InvalidJSONError,
    InvalidURL,
    JSONDecodeError,
    MissingSchema,
    StreamConsumedError,
)
from .hooks import default_hooks
from .structures import CaseInsensitiveDict
from .utils import (
    check_header_validity,
    get_auth_from_url,
    get_encoding_from_headers,
    guess_json_utf,
    iter_slices,
    parse_header_links,
    requote_uri,
    super_len,
)

if TYPE_CHECKING:
    from .. import _models
    from .adapters import BaseAdapter

__all__ = ["PreparedRequest", "Request", "Response"]

REDIRECT_STATI = tuple(sorted(REDIRECT_STATUSES))
DEFAULT_REDIRECT_LIMIT = 30
"""requests' default ``Session.max_redirects``."""
CONTENT_CHUNK_SIZE = 10 * 1024
"""Bytes per chunk when ``Response.__iter__`` and ``content`` read a stream (requests')."""
ITER_CHUNK_SIZE = 512
"""``iter_lines``' default chunk size (requests')."""
_JSON_NATIVE_ENCODINGS = (None, "utf-8", "UTF-8", "utf8")
"""Encodings for which ``Response.json`` may parse the bytes natively (JSON is UTF-8
unless a BOM or NUL pattern says UTF-16/32, which the native parser detects too)."""

Params: TypeAlias = "Mapping[Any, Any] | Iterable[tuple[Any, Any]] | str | bytes | None"
Body: TypeAlias = "bytes | str | IO[bytes] | Iterable[bytes] | None"


class RequestEncodingMixin:
    """``path_url`` and the body encoders, as requests' ``PreparedRequest`` inherits them."""

    url: str | None

    @property
    def path_url(self) -> str:
        """The path and query of the URL (what goes on the request line)."""
        parts = urlsplit(self.url or "")
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    _encode_params = staticmethod(encode_params)
    _encode_files = staticmethod(encode_files)


class RequestHooksMixin:
    hooks: dict[str, list[Callable[..., Any]]]

    def register_hook(self, event: str, hook: Any) -> None:
        """Add ``hook`` (a callable or an iterable of them) to ``event``'s hooks."""
        if event not in self.hooks:
            raise ValueError(f'Unsupported event specified, with event name "{event}"')
        if callable(hook):
            self.hooks[event].append(hook)
        elif hasattr(hook, "__iter__"):
            self.hooks[event].extend(h for h in hook if callable(h))

    def deregister_hook(self, event: str, hook: Callable[..., Any]) -> bool:
        """Remove ``hook`` from ``event``'s hooks; whether it was there."""
        try:
            self.hooks[event].remove(hook)
            return True
        except ValueError:
            return False


class Request(RequestHooksMixin):
    """A user-created request, turned into a ``PreparedRequest`` by ``prepare()`` (or a
    session's ``prepare_request``)."""

    def __init__(
        self,
        method: str | None = None,
        url: str | None = None,
        headers: Mapping[str, Any] | None = None,
        files: Any = None,
        data: Any = None,
        params: Params = None,
        auth: Any = None,
        cookies: Any = None,
        hooks: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> None:
        data = [] if data is None else data
        files = [] if files is None else files
        headers = {} if headers is None else headers
        params = {} if params is None else params
        hooks = {} if hooks is None else hooks
        self.hooks = default_hooks()
        for k, v in list(hooks.items()):
            self.register_hook(event=k, hook=v)
        self.method = method
        self.url = url
        self.headers = headers
        self.files = files
        self.data = data
        self.json = json
        self.params = params
        self.auth = auth
        self.cookies = cookies

    def __repr__(self) -> str:
        return f"<Request [{self.method}]>"

    def prepare(self) -> PreparedRequest:
        """A ``PreparedRequest`` of this request, without any session's settings."""
        p = PreparedRequest()
        p.prepare(
            method=self.method,
            url=self.url,
            headers=self.headers,
            files=self.files,
            data=self.data,
            json=self.json,
            params=self.params,
            auth=self.auth,
            cookies=self.cookies,
            hooks=self.hooks,
        )
        return p


class PreparedRequest(RequestEncodingMixin, RequestHooksMixin):
    """The exact bytes-to-be of a request: ``method``, ``url``, ``headers``, ``body``."""

    def __init__(self) -> None:
        self.method: str | None = None
        self.url: str | None = None
        self.headers: CaseInsensitiveDict[str] = CaseInsensitiveDict()
        self._cookies: CookieJar | None = None
        self.body: Any = None
        self.hooks = default_hooks()
        self._body_position: int | object | None = None
        self._jar: CookieJar | None = None

    def prepare(
        self,
        method: str | None = None,
        url: str | None = None,
        headers: Mapping[str, Any] | None = None,
        files: Any = None,
        data: Any = None,
        params: Params = None,
        auth: Any = None,
        cookies: Any = None,
        hooks: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> None:
        self.prepare_method(method)
        self.prepare_url(url, params)
        self.prepare_headers(headers)
        self.prepare_cookies(cookies)
        self.prepare_body(data, files, json)
        self.prepare_auth(auth, url)
        self.prepare_hooks(hooks)

    def __repr__(self) -> str:
        return f"<PreparedRequest [{self.method}]>"

    def copy(self) -> PreparedRequest:
        p = PreparedRequest()
        p.method = self.method
        p.url = self.url
        p.headers = self.headers.copy()
        p._cookies = None if self._cookies is None else RequestsCookieJar(self._cookies)
        p.body = self.body
        p.hooks = self.hooks
        p._body_position = self._body_position
        p._jar = self._jar
        return p

    def prepare_method(self, method: str | bytes | None) -> None:
        if isinstance(method, bytes):
            method = method.decode("ascii")
        self.method = None if method is None else method.upper()

    def prepare_url(self, url: Any, params: Params) -> None:
        """Quote the URL and add ``params`` to its query, as requests does; raises
        ``MissingSchema`` without a scheme and ``InvalidURL`` without a host."""
        if isinstance(url, bytes):
            url = url.decode("utf8")
        else:
            url = str(url)
        url = url.lstrip()
        # Other schemes (e.g. mailto:) are left alone; the adapter refuses them.
        if ":" in url and not url.lower().startswith("http"):
            self.url = url
            return
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise InvalidURL(*exc.args) from exc
        if not parts.scheme:
            raise MissingSchema(
                f"Invalid URL {url!r}: No scheme supplied. Perhaps you meant https://{url}?"
            )
        host = parts.hostname
        if not host:
            raise InvalidURL(f"Invalid URL {url!r}: No host supplied")
        if not host.isascii():
            try:
                host = host.encode("idna").decode("utf-8")
            except UnicodeError as exc:
                raise InvalidURL("URL has an invalid label.") from exc
        elif host.startswith(("*", ".")):
            raise InvalidURL("URL has an invalid label.")
        if ":" in host:  # an IPv6 literal
            host = f"[{host}]"
        netloc = parts.netloc.rpartition("@")
        userinfo = netloc[0] + "@" if netloc[1] else ""
        netloc_str = userinfo + host + (f":{port}" if port is not None else "")
        path = parts.path or "/"
        query = parts.query
        if isinstance(params, (str, bytes)):
            params = params.decode("utf-8") if isinstance(params, bytes) else params
        enc_params = encode_params(params)
        if enc_params:
            query = f"{query}&{enc_params}" if query else enc_params
        self.url = requote_uri(urlunsplit((parts.scheme, netloc_str, path, query, parts.fragment)))

    def prepare_headers(self, headers: Mapping[str, Any] | None) -> None:
        self.headers = CaseInsensitiveDict()
        if headers:
            for name, value in headers.items():
                check_header_validity((name, value))
                if isinstance(name, bytes):
                    name = name.decode("ascii")
                if isinstance(value, bytes):
                    value = value.decode("latin1")
                self.headers[name] = value

    def prepare_body(self, data: Any, files: Any, json: Any = None) -> None:
        """The body and its Content-Type/Length: JSON, form, multipart, or a file or
        iterable sent as it is read (Content-Length when its size is known, chunked if not)."""
        body: Any = None
        content_type = None
        if not data and json is not None:
            content_type = "application/json"
            try:
                body = _json.dumps(json, allow_nan=False)
            except ValueError as ve:
                raise InvalidJSONError(ve, request=self) from ve
            body = body.encode("utf-8")
        is_stream = hasattr(data, "__iter__") and not isinstance(
            data, (str, bytes, bytearray, list, tuple, Mapping)
        )
        if is_stream:
            try:
                length: int | None = super_len(data)
            except (TypeError, AttributeError, OSError):
                length = None
            body = data
            if getattr(body, "tell", None) is not None:
                try:
                    self._body_position = body.tell()
                except OSError:
                    self._body_position = object()
            if files:
                raise NotImplementedError("Streamed bodies and files are mutually exclusive.")
            if length:
                self.headers["Content-Length"] = str(length)
            else:
                self.headers["Transfer-Encoding"] = "chunked"
        else:
            if files:
                body, content_type = encode_files(files, data)
            elif data:
                body = encode_params(data)
                if isinstance(data, (str, bytes)) or hasattr(data, "read"):
                    content_type = None
                else:
                    content_type = "application/x-www-form-urlencoded"
            self.prepare_content_length(body)
            if content_type and "content-type" not in self.headers:
                self.headers["Content-Type"] = content_type
        self.body = body

    def prepare_content_length(self, body: Any) -> None:
        if body is not None:
            length = super_len(body)
            if length:
                self.headers["Content-Length"] = str(length)
        elif self.method not in ("GET", "HEAD") and self.headers.get("Content-Length") is None:
            self.headers["Content-Length"] = "0"

    def prepare_auth(self, auth: Any, url: str | None = "") -> None:
        """Apply ``auth`` (a callable on this request, or a ``(user, password)`` pair for
        Basic); without it, credentials in the URL are used as Basic auth."""
        if auth is None:
            url_auth = get_auth_from_url(self.url or "")
            auth = url_auth if any(url_auth) else None
        if auth:
            if isinstance(auth, tuple) and len(auth) == 2:
                auth = HTTPBasicAuth(*auth)
            r = auth(self)
            self.__dict__.update(r.__dict__)
            self.prepare_content_length(self.body)

    def prepare_cookies(self, cookies: Any) -> None:
        """The Cookie header from ``cookies`` (a dict or a jar) for this URL, unless the
        request already has one."""
        if isinstance(cookies, CookieJar):
            self._cookies = cookies
        elif isinstance(cookies, _StdCookieJar):
            jar = RequestsCookieJar()
            for c in cookies:
                jar.set_cookie(c)
            self._cookies = jar
        else:
            self._cookies = cookiejar_from_dict(cookies)
        header = self._cookies.header_for(self.url or "")
        if header is not None and "Cookie" not in self.headers:
            self.headers["Cookie"] = header

    def prepare_hooks(self, hooks: Mapping[str, Any] | None) -> None:
        for event in hooks or []:
            self.register_hook(event, (hooks or {})[event])


class Response:
    """The response to a request, with requests' attributes and methods."""

    __attrs__: ClassVar[list[str]] = [
        "_content",
        "status_code",
        "headers",
        "url",
        "history",
        "encoding",
        "reason",
        "cookies",
        "elapsed",
        "request",
    ]

    def __init__(self) -> None:
        self._content: bytes | bool | None = False
        self._content_consumed = False
        self._next: PreparedRequest | None = None
        self.status_code: int = None  # type: ignore[assignment]  # requests' initial value
        self.headers: CaseInsensitiveDict[str] = CaseInsensitiveDict()
        self.raw: Any = None
        self.url: str = None  # type: ignore[assignment]
        self.encoding: str | None = None
        self.history: list[Response] = []
        self.reason: str = None  # type: ignore[assignment]
        self.cookies: RequestsCookieJar = RequestsCookieJar()
        self.elapsed = datetime.timedelta(0)
        self.request: PreparedRequest = None  # type: ignore[assignment]
        self.connection: BaseAdapter | None = None
        self._nd: _models.Response | None = None

    def __getstate__(self) -> dict[str, Any]:
        if not self._content_consumed:
            self.content  # noqa: B018 - read the body so it is pickled
        return {attr: getattr(self, attr, None) for attr in self.__attrs__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]
        for name, value in state.items():
            setattr(self, name, value)
        self._content_consumed = True
        self.raw = None

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Response [{self.status_code}]>"

    def __bool__(self) -> bool:
        return self.ok

    def __iter__(self) -> Iterator[bytes]:
        return self.iter_content(128)  # type: ignore[return-value]

    @property
    def ok(self) -> bool:
        """False for a 4xx or 5xx status (``raise_for_status`` would raise)."""
        try:
            self.raise_for_status()
        except HTTPError:
            return False
        return True

    @property
    def is_redirect(self) -> bool:
        return "location" in self.headers and self.status_code in REDIRECT_STATI

    @property
    def is_permanent_redirect(self) -> bool:
        return "location" in self.headers and self.status_code in PERMANENT_REDIRECT_STATUSES

    @property
    def next(self) -> PreparedRequest | None:
        """The next request of a redirect chain (when redirects were not followed)."""
        return self._next

    @property
    def apparent_encoding(self) -> str | None:
        """The encoding guessed from the body (charset_normalizer or chardet when
        installed, else ``utf-8``)."""
        import importlib

        for name in ("charset_normalizer", "chardet"):
            try:
                detector = importlib.import_module(name)
            except ImportError:
                continue
            found: str | None = detector.detect(self.content or b"")["encoding"]
            return found
        return "utf-8"

    def iter_content(
        self, chunk_size: int | None = 1, decode_unicode: bool = False
    ) -> Iterator[bytes] | Iterator[str]:
        """The body in chunks of ``chunk_size`` bytes (as it arrives for ``None``), read
        from the connection for ``stream=True``; ``decode_unicode`` decodes with
        ``encoding`` (bytes are yielded as they are when it is ``None``)."""
        if self._content_consumed and isinstance(self._content, bool):
            raise StreamConsumedError()
        if chunk_size is not None and not isinstance(chunk_size, int):
            raise TypeError(f"chunk_size must be an int, it is instead a {type(chunk_size)}.")
        chunks: Iterator[bytes]
        if self._content_consumed:
            chunks = iter_slices(self._content or b"", chunk_size)  # type: ignore[arg-type]
        else:
            chunks = self._generate(chunk_size)
        if decode_unicode:
            return self._decode_unicode(chunks)
        return chunks

    def _generate(self, chunk_size: int | None) -> Iterator[bytes]:
        nd = self._nd
        if nd is not None:
            if isinstance(self.raw, RawBody):
                self.raw._done = True
            try:
                yield from nd.iter_bytes(chunk_size)
            except _errors.NODELAY_ERRORS as exc:
                raise _errors.while_reading(exc, self.request) from exc
        elif hasattr(self.raw, "stream"):
            yield from self.raw.stream(chunk_size, decode_content=True)
        elif self.raw is not None:  # a file-like object set by hand (tests, mocks)
            while chunk := self.raw.read(chunk_size):
                yield chunk
        self._content_consumed = True

    def _decode_unicode(self, chunks: Iterator[bytes]) -> Iterator[Any]:
        if self.encoding is None:
            yield from chunks
            return
        import codecs

        decoder = codecs.getincrementaldecoder(self.encoding)(errors="replace")
        for chunk in chunks:
            if rv := decoder.decode(chunk):
                yield rv
        if rv := decoder.decode(b"", final=True):
            yield rv

    def iter_lines(
        self,
        chunk_size: int = ITER_CHUNK_SIZE,
        decode_unicode: bool = False,
        delimiter: str | bytes | None = None,
    ) -> Iterator[Any]:
        """The body line by line (bytes, or str with ``decode_unicode``), line endings
        removed; reads ``chunk_size`` at a time from a stream."""
        pending: Any = None
        chunk: Any
        for chunk in self.iter_content(chunk_size=chunk_size, decode_unicode=decode_unicode):
            if pending is not None:
                chunk = pending + chunk
            lines = chunk.split(delimiter) if delimiter else chunk.splitlines()
            if lines and lines[-1] and chunk and lines[-1][-1] == chunk[-1]:
                pending = lines.pop()
            else:
                pending = None
            yield from lines
        if pending is not None:
            yield pending

    @property
    def content(self) -> bytes:
        """The whole body (read from the connection on first use for ``stream=True``)."""
        if self._content is False:
            if self._content_consumed:
                raise RuntimeError("The content for this response was already consumed")
            nd = self._nd
            if self.status_code == 0 or (nd is None and self.raw is None):
                self._content = None
            elif nd is not None:
                try:
                    self._content = nd.content
                except _errors.NODELAY_ERRORS as exc:
                    raise _errors.while_reading(exc, self.request) from exc
                if isinstance(self.raw, RawBody):
                    self.raw._done = True  # read whole: nothing left for ``raw``
            else:
                self._content = b"".join(self.iter_content(CONTENT_CHUNK_SIZE)) or b""  # type: ignore[arg-type]
        self._content_consumed = True
        return self._content  # type: ignore[return-value]

    @property
    def text(self) -> str:
        """The body decoded with ``encoding``: the Content-Type charset, ISO-8859-1 for
        ``text/*`` without one, else ``apparent_encoding``; settable."""
        content = self.content
        if not content:
            return ""
        encoding = self.encoding
        if encoding is None:
            encoding = self.apparent_encoding
        try:
            return str(content, encoding or "utf-8", errors="replace")
        except (LookupError, TypeError):
            return str(content, errors="replace")

    def json(self, **kwargs: Any) -> Any:
        """The body parsed as JSON; ``requests.JSONDecodeError`` if it is not JSON."""
        content = self.content
        if not kwargs and type(content) is bytes and self.encoding in _JSON_NATIVE_ENCODINGS:
            # nodelay's parser: json.loads' results, UTF-8/16/32 detected (RFC 8259).
            try:
                return _core.json_loads(content)
            except ValueError:
                pass  # the path below raises requests' JSONDecodeError for it
        if not self.encoding and content and len(content) > 3:
            encoding = guess_json_utf(content)
            if encoding is not None:
                try:
                    return _json.loads(content.decode(encoding), **kwargs)
                except UnicodeDecodeError:
                    pass
                except _json.JSONDecodeError as e:
                    raise JSONDecodeError(e.msg, e.doc, e.pos) from e
        try:
            return _json.loads(self.text, **kwargs)
        except _json.JSONDecodeError as e:
            raise JSONDecodeError(e.msg, e.doc, e.pos) from e

    @property
    def links(self) -> dict[str, dict[str, str]]:
        """The parsed ``Link`` header, keyed by ``rel`` (or the URL)."""
        header = self.headers.get("link")
        resolved: dict[str, dict[str, str]] = {}
        if header:
            for link in parse_header_links(header):
                resolved[link.get("rel") or link.get("url") or ""] = link
        return resolved

    def raise_for_status(self) -> None:
        """Raise ``HTTPError`` for a 4xx or 5xx status."""
        reason: Any = self.reason
        if isinstance(reason, bytes):
            try:
                reason = reason.decode("utf-8")
            except UnicodeDecodeError:
                reason = reason.decode("iso-8859-1")
        http_error_msg = ""
        if 400 <= self.status_code < 500:
            http_error_msg = f"{self.status_code} Client Error: {reason} for url: {self.url}"
        elif 500 <= self.status_code < 600:
            http_error_msg = f"{self.status_code} Server Error: {reason} for url: {self.url}"
        if http_error_msg:
            raise HTTPError(http_error_msg, response=self)

    def close(self) -> None:
        """Release the connection (pooled when the body was read to the end)."""
        if not self._content_consumed and self.raw is not None:
            self.raw.close()
        if self._nd is not None:
            self._nd.close()


def build_response(request: PreparedRequest, nd: _models.Response) -> Response:
    """A facade ``Response`` over the streamed nodelay response ``nd``, its body still on
    the connection (read by ``content``, ``iter_content`` or ``raw``)."""
    response = Response()
    response.status_code = nd.status_code
    headers: CaseInsensitiveDict[str] = CaseInsensitiveDict()
    for name, value in nd.headers.multi_items():
        # urllib3 joins repeated fields with ", " (requests' headers are those).
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    response.headers = headers
    response.encoding = get_encoding_from_headers(headers)
    response.reason = nd.reason
    response.url = nd.url
    response.elapsed = nd.elapsed
    response.request = request
    response._nd = nd
    response.raw = RawBody(nd, request)
    if "set-cookie" in headers:
        response.cookies = RequestsCookieJar(nd.cookies)
    return response
