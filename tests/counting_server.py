"""A keep-alive HTTP/1.1 server on loopback that watches how it is used: the most
connections open to it at once and when each request arrived (the per-host limit and the
rate as a server sees them). Routes: ``/ok/<key>`` answers ``ok <key>``; ``/flaky/<key>``
answers 503 with ``Retry-After: 1`` the first time a key is asked for, then ``ok <key>``;
``/status/<code>`` answers that status; ``/slow/<ms>`` answers after that many
milliseconds. ``hold`` seconds pass before every answer, so that requests overlap.
"""

from __future__ import annotations

import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import TracebackType
    from typing import Self

__all__ = ["CountingServer"]

ARRIVAL_JITTER = 0.15
"""Seconds: how far the server's recorded arrival times may bunch on a loaded machine
(its thread records a request when it is scheduled, not when the bytes came), so a rate
seen over a window is checked against the window widened by this much. At the tests'
rates this stays well below what an unlimited client sends in the same window."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.opened()

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.closed()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        server = self.server
        server.arrived(self.path)
        if server.hold:
            time.sleep(server.hold)
        kind, _, key = self.path.lstrip("/").partition("/")
        status, headers, body = 200, [], f"ok {key}".encode()
        if kind == "flaky" and server.first_time(key):
            status, headers, body = 503, [("Retry-After", "1")], b"busy"
        elif kind == "status":
            status, body = int(key), b"status"
        elif kind == "slow":
            time.sleep(int(key) / 1000)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connect at once in the tests (batches, cluster workers).
    request_queue_size = 256

    def __init__(self, hold: float) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hold = hold
        self._lock = threading.Lock()
        self.open = 0
        self.most_open = 0
        self.arrivals: list[tuple[float, str]] = []
        self._seen: set[str] = set()

    def opened(self) -> None:
        with self._lock:
            self.open += 1
            self.most_open = max(self.most_open, self.open)

    def closed(self) -> None:
        with self._lock:
            self.open -= 1

    def arrived(self, path: str) -> None:
        with self._lock:
            self.arrivals.append((time.monotonic(), path))

    def first_time(self, key: str) -> bool:
        with self._lock:
            first = key not in self._seen
            self._seen.add(key)
            return first


class CountingServer:
    """The server, run on a thread; a context manager that stops it."""

    def __init__(self, hold: float = 0.0) -> None:
        self._server = _Server(hold)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        host, port = self._server.server_address[:2]
        self.url = f"http://{host!s}:{port}"

    @property
    def most_open(self) -> int:
        """The most connections that were open to the server at once."""
        return self._server.most_open

    def arrivals(self, prefix: str = "/") -> list[float]:
        """When the requests whose path starts with ``prefix`` arrived (monotonic)."""
        with self._server._lock:
            return sorted(t for t, path in self._server.arrivals if path.startswith(prefix))

    def paths(self) -> list[str]:
        with self._server._lock:
            return [path for _, path in self._server.arrivals]

    def most_allowed_in_window(self, rate: float, burst: int, window: float) -> int:
        """The most arrivals in ``window`` seconds that a client held to ``rate`` per second
        with ``burst`` can cause here: the rate's worth over the window widened by
        ``ARRIVAL_JITTER``, plus the burst, plus one at the window's edge."""
        return math.ceil(rate * (window + ARRIVAL_JITTER)) + burst + 1

    def most_in_window(self, window: float) -> int:
        """The most requests that arrived within any ``window`` seconds."""
        times = self.arrivals()
        most, start = 0, 0
        for end, t in enumerate(times):
            while t - times[start] >= window:
                start += 1
            most = max(most, end - start + 1)
        return most

    def reset(self) -> None:
        with self._server._lock:
            self._server.arrivals.clear()
            self._server.most_open = self._server.open

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
