"""A raw-socket scripted HTTP server for malformed and hostile responses.

Each accepted connection runs a *script*: a list of steps executed in order on its own
thread. Steps speak bytes, so tests can send exactly what a broken or hostile server would
and assert exactly what the client sent::

    with ScriptedServer([Recv(), Send(response(body=b"hi")), Close()]) as srv:
        nodelay.get(srv.url + "/")
        assert srv.requests[0].startswith(b"GET / HTTP/1.1\\r\\n")

``ScriptedServer(script0, script1, ...)``: connection ``i`` runs ``scripts[i]``, connections
past the last script run the last one. A step is one of the classes below or any callable
taking the connected socket. When a script ends, the connection is closed. Only loopback
addresses are used.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

__all__ = [
    "Close",
    "Conn",
    "Recv",
    "Reset",
    "ScriptedServer",
    "Send",
    "SendSlowly",
    "Sleep",
    "Step",
    "accepted",
    "read_head",
    "response",
]

_POLL = 0.02  # seconds between checks of the stop flag while blocked


class _Abort(Exception):
    """Ends a script early (peer closed, server stopping, deadline)."""


@dataclass
class Conn:
    """What one accepted connection saw."""

    index: int
    received: bytearray = field(default_factory=bytearray)
    requests: list[bytes] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    eof: bool = False
    _buffer: bytearray = field(default_factory=bytearray)


@dataclass
class Recv:
    """Read one request: the head up to CRLFCRLF plus a Content-Length or chunked body.

    Ends the script if the client closes first or nothing complete arrives in ``timeout``.
    """

    timeout: float = 10.0


@dataclass
class Send:
    """Send these bytes (ends the script if the client has gone)."""

    data: bytes


@dataclass
class SendSlowly:
    """Send ``data`` ``chunk`` bytes at a time, ``interval`` seconds apart."""

    data: bytes
    interval: float
    chunk: int = 1


@dataclass
class Sleep:
    """Do nothing for ``seconds`` (cut short when the server stops)."""

    seconds: float


@dataclass
class Close:
    """Close the connection (FIN) and end the script."""


@dataclass
class Reset:
    """Abort the connection (SO_LINGER 0, so the peer gets RST) and end the script."""


Step = Recv | Send | SendSlowly | Sleep | Close | Reset | Callable[[socket.socket], None]


def response(
    status: int = 200,
    body: bytes = b"",
    headers: Iterable[tuple[str, str]] = (),
    *,
    reason: str = "OK",
    content_length: bool = True,
) -> bytes:
    """A well-formed HTTP/1.1 response (``Content-Length`` added unless told not to)."""
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines.extend(f"{name}: {value}" for name, value in headers)
    if content_length:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def accepted(listener: socket.socket, stop: threading.Event) -> Iterator[socket.socket]:
    """The connections ``listener`` accepts until ``stop`` is set or the listener is closed;
    the listener's timeout is how often ``stop`` is looked at."""
    while not stop.is_set():
        try:
            sock, _ = listener.accept()
        except TimeoutError:
            continue
        except OSError:
            return
        yield sock


def read_head(sock: socket.socket) -> bytes | None:
    """Reads until the end of a request head (``\\r\\n\\r\\n``): what was read (the head,
    and any bytes after it that came with it), or ``None`` if the peer closed first."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        data = sock.recv(65536)
        if not data:
            return None
        buf += data
    return buf


def _is_chunked(head: bytes) -> bool:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"transfer-encoding":
            return value.strip().lower().endswith(b"chunked")
    return False


def _chunked_end(buf: bytes | bytearray, start: int) -> int | None:
    """Where a chunked body starting at ``start`` ends (after its trailers), or ``None``
    while incomplete."""
    pos = start
    while True:
        line_end = buf.find(b"\r\n", pos)
        if line_end < 0:
            return None
        size = int(bytes(buf[pos:line_end]).split(b";")[0].strip() or b"0", 16)
        pos = line_end + 2
        if size == 0:
            end = buf.find(b"\r\n\r\n", pos - 2)
            return None if end < 0 else end + 4
        pos += size + 2
        if pos > len(buf):
            return None


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                return int(value.strip())
            except ValueError:
                return 0
    return 0


class ScriptedServer:
    """A thread accepting loopback connections and running a script on each one."""

    def __init__(self, *scripts: Sequence[Step], host: str = "127.0.0.1") -> None:
        if not scripts:
            raise ValueError("give at least one script")
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise ValueError("the scripted server only listens on loopback")
        self._scripts = [list(s) for s in scripts]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._conns: list[Conn] = []
        self._threads: list[threading.Thread] = []
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, 0))
        self._listener.listen(64)
        self._listener.settimeout(_POLL)
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{self.port}"
        self._acceptor = threading.Thread(target=self._accept_loop, daemon=True)
        self._acceptor.start()

    # -- observation ------------------------------------------------------------------------

    @property
    def connections(self) -> int:
        """Connections accepted so far."""
        with self._lock:
            return len(self._conns)

    @property
    def conns(self) -> list[Conn]:
        with self._lock:
            return list(self._conns)

    @property
    def received(self) -> list[bytes]:
        """Every byte received, one entry per connection, in accept order."""
        return [bytes(c.received) for c in self.conns]

    @property
    def requests(self) -> list[bytes]:
        """Every request read by ``Recv`` steps (head + body), over all connections."""
        return [r for c in self.conns for r in c.requests]

    def wait_connections(self, n: int, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.connections >= n:
                return True
            time.sleep(_POLL / 2)
        return self.connections >= n

    def wait_finished(self, n: int, timeout: float = 5.0) -> bool:
        """Wait until the first ``n`` connections' scripts have ended."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            conns = self.conns
            if len(conns) >= n and all(c.done.is_set() for c in conns[:n]):
                return True
            time.sleep(_POLL / 2)
        return False

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        self._stop.set()
        self._acceptor.join(timeout=5)
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout=5)
        self._listener.close()

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        for sock in accepted(self._listener, self._stop):
            with self._lock:
                conn = Conn(index=len(self._conns))
                self._conns.append(conn)
                script = self._scripts[min(conn.index, len(self._scripts) - 1)]
                thread = threading.Thread(target=self._run, args=(sock, conn, script), daemon=True)
                self._threads.append(thread)
            thread.start()

    def _run(self, sock: socket.socket, conn: Conn, script: list[Step]) -> None:
        sock.settimeout(_POLL)
        try:
            for step in script:
                if self._stop.is_set():
                    break
                if self._do(sock, conn, step):
                    return  # the step closed the socket
        except _Abort:
            pass
        except OSError:
            pass
        finally:
            try:
                sock.close()
            finally:
                conn.done.set()

    def _do(self, sock: socket.socket, conn: Conn, step: Step) -> bool:
        """Run one step; True when it closed the socket itself."""
        if isinstance(step, Recv):
            self._recv_request(sock, conn, step.timeout)
        elif isinstance(step, Send):
            self._send(sock, step.data)
        elif isinstance(step, SendSlowly):
            for i in range(0, len(step.data), step.chunk):
                self._send(sock, step.data[i : i + step.chunk])
                if self._stop.wait(step.interval):
                    raise _Abort
        elif isinstance(step, Sleep):
            if self._stop.wait(step.seconds):
                raise _Abort
        elif isinstance(step, Close):
            sock.close()
            return True
        elif isinstance(step, Reset):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
            return True
        else:
            sock.settimeout(None)
            step(sock)
            sock.settimeout(_POLL)
        return False

    def _send(self, sock: socket.socket, data: bytes) -> None:
        view = memoryview(data)
        while view:
            if self._stop.is_set():
                raise _Abort
            try:
                sent = sock.send(view)
            except TimeoutError:
                continue
            except OSError as exc:
                raise _Abort from exc
            view = view[sent:]

    def _read_more(self, sock: socket.socket, conn: Conn, deadline: float) -> None:
        while True:
            if self._stop.is_set() or time.monotonic() > deadline:
                raise _Abort
            try:
                data = sock.recv(65536)
            except TimeoutError:
                continue
            if not data:
                conn.eof = True
                raise _Abort
            conn.received += data
            conn._buffer += data
            return

    def _recv_request(self, sock: socket.socket, conn: Conn, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        buf = conn._buffer
        while b"\r\n\r\n" not in buf:
            self._read_more(sock, conn, deadline)
        end = buf.index(b"\r\n\r\n") + 4
        if _is_chunked(bytes(buf[:end])):
            while (chunked_end := _chunked_end(buf, end)) is None:
                self._read_more(sock, conn, deadline)
            total = chunked_end
        else:
            total = end + _content_length(bytes(buf[:end]))
        while len(buf) < total:
            self._read_more(sock, conn, deadline)
        conn.requests.append(bytes(buf[:total]))
        del buf[:total]
