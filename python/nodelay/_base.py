"""What ``Client`` and ``AsyncClient`` share: their settings and turning a call's
arguments into a request flow (``_flow.py``). Only the drivers (blocking or awaited
engine calls) live in the two client classes.
"""

from __future__ import annotations

from . import _core
from ._auth import build_auth
from ._config import (
    DEFAULT_MAX_REDIRECTS,
    UNSET,
    Limits,
    RateLimit,
    Timeout,
    _Unset,
    timeout_tuple,
)
from ._content import DefaultEncoding
from ._cookies import CookieJar
from ._engine_options import engine_options_for
from ._flow import Retrying, Send, request_flow
from ._headers import Headers, override_pairs
from ._models import Request
from ._prepare import (
    _BODY_METHODS,
    default_headers,
    encode_body,
    has_header,
    header_items,
    request_cookies,
)
from ._retry import build_retry
from ._urls import join_base, merge_params, normalize_base, param_pairs, with_query

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterable, Mapping
    from types import FunctionType
    from typing import Any, Literal, TypeAlias, Unpack

    from ._auth import Auth, AuthTypes
    from ._config import CertTypes, TimeoutTypes, VerifyTypes
    from ._cookies import CookieTypes
    from ._core import TimeoutTuple
    from ._headers import HeaderTypes
    from ._models import Response
    from ._options import BuildOptions
    from ._prepare import Pairs, RequestContent, RequestData, RequestHeaderTypes
    from ._proxy import ProxyTypes
    from ._retry import Retry, RetryTypes
    from ._upload import Body, RequestFiles

    EventHooks: TypeAlias = "Mapping[str, Iterable[Callable[..., Any]]]"
    from ._urls import ParamTypes

__all__ = ["BaseClient", "ClosedEngine", "request_body", "with_defaults"]


class ClosedEngine:
    """Replaces a client's engine once the client is closed (no per-request "closed?"
    check): every request raises ``RuntimeError("<client class> is closed")``."""

    __slots__ = ("_message",)

    def __init__(self, client_name: str) -> None:
        self._message = f"{client_name} is closed"

    def request(self, *args: object) -> Any:
        raise RuntimeError(self._message)

    def fetch(self, *args: object) -> Any:
        raise RuntimeError(self._message)

    def open(self, *args: object) -> Any:
        raise RuntimeError(self._message)

    def close(self) -> None:
        pass

    def idle_connections(self) -> int:
        return 0


class BaseClient:
    """What ``Client`` and ``AsyncClient`` share: construction, settings and requests
    built into flows (see ``Client`` for each argument). A subclass names its engine
    (``_new_engine``), what wraps a streamed response (``_stream_raw``), and drives flows
    (``_drive``: blocking or awaited)."""

    _engine: Any
    _new_engine: Callable[[_core.EngineOptions], Any]
    """``_core.Engine`` or ``_core.AsyncEngine`` (they take the same settings)."""
    _closed_engine: ClosedEngine
    _stream_raw: Callable[[Any], Any]
    """``StreamRaw`` or ``AsyncStreamRaw``: what a streamed response reads its body with."""
    _routed: bool = False
    """Whether the flow asks ``_transport_for`` which transport performs each exchange
    (``_flow._exchange``). A client with ``transport=`` or ``mounts=`` sets it on itself;
    the class default is what ``nodelay.testing`` flips to route every client through
    ``_intercept`` (``nodelay/testing/_seam.py``)."""
    _intercept: Callable[[BaseClient, Any], Any] | None = None
    """Unless None: what ``_transport_for`` hands the transport it chose (``None`` for the
    engine), with the client, for the transport to use instead. Set on the class by
    ``nodelay.testing`` (a class: stored on a class, it is not bound as a method)."""

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
        retries: RetryTypes = None,
        event_hooks: EventHooks | None = None,
        max_decoded_size: int | None = None,
        proxy: ProxyTypes | None = None,
        http2: bool | Literal["prior_knowledge"] = False,
        transport: Any = None,
        mounts: Mapping[str, Any] | None = None,
        default_encoding: str | Callable[[bytes], str | None] | None = None,
        rate_limit: RateLimit | None = None,
    ) -> None:
        # ``Response.encoding`` without a charset: set on each response by ``_flow``, so
        # a client with one leaves the hot path (``_plain``), which builds none.
        self._default_encoding = (
            None
            if default_encoding is None or default_encoding == "utf-8"
            else DefaultEncoding(default_encoding)
        )
        self._limits = Limits() if limits is None else limits
        self._headers = Headers._from_list(override_pairs(default_headers(), header_items(headers)))
        self._params: Pairs = param_pairs(params)
        self._base = normalize_base(base_url)
        self._mount_transports(transport, mounts)
        self._plain = not (self._params or self._base or self._routed or self._default_encoding)
        self._timeout = timeout if isinstance(timeout, Timeout) else Timeout(timeout)
        self._ttuple: TimeoutTuple = self._timeout.as_tuple()
        self.follow_redirects = follow_redirects
        self.max_redirects = max_redirects
        self.cookies = cookies  # the setter takes a dict (or None) too
        self._auth = build_auth(auth)
        self._auth_off = self._auth is None
        self._trust_env = trust_env
        self.retries = retries
        self.event_hooks = event_hooks  # the setter copies into {"request": [], "response": []}
        # (default header list, Content-Type, that list with the Content-Type added): the
        # last one built, reused while the defaults and the body kind stay the same.
        self._typed_pairs: tuple[Pairs, str, Pairs] | None = None
        engine_options = engine_options_for(
            self._limits,
            verify,
            cert,
            max_decoded_size,
            proxy,
            trust_env,
            http2,
            rate_limit=rate_limit,
        )
        if self._adopted is not None:
            self._engine = self._adopted._engine  # HTTPTransport: its engine, same hot path
        else:
            self._engine = self._new_engine(engine_options)

    def _mount_transports(self, transport: Any, mounts: Mapping[str, Any] | None) -> None:
        """``transport=`` and ``mounts=``. An ``HTTPTransport`` (``AsyncHTTPTransport``)
        without retries given as ``transport=`` is the engine itself: the client uses
        its engine and keeps its hot path. Any other transport, or any mount, routes
        every request through ``_transport_for`` (``_flow._exchange``)."""
        self._adopted: Any = None
        self._transport: Any = None
        self._mounts: list[tuple[Any, Any]] = []
        if transport is None and not mounts:
            return
        from ._transports import mount_table

        if (
            not mounts
            and type(getattr(transport, "_engine", None)) is self._new_engine
            and transport._retries == 0
        ):
            self._adopted = transport
            return
        self._transport = transport
        self._mounts = mount_table(mounts)
        self._routed = True

    def _transport_for(self, url: str) -> Any:
        """The transport that serves ``url``: the most specific matching mount's, else
        ``transport=``; ``None`` means the client's engine. While ``_intercept`` is set,
        the transport it answers for that choice."""
        chosen = self._transport
        for pattern, transport in self._mounts:
            if pattern.matches(url):
                chosen = self._transport if transport is None else transport
                break
        intercept = self._intercept
        return chosen if intercept is None else intercept(self, chosen)

    def _transports(self) -> list[Any]:
        """Every transport this client owns and closes with itself."""
        owned = [transport for _, transport in self._mounts if transport is not None]
        for transport in (self._transport, self._adopted):
            if transport is not None:
                owned.append(transport)
        return owned

    @property
    def is_closed(self) -> bool:
        return self._engine is self._closed_engine

    def _close_engine(self) -> None:
        """Close every pooled connection; later requests raise ``RuntimeError``."""
        engine = self._engine
        self._engine = self._closed_engine
        engine.close()

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
        self._plain = not (self._params or self._base or self._routed or self._default_encoding)

    @property
    def base_url(self) -> str:
        """The base URL, normalised to end with ``/`` (or ``""``)."""
        return self._base

    @base_url.setter
    def base_url(self, value: str) -> None:
        self._base = normalize_base(value)
        self._plain = not (self._params or self._base or self._routed or self._default_encoding)

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
        self._auth_off = self._auth is None

    @property
    def trust_env(self) -> bool:
        """Whether the environment configured this client when it was created: proxies
        (``https_proxy``, ``no_proxy``...) and the CA bundle (``SSL_CERT_FILE``,
        ``SSL_CERT_DIR``). As in httpx, ``.netrc`` is not read: pass
        ``auth=NetRCAuth()``."""
        return self._trust_env

    @property
    def retries(self) -> Retry | None:
        """The retry policy (``None``: no retries); assign an int (``Retry(total=n)``) or a
        ``Retry``."""
        return self._retry

    @retries.setter
    def retries(self, value: RetryTypes) -> None:
        self._retry = build_retry(value)

    @property
    def event_hooks(self) -> dict[str, list[Callable[..., Any]]]:
        """``{"request": [...], "response": [...]}`` (httpx): each request hook is called
        with the ``Request`` before it is sent, each response hook with the ``Response``
        once its head arrived (a hook may call ``raise_for_status()``; what it raises
        propagates). Redirect hops and retries call them too. Mutable in place."""
        return self._event_hooks

    @event_hooks.setter
    def event_hooks(self, value: EventHooks | None) -> None:
        hooks: dict[str, list[Callable[..., Any]]] = {"request": [], "response": []}
        for name, callables in (value or {}).items():
            if name not in hooks:
                raise ValueError(f"unknown event hook {name!r}: use 'request' or 'response'")
            hooks[name] = list(callables)
        self._event_hooks = hooks

    # -- building a request -----------------------------------------------------------------

    def build_request(self, method: str, url: str, **kwargs: Unpack[BuildOptions]) -> Request:
        """The ``Request`` this client would send (base URL, params, default headers and
        the encoded body merged in), without sending it: look at it, change its
        ``headers`` or ``content``, then ``client.send(request)`` (httpx's API).
        Keywords: ``params``, ``headers``, ``content``, ``data``, ``files``, ``json``,
        ``cookies``, as for ``request``.

        The jar's cookies are added when it is sent; ``cookies=`` are merged over them.
        A streamed body (a file, an iterable) is read once, by ``send``."""
        unknown = kwargs.keys() - _BUILD_ARGS
        if unknown:
            raise TypeError(f"build_request() got an unexpected keyword argument {min(unknown)!r}")
        method, url, pairs, body = self._build_request(
            method,
            url,
            kwargs.get("params"),
            kwargs.get("headers"),
            kwargs.get("content"),
            kwargs.get("data"),
            kwargs.get("json"),
            kwargs.get("files"),
        )
        return self._built(method, url, pairs, body, kwargs.get("cookies"))

    def _built(
        self, method: str, url: str, pairs: Pairs, body: object, cookies: CookieTypes | None
    ) -> Request:
        request = Request._make(method, url, pairs, body)
        if type(body) is not bytes:
            request._body = body  # streamed: ``content`` raises RequestNotRead until read()
        request._cookies = None if cookies is None else request_cookies(cookies, url)
        return request

    def _send_flow(
        self,
        request: Request,
        timeout: TimeoutTypes | _Unset,
        follow_redirects: bool | None,
        auth: AuthTypes | None,
        body: Body | None,
    ) -> tuple[Send | Generator[Send, Response, Response], TimeoutTuple]:
        """The flow of ``send(request)``: its headers and body as they are now."""
        pairs = request._headers._list if request._headers is not None else request._pairs
        return self._flow_for(
            request.method.upper(),
            request.url,
            pairs,
            body,
            request._cookies,
            timeout,
            follow_redirects,
            None,
            auth,
        )

    def _build_request(
        self,
        method: str,
        url: str,
        params: ParamTypes | None,
        headers: RequestHeaderTypes | None,
        content: RequestContent | None,
        data: RequestData | None,
        json: Any,
        files: RequestFiles | None = None,
    ) -> tuple[str, str, Pairs, Body | None]:
        """``(method, url, headers, body)`` as the client sends them: base URL, params,
        header overrides and the encoded body (no I/O)."""
        method = method.upper()
        if type(url) is not str:
            url = str(url)
        if not self._plain:
            url = join_base(self._base, url)
        url = with_query(url, merge_params(self._params, param_pairs(params)))
        pairs = override_pairs(self._headers._list, header_items(headers))
        body, content_type = encode_body(method, content, data, json, files)
        if content_type is not None:
            pairs = self._with_content_type(pairs, content_type)
        return method, url, pairs, body

    def _with_content_type(self, pairs: Pairs, content_type: str) -> Pairs:
        """``pairs`` plus ``Content-Type: content_type`` unless it has one. Header lists
        are never mutated in place, so the answer for the same list object is reused."""
        typed = self._typed_pairs
        if typed is not None and typed[0] is pairs and typed[1] == content_type:
            return typed[2]
        out = pairs
        if not has_header(pairs, "content-type"):
            out = [*pairs, ("Content-Type", content_type)]
        self._typed_pairs = (pairs, content_type, out)
        return out

    def _build_flow(
        self,
        method: str,
        url: str,
        *,
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        files: RequestFiles | None = None,
        json: Any = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        allow_redirects: bool | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
    ) -> tuple[Send | Generator[Send, Response, Response], TimeoutTuple]:
        """A request's arguments (those of ``request`` but ``stream``) merged with the
        client's defaults (no I/O): a flow, or just its one ``Send`` when there is nothing
        to follow (no auth, no redirects): the common case skips the generator."""
        method, url, pairs, body = self._build_request(
            method, url, params, headers, content, data, json, files
        )
        extra = None if cookies is None else request_cookies(cookies, url)
        return self._flow_for(
            method, url, pairs, body, extra, timeout, follow_redirects, allow_redirects, auth
        )

    def _flow_for(
        self,
        method: str,
        url: str,
        pairs: Pairs,
        body: Body | None,
        extra: dict[str, str] | None,
        timeout: TimeoutTypes | _Unset,
        follow_redirects: bool | None,
        allow_redirects: bool | None,
        auth: AuthTypes | None,
    ) -> tuple[Send | Generator[Send, Response, Response], TimeoutTuple]:
        """The flow of a built request (``_build_flow``, ``send``)."""
        ttuple = self._ttuple if timeout is UNSET else timeout_tuple(timeout)
        if follow_redirects is None:
            follow_redirects = self.follow_redirects if allow_redirects is None else allow_redirects
        auth_obj = self._auth if auth is None else build_auth(auth)
        retry = self._retry
        if auth_obj is None and not follow_redirects and retry is None:
            return Send(method, url, pairs, body, extra), ttuple
        max_redirects = self.max_redirects if follow_redirects else None
        retrying = None if retry is None else Retrying(retry, ttuple[4])
        flow = request_flow(method, url, pairs, body, extra, auth_obj, max_redirects, retrying)
        return flow, ttuple


_BUILD_ARGS = frozenset(("params", "headers", "content", "data", "files", "json", "cookies"))
"""The keyword arguments of ``build_request``."""


def request_body(request: Request) -> object:
    """The body ``send(request)`` sends: the streamed body ``build_request`` kept, else
    ``content`` (none at all for an empty GET-like request, ``Content-Length: 0`` for an
    empty POST, as the request methods do)."""
    if request._body is not None:
        return request._body
    content = request.content
    return content if content or request.method.upper() in _BODY_METHODS else None


def with_defaults(init: Callable[..., None], **defaults: object) -> Callable[..., None]:
    """``init`` (one ``__init__`` definition) with other keyword defaults: ``Session``'s
    constructor is ``Client``'s with ``follow_redirects=True``, and its signature says so."""
    function: FunctionType = init  # type: ignore[assignment]  # a def's function object
    copy = type(function)(
        function.__code__, function.__globals__, function.__name__, None, function.__closure__
    )
    copy.__kwdefaults__ = {**(function.__kwdefaults__ or {}), **defaults}
    copy.__doc__ = function.__doc__
    copy.__annotations__ = function.__annotations__
    return copy
