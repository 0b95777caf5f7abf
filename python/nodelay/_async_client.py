"""``AsyncClient``: ``Client``'s settings and request flow (``_base.py``, ``_flow.py``)
driven with ``await`` over the Rust engine's async driver.

The engine runs each request on the process's tokio runtime and completes an asyncio
future on the running loop (default asyncio or uvloop); nothing here blocks. Only the
driver (``_run``/``_send``) differs from ``Client``.
"""

from __future__ import annotations

import time
from contextlib import asynccontextmanager

from . import _core
from ._base import BaseClient, engine_options_for, request_body
from ._client import _BODY_ARGS, _NO_BODY_ARGS
from ._config import DEFAULT_MAX_REDIRECTS, UNSET, _Unset
from ._exceptions import RequestError
from ._flow import REDIRECT_STATUSES, Send, attempt_timeouts, flow_deadline, redirect_flow
from ._models import Request, Response, _response_from_raw
from ._prepare import with_cookies
from ._streaming import AsyncStreamRaw

TYPE_CHECKING = False
if TYPE_CHECKING:
    from asyncio import AbstractEventLoop, Task
    from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Generator, Mapping
    from types import TracebackType
    from typing import Any, Literal, Self, TypeAlias, TypeGuard, Unpack

    from ._auth import AuthTypes
    from ._base import EventHooks
    from ._config import CertTypes, Limits, TimeoutTypes, VerifyTypes
    from ._cookies import CookieTypes
    from ._core import TimeoutTuple
    from ._models import HeaderTypes
    from ._options import AsyncBodyOptions, AsyncBuildOptions, RequestOptions
    from ._prepare import RequestContent, RequestData, RequestHeaderTypes
    from ._proxy import ProxyTypes
    from ._retry import RetryTypes
    from ._upload import RequestFiles
    from ._urls import ParamTypes

    AsyncRequestContent: TypeAlias = "RequestContent | AsyncIterable[bytes]"

__all__ = ["AsyncClient"]


def _check_keywords(name: str, kwargs: Mapping[str, object], allowed: frozenset[str]) -> None:
    """``name() got an unexpected keyword argument`` for a keyword ``name`` does not take
    (the methods forward ``**kwargs`` to ``request``, which would name itself)."""
    if not kwargs.keys() <= allowed:
        unknown = min(kwargs.keys() - allowed)
        raise TypeError(f"{name}() got an unexpected keyword argument {unknown!r}")


class _ClosedAsyncEngine:
    """Replaces the engine once the client is closed (no per-request "closed?" check)."""

    __slots__ = ()

    def request(self, *args: object) -> Awaitable[_core.RawResponse]:
        raise RuntimeError("AsyncClient is closed")

    def open(self, *args: object) -> Awaitable[_core.AsyncRawStream]:
        raise RuntimeError("AsyncClient is closed")

    def close(self) -> None:
        pass

    def idle_connections(self) -> int:
        return 0


_CLOSED_ENGINE = _ClosedAsyncEngine()


class _AsyncPieces:
    """An async iterable of bytes as the (one-shot) iterator a ``_core.Upload`` pulls.

    The engine pulls upload pieces on its own threads (never the event loop's); each
    ``next()`` here runs the iterable's ``__anext__`` as a task on the loop the request was
    made on and waits for it. ``close()`` (on the loop, once the request is over) cancels a
    pending ``__anext__``, which releases a waiting engine thread at once, and closes an
    async generator that was not run to its end (as ``async for`` left early would).
    """

    __slots__ = ("_closed", "_exhausted", "_iterator", "_loop", "_task")

    def __init__(self, iterable: AsyncIterable[Any], loop: AbstractEventLoop) -> None:
        self._iterator = iterable.__aiter__()
        self._loop = loop
        self._task: Task[Any] | None = None
        self._closed = False
        self._exhausted = False

    def __iter__(self) -> _AsyncPieces:
        return self

    def __next__(self) -> Any:
        import threading

        finished = threading.Event()
        outcome: list[Task[Any]] = []

        def start() -> None:  # on the loop's thread
            if self._closed:
                finished.set()
                return
            task = self._task = self._loop.create_task(_next_piece(self._iterator))
            task.add_done_callback(done)

        def done(task: Task[Any]) -> None:
            outcome.append(task)
            finished.set()

        self._loop.call_soon_threadsafe(start)
        finished.wait()
        if not outcome or outcome[0].cancelled():
            raise RuntimeError("the request that was sending this body is over")
        piece = outcome[0].result()
        if piece is _END:
            self._exhausted = True
            raise StopIteration
        return piece

    def close(self) -> None:
        self._closed = True
        task = self._task
        if task is not None and not task.done():
            task.cancel()
        elif not self._exhausted and hasattr(self._iterator, "aclose"):
            self._loop.create_task(self._iterator.aclose())


_END = object()


async def _next_piece(iterator: AsyncIterator[Any]) -> Any:
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return _END


def _awaitable(value: object) -> TypeGuard[Awaitable[object]]:
    """What an async hook returns (``inspect.isawaitable`` without importing ``inspect``)."""
    return hasattr(value, "__await__")


class AsyncClient(BaseClient):
    """``Client`` for asyncio: the same arguments and methods, awaited.

    ``r = await client.get(url)``; ``async with client.stream("GET", url) as r:
    async for chunk in r.aiter_bytes(): ...``; ``await client.aclose()`` or
    ``async with AsyncClient() as client``. Cookies, auth, redirects, timeouts and
    decoding behave exactly as in ``Client`` (one request flow serves both), and so do
    ``retries`` (backoff with ``asyncio.sleep``) and ``max_decoded_size``. ``event_hooks``
    may be plain or async callables (an awaitable a hook returns is awaited).
    Request bodies: as ``Client`` (files and iterables streamed, never loaded whole; a
    regular file is sent with its exact ``Content-Length``), plus async iterables of bytes
    for ``content=`` (sent with chunked coding over HTTP/1.1, over HTTP/2 whenever the
    request goes there, like every streamed body). Files and sync iterables are read on the
    engine's threads, not the event loop's. ``proxy``/``trust_env`` and ``http2`` as in
    ``Client``: HTTP/2 requests to one origin share one connection, whatever the number of
    tasks; a cancelled task resets its stream (the connection stays up for the others).

    Requests run on nodelay's tokio runtime without the GIL; any number of tasks may share
    one client (up to ``limits.max_connections`` connections, the rest wait for one until
    the pool timeout). Cancelling a task cancels its request: a connection in the middle of
    an exchange is closed, never reused. Works under the default asyncio loop and uvloop.
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
        retries: RetryTypes = None,
        event_hooks: EventHooks | None = None,
        max_decoded_size: int | None = None,
        proxy: ProxyTypes | None = None,
        http2: bool | Literal["prior_knowledge"] = False,
    ) -> None:
        super().__init__(
            base_url=base_url,
            headers=headers,
            params=params,
            timeout=timeout,
            follow_redirects=follow_redirects,
            max_redirects=max_redirects,
            limits=limits,
            cookies=cookies,
            auth=auth,
            trust_env=trust_env,
            retries=retries,
            event_hooks=event_hooks,
        )
        engine_options = engine_options_for(
            self._limits, verify, cert, max_decoded_size, proxy, trust_env, http2
        )
        self._engine: _core.AsyncEngine | _ClosedAsyncEngine = _core.AsyncEngine(**engine_options)

    @property
    def is_closed(self) -> bool:
        return self._engine is _CLOSED_ENGINE

    # -- lifecycle --------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close every pooled connection; later requests raise ``RuntimeError``."""
        engine = self._engine
        self._engine = _CLOSED_ENGINE
        engine.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- sending ----------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        url: str,
        *,
        params: ParamTypes | None = None,
        headers: RequestHeaderTypes | None = None,
        content: AsyncRequestContent | None = None,
        data: RequestData | None = None,
        files: RequestFiles | None = None,
        json: Any = None,
        timeout: TimeoutTypes | _Unset = UNSET,
        follow_redirects: bool | None = None,
        allow_redirects: bool | None = None,
        cookies: CookieTypes | None = None,
        auth: AuthTypes | None = None,
        stream: bool = False,
    ) -> Response:
        """Send a request and read the whole response (see ``Client.request``).

        ``stream=True`` returns before the body is read: read it with ``aiter_bytes()``...
        or ``aread()``, and ``aclose()`` the response, or use ``client.stream()``.
        """
        pieces: _AsyncPieces | None = None
        body: RequestContent | _core.Upload | None
        if content is not None and hasattr(content, "__aiter__"):
            import asyncio

            # Streamed with chunked coding like any iterable (see ``_AsyncPieces``).
            pieces = _AsyncPieces(content, asyncio.get_running_loop())  # type: ignore[arg-type]
            body = _core.Upload([pieces])
        else:
            body = content
        flow, ttuple = self._build_flow(
            method,
            url,
            params,
            headers,
            body,  # type: ignore[arg-type]  # an Upload is passed through as it is
            data,
            files,
            json,
            timeout,
            follow_redirects,
            allow_redirects,
            cookies,
            auth,
        )
        try:
            if isinstance(flow, Send):
                return await self._send(flow, ttuple, stream)
            return await self._run(flow, ttuple, stream)
        finally:
            if pieces is not None:
                pieces.close()

    def build_request(self, method: str, url: str, **kwargs: Unpack[AsyncBuildOptions]) -> Request:
        """``Client.build_request``; ``content`` may also be an async iterable of bytes
        (read by ``send``, with chunked coding)."""
        content = kwargs.get("content")
        if content is None or not hasattr(content, "__aiter__"):
            # ``content`` is one of the sync kinds here.
            return super().build_request(method, url, **kwargs)  # type: ignore[arg-type]
        rest = {name: value for name, value in kwargs.items() if name != "content"}
        request = super().build_request(method, url, **rest)  # type: ignore[arg-type]
        request._body = content  # read by ``send``
        return request

    async def send(
        self,
        request: Request,
        *,
        stream: bool = False,
        auth: AuthTypes | None = None,
        follow_redirects: bool | None = None,
        timeout: TimeoutTypes | _Unset = UNSET,
    ) -> Response:
        """``Client.send``, awaited."""
        pieces: _AsyncPieces | None = None
        body = request_body(request)
        if hasattr(body, "__aiter__"):
            import asyncio

            pieces = _AsyncPieces(body, asyncio.get_running_loop())
            body = _core.Upload([pieces])
        flow, ttuple = self._send_flow(
            request,
            timeout,
            follow_redirects,
            auth,
            body,  # type: ignore[arg-type]  # bytes or an Upload here
        )
        try:
            if isinstance(flow, Send):
                return await self._send(flow, ttuple, stream)
            return await self._run(flow, ttuple, stream)
        finally:
            if pieces is not None:
                pieces.close()

    @asynccontextmanager
    async def stream(self, method: str, url: str, **kwargs: Any) -> AsyncIterator[Response]:
        """Send a request and yield the response before its body is read.

        ``async with client.stream("GET", url) as r: async for chunk in r.aiter_bytes():``
        — the same keyword arguments as ``request``. On exit the response is closed: a body
        read to the end gives its connection back to the pool, a half-read one closes it.
        """
        response = await self.request(method, url, stream=True, **kwargs)
        try:
            yield response
        finally:
            response.close()

    async def _run(
        self,
        flow: Generator[Send, Response, Response],
        ttuple: TimeoutTuple,
        stream: bool,
        started: float | None = None,
    ) -> Response:
        """Drive ``flow`` with awaited engine calls (``Client._run`` blocks instead).
        ``Timeout(total=)`` bounds the whole flow from ``started`` (default: now)."""
        deadline = flow_deadline(ttuple, started)
        try:
            send = next(flow)
            while True:
                if send.discard is not None:
                    await send.discard.aread()
                if send.delay:
                    import asyncio

                    await asyncio.sleep(send.delay)
                try:
                    response = await self._send(send, attempt_timeouts(ttuple, deadline), stream)
                except RequestError as exc:
                    send = flow.throw(exc)  # a retry policy may answer with another Send
                    continue
                send = flow.send(response)
        except StopIteration as stop:
            result: Response = stop.value
            return result

    async def _send(self, send: Send, ttuple: TimeoutTuple, stream: bool = False) -> Response:
        """One exchange with the engine (see ``Client._send``); event hooks run around it
        (an awaitable a hook returns is awaited)."""
        method, url, pairs, body = send.method, send.url, send.pairs, send.body
        hooks = self._event_hooks
        request: Request | None = None
        if hooks["request"] or hooks["response"]:
            request = Request._make(method, url, pairs, body)
            for hook in hooks["request"]:
                if _awaitable(result := hook(request)):
                    await result
            if request._headers is not None:  # a hook may have changed the headers
                pairs = request._headers._list
        jar = self._jar
        jar_header = jar.header_for(url)
        if jar_header is not None or send.cookies:
            pairs = with_cookies(pairs, jar_header, send.cookies)
        ref = request if request is not None else (method, url, pairs, body)
        try:
            if stream:
                streamed = await self._engine.open(method, url, pairs, body, ttuple)
                if jar.extract(streamed):
                    self._cookies._changed()
                response = _response_from_raw(AsyncStreamRaw(streamed), ref)
            else:
                raw = await self._engine.request(method, url, pairs, body, ttuple)
                if jar.extract(raw):
                    self._cookies._changed()
                response = _response_from_raw(raw, ref)
        except RequestError as exc:
            if exc.request is None:
                exc.request = Request._make(method, url, pairs, body)
            raise
        if request is not None and hooks["response"]:
            try:
                for hook in hooks["response"]:
                    if _awaitable(result := hook(response)):
                        await result
            except BaseException:
                response.close()
                raise
        return response

    async def get(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        """Send a GET request (the keyword arguments of ``request`` without a body)."""
        if (
            not kwargs
            and self._plain
            and self._auth_off
            and self._retry is None
            and type(url) is str
            and not self._event_hooks["request"]
            and not self._event_hooks["response"]
        ):
            # The hot path (as Client.get): client defaults only, nothing to merge.
            if "#" in url:
                url = url.partition("#")[0]
            pairs = sent = self._headers._list
            ttuple = self._ttuple
            jar = self._jar
            jar_header = jar.header_for(url)  # None at once for an empty jar
            if jar_header is not None:
                sent = with_cookies(pairs, jar_header, None)
            try:
                raw = await self._engine.request("GET", url, sent, None, ttuple)
            except RequestError as exc:
                if exc.request is None:
                    exc.request = Request._make("GET", url, sent, None)
                raise
            if jar.extract(raw):  # False at once when no Set-Cookie
                self._cookies._changed()
            response = _response_from_raw(raw, ("GET", url, sent, None))
            if self.follow_redirects and raw.status in REDIRECT_STATUSES:
                flow = redirect_flow(self.max_redirects, response, "GET", url, pairs, None)
                # The first hop's time counts against Timeout(total=) too.
                started = time.monotonic() - raw.elapsed
                return await self._run(flow, ttuple, False, started)
            return response
        _check_keywords("get", kwargs, _NO_BODY_ARGS)
        return await self.request("GET", url, **kwargs)

    async def head(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        """Send a HEAD request."""
        _check_keywords("head", kwargs, _NO_BODY_ARGS)
        return await self.request("HEAD", url, **kwargs)

    async def options(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        """Send an OPTIONS request."""
        _check_keywords("options", kwargs, _NO_BODY_ARGS)
        return await self.request("OPTIONS", url, **kwargs)

    async def delete(self, url: str, **kwargs: Unpack[RequestOptions]) -> Response:
        """Send a DELETE request."""
        _check_keywords("delete", kwargs, _NO_BODY_ARGS)
        return await self.request("DELETE", url, **kwargs)

    async def post(self, url: str, **kwargs: Unpack[AsyncBodyOptions]) -> Response:
        """Send a POST request."""
        _check_keywords("post", kwargs, _BODY_ARGS)
        return await self.request("POST", url, **kwargs)

    async def put(self, url: str, **kwargs: Unpack[AsyncBodyOptions]) -> Response:
        """Send a PUT request."""
        _check_keywords("put", kwargs, _BODY_ARGS)
        return await self.request("PUT", url, **kwargs)

    async def patch(self, url: str, **kwargs: Unpack[AsyncBodyOptions]) -> Response:
        """Send a PATCH request."""
        _check_keywords("patch", kwargs, _BODY_ARGS)
        return await self.request("PATCH", url, **kwargs)
