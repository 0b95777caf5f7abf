"""``ASGITransport``: requests answered by an ASGI application in-process (httpx's API),
for ``AsyncClient`` tests of ASGI apps without a server."""

from __future__ import annotations

from ._transports import AsyncBaseTransport, detached_response, request_target
from ._wsgi import request_headers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, MutableMapping
    from typing import Any, TypeAlias

    from ._models import Request, Response

    ASGIApp: TypeAlias = "Callable[[dict[str, Any], Callable[[], Awaitable[dict[str, Any]]], Callable[[MutableMapping[str, Any]], Awaitable[None]]], Awaitable[None]]"  # noqa: E501

__all__ = ["ASGITransport"]


class ASGITransport(AsyncBaseTransport):
    """Call ``app`` (ASGI 3, ``http`` scope) for each request of an ``AsyncClient``.
    ``raise_app_exceptions`` (default True): an exception the app raises propagates;
    with False the request gets what the app sent so far (a 500 when it sent no head).
    ``root_path``: the mount point; ``client``: the ``(host, port)`` the app sees."""

    def __init__(
        self,
        app: ASGIApp,
        raise_app_exceptions: bool = True,
        root_path: str = "",
        client: tuple[str, int] = ("127.0.0.1", 123),
    ) -> None:
        self.app = app
        self.raise_app_exceptions = raise_app_exceptions
        self.root_path = root_path
        self.client = client

    async def handle_async_request(self, request: Request) -> Response:
        import asyncio

        target = request_target(request.url)
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [
                (name.lower().encode("latin-1"), value.encode("latin-1"))
                for name, value in request_headers(request)
            ],
            "scheme": target.scheme,
            "path": target.path,
            "raw_path": target.raw_path,
            "query_string": target.query,
            "server": (target.host, target.port),
            "client": self.client,
            "root_path": self.root_path,
        }
        body = await request.aread()
        request_sent = False
        complete = asyncio.Event()
        head: list[Any] = []
        parts: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal request_sent
            if request_sent:
                await complete.wait()
                return {"type": "http.disconnect"}
            request_sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                if head:
                    raise RuntimeError("the ASGI application started its response twice")
                head[:] = [message["status"], message.get("headers", [])]
            elif message["type"] == "http.response.body":
                if complete.is_set():
                    raise RuntimeError("the ASGI application sent body after its end")
                piece = message.get("body", b"")
                if piece and request.method != "HEAD":
                    parts.append(piece)
                if not message.get("more_body", False):
                    complete.set()

        try:
            await self.app(scope, receive, send)
        except Exception:
            if self.raise_app_exceptions:
                raise
            complete.set()
            if not head:
                head[:] = [500, []]
        if not head:
            raise RuntimeError("the ASGI application returned without starting a response")
        return detached_response(head[0], head[1], b"".join(parts))
