"""nodelay's engine under httpx and httpx2: one implementation, bound to a library by
``nodelay.ext.httpx`` and ``nodelay.ext.httpx2`` (their transport APIs are the same).

Where the engine sits: ``httpx.HTTPTransport.handle_request`` turns an ``httpx.Request``
into an ``httpcore.Request``, hands it to ``self._pool`` and wraps the answer in an
``httpx.Response``, mapping httpcore's exceptions to httpx's. ``Transport`` subclasses the
library's ``HTTPTransport`` and puts the engine in place of the httpcore pool
(``EnginePool``). Its ``handle_request`` does what the library's does without the
``httpcore.Request`` in between (the pool reads the library's request itself), as long as
the library's method is the one the library shipped; once a tool has patched it on the
class (pytest-httpx, vcrpy, OpenTelemetry's instrumentor), every request goes through the
patched method, which ends in the library's own ``handle_request`` over the engine pool.
So those tools see every request sent through a nodelay transport, as they see the
library's own.

The pool speaks httpcore's API as well: it takes an ``httpcore.Request`` (the library's
request stream as its content) and answers with what ``HTTPTransport`` reads of an
``httpcore.Response`` (``_PoolResponse``), its content read from the engine as the caller
iterates it, content codings kept (the library decodes them).
Failures are raised as httpcore's exception classes, which the library's
``HTTPTransport`` maps to its own (the direct path maps them with the library's own
``map_httpcore_exceptions``, so both paths raise the same classes).
"""

from __future__ import annotations

import importlib
import sys
import types

from .._exceptions import (
    ConnectError,
    ConnectTimeout,
    DecodingError,
    InvalidURL,
    LocalProtocolError,
    NetworkError,
    PoolTimeout,
    ProtocolError,
    ProxyError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    RequestError,
    StreamConsumed,
    TimeoutException,
    UnsupportedProtocol,
    WriteError,
    WriteTimeout,
)
from . import _engine

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from types import ModuleType
    from typing import Any, ClassVar, NoReturn, TypeAlias

    from .. import _core
    from .._core import TimeoutTuple

    _Parts: TypeAlias = tuple[str, str, list[tuple[str, str]], TimeoutTuple]
    """A request as the engine takes it: method, absolute URL, header pairs, timeouts."""

__all__ = [
    "AsyncClientMixin",
    "AsyncEnginePool",
    "AsyncTransportMixin",
    "Binding",
    "ClientMixin",
    "EnginePool",
    "TransportMixin",
]


_FAILURES = (*_engine.ENGINE_ERRORS, InvalidURL, StreamConsumed)
"""What an engine call raises that the bridge maps (``Binding.errors``)."""


class Binding:
    """What one library contributes: its module (``httpx`` or ``httpx2``), its httpcore
    (``httpcore`` or ``httpcore2``) and the table from nodelay's exception classes to the
    classes raised in their place (httpcore's where the library maps them, the library's
    own where it has no httpcore twin)."""

    def __init__(self, library: ModuleType, httpcore: ModuleType) -> None:
        self.library = library
        self.httpcore = httpcore
        self.errors: dict[type[BaseException], Any] = {
            ConnectTimeout: httpcore.ConnectTimeout,
            ReadTimeout: httpcore.ReadTimeout,
            WriteTimeout: httpcore.WriteTimeout,
            PoolTimeout: httpcore.PoolTimeout,
            TimeoutException: httpcore.TimeoutException,
            ConnectError: httpcore.ConnectError,  # TLSError too: a failed handshake
            ReadError: httpcore.ReadError,
            WriteError: httpcore.WriteError,
            NetworkError: httpcore.NetworkError,
            ProxyError: httpcore.ProxyError,
            UnsupportedProtocol: httpcore.UnsupportedProtocol,
            LocalProtocolError: httpcore.LocalProtocolError,
            RemoteProtocolError: httpcore.RemoteProtocolError,
            ProtocolError: httpcore.ProtocolError,
            # A URL the library accepted that the engine cannot use (a port beyond
            # 65535): httpcore fails to connect to it, and so does this.
            InvalidURL: httpcore.ConnectError,
            DecodingError: library.DecodingError,
            StreamConsumed: library.StreamConsumed,
            RequestError: library.TransportError,
        }
        # What the direct path of ``handle_request`` / ``handle_async_request`` uses of
        # the library: the pieces its own method wraps the pool's answer in.
        default = importlib.import_module(f"{library.__name__}._transports.default")
        self.map_httpcore_exceptions: Any = default.map_httpcore_exceptions
        self.pieces: Any = type("Pieces", (_DirectPieces, library.SyncByteStream), {})
        self.async_pieces: Any = type(
            "AsyncPieces", (_AsyncDirectPieces, library.AsyncByteStream), {}
        )
        self.headers = _headers_builder(library.Headers)
        self.transport_class: type = library.HTTPTransport
        self.async_transport_class: type = library.AsyncHTTPTransport
        self.shipped_handle_request = _shipped(library.HTTPTransport, "handle_request", default)
        self.shipped_handle_async_request = _shipped(
            library.AsyncHTTPTransport, "handle_async_request", default
        )

    def error(self, error: BaseException) -> BaseException:
        """The exception to raise for an engine failure (its message kept)."""
        cls = _engine.mapped_error(error, self.errors)
        if getattr(error, "proxy_unreachable", False):
            # httpcore fails to connect to a proxy it cannot reach (ConnectError); its
            # ProxyError is for a proxy that answered and refused or broke the tunnel.
            cls = self.httpcore.ConnectError
        message = getattr(error, "message", None) or str(error)
        if issubclass(cls, self.library.StreamConsumed):
            return cls()  # type: ignore[no-any-return]  # httpx's takes no message
        return cls(message)  # type: ignore[no-any-return]

    def engine_options(
        self,
        verify: Any,
        cert: Any,
        trust_env: bool,
        http1: bool,
        http2: bool,
        limits: Any,
        proxy: Any,
        uds: str | None,
        local_address: str | None,
    ) -> _core.EngineOptions:
        """The engine settings for ``HTTPTransport``'s arguments."""
        limit_values = {}
        if limits is not None:
            limit_values = {
                "max_connections": limits.max_connections,
                "max_keepalive": limits.max_keepalive_connections,
                "keepalive_expiry": limits.keepalive_expiry,
            }
        return _engine.engine_options(
            verify=verify,
            cert=cert,
            trust_env=trust_env,
            http1=http1,
            http2=http2,
            proxy=self.proxy_url(proxy),
            uds=uds,
            local_address=local_address,
            **limit_values,
        )

    def proxy_url(self, proxy: Any) -> str | None:
        """``proxy=`` (a URL string, a ``URL`` or a ``Proxy``) as the engine's proxy URL,
        credentials put back in it (the engine sends them as ``Proxy-Authorization``)."""
        if proxy is None:
            return None
        if not isinstance(proxy, self.library.Proxy):
            proxy = self.library.Proxy(url=proxy)
        if proxy.headers:
            raise ValueError(
                "nodelay's transport does not send Proxy(headers=...) to the proxy; "
                "credentials in the proxy URL or Proxy(auth=...) are sent"
            )
        if proxy.ssl_context is not None:
            raise ValueError(
                "nodelay's transport does not take Proxy(ssl_context=...): TLS to an https "
                "proxy uses the transport's verify= and cert="
            )
        url = proxy.url
        if proxy.auth is not None:
            url = url.copy_with(username=proxy.auth[0], password=proxy.auth[1])
        return str(url)


def _shipped(cls: type, name: str, module: ModuleType) -> Any:
    """``cls.name`` as the library shipped it (a plain function defined in ``module``),
    or ``None`` when a tool had already replaced it when nodelay was imported (the
    transports then always go through the replacement)."""
    method = cls.__dict__.get(name)
    if isinstance(method, types.FunctionType) and method.__code__.co_filename == module.__file__:
        return method
    return None


def _headers_builder(headers_class: Any) -> Any:
    """A function making the library's ``Headers`` from the engine's header fields (bytes
    pairs, in their final form), without the per-field checks of the constructor: the
    ``(name, lowercased name, value)`` list the constructor would make, set in place.
    Used only when the class keeps that list where the constructor puts it (checked
    once here); otherwise the pairs are handed to the constructor."""
    sample = [(b"Content-Type", b"text/plain")]
    made = headers_class(sample)
    if getattr(made, "_list", None) != [(b"Content-Type", b"content-type", b"text/plain")]:
        return headers_class
    if getattr(made, "_encoding", False) is not None:
        return headers_class
    new = headers_class.__new__

    def build(raw: list[tuple[bytes, bytes]]) -> Any:
        headers = new(headers_class)
        headers._list = [(name, name.lower(), value) for name, value in raw]
        headers._encoding = None
        return headers

    return build


def _target_url(scheme: bytes, host: bytes, port: int | None, target: bytes) -> str:
    """A URL's parts (as ``httpcore.URL`` has them) as the absolute URL string the
    engine takes."""
    if b":" in host:  # an IPv6 literal: httpcore keeps it without brackets
        host = b"[" + host + b"]"
    port_part = b"" if port is None else b":%d" % port
    return (scheme + b"://" + host + port_part + target).decode("ascii")


def _body(request: Any, byte_stream: Any) -> _engine.Body:
    """The body of a request for the engine: bytes given up front (the library's
    ``ByteStream``, which yields them once) as they are, ``None`` when empty (no body at
    all, as httpcore sends it); any other stream as an upload the engine pulls."""
    stream = request.stream
    if isinstance(stream, byte_stream):
        return b"".join(stream) or None
    return _engine.stream_body(stream)


_HTTP_VERSIONS = {"HTTP/1.0": b"HTTP/1.0", "HTTP/1.1": b"HTTP/1.1", "HTTP/2": b"HTTP/2"}
"""``RawStream.version`` → httpcore's ``http_version`` extension."""


def _version(stream: Any) -> bytes:
    """The response's protocol version as httpcore spells it (``b"HTTP/1.1"``)."""
    version: str = stream.version
    return _HTTP_VERSIONS.get(version) or version.encode("ascii")


def _extensions(stream: Any) -> dict[str, Any]:
    """``response.extensions`` as httpcore fills them."""
    return {
        "http_version": _version(stream),
        "reason_phrase": stream.reason.encode("latin-1"),
    }


def _trace_prefix(stream: Any) -> str:
    """httpcore's prefix of trace events for the response's protocol."""
    return "http2" if stream.version == "HTTP/2" else "http11"


class _Body:
    """What both response bodies (``_Pieces``, ``_AsyncPieces``) share: the engine stream,
    the request's ``trace`` extension, and how a failure is raised."""

    __slots__ = ("_binding", "_request", "_stream", "_trace")

    def __init__(self, stream: Any, binding: Binding, request: Any) -> None:
        self._stream = stream
        self._binding = binding
        self._request = request
        self._trace = request.extensions.get("trace")

    def _raise(self, mapped: BaseException, error: BaseException) -> NoReturn:
        """Raise httpcore's exception for an engine failure (``mapped``)."""
        raise mapped from error


def _raise_as_library(binding: Binding, mapped: BaseException, error: BaseException) -> NoReturn:
    """Raise the library's exception for httpcore's (``mapped``), by the library's own
    rule: what its ``ResponseStream`` raises when httpcore's stream raises ``mapped``."""
    with binding.map_httpcore_exceptions():
        raise mapped from error


class _Pieces(_Body):
    """A response body read from the engine as the library iterates it (httpcore's
    response stream shape: iterable, with ``close()``). With a ``trace`` extension, the
    body's reading and closing are reported as httpcore names them."""

    __slots__ = ()
    _stream: _core.RawStream

    def _event(self, name: str, info: dict[str, Any]) -> None:
        if self._trace is not None:
            self._trace(f"{_trace_prefix(self._stream)}.{name}", info)

    def __iter__(self) -> Iterator[bytes]:
        traced = self._trace is not None  # the events' dicts are made only for a tracer
        if traced:
            self._event("receive_response_body.started", {"request": self._request})
        try:
            yield from _engine.read_pieces(self._stream)
        except _FAILURES as error:
            mapped = self._binding.error(error)
            if traced:
                self._event("receive_response_body.failed", {"exception": mapped})
            self._raise(mapped, error)
        if traced:
            self._event("receive_response_body.complete", {"return_value": None})

    def close(self) -> None:
        if self._trace is None:
            self._stream.close()
            return
        self._event("response_closed.started", {})
        self._stream.close()
        self._event("response_closed.complete", {"return_value": None})


class _AsyncPieces(_Body):
    """``_Pieces`` for the asyncio engine (``__aiter__`` and ``aclose()``; an async
    ``trace`` callback is awaited, as httpcore does)."""

    __slots__ = ()
    _stream: _core.AsyncRawStream

    async def _event(self, name: str, info: dict[str, Any]) -> None:
        if self._trace is not None:
            await self._trace(f"{_trace_prefix(self._stream)}.{name}", info)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        traced = self._trace is not None  # the events' dicts are made only for a tracer
        if traced:
            await self._event("receive_response_body.started", {"request": self._request})
        stream = self._stream
        try:
            # ``_engine.read_pieces``' loop, written out here: one async generator less
            # per response (each registers with the event loop's generator hooks).
            while piece := await stream.read(_engine.READ_MAX_BYTES, _engine.READ_MIN_BYTES, False):
                yield piece
                if stream.is_closed:  # the last piece ended the body: no read left
                    break
        except _FAILURES as error:
            mapped = self._binding.error(error)
            if traced:
                await self._event("receive_response_body.failed", {"exception": mapped})
            self._raise(mapped, error)
        finally:
            stream.close()
        if traced:
            await self._event("receive_response_body.complete", {"return_value": None})

    async def aclose(self) -> None:
        if self._trace is None:
            self._stream.close()
            return
        await self._event("response_closed.started", {})
        self._stream.close()
        await self._event("response_closed.complete", {"return_value": None})


class _DirectPieces(_Pieces):
    """The response stream of the direct path (``TransportMixin.handle_request``): raises
    the library's exceptions, mapped from httpcore's by the library's own rule, as the
    library's ``ResponseStream`` over ``_Pieces`` would. ``Binding`` makes it a subclass of
    the library's ``SyncByteStream`` (``Response`` checks that)."""

    __slots__ = ()

    def _raise(self, mapped: BaseException, error: BaseException) -> NoReturn:
        _raise_as_library(self._binding, mapped, error)


class _AsyncDirectPieces(_AsyncPieces):
    """``_DirectPieces`` for the asyncio engine (an ``AsyncByteStream`` of the library)."""

    __slots__ = ()

    def _raise(self, mapped: BaseException, error: BaseException) -> NoReturn:
        _raise_as_library(self._binding, mapped, error)


def _head_info(stream: Any) -> dict[str, Any]:
    """The ``receive_response_headers.complete`` trace event's info (httpcore's shape)."""
    head = (_version(stream), stream.status, stream.reason.encode("latin-1"))
    return {"return_value": (*head, stream.raw_headers())}


class _PoolResponse:
    """What a pool answers ``HTTPTransport.handle_request`` with: the four attributes of an
    ``httpcore.Response`` it reads (``status``, ``headers`` as bytes pairs, ``stream``,
    ``extensions``), without httpcore's checks of values the engine already gives in
    their final form."""

    __slots__ = ("extensions", "headers", "status", "stream")

    def __init__(
        self, status: int, headers: list[tuple[bytes, bytes]], stream: Any, extensions: Any
    ) -> None:
        self.status = status
        self.headers = headers
        self.stream = stream
        self.extensions = extensions


def _core_parts(request: Any) -> _Parts:
    """The parts of an ``httpcore.Request``."""
    url = request.url
    return (
        request.method.decode("ascii"),
        _target_url(url.scheme, url.host, url.port, url.target),
        _engine.header_pairs(request.headers),
        _engine.extension_timeouts(request.extensions.get("timeout")),
    )


def _library_parts(request: Any) -> _Parts:
    """The parts of the library's ``Request``: the values its ``handle_request`` puts in
    an ``httpcore.Request`` (the URL's scheme, host, port and target; no userinfo, no
    fragment)."""
    url = request.url
    return (
        request.method,
        _target_url(url.raw_scheme, url.raw_host, url.port, url.raw_path),
        _engine.header_pairs(request.headers.raw),
        _engine.extension_timeouts(request.extensions.get("timeout")),
    )


def _detour(library_class: type, name: str, shipped: Any, request: Any) -> Any:
    """``None`` when a transport may serve ``request`` by the direct path, else the
    library's method ``name`` to call instead: a tool patched it on the library's class,
    or the request has what httpcore refuses (a method that is not ASCII), so the
    library's own method gives the library's own answer."""
    library_method = getattr(library_class, name)
    if library_method is shipped and request.method.isascii():
        return None
    return library_method


def _import_httpcore(binding: Binding) -> None:
    """Import the library's httpcore if it is not loaded (it may have been unloaded): the
    library's ``handle_request`` imports it on each request, so after a request it is
    always loaded, whatever the transport (httpx's own suite checks that)."""
    if binding.httpcore.__name__ not in sys.modules:
        importlib.import_module(binding.httpcore.__name__)


def _library_response(binding: Binding, stream: Any, content: Any) -> Any:
    """The library's ``Response`` for an engine stream, as its ``handle_request`` makes
    it from httpcore's answer (``content``: the body, raising the library's exceptions)."""
    return binding.library.Response(
        status_code=stream.status,
        headers=binding.headers(stream.raw_headers()),
        stream=content,
        extensions=_extensions(stream),
    )


class _PoolBase:
    """What both pools share: the engine, connection retries, the binding."""

    def __init__(self, engine: Any, retries: int, binding: Binding) -> None:
        self._engine = engine
        self._retries = retries
        self._binding = binding
        self._byte_stream: Any = binding.library.ByteStream

    def _response(self, stream: Any, content: Any) -> _PoolResponse:
        return _PoolResponse(stream.status, stream.raw_headers(), content, _extensions(stream))


class EnginePool(_PoolBase):
    """The engine in the place of ``HTTPTransport._pool`` (httpcore's ``ConnectionPool``)."""

    def open(self, parts: _Parts, request: Any) -> _core.RawStream:
        """Send ``request`` (``parts`` read from it; its ``stream`` is the library's) and
        return once the response head arrived; the engine's exceptions pass as they are."""
        method, url, headers, timeout = parts
        body = _body(request, self._byte_stream)
        stream = _engine.open_stream(
            self._engine, method, url, headers, body, timeout, self._retries
        )
        trace = request.extensions.get("trace")
        if trace is not None:
            trace(f"{_trace_prefix(stream)}.receive_response_headers.complete", _head_info(stream))
        return stream

    def handle_request(self, request: Any) -> Any:
        try:
            stream = self.open(_core_parts(request), request)
        except _FAILURES as error:
            raise self._binding.error(error) from error
        return self._response(stream, _Pieces(stream, self._binding, request))

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> EnginePool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncEnginePool(_PoolBase):
    """The asyncio engine in the place of ``AsyncHTTPTransport._pool``."""

    async def open(self, parts: _Parts, request: Any) -> _core.AsyncRawStream:
        """``EnginePool.open`` on the asyncio engine (an async trace callback is awaited,
        an async iterable body streamed)."""
        method, url, headers, timeout = parts
        upload = None
        body: _engine.Body
        if isinstance(request.stream, self._byte_stream):
            body = _body(request, self._byte_stream)
        else:
            import asyncio

            upload = _engine.AsyncBody(request.stream, asyncio.get_running_loop())
            body = upload.upload
        try:
            stream = await _engine.aopen_stream(
                self._engine, method, url, headers, body, timeout, self._retries
            )
        finally:
            if upload is not None:
                upload.close()
        trace = request.extensions.get("trace")
        if trace is not None:
            name = f"{_trace_prefix(stream)}.receive_response_headers.complete"
            await trace(name, _head_info(stream))
        return stream

    async def handle_async_request(self, request: Any) -> Any:
        try:
            stream = await self.open(_core_parts(request), request)
        except _FAILURES as error:
            raise self._binding.error(error) from error
        return self._response(stream, _AsyncPieces(stream, self._binding, request))

    async def aclose(self) -> None:
        self._engine.close()

    async def __aenter__(self) -> AsyncEnginePool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class TransportMixin:
    """``Transport``: the library's ``HTTPTransport`` with the engine as its pool. Its
    ``close`` and context manager are the library's own; ``handle_request`` is the
    library's without the ``httpcore.Request`` in between (unless ``_detour`` says otherwise).
    ``AsyncTransportMixin`` is the same with the asyncio engine (``_pool_class``)."""

    _binding: ClassVar[Binding]
    _pool: Any

    def handle_request(self, request: Any) -> Any:
        binding = self._binding
        library_method = _detour(
            binding.transport_class, "handle_request", binding.shipped_handle_request, request
        )
        if library_method is not None:
            return library_method(self, request)
        assert isinstance(request.stream, binding.library.SyncByteStream)  # the library's check
        _import_httpcore(binding)
        try:
            stream = self._pool.open(_library_parts(request), request)
        except _FAILURES as error:
            with binding.map_httpcore_exceptions():
                raise binding.error(error) from error
        content = binding.pieces(stream, binding, request)
        return _library_response(binding, stream, content)

    @staticmethod
    def _pool_class(options: _core.EngineOptions, retries: int, binding: Binding) -> Any:
        from .. import _core

        return EnginePool(_core.Engine(options), retries, binding)

    def __init__(
        self,
        verify: Any = True,
        cert: Any = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: Any = None,
        proxy: Any = None,
        uds: str | None = None,
        local_address: str | None = None,
        retries: int = 0,
        socket_options: Any = None,
    ) -> None:
        if socket_options:
            raise ValueError(
                "nodelay's transport does not take socket_options "
                "(its sockets always have TCP_NODELAY; uds= and local_address= are supported)"
            )
        options = self._binding.engine_options(
            verify, cert, trust_env, http1, http2, limits, proxy, uds, local_address
        )
        self._pool = self._pool_class(options, int(retries), self._binding)


class AsyncTransportMixin(TransportMixin):
    """``AsyncTransport``: the library's ``AsyncHTTPTransport`` with the asyncio engine as
    its pool (``handle_async_request``, ``aclose`` and the async context manager are the
    library's own)."""

    async def handle_async_request(self, request: Any) -> Any:
        binding = self._binding
        library_method = _detour(
            binding.async_transport_class,
            "handle_async_request",
            binding.shipped_handle_async_request,
            request,
        )
        if library_method is not None:
            return await library_method(self, request)
        assert isinstance(request.stream, binding.library.AsyncByteStream)  # the library's check
        _import_httpcore(binding)
        try:
            stream = await self._pool.open(_library_parts(request), request)
        except _FAILURES as error:
            with binding.map_httpcore_exceptions():
                raise binding.error(error) from error
        content = binding.async_pieces(stream, binding, request)
        return _library_response(binding, stream, content)

    @staticmethod
    def _pool_class(options: _core.EngineOptions, retries: int, binding: Binding) -> Any:
        from .. import _core

        return AsyncEnginePool(_core.AsyncEngine(options), retries, binding)


class ClientMixin:
    """``Client``: the library's ``Client``, every transport it creates nodelay's (the
    default one and those for proxies); ``transport=`` and ``mounts=`` given by the caller
    are used as given."""

    _transport_class: ClassVar[Any]

    def _init_transport(
        self,
        verify: Any = True,
        cert: Any = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: Any = None,
        transport: Any = None,
    ) -> Any:
        if transport is not None:
            return transport
        return self._transport_class(
            verify=verify,
            cert=cert,
            trust_env=trust_env,
            http1=http1,
            http2=http2,
            limits=limits,
        )

    def _init_proxy_transport(
        self,
        proxy: Any,
        verify: Any = True,
        cert: Any = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: Any = None,
    ) -> Any:
        return self._transport_class(
            verify=verify,
            cert=cert,
            trust_env=trust_env,
            http1=http1,
            http2=http2,
            limits=limits,
            proxy=proxy,
        )


AsyncClientMixin = ClientMixin
"""``AsyncClient`` creates its transports with the same two methods (``_transport_class``
names ``AsyncTransport`` there)."""
