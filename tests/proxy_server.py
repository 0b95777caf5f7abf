"""A tiny real HTTP proxy on loopback, for tests.

It forwards absolute-form requests (``GET http://host:port/path HTTP/1.1``) and opens
CONNECT tunnels, records what it received, and can require Basic credentials or refuse
CONNECT with a given status::

    with ProxyServer(auth=("user", "pass")) as proxy:
        nodelay.get(url, proxy=proxy.url_with("user", "pass"))
        assert proxy.requests[0].method == "GET"

Forwarding passes the request body on as it came (``Content-Length`` or chunked framing),
opens one upstream connection per request and asks the origin to close it
(``Connection: close``), relays the response with its ``Connection`` header removed, and
keeps the client's connection to the proxy alive, so keep-alive between client and proxy is
observable (``proxy.connections``). Tunnels relay bytes both ways until either side closes.
Every socket operation has a timeout, and ``close()`` stops all threads.
"""

from __future__ import annotations

import base64
import selectors
import socket
import ssl
import threading
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["ProxyRequest", "ProxyServer"]

_TIMEOUT = 10.0  # seconds: no test waits longer on a socket
_MAX_HEAD = 64 * 1024


@dataclass
class ProxyRequest:
    """One request head the proxy received."""

    method: str
    target: str
    headers: list[tuple[str, str]]
    raw: bytes
    connection: int

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None


@dataclass
class _Conn:
    sock: socket.socket
    index: int
    pending: bytearray = field(default_factory=bytearray)

    def read_head(self) -> bytes | None:
        while b"\r\n\r\n" not in self.pending:
            if len(self.pending) > _MAX_HEAD:
                return None
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return None
            if not chunk:
                return None
            self.pending += chunk
        end = self.pending.index(b"\r\n\r\n") + 4
        head = bytes(self.pending[:end])
        del self.pending[:end]
        return head

    def read_exact(self, n: int) -> bytes:
        while len(self.pending) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.pending += chunk
        body = bytes(self.pending[:n])
        del self.pending[:n]
        return body

    def read_line(self) -> bytes:
        while b"\r\n" not in self.pending:
            if len(self.pending) > _MAX_HEAD:
                raise ConnectionError("chunk line too long")
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed inside a chunked body")
            self.pending += chunk
        return self.read_exact(self.pending.index(b"\r\n") + 2)

    def read_chunked(self) -> bytes:
        """A chunked body as it came (framing, extensions and trailers kept), to forward
        verbatim with its ``Transfer-Encoding: chunked`` header."""
        raw = bytearray()
        while True:
            line = self.read_line()
            raw += line
            size = int(line.split(b";")[0].strip(), 16)
            if size == 0:
                break
            raw += self.read_exact(size + 2)
        while True:  # trailers, up to the empty line
            line = self.read_line()
            raw += line
            if line == b"\r\n":
                return bytes(raw)


def _parse_head(raw: bytes, index: int) -> ProxyRequest:
    lines = raw.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
    return ProxyRequest(method, target, headers, raw, index)


class ProxyServer:
    """A threaded loopback HTTP proxy (see the module docstring).

    ``auth``: required ``(user, password)`` (407 otherwise). ``refuse_connect``: answer
    every CONNECT with this status. ``tls``: a server context, making this an ``https://``
    proxy (clients speak TLS to it). Absolute-form requests for anything but ``http://``
    get a 400.
    """

    def __init__(
        self,
        *,
        auth: tuple[str, str] | None = None,
        refuse_connect: int | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.auth = auth
        self.refuse_connect = refuse_connect
        self.tls = tls
        self.requests: list[ProxyRequest] = []
        self.connections = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._socks: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.port: int = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._accept_thread = threading.Thread(target=self._accept, daemon=True)
        self._accept_thread.start()

    @property
    def url(self) -> str:
        if self.tls is not None:
            return f"https://localhost:{self.port}"
        return f"http://127.0.0.1:{self.port}"

    def url_with(self, user: str, password: str) -> str:
        return f"http://{user}:{password}@127.0.0.1:{self.port}"

    def __enter__(self) -> ProxyServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._accept_thread.join(5)
        self._listener.close()
        with self._lock:
            for sock in self._socks:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
        for thread in self._threads:
            thread.join(5)

    # -- serving ---------------------------------------------------------------------------

    def _track(self, sock: socket.socket) -> None:
        sock.settimeout(_TIMEOUT)
        with self._lock:
            self._socks.append(sock)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            self._track(sock)
            with self._lock:
                self.connections += 1
                index = self.connections - 1
            thread = threading.Thread(target=self._serve, args=(_Conn(sock, index),), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _authorized(self, request: ProxyRequest) -> bool:
        if self.auth is None:
            return True
        token = base64.b64encode(f"{self.auth[0]}:{self.auth[1]}".encode()).decode()
        return request.header("proxy-authorization") == f"Basic {token}"

    def _serve(self, conn: _Conn) -> None:
        try:
            if self.tls is not None:
                conn.sock = self.tls.wrap_socket(conn.sock, server_side=True)
                self._track(conn.sock)
            while not self._stop.is_set():
                raw = conn.read_head()
                if raw is None:
                    return
                request = _parse_head(raw, conn.index)
                with self._lock:
                    self.requests.append(request)
                if not self._authorized(request):
                    conn.sock.sendall(
                        b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                        b'Proxy-Authenticate: Basic realm="test"\r\n'
                        b"Content-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                    return
                if request.method == "CONNECT":
                    self._tunnel(conn, request)
                    return
                self._forward(conn, request)
        except OSError:
            return
        finally:
            conn.sock.close()

    def _tunnel(self, conn: _Conn, request: ProxyRequest) -> None:
        if self.refuse_connect is not None:
            conn.sock.sendall(
                f"HTTP/1.1 {self.refuse_connect} Refused\r\n"
                "Content-Length: 0\r\nConnection: close\r\n\r\n".encode()
            )
            return
        host, _, port = request.target.rpartition(":")
        upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=_TIMEOUT)
        self._track(upstream)
        conn.sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if conn.pending:
            upstream.sendall(bytes(conn.pending))
        self._relay(conn.sock, upstream)

    def _relay(self, a: socket.socket, b: socket.socket) -> None:
        with selectors.DefaultSelector() as sel:
            sel.register(a, selectors.EVENT_READ, b)
            sel.register(b, selectors.EVENT_READ, a)
            while not self._stop.is_set():
                for key, _ in sel.select(0.05):
                    src: socket.socket = key.fileobj  # type: ignore[assignment]
                    data = src.recv(65536)
                    if not data:
                        b.close()
                        return
                    key.data.sendall(data)
                    # Decrypted bytes a TLS socket holds do not wake the selector.
                    while isinstance(src, ssl.SSLSocket) and src.pending():
                        key.data.sendall(src.recv(65536))

    def _forward(self, conn: _Conn, request: ProxyRequest) -> None:
        url = urlsplit(request.target)
        if url.scheme != "http" or url.hostname is None:
            conn.sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        if (request.header("transfer-encoding") or "").lower() == "chunked":
            body = conn.read_chunked()
        else:
            body = conn.read_exact(int(request.header("content-length") or 0))
        path = url.path or "/"
        if url.query:
            path += "?" + url.query
        hop = {"proxy-authorization", "proxy-connection", "connection"}
        lines = [f"{request.method} {path} HTTP/1.1"]
        lines += [f"{k}: {v}" for k, v in request.headers if k.lower() not in hop]
        lines.append("Connection: close")
        upstream = socket.create_connection((url.hostname, url.port or 80), timeout=_TIMEOUT)
        self._track(upstream)
        try:
            upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            response = bytearray()
            while chunk := upstream.recv(65536):
                response += chunk
        finally:
            upstream.close()
        head, _, rest = bytes(response).partition(b"\r\n\r\n")
        kept = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"connection:")]
        conn.sock.sendall(b"\r\n".join(kept) + b"\r\n\r\n" + rest)
