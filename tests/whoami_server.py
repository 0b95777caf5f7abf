"""A real HTTP/1.1 server (the stdlib's) that answers every GET with what it saw: the path,
the ``Host`` header and the peer's address (``unix`` on a Unix socket). The ``uds=`` and
``local_address=`` tests read where a request went from it. Fixtures: ``unix_server`` (the
socket's path) and ``tcp_port``. ``serving(server)`` runs any socketserver on a thread for
the length of a ``with`` (the TLS and proxy tests' servers too)."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

# How often serve_forever looks for a shutdown request (the fixture's teardown waits for it).
SHUTDOWN_POLL_S = 0.05
# A server thread that has not stopped by then is left to the process (daemon threads).
JOIN_TIMEOUT_S = 10


class WhoAmI(BaseHTTPRequestHandler):
    """Answers every GET with the path, the Host header and the peer's address."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        peer = self.client_address[0] if isinstance(self.client_address, tuple) else ""
        body = f"{self.path} {self.headers['Host']} {peer or 'unix'}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[socketserver.BaseServer]:
    """Runs ``server`` on a thread until the block ends, then shuts it down and closes it."""
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=JOIN_TIMEOUT_S)


@pytest.fixture
def unix_server(tmp_path: Path) -> Iterator[str]:
    path = str(tmp_path / "http.sock")
    with serving(UnixHTTPServer(path, WhoAmI)):
        yield path


@pytest.fixture
def tcp_port() -> Iterator[int]:
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), WhoAmI)) as server:
        yield server.server_address[1]  # type: ignore[attr-defined]
