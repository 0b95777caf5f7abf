"""``Client`` and ``Session``: a connection pool plus defaults, over the Rust engine.

The hot path is ``client.get(url)`` with no keyword arguments: it hands the engine the
precomputed default header list (the ``Headers`` object's internal list, which is never
mutated in place) and the precomputed timeout tuple, and wraps the result lazily. Anything
else (params, base_url, per-request headers or timeout, bodies) goes through ``request()``.
"""

from __future__ import annotations

from contextlib import contextmanager

from . import _core
from ._auth import build_auth, load_netrc, netrc_auth
from ._config import (
    DEFAULT_MAX_REDIRECTS,
    UNSET,
    Limits,
    Timeout,
    _Unset,
    timeout_tuple,
    tls_engine_options,
)
from ._cookies import CookieJar, cookie_header
from ._exceptions import RequestError, TooManyRedirects, UnsupportedProtocol
from ._models import Headers, Request, Response, _response_from_raw, _to_str, override_pairs
from ._streaming import StreamRaw
from ._urls import join_base, merge_params, normalize_base, param_pairs, with_query

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence
    from types import TracebackType
    from typing import Any, Literal, Self, TypeAlias, overload

    from ._auth import Auth, AuthTypes
    from ._config import CertTypes, TimeoutTypes, VerifyTypes
    from ._cookies import CookieTypes
    from ._core import TimeoutTuple
    from ._models import HeaderTypes
    from ._urls import ParamTypes

    RequestHeaderTypes: TypeAlias = "HeaderTypes | Mapping[str, str | None]"
    RequestContent: TypeAlias = "bytes | bytearray | memoryview | str"
    RequestData: TypeAlias = "Mapping[str, Any] | Sequence[tuple[str, Any]] | str | bytes"
    Pairs: TypeAlias = "list[tuple[str, str]]"
    BatchItem: TypeAlias = "Request | tuple[str, str] | tuple[str, str, Mapping[str, Any]]"

__all__ = ["Client", "Session"]

_REDIRECT_STATUSES = frozenset((301, 302, 303, 307, 308))
_BODY_METHODS = frozenset(("POST", "PUT", "PATCH"))
_FORM = "application/x-www-form-urlencoded"
_JSON = "application/json"
# Dropped when a redirect turns the request into a body-less GET.
_BODY_HEADERS = frozenset(("content-type", "content-length", "transfer-encoding"))
# Dropped for good once a redirect leaves the origin (HOSTILE.md, E.22). Host is
# recomputed by the engine for the new origin.
_ORIGIN_HEADERS = frozenset(("authorization", "proxy-authorization", "cookie", "host"))
_DEFAULT_PORTS = {"http": 80, "https": 443}
# Tuples, not ``A | B``: that would build a UnionType object on every call.
_BUFFERS = (bytearray, memoryview)
_RAW_DATA = (str, bytes, bytearray, memoryview)


class _ClosedEngine:
    """Replaces the engine once the client is closed (no per-request "closed?" check)."""

    __slots__ = ()

    def request(self, *args: object) -> _core.RawResponse:
        raise RuntimeError("Client is closed")

    def open(self, *args: object) -> _core.RawStream:
        raise RuntimeError("Client is closed")

    def close(self) -> None:
        pass

    def idle_connections(self) -> int:
        return 0


_CLOSED_ENGINE = _ClosedEngine()


# Everything the engine decodes (gzip incl. multi-member, zlib/raw deflate, brotli, zstd).
ACCEPT_ENCODING = "gzip, deflate, br, zstd"


def _default_headers() -> Pairs:
    return [
        ("User-Agent", f"nodelay/{_core.__version__}"),
        ("Accept", "*/*"),
        ("Accept-Encoding", ACCEPT_ENCODING),
    ]


def _header_items(headers: RequestHeaderTypes | None) -> list[tuple[str, str | None]]:
    """Per-request headers as pairs; ``None`` values (Mapping only) mean "remove"."""
    if headers is None:
        return []
    if isinstance(headers, Headers):
        return list(headers._list)
    if hasattr(headers, "items"):
        return [(_to_str(k), None if v is None else _to_str(v)) for k, v in headers.items()]
    return [(_to_str(k), _to_str(v)) for k, v in headers]


def _has_header(pairs: Pairs, lower_name: str) -> bool:
    return any(name.lower() == lower_name for name, _ in pairs)


def _content_bytes(content: RequestContent) -> bytes:
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, _BUFFERS):
        return bytes(content)
    raise TypeError(f"content must be bytes or str, got {type(content).__name__}")


def _encode_body(
    method: str,
    content: RequestContent | None,
    data: RequestData | None,
    json: Any,
) -> tuple[bytes | None, str | None]:
    """``(body, content_type)`` for the body arguments (at most one may be given)."""
    if (content is not None) + (data is not None) + (json is not None) > 1:
        raise TypeError("give at most one of content=, data= and json=")
    if content is not None:
        return _content_bytes(content), None
    if data is not None:
        if isinstance(data, _RAW_DATA):
            return _content_bytes(data), None  # requests: str/bytes data is the raw body
        # Encoded in Rust, byte-identical to urllib.parse.urlencode (~10x faster).
        return _core.form_encode(param_pairs(data)), _FORM
    if json is not None:
        import json as _json

        text = _json.dumps(json, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8"), _JSON
    # No body: POST/PUT/PATCH still say "Content-Length: 0" (b""), others send none.
    return (b"" if method in _BODY_METHODS else None), None


def _origin(url: str) -> tuple[str, str | None, int | None] | None:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        return (scheme, parts.hostname, parts.port or _DEFAULT_PORTS.get(scheme))
    except ValueError:
        return None  # unparsable: never equal to anything, so credentials get stripped


def _without(pairs: Pairs, lower_names: frozenset[str]) -> Pairs:
    return [pair for pair in pairs if pair[0].lower() not in lower_names]


def _with_cookies(
    pairs: Pairs, jar_header: str | None, extra: Mapping[str, str] | None
) -> Pairs:
    """``pairs`` plus a ``Cookie`` header from the jar's value and per-request cookies,
    unless the user set a ``Cookie`` header (then it is sent as given)."""
    if _has_header(pairs, "cookie"):
        return pairs
    value = cookie_header(jar_header, extra) if extra else jar_header
    return [*pairs, ("Cookie", value)] if value else pairs


def _request_cookies(cookies: CookieTypes, url: str) -> dict[str, str]:
    """Per-request ``cookies=`` as name → value (a jar gives the cookies it has for url)."""
    if isinstance(cookies, CookieJar):
        header = cookies.header_for(url)
        return dict(p.partition("=")[::2] for p in header.split("; ")) if header else {}
    return {_to_str(k): _to_str(v) for k, v in cookies.items()}


_GET_ARGS = frozenset(
    (
        "params",
        "headers",
        "timeout",
        "follow_redirects",
        "allow_redirects",
        "cookies",
        "auth",
        "stream",
    )
)


def _get(client: Client, url: str, **kwargs: Any) -> Response:
    """Send a GET request (``Client.get``; the keyword arguments of ``request`` without
    a body). The hot path: only client defaults apply; anything else goes to
    ``request``."""
    if kwargs or not client._plain or not client._auth_off or type(url) is not str:
        unknown = kwargs.keys() - _GET_ARGS
        if unknown:
            raise TypeError(f"get() got an unexpected keyword argument {min(unknown)!r}")
        return client.request("GET", url, **kwargs)
    # The hot path: client defaults only, nothing to merge or encode.
    if "#" in url:
        url = url.partition("#")[0]
    pairs = sent = client._headers._list
    ttuple = client._ttuple
    jar = client._jar
    jar_header = jar.header_for(url)  # None at once for an empty jar
    if jar_header is not None:
        sent = _with_cookies(pairs, jar_header, None)
    try:
        raw = client._engine.request("GET", url, sent, None, ttuple)
    except RequestError as exc:
        if exc.request is None:
            exc.request = Request._make("GET", url, sent, None)
        raise
    if jar.extract(raw):  # False at once when no Set-Cookie
        client._cookies._changed()
    response = _response_from_raw(raw, ("GET", url, sent, None))
    if client.follow_redirects and raw.status in _REDIRECT_STATUSES:
        return client._redirect(response, "GET", url, pairs, None, ttuple)
    return response


class Client:
    """An HTTP client with a connection pool, default headers, params and timeout.

    ``base_url``: relative request URLs are joined onto it (its path kept, one ``/`` between).
    ``headers``: sent with every request after ``User-Agent: nodelay/<version>`` and
    ``Accept: */*`` (yours replace those by name, case-insensitively, in place); per-request
    headers replace client headers the same way, and a per-request ``None`` value drops one.
    ``params``: added to every request's query (per-request params of the same name win).
    ``timeout``: seconds, ``None``, a ``(connect, read)`` pair or a ``Timeout``; default
    ``Timeout()`` (connect 10 s, read/write/pool 30 s). ``follow_redirects`` (default False,
    httpx) and ``max_redirects`` (20). ``limits``: the pool's ``Limits``.
    ``cookies``: a ``CookieJar`` (used as is, so several clients may share it) or a dict
    (cookies sent to every host); the jar stores every response's Set-Cookie and sends
    its cookies by RFC 6265 rules (``client.cookies``). ``auth``: a ``(user, password)``
    tuple (Basic), an ``Auth`` (``BasicAuth``, ``DigestAuth``, ``BearerAuth``) or a
    callable ``f(request) -> request``. ``trust_env`` (default True): without ``auth``,
    credentials come from ``$NETRC`` / ``~/.netrc`` (read when the client is created).

    Thread safety: one ``Client`` may be shared by any number of threads; the pool is locked
    inside the engine and each request runs on its calling thread with the GIL released.
    Changing a client's settings while other threads send requests is not synchronised.

    Use it as a context manager, or call ``close()``; requests on a closed client raise
    ``RuntimeError("Client is closed")``.
    """

    def __init__(
        self,
        *,
        base_url: str = "",
        headers: HeaderTypes | None = None,
        params: ParamTypes | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool = False,
        max_redirects: int = DEFAULT_MAX_REDIRECTS,
        limits: Limits | None = None,
        verify: VerifyTypes = True,
        cert: CertTypes | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
        trust_env: bool = True,
    ) -> None:
        if limits is None:
            limits = Limits()
        self._limits = limits
        self._engine: _core.Engine | _ClosedEngine = _core.Engine(
            max_connections=limits.max_connections,
            max_keepalive=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            **tls_engine_options(verify, cert),
        )
        self._headers = Headers._from_list(
            override_pairs(_default_headers(), _header_items(headers))
        )
        self._params: Pairs = param_pairs(params)
        self._base = normalize_base(base_url)
        self._plain = not self._params and not self._base
        self._timeout = timeout if isinstance(timeout, Timeout) else Timeout(timeout)
        self._ttuple: TimeoutTuple = self._timeout.as_tuple()
        self.follow_redirects = follow_redirects
        self.max_redirects = max_redirects
        self.cookies = cookies  # the setter takes a dict (or None) too
        self._auth = build_auth(auth)
        self.trust_env = trust_env

    # -- settings ---------------------------------------------------------------------------

    @property
    def headers(self) -> Headers:
        """Default headers (mutable: changes apply to the next request)."""
        return self._headers

    @headers.setter
    def headers(self, value: HeaderTypes) -> None:
        self._headers = Headers(value)

    @property
    def params(self) -> tuple[tuple[str, str], ...]:
        """Default query parameters as ``(name, value)`` pairs; assign to change them."""
        return tuple(self._params)

    @params.setter
    def params(self, value: ParamTypes | None) -> None:
        self._params = param_pairs(value)
        self._plain = not self._params and not self._base

    @property
    def base_url(self) -> str:
        """The base URL, normalised to end with ``/`` (or ``""``)."""
        return self._base

    @base_url.setter
    def base_url(self, value: str) -> None:
        self._base = normalize_base(value)
        self._plain = not self._params and not self._base

    @property
    def timeout(self) -> Timeout:
        return self._timeout

    @timeout.setter
    def timeout(self, value: TimeoutTypes) -> None:
        self._timeout = value if isinstance(value, Timeout) else Timeout(value)
        self._ttuple = self._timeout.as_tuple()

    @property
    def limits(self) -> Limits:
        return self._limits

    @property
    def cookies(self) -> CookieJar:
        """The client's cookie jar; assign a ``CookieJar`` (shared) or a dict (copied)."""
        return self._cookies

    @cookies.setter
    def cookies(self, value: CookieTypes | None) -> None:
        self._cookies = value if isinstance(value, CookieJar) else CookieJar(value)
        self._jar = self._cookies._jar

    @property
    def auth(self) -> Auth | None:
        """The default auth (an ``Auth`` or ``None``); assign any ``auth=`` value."""
        return self._auth

    @auth.setter
    def auth(self, value: AuthTypes | None) -> None:
        self._auth = build_auth(value)
        self._auth_off = self._auth is None and self._netrc is None

    @property
    def trust_env(self) -> bool:
        """Whether ``.netrc`` credentials are used for requests without ``auth``."""
        return self._trust_env

    @trust_env.setter
    def trust_env(self, value: bool) -> None:
        self._trust_env = value
        self._netrc = load_netrc() if value else None
        self._auth_off = self._auth is None and self._netrc is None

    @property
    def is_closed(self) -> bool:
        return self._engine is _CLOSED_ENGINE

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Close every pooled connection; later requests raise ``RuntimeError``."""
        engine = self._engine
        self._engine = _CLOSED_ENGINE
        engine.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- sending ----------------------------------------------------------------------------

    def request(
        self,
        method: str,
        url: str,
        *,
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        json: Any = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        allow_redirects: bool | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
        stream: bool = False,
    ) -> Response:
        """Send a request and read the whole response.

        ``content`` (bytes, or str sent as UTF-8), ``data`` (a dict or pairs, form-encoded;
        str/bytes are sent as is) and ``json`` (compact JSON) are mutually exclusive.
        ``allow_redirects`` is requests' name for ``follow_redirects``. ``cookies``: sent
        with this request only (merged over the jar's, by name; not on redirects).
        ``auth``: this request's auth, instead of the client's. ``stream=True`` (requests'
        name) returns before the body is read: iterate it with ``iter_bytes()``... and
        ``close()`` the response, or use ``client.stream()``.
        """
        method = method.upper()
        if type(url) is not str:
            url = str(url)
        if not self._plain:
            url = join_base(self._base, url)
        url = with_query(url, merge_params(self._params, param_pairs(params)))
        pairs = override_pairs(self._headers._list, _header_items(headers))
        body, content_type = _encode_body(method, content, data, json)
        if content_type is not None and not _has_header(pairs, "content-type"):
            pairs = [*pairs, ("Content-Type", content_type)]
        ttuple = self._ttuple if timeout is UNSET else timeout_tuple(timeout)
        if follow_redirects is None:
            follow_redirects = self.follow_redirects if allow_redirects is None else allow_redirects
        extra = None if cookies is None else _request_cookies(cookies, url)
        auth_obj = self._auth if auth is None else build_auth(auth)
        if auth_obj is None and self._netrc is not None:
            auth_obj = netrc_auth(self._netrc, url)
        if auth_obj is None:
            response = self._send(method, url, pairs, body, ttuple, extra, stream)
        else:
            response, method, url, pairs, body = self._send_auth(
                auth_obj, method, url, pairs, body, ttuple, extra, stream
            )
        if follow_redirects and response._raw.status in _REDIRECT_STATUSES:
            return self._redirect(response, method, url, pairs, body, ttuple, extra, stream)
        return response

    @contextmanager
    def stream(self, method: str, url: str, **kwargs: Any) -> Iterator[Response]:
        """Send a request and yield the response before its body is read (httpx's API).

        ``with client.stream("GET", url) as r: for chunk in r.iter_bytes(): ...`` — the
        same keyword arguments as ``request``. On exit the response is closed: a body read
        to the end gives its connection back to the pool, a half-read one closes it.
        """
        response = self.request(method, url, stream=True, **kwargs)
        try:
            yield response
        finally:
            response.close()

    def _send_auth(
        self,
        auth: Auth,
        method: str,
        url: str,
        pairs: Pairs,
        body: bytes | None,
        ttuple: TimeoutTuple,
        extra: Mapping[str, str] | None,
        stream: bool = False,
    ) -> tuple[Response, str, str, Pairs, bytes | None]:
        """Run ``auth``'s flow; returns the last response and the request that got it."""
        flow = auth.auth_flow(Request._make(method, url, pairs, body))
        request = next(flow)
        while True:
            method, url = request.method, request.url
            pairs = request.headers._list
            if body is not None or request.content:
                body = request.content
            response = self._send(method, url, pairs, body, ttuple, extra, stream)
            try:
                request = flow.send(response)
            except StopIteration:
                return response, method, url, pairs, body
            response.read()  # a challenge answered: free its connection for the retry

    def _send(
        self,
        method: str,
        url: str,
        pairs: Pairs,
        body: bytes | None,
        ttuple: TimeoutTuple,
        cookies: Mapping[str, str] | None = None,
        stream: bool = False,
    ) -> Response:
        """One exchange with the engine; engine errors get ``request`` filled in.
        With ``stream`` the body is left on the connection (see ``StreamRaw``).

        The jar adds its ``Cookie`` header (merged with ``cookies``) and stores the
        response's Set-Cookie fields: one native call each way, both no-ops when the jar
        is empty and the response sets nothing."""
        jar = self._jar
        jar_header = jar.header_for(url)
        if jar_header is not None or cookies:
            pairs = _with_cookies(pairs, jar_header, cookies)
        try:
            if stream:
                streamed = self._engine.open(method, url, pairs, body, ttuple)
                if jar.extract(streamed):
                    self._cookies._changed()
                return _response_from_raw(StreamRaw(streamed), (method, url, pairs, body))
            raw = self._engine.request(method, url, pairs, body, ttuple)
        except RequestError as exc:
            if exc.request is None:
                exc.request = Request._make(method, url, pairs, body)
            raise
        if jar.extract(raw):
            self._cookies._changed()
        return _response_from_raw(raw, (method, url, pairs, body))

    def _redirect(
        self,
        response: Response,
        method: str,
        url: str,
        pairs: Pairs,
        body: bytes | None,
        ttuple: TimeoutTuple,
        cookies: Mapping[str, str] | None = None,
        stream: bool = False,
    ) -> Response:
        """Follow ``response``'s redirect chain (http/https only, at most max_redirects)."""
        from urllib.parse import urljoin

        history: list[Response] = []
        while True:
            raw = response._raw
            status = raw.status
            if status not in _REDIRECT_STATUSES:
                break
            location = raw.header("location")
            if location is None:
                break
            if len(history) >= self.max_redirects:
                raise TooManyRedirects(
                    f"Exceeded the maximum of {self.max_redirects} redirects",
                    request=response.request,
                    url=url,
                    history=[*history, response],
                )
            next_url = urljoin(url, location.strip()).partition("#")[0]
            scheme = next_url.partition(":")[0].lower() if ":" in next_url else ""
            if scheme not in _DEFAULT_PORTS:
                raise UnsupportedProtocol(
                    f"Refusing to follow a redirect to {next_url!r}: "
                    "only http and https are allowed",
                    request=response.request,
                    url=next_url,
                )
            if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
                method = "GET"
                body = None
                pairs = _without(pairs, _BODY_HEADERS)
            if _origin(next_url) != _origin(url) or _origin(url) is None:
                pairs = _without(pairs, _ORIGIN_HEADERS)
                cookies = None  # per-request cookies stay with the first origin too
            response.read()  # a streamed hop: read its (small) body so the connection is reused
            response._history = history[:]
            history.append(response)
            url = next_url
            response = self._send(method, url, pairs, body, ttuple, cookies, stream)
        response._history = history
        return response

    if TYPE_CHECKING:

        def get(
            self,
            url: str,
            *,
            params: ParamTypes | None = None,
            headers: RequestHeaderTypes | None = None,
            timeout: TimeoutTypes | _Unset = UNSET,
            follow_redirects: bool | None = None,
            allow_redirects: bool | None = None,
            cookies: CookieTypes | None = None,
            auth: AuthTypes | None = None,
            stream: bool = False,
        ) -> Response:
            """Send a GET request."""
            ...

    else:
        # At run time ``get`` takes ``**kwargs`` (see ``_get``): CPython looks up every
        # omitted keyword-only default in a dict on each call, 8 lookups that were ~6% of
        # a small GET's instructions (callgrind, docs/performance.md). The signature
        # above is the one type checkers and readers see.
        get = _get

    def head(
        self,
        url: str,
        *,
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        allow_redirects: bool | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
        stream: bool = False,
    ) -> Response:
        """Send a HEAD request."""
        return self.request(
            "HEAD",
            url,
            params=params,
            headers=headers,
            timeout=timeout,
            follow_redirects=follow_redirects,
            allow_redirects=allow_redirects,
            cookies=cookies,
            auth=auth,
            stream=stream,
        )

    def options(
        self,
        url: str,
        *,
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        allow_redirects: bool | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
        stream: bool = False,
    ) -> Response:
        """Send an OPTIONS request."""
        return self.request(
            "OPTIONS",
            url,
            params=params,
            headers=headers,
            timeout=timeout,
            follow_redirects=follow_redirects,
            allow_redirects=allow_redirects,
            cookies=cookies,
            auth=auth,
            stream=stream,
        )

    def delete(
        self,
        url: str,
        *,
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        allow_redirects: bool | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
        stream: bool = False,
    ) -> Response:
        """Send a DELETE request."""
        return self.request(
            "DELETE",
            url,
            params=params,
            headers=headers,
            timeout=timeout,
            follow_redirects=follow_redirects,
            allow_redirects=allow_redirects,
            cookies=cookies,
            auth=auth,
            stream=stream,
        )

    def post(
        self,
        url: str,
        *,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        json: Any = None,
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        allow_redirects: bool | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
        stream: bool = False,
    ) -> Response:
        """Send a POST request."""
        return self.request(
            "POST",
            url,
            content=content,
            data=data,
            json=json,
            params=params,
            headers=headers,
            timeout=timeout,
            follow_redirects=follow_redirects,
            allow_redirects=allow_redirects,
            cookies=cookies,
            auth=auth,
            stream=stream,
        )

    def put(
        self,
        url: str,
        *,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        json: Any = None,
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        allow_redirects: bool | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
        stream: bool = False,
    ) -> Response:
        """Send a PUT request."""
        return self.request(
            "PUT",
            url,
            content=content,
            data=data,
            json=json,
            params=params,
            headers=headers,
            timeout=timeout,
            follow_redirects=follow_redirects,
            allow_redirects=allow_redirects,
            cookies=cookies,
            auth=auth,
            stream=stream,
        )

    def patch(
        self,
        url: str,
        *,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        json: Any = None,
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        allow_redirects: bool | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
        stream: bool = False,
    ) -> Response:
        """Send a PATCH request."""
        return self.request(
            "PATCH",
            url,
            content=content,
            data=data,
            json=json,
            params=params,
            headers=headers,
            timeout=timeout,
            follow_redirects=follow_redirects,
            allow_redirects=allow_redirects,
            cookies=cookies,
            auth=auth,
            stream=stream,
        )

    # -- batches (python/nodelay/_batch.py) -------------------------------------------------

    if TYPE_CHECKING:

        @overload
        def get_many(
            self,
            urls: Iterable[str],
            *,
            concurrency: int = ...,
            params: ParamTypes | None = ...,
            headers: RequestHeaderTypes | None = ...,
            timeout: TimeoutTypes | _Unset = ...,
            follow_redirects: bool | None = ...,
            return_exceptions: Literal[False] = ...,
        ) -> list[Response]: ...
        @overload
        def get_many(
            self,
            urls: Iterable[str],
            *,
            concurrency: int = ...,
            params: ParamTypes | None = ...,
            headers: RequestHeaderTypes | None = ...,
            timeout: TimeoutTypes | _Unset = ...,
            follow_redirects: bool | None = ...,
            return_exceptions: bool,
        ) -> list[Response | RequestError]: ...

    def get_many(
        self,
        urls: Iterable[str],
        *,
        concurrency: int = 32,
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        return_exceptions: bool = False,
    ) -> list[Any]:
        """GET every URL with up to ``concurrency`` requests in flight; returns the
        responses in the order of ``urls``.

        The requests run on worker threads over this client's pool with the GIL released
        the whole time (other Python threads keep running); Ctrl-C interrupts the batch.
        ``params``/``headers``/``timeout``/``follow_redirects`` apply to every request as
        in ``get``; the jar's cookies are sent and Set-Cookie fields stored as in ``get``
        (in whatever order the responses arrive). Requests with auth (``auth=`` or
        ``.netrc``) and the hops of followed redirects are sent one by one afterwards.

        Errors: by default the first failure stops the batch (requests not yet started
        are not sent) and the exception of the first failed request, in input order, is
        raised. With ``return_exceptions=True`` every request is sent and a failed one
        has its exception (a ``RequestError``) in the list instead of a response.
        """
        from ._batch import get_many

        return get_many(
            self,
            urls,
            concurrency=concurrency,
            params=params,
            headers=headers,
            timeout=timeout,
            follow_redirects=follow_redirects,
            return_exceptions=return_exceptions,
        )

    if TYPE_CHECKING:

        @overload
        def map(
            self,
            requests: Iterable[BatchItem],
            *,
            concurrency: int = ...,
            timeout: TimeoutTypes | _Unset = ...,
            follow_redirects: bool | None = ...,
            return_exceptions: Literal[False] = ...,
        ) -> list[Response]: ...
        @overload
        def map(
            self,
            requests: Iterable[BatchItem],
            *,
            concurrency: int = ...,
            timeout: TimeoutTypes | _Unset = ...,
            follow_redirects: bool | None = ...,
            return_exceptions: bool,
        ) -> list[Response | RequestError]: ...

    def map(
        self,
        requests: Iterable[BatchItem],
        *,
        concurrency: int = 32,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        return_exceptions: bool = False,
    ) -> list[Any]:
        """Send every request with up to ``concurrency`` in flight; returns the responses
        in input order (see ``get_many`` for threads, cookies, auth and errors).

        Each item is a ``nodelay.Request(method, url, headers=..., content=...)`` or a
        tuple ``(method, url)`` / ``(method, url, {"params": ..., "headers": ...,
        "content": ..., "data": ..., "json": ...})`` with ``request()``'s meaning::

            client.map([("GET", "/a"), ("POST", "/b", {"json": {"x": 1}})])
        """
        from ._batch import map_requests

        return map_requests(
            self,
            requests,
            concurrency=concurrency,
            timeout=timeout,
            follow_redirects=follow_redirects,
            return_exceptions=return_exceptions,
        )


class Session(Client):
    """A ``Client`` that follows redirects by default, as ``requests.Session`` does.

    Everything else is ``Client``: same arguments, same thread safety.
    """

    def __init__(
        self,
        *,
        base_url: str = "",
        headers: HeaderTypes | None = None,
        params: ParamTypes | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool = True,
        max_redirects: int = DEFAULT_MAX_REDIRECTS,
        limits: Limits | None = None,
        verify: VerifyTypes = True,
        cert: CertTypes | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
        trust_env: bool = True,
    ) -> None:
        super().__init__(
            base_url=base_url,
            headers=headers,
            params=params,
            timeout=timeout,
            follow_redirects=follow_redirects,
            max_redirects=max_redirects,
            limits=limits,
            verify=verify,
            cert=cert,
            cookies=cookies,
            auth=auth,
            trust_env=trust_env,
        )
