"""``WSGITransport``: requests answered by a WSGI application in-process (httpx's API),
for testing code that makes HTTP calls without a server."""

from __future__ import annotations

import io
import sys

from ._transports import BaseTransport, detached_response, request_target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, TextIO, TypeAlias

    from ._models import Request, Response

    WSGIApp: TypeAlias = "Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]"

__all__ = ["WSGITransport"]


class WSGITransport(BaseTransport):
    """Call ``app`` (PEP 3333) for each request. ``raise_app_exceptions`` (default
    True): an exception the app raises, or passes to ``start_response`` as
    ``exc_info``, propagates; with False the app's own response (or nothing) is returned
    as it is. ``script_name``: the mount point (``SCRIPT_NAME``); ``remote_addr``: the
    client address the app sees (``REMOTE_ADDR``)."""

    def __init__(
        self,
        app: WSGIApp,
        raise_app_exceptions: bool = True,
        script_name: str = "",
        remote_addr: str = "127.0.0.1",
        wsgi_errors: TextIO | None = None,
    ) -> None:
        self.app = app
        self.raise_app_exceptions = raise_app_exceptions
        self.script_name = script_name
        self.remote_addr = remote_addr
        self.wsgi_errors = wsgi_errors

    def handle_request(self, request: Request) -> Response:
        target = request_target(request.url)
        environ: dict[str, Any] = {
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": target.scheme,
            "wsgi.input": io.BytesIO(request.read()),
            "wsgi.errors": self.wsgi_errors or sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "REQUEST_METHOD": request.method,
            "SCRIPT_NAME": self.script_name,
            "PATH_INFO": target.path,
            "QUERY_STRING": target.query.decode("ascii"),
            "SERVER_NAME": target.host,
            "SERVER_PORT": str(target.port),
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": self.remote_addr,
        }
        for name, value in request_headers(request):
            key = name.upper().replace("-", "_")
            if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                key = "HTTP_" + key
            environ[key] = value

        seen: list[Any] = []

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Callable[[bytes], None]:
            seen[:] = [status, headers, exc_info]
            return lambda _: None

        result = self.app(environ, start_response)
        try:
            body = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        if not seen:
            raise RuntimeError("the WSGI application returned without calling start_response")
        status, headers, exc_info = seen
        if exc_info and exc_info[0] and self.raise_app_exceptions:
            raise exc_info[1]
        return detached_response(int(status.split()[0]), headers, body)


def request_headers(request: Request) -> list[tuple[str, str]]:
    """The headers an in-process app sees: the request's, plus the ``Host`` (and, for a
    body, ``Content-Length``, or ``Transfer-Encoding: chunked`` for a streamed body of
    unknown size) the engine would have added on the wire."""
    pairs = list(request.headers.multi_items())
    names = {name.lower() for name, _ in pairs}
    if "host" not in names:
        pairs.insert(0, ("Host", request_target(request.url).netloc))
    if "content-length" in names or "transfer-encoding" in names:
        return pairs
    content = request._content
    if content is None:  # streamed, not read yet
        length = getattr(request._body, "length", None)
        if length is None:
            pairs.append(("Transfer-Encoding", "chunked"))
        else:
            pairs.append(("Content-Length", str(length)))
    elif content:
        pairs.append(("Content-Length", str(len(content))))
    return pairs
