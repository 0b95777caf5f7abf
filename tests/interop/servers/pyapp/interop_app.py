"""The application the Python servers of the interop matrix run (hypercorn, uvicorn,
gunicorn, waitress): ``/static/`` from ``$INTEROP_SITE_ROOT/static`` and httpbin (the pip
package, a Flask app) mounted at ``/app``.

``wsgi`` is a WSGI application, run by every one of them: gunicorn and waitress are WSGI
servers, hypercorn and uvicorn run WSGI applications themselves (each on a thread pool).
Not through asgiref's ``WsgiToAsgi``: it runs every WSGI call on one shared thread, so one
response stuck on HTTP/2 flow control stalls every later ``/app`` request of the server.
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


def static_lookup(
    name: str, if_none_match: str | None
) -> tuple[int, list[tuple[str, str]], Path | None]:
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
            # One empty piece rather than none: hypercorn's WSGI wrapper sends the
            # response head with the first piece of the body.
            return [b""]
        wrapper = environ.get("wsgi.file_wrapper")
        handle = file.open("rb")
        return (
            wrapper(handle, CHUNK_BYTES) if wrapper else iter(lambda: handle.read(CHUNK_BYTES), b"")
        )
    if path.startswith("/app/"):
        environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + "/app"
        environ["PATH_INFO"] = path[4:]
    # Every server here de-chunks a chunked body and ends wsgi.input at its end; without
    # this flag Werkzeug reads nothing from a body that has no Content-Length. httpbin
    # refuses any request still marked chunked unless the server is gunicorn: the mark
    # describes the wire, not wsgi.input, so it is dropped.
    environ.setdefault("wsgi.input_terminated", True)
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    return _at_least_one_piece(_app(environ, start_response))


def _at_least_one_piece(body: Iterable[bytes]) -> Iterator[bytes]:
    """``body``, or one empty piece if it has none (a 204, a 304): hypercorn's WSGI wrapper
    sends the response head with the first piece of the body, so a body without pieces
    never gets a head."""
    try:
        empty = True
        for piece in body:
            empty = False
            yield piece
        if empty:
            yield b""
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()
