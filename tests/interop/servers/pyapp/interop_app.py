"""The application the Python servers of the interop matrix run (hypercorn, uvicorn,
gunicorn, waitress): ``/static/`` from ``$INTEROP_SITE_ROOT/static`` and httpbin (the pip
package, a Flask app) mounted at ``/app``.

``wsgi`` is the WSGI application (gunicorn, waitress); ``asgi`` the ASGI one (hypercorn,
uvicorn): it serves ``/static/`` natively and hands ``/app`` to ``wsgi`` through asgiref's
``WsgiToAsgi`` adapter, so both kinds of server answer ``/app`` with the same httpbin code.
This file is imported by the server processes (their PYTHONPATH holds this directory), not
by the matrix runner.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from email.utils import formatdate
from pathlib import Path
from typing import Any

#: Bytes per read when a static file is sent in pieces (the ASGI path).
CHUNK_BYTES = 64 * 1024

STATIC = Path(os.environ.get("INTEROP_SITE_ROOT", ".")) / "static"
TYPES = {".txt": "text/plain", ".html": "text/html", ".bin": "application/octet-stream"}

StartResponse = Callable[..., Any]


def static_lookup(name: str, if_none_match: str | None) -> tuple[int, list[tuple[str, str]], Path | None]:
    """``(status, headers, file to send or None)`` for ``/static/<name>``."""
    path = (STATIC / name).resolve()
    if STATIC.resolve() not in path.parents or not path.is_file():
        return 404, [("Content-Type", "text/plain"), ("Content-Length", "0")], None
    st = path.stat()
    etag = f'"{st.st_size:x}-{int(st.st_mtime):x}"'
    headers = [
        ("Content-Type", TYPES.get(path.suffix, "application/octet-stream")),
        ("ETag", etag),
        ("Last-Modified", formatdate(st.st_mtime, usegmt=True)),
    ]
    if if_none_match == etag:
        return 304, headers, None
    return 200, [*headers, ("Content-Length", str(st.st_size))], path


def _httpbin() -> Callable[..., Iterable[bytes]]:
    import httpbin

    return httpbin.app  # type: ignore[no-any-return]


_app = _httpbin()
_REASONS = {200: "200 OK", 304: "304 Not Modified", 404: "404 Not Found"}


def wsgi(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    path: str = environ.get("PATH_INFO", "")
    if path.startswith("/static/"):
        status, headers, file = static_lookup(path[8:], environ.get("HTTP_IF_NONE_MATCH"))
        start_response(_REASONS[status], headers)
        if file is None or environ["REQUEST_METHOD"] == "HEAD":
            return []
        wrapper = environ.get("wsgi.file_wrapper")
        handle = file.open("rb")
        return wrapper(handle, CHUNK_BYTES) if wrapper else iter(lambda: handle.read(CHUNK_BYTES), b"")
    if path.startswith("/app/"):
        environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + "/app"
        environ["PATH_INFO"] = path[4:]
    # Every server here ends wsgi.input at the end of the body, chunked or not; without
    # this flag Werkzeug reads nothing from a body that has no Content-Length.
    environ.setdefault("wsgi.input_terminated", True)
    return _app(environ, start_response)


def _asgi_app() -> Callable[..., Any]:
    from asgiref.wsgi import WsgiToAsgi

    wrapped = WsgiToAsgi(wsgi)

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        path: str = scope["path"]
        if not path.startswith("/static/"):
            await wrapped(scope, receive, send)
            return
        inm = next((v.decode() for k, v in scope["headers"] if k == b"if-none-match"), None)
        status, headers, file = static_lookup(path[8:], inm)
        raw = [(k.lower().encode(), v.encode()) for k, v in headers]
        await send({"type": "http.response.start", "status": status, "headers": raw})
        if file is None or scope["method"] == "HEAD":
            await send({"type": "http.response.body", "body": b""})
            return
        with file.open("rb") as handle:
            for piece in _pieces(handle):
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return asgi


def _pieces(handle: Any) -> Iterator[bytes]:
    while piece := handle.read(CHUNK_BYTES):
        yield piece


asgi = _asgi_app()
