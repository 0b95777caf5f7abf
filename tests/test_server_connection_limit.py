"""A server that serves at most N connections at a time (waitress's ``connection_limit``,
100 by default, 98 clients in practice: it counts its listener and its wake-up pipe) stops
accepting at its limit; further connections complete in the kernel's listen backlog and
wait there, unanswered, until one of the served ones closes.

With the default limits a burst of concurrent requests must not leave requests stuck in
that backlog until their read timeout: after the burst the client keeps at most
``max_keepalive_connections`` (20, as httpx) idle, closing the rest, which lets the
server accept the waiting ones (docs/pool.md, "Keep-alive default").
"""

from __future__ import annotations

import asyncio
import selectors
import socket
import threading
from types import TracebackType

import nodelay

# As many connections as waitress serves with its default connection_limit of 100.
SERVER_CONNECTION_LIMIT = 98
REQUESTS = 200
# Short, so that a request stuck in the backlog fails the test quickly; far above the
# time a served request takes on a loaded machine.
READ_TIMEOUT = 5.0

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"


class LimitedServer:
    """Loopback HTTP/1.1 keep-alive server (GET only) that accepts a connection only
    while fewer than ``limit`` are open."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.accepted = 0
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(4 * REQUESTS)
        self._listener.setblocking(False)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> LimitedServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(10)

    def _serve(self) -> None:
        sel = selectors.DefaultSelector()
        buffers: dict[socket.socket, bytes] = {}
        listening = False
        try:
            while not self._stop.is_set():
                # At the limit the listener is not watched: new connections wait in
                # the backlog, as with waitress.
                if len(buffers) < self.limit and not listening:
                    sel.register(self._listener, selectors.EVENT_READ)
                    listening = True
                elif len(buffers) >= self.limit and listening:
                    sel.unregister(self._listener)
                    listening = False
                for key, _ in sel.select(0.05):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    if sock is self._listener:
                        if len(buffers) >= self.limit:
                            continue
                        try:
                            conn, _ = self._listener.accept()
                        except BlockingIOError:
                            continue
                        self.accepted += 1
                        conn.setblocking(False)
                        buffers[conn] = b""
                        sel.register(conn, selectors.EVENT_READ)
                        continue
                    try:
                        data = sock.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        sel.unregister(sock)
                        del buffers[sock]
                        sock.close()
                        continue
                    pending = buffers[sock] + data
                    while b"\r\n\r\n" in pending:
                        _, pending = pending.split(b"\r\n\r\n", 1)
                        sock.sendall(ANSWER)
                    buffers[sock] = pending
        finally:
            for sock in buffers:
                sock.close()
            sel.close()
            self._listener.close()


def test_async_gather_beyond_the_servers_connection_limit() -> None:
    async def main(url: str) -> list[object]:
        async with nodelay.AsyncClient(timeout=nodelay.Timeout(READ_TIMEOUT)) as client:

            async def one() -> object:
                try:
                    return (await client.get(url)).content
                except nodelay.TransportError as e:
                    return e

            return list(await asyncio.gather(*(one() for _ in range(REQUESTS))))

    with LimitedServer(SERVER_CONNECTION_LIMIT) as srv:
        results = asyncio.run(main(srv.url))
    failures = [r for r in results if r != b"ok"]
    assert failures == []


def test_get_many_beyond_the_servers_connection_limit() -> None:
    with (
        LimitedServer(SERVER_CONNECTION_LIMIT) as srv,
        nodelay.Client(timeout=nodelay.Timeout(READ_TIMEOUT)) as client,
    ):
        rs = client.get_many([srv.url] * REQUESTS, concurrency=REQUESTS, return_exceptions=True)
    failures = [r for r in rs if not isinstance(r, nodelay.Response) or r.content != b"ok"]
    assert failures == []
