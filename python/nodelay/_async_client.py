"""``AsyncClient``: ``Client``'s settings and request flow (``_base.py``, ``_flow.py``)
driven with ``await`` over the Rust engine's async driver.

The engine runs each request on the process's tokio runtime and completes an asyncio
future on the running loop (default asyncio or uvloop); nothing here blocks. Only the
driver (``_drive``: the operations of ``_flow.steps``, awaited) and the hot path of
``get`` differ from ``Client``.
"""

from __future__ import annotations

import time
from contextlib import asynccontextmanager

from . import _core
from ._base import BaseClient, ClosedEngine, request_body
from ._client import _BODY_ARGS, _NO_BODY_ARGS
from ._config import UNSET, _Unset
from ._exceptions import RequestError
from ._flow import (
    AUTH,
    DISCARD,
    EXCHANGE,
    HOOK,
    TRANSPORT,
    async_auth_step,
    redirect_flow,
    steps,
)
from ._models import Request, Response
from ._redirects import REDIRECT_STATUSES
from ._streaming import AsyncStreamRaw

TYPE_CHECKING = False
if TYPE_CHECKING:
    from asyncio import AbstractEventLoop, Task
    from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Mapping
    from types import TracebackType
    from typing import Any, Self, TypeAlias, TypeGuard, Unpack

    from ._auth import AuthTypes
    from ._config import TimeoutTypes
    from ._cookies import CookieTypes
    from ._flow import Steps
    from ._options import AsyncBodyOptions, AsyncBuildOptions, RequestOptions
    from ._prepare import RequestContent, RequestData, RequestHeaderTypes
    from ._upload import RequestFiles
    from ._urls import ParamTypes

    AsyncRequestContent: TypeAlias = "RequestContent | AsyncIterable[bytes]"

__all__ = ["AsyncClient"]

_whole_response = _core.whole_response


def _check_keywords(name: str, kwargs: Mapping[str, object], allowed: frozenset[str]) -> None:
    """``name() got an unexpected keyword argument`` for a keyword ``name`` does not take
    (the methods forward ``**kwargs`` to ``request``, which would name itself)."""
    if not kwargs.keys() <= allowed:
        unknown = min(kwargs.keys() - allowed)
        raise TypeError(f"{name}() got an unexpected keyword argument {unknown!r}")


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

    _new_engine = _core.AsyncEngine
    _closed_engine = ClosedEngine("AsyncClient")
    _stream_raw = AsyncStreamRaw
    _engine: _core.AsyncEngine | ClosedEngine

    # -- lifecycle --------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close every pooled connection and the client's transports; later requests
        raise ``RuntimeError``."""
        self._close_engine()
        for transport in self._transports():
            await transport.aclose()

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
            params=params,
            headers=headers,
            content=body,  # type: ignore[arg-type]  # an Upload is passed through as it is
            data=data,
            files=files,
            json=json,
            timeout=timeout,
            follow_redirects=follow_redirects,
            allow_redirects=allow_redirects,
            cookies=cookies,
            auth=auth,
        )
        try:
            return await self._drive(steps(self, flow, ttuple, stream))
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
            return await self._drive(steps(self, flow, ttuple, stream))
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

    async def _drive(self, operations: Steps) -> Response:
        """Perform a request's I/O operations (``_flow.steps``) with awaited calls, each
        outcome or error handed back; returns the final response (``Client._drive``
        blocks instead). An awaitable an event hook returns is awaited."""
        try:
            operation = next(operations)
            while True:
                outcome: object = None
                error: BaseException | None = None
                try:
                    kind = operation[0]
                    if kind == EXCHANGE:
                        engine = self._engine
                        call = engine.open if operation[1] else engine.request
                        outcome = await call(*operation[2:])
                    elif kind == HOOK:
                        if _awaitable(returned := operation[1](operation[2])):
                            await returned
                    elif kind == DISCARD:
                        await operation[1].aread()
                    elif kind == TRANSPORT:
                        outcome = await operation[1].handle_async_request(operation[2])
                    elif kind == AUTH:
                        outcome = await async_auth_step(operation)
                    else:
                        import asyncio

                        await asyncio.sleep(operation[1])
                except BaseException as exc:  # the flow raises what it does not handle
                    error = exc
                if error is None:
                    operation = operations.send(outcome)
                else:
                    # Thrown outside the ``except`` block, so what the flow raises next is
                    # not chained to this error; dropped after, so no frame keeps it alive.
                    try:
                        operation = operations.throw(error)
                    finally:
                        error = None
        except StopIteration as stop:
            result: Response = stop.value
            return result

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
            pairs = self._headers._list
            ttuple = self._ttuple
            jar = self._jar
            sent = jar.request_headers(url, pairs)  # pairs itself at once for an empty jar
            try:
                raw = await self._engine.request("GET", url, sent, None, ttuple)
            except RequestError as exc:
                if exc.request is None:
                    exc.request = Request._make("GET", url, sent, None)
                raise
            if jar.extract(raw):  # False at once when no Set-Cookie
                self._cookies._changed()
            response = _whole_response(raw, ("GET", url, sent, None))
            if self.follow_redirects and response.status_code in REDIRECT_STATUSES:
                flow = redirect_flow(self.max_redirects, response, "GET", url, pairs, None)
                # The first hop's time counts against Timeout(total=) too.
                started = time.monotonic() - raw.elapsed
                return await self._drive(steps(self, flow, ttuple, False, started))
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
