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
from ._base import BaseClient
from ._config import DEFAULT_MAX_REDIRECTS, UNSET, _Unset, tls_engine_options
from ._exceptions import RequestError
from ._flow import REDIRECT_STATUSES, Send, attempt_timeouts, flow_deadline, redirect_flow
from ._models import Request, Response, _response_from_raw
from ._prepare import with_cookies
from ._proxy import engine_proxy_options
from ._streaming import AsyncStreamRaw

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Generator
    from types import TracebackType
    from typing import Any, Literal, Self, TypeGuard

    from ._auth import AuthTypes
    from ._base import EventHooks
    from ._config import CertTypes, Limits, TimeoutTypes, VerifyTypes
    from ._cookies import CookieTypes
    from ._core import TimeoutTuple
    from ._models import HeaderTypes
    from ._prepare import RequestContent, RequestData, RequestHeaderTypes
    from ._proxy import ProxyTypes
    from ._retry import RetryTypes
    from ._upload import RequestFiles
    from ._urls import ParamTypes

__all__ = ["AsyncClient"]


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


async def _buffered_content(content: Any) -> bytes:
    """``content=`` that ``Client`` would stream (a binary file, an iterable of bytes) or an
    async iterable of bytes, read into memory: the async driver sends bytes only."""
    if hasattr(content, "__aiter__"):
        return b"".join([_piece(piece) async for piece in content])
    if hasattr(content, "read"):
        return _file_bytes(content)
    return b"".join(_piece(piece) for piece in content)


def _piece(piece: object) -> bytes:
    """One piece of an iterable body (the engine's rule and message for streamed ones)."""
    if isinstance(piece, bytes | bytearray | memoryview):
        return bytes(piece)
    raise TypeError(f"a request body iterator must yield bytes, got {type(piece).__name__}")


def _file_bytes(file: Any) -> bytes:
    data = file.read()
    if not isinstance(data, bytes | bytearray):
        raise TypeError("files must be opened in binary mode (read() returned no bytes)")
    return bytes(data)


def _buffered_files(files: RequestFiles) -> list[tuple[str, Any]]:
    """``files=`` with every file object read into memory, named as ``_upload`` names it
    (so the multipart body is the one ``Client`` streams)."""
    import os.path

    items = files.items() if hasattr(files, "items") else files
    out: list[tuple[str, Any]] = []
    for name, value in items:
        if isinstance(value, tuple):
            if len(value) >= 2 and hasattr(value[1], "read"):
                value = (value[0], _file_bytes(value[1]), *value[2:])
        elif hasattr(value, "read"):
            filename = getattr(value, "name", None)
            filename = os.path.basename(filename) if isinstance(filename, str) else "upload"
            value = (filename, _file_bytes(value))
        out.append((name, value))
    return out


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
    Request bodies: as ``Client``, plus async iterables of bytes for ``content=``; file
    objects and iterables (``content=``, ``files=``) are read into memory before the
    request is sent, since the async driver does not stream request bodies yet.

    Requests run on nodelay's tokio runtime without the GIL; any number of tasks may share
    one client (up to ``limits.max_connections`` connections, the rest wait for one until
    the pool timeout). Cancelling a task cancels its request: a connection in the middle of
    an exchange is closed, never reused. Works under the default asyncio loop and uvloop.

    Not yet: proxies and ``http2`` (both raise ``NotImplementedError``, as does a proxy
    set in the environment while ``trust_env`` is true).
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
        # Refused rather than ignored: a request that silently skipped a configured proxy
        # would leave the network the user meant to go through.
        if engine_proxy_options(proxy, trust_env):
            raise NotImplementedError(
                "AsyncClient does not route through proxies yet (proxy= or the "
                "http_proxy/https_proxy/all_proxy environment): use Client, or "
                "AsyncClient(trust_env=False) to ignore the environment"
            )
        if http2 is not False:
            raise NotImplementedError(
                "AsyncClient speaks HTTP/1.1 only for now; Client(http2=...) has HTTP/2"
            )
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
        self._engine: _core.AsyncEngine | _ClosedAsyncEngine = _core.AsyncEngine(
            max_connections=self._limits.max_connections,
            max_keepalive=self._limits.max_keepalive_connections,
            keepalive_expiry=self._limits.keepalive_expiry,
            max_decoded_size=(
                _core.DEFAULT_MAX_DECODED_SIZE if max_decoded_size is None else max_decoded_size
            ),
            **tls_engine_options(verify, cert),
        )

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
        content: RequestContent | None = None,
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
        if content is not None and not isinstance(
            content, bytes | bytearray | memoryview | str | _core.Upload
        ):
            content = await _buffered_content(content)
        if files is not None:
            files = _buffered_files(files)
        flow, ttuple = self._build_flow(
            method,
            url,
            params,
            headers,
            content,
            data,
            files,
            json,
            timeout,
            follow_redirects,
            allow_redirects,
            cookies,
            auth,
        )
        if isinstance(flow, Send):
            return await self._send(flow, ttuple, stream)
        return await self._run(flow, ttuple, stream)

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
        if body is not None and type(body) is not bytes:
            raise NotImplementedError(
                "AsyncClient cannot stream a prebuilt _core.Upload body: pass bytes, a file "
                "or an (async) iterable of bytes as content="
            )
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

    async def get(
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
        if (
            params is None
            and headers is None
            and timeout is UNSET
            and follow_redirects is None
            and allow_redirects is None
            and cookies is None
            and auth is None
            and not stream
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
        return await self.request(
            "GET",
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

    async def head(
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
        return await self.request(
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

    async def options(
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
        return await self.request(
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

    async def delete(
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
        return await self.request(
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

    async def post(
        self,
        url: str,
        *,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        files: RequestFiles | None = None,
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
        return await self.request(
            "POST",
            url,
            content=content,
            data=data,
            files=files,
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

    async def put(
        self,
        url: str,
        *,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        files: RequestFiles | None = None,
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
        return await self.request(
            "PUT",
            url,
            content=content,
            data=data,
            files=files,
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

    async def patch(
        self,
        url: str,
        *,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        files: RequestFiles | None = None,
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
        return await self.request(
            "PATCH",
            url,
            content=content,
            data=data,
            files=files,
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
