"""No entry point waits on the network with the GIL held (docs/hostile.md L37, docs/gil.md).

Every test makes one entry point wait about ``WAIT`` seconds on a server, and checks it
with two witnesses:

- a pure-Python thread (``Ticker``) counts as fast as it can and records its longest stall:
  with the GIL held through the wait it stalls for the whole wait;
- the server runs in a thread of this process (a scripted raw socket, a TLS socket, an
  HTTP/2 frame server, a CONNECT proxy): with the GIL held it cannot send the rest of its
  answer, and the request ends in a read timeout (``TIMEOUT``: 3 s) instead of succeeding.

Servers that are not Python threads (the embedded Rust server) leave only the first
witness; the file-system waits of the cookie jar likewise.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
import selectors
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import nodelay
import pytest
import trustme
from conftest import expected_bytes
from nodelay import _core
from proxy_server import ProxyServer
from scripted import Close, Recv, ScriptedServer, Send, Sleep, Step, accepted, read_head, response

WAIT = 1.0
"""Seconds every server holds back part of its answer (the wait under test)."""

STALL_LIMIT = WAIT * 0.6
"""A Ticker stall at least this long means the GIL was held through the wait; while it
is released, stalls are a few ms (the interpreter's switch interval, plus scheduling on a
loaded machine: hence the margin)."""

TIMEOUT = nodelay.Timeout(10.0, read=3.0)
"""A held GIL starves the in-process server: a read timeout after 3 s, not a hang."""

BODY = expected_bytes(5000)


# -- witness 1: a pure-Python thread keeps running -----------------------------------------


class Ticker:
    """A pure-Python thread counting as fast as it can and recording its longest stall
    (the longest time between two of its iterations) since ``reset``."""

    def __init__(self) -> None:
        self.ticks = 0
        self.longest = 0.0
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        clock = time.monotonic
        last = clock()
        while not self._stop:
            self.ticks += 1
            now = clock()
            if now - last > self.longest:
                self.longest = now - last
            last = now

    def reset(self) -> None:
        self.longest = 0.0

    def stop(self) -> None:
        self._stop = True
        self._thread.join(timeout=10)


@contextlib.contextmanager
def gil_free(what: str, *, waits: float = WAIT * 0.9) -> Iterator[None]:
    """Runs the block (which waits at least ``waits`` s on a server) while a ``Ticker``
    runs; fails if the ticker stalled through the wait, or if the block timed out (the
    in-process server was starved)."""
    ticker = Ticker()
    time.sleep(0.05)  # let it start
    ticks = ticker.ticks
    ticker.reset()
    started = time.monotonic()
    try:
        yield
    except nodelay.TimeoutException as exc:
        pytest.fail(f"{what}: timed out ({exc!r}): the in-process server was starved of the GIL")
    finally:
        took = time.monotonic() - started
        ticker.stop()
    counted = ticker.ticks - ticks
    assert took >= waits, f"{what}: returned after {took:.2f} s, before the server's wait"
    assert ticker.longest < STALL_LIMIT, (
        f"{what}: a pure-Python thread stalled {ticker.longest:.2f} s of a {took:.2f} s call "
        f"({counted} ticks): the GIL was held while waiting"
    )
    assert counted > 1000, f"{what}: a pure-Python thread barely ran ({counted} ticks)"


# -- servers in threads of this process -----------------------------------------------------


def head_then_body(
    body: bytes, headers: list[tuple[str, str]] | None = None, *, at_once: bytes = b""
) -> list[Step]:
    """Answers one request with the head (and ``at_once``, the start of ``body``) at
    once, the rest of the body ``WAIT`` s later."""
    whole = response(200, body, headers or [])
    head = whole[: len(whole) - len(body)]
    assert body.startswith(at_once)
    return [Recv(), Send(head + at_once), Sleep(WAIT), Send(body[len(at_once) :]), Close()]


def late_answer(body: bytes = BODY, headers: list[tuple[str, str]] | None = None) -> list[Step]:
    """Answers one request ``WAIT`` s after reading it."""
    return [Recv(), Sleep(WAIT), Send(response(200, body, headers or [])), Close()]


def gzip_members(*parts: bytes) -> bytes:
    """``parts`` as consecutive gzip members (one stream a decoder can hand out member by
    member: the first part decodes before the second arrives)."""
    return b"".join(gzip.compress(p) for p in parts)


# -- sync requests --------------------------------------------------------------------------


def test_get_waiting_for_the_head(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(late_answer())
    with gil_free("get (head)"), nodelay.Client(timeout=TIMEOUT) as c:
        assert c.get(srv.url + "/").content == BODY


def test_get_waiting_for_the_body(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(head_then_body(BODY))
    with gil_free("get (body)"), nodelay.Client(timeout=TIMEOUT) as c:
        assert c.request("GET", srv.url + "/").content == BODY


def test_get_waiting_for_a_gzip_body(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(head_then_body(gzip.compress(BODY), [("Content-Encoding", "gzip")]))
    with gil_free("get (gzip body)"), nodelay.Client(timeout=TIMEOUT) as c:
        assert c.get(srv.url + "/").content == BODY


def test_module_level_get(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(head_then_body(BODY))
    with gil_free("nodelay.get"):
        assert nodelay.get(srv.url + "/", timeout=TIMEOUT).content == BODY


# -- streamed responses ---------------------------------------------------------------------


def test_stream_waiting_for_the_head(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(late_answer())
    with gil_free("stream (head)"), nodelay.Client(timeout=TIMEOUT) as c:
        with c.stream("GET", srv.url + "/") as r:
            assert r.read() == BODY


def test_stream_plain_first_read(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(head_then_body(BODY))
    with gil_free("stream (plain body)"), nodelay.Client(timeout=TIMEOUT) as c:
        with c.stream("GET", srv.url + "/") as r:
            assert b"".join(r.iter_bytes()) == BODY


@pytest.fixture(scope="module")
def encoded(server: _core.TestServer) -> dict[str, bytes]:
    """``BODY`` encoded with each coding the engine decodes, as the embedded server sends
    it (the test environment has no brotli or zstd module)."""
    out = {"gzip": gzip.compress(BODY)}
    with nodelay.Client() as c:
        for route, token in (("brotli", "br"), ("zstd", "zstd"), ("deflate", "deflate")):
            with c.stream("GET", f"{server.url}/{route}/{len(BODY)}") as r:
                assert r.headers["content-encoding"] == token
                out[token] = b"".join(r.iter_raw())
    return out


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd", "deflate"])
def test_encoded_stream_first_read(
    scripted: Callable[..., ScriptedServer], encoded: dict[str, bytes], coding: str
) -> None:
    """The first read of an encoded body starts its decoder, which may read (gzip reads
    its header as it is made): the wait for the first body bytes."""
    srv = scripted(head_then_body(encoded[coding], [("Content-Encoding", coding)]))
    with gil_free(f"stream ({coding} body)"), nodelay.Client(timeout=TIMEOUT) as c:
        with c.stream("GET", srv.url + "/") as r:
            assert b"".join(r.iter_bytes()) == BODY


def test_gzip_stream_read_in_the_middle_of_the_body(
    scripted: Callable[..., ScriptedServer],
) -> None:
    first, rest = BODY[:2000], BODY[2000:]
    member = gzip.compress(first)
    body = member + gzip.compress(rest)
    srv = scripted(head_then_body(body, [("Content-Encoding", "gzip")], at_once=member))
    with nodelay.Client(timeout=TIMEOUT) as c, c.stream("GET", srv.url + "/") as r:
        pieces = r.iter_bytes()
        assert next(pieces) == first  # before the wait
        with gil_free("stream (gzip, middle of the body)"):
            assert b"".join(pieces) == rest


READERS: dict[str, Callable[[nodelay.Response], Any]] = {
    "read": lambda r: r.read(),
    "content": lambda r: r.content,
    "iter_bytes": lambda r: b"".join(r.iter_bytes()),
    "iter_raw": lambda r: gzip.decompress(b"".join(r.iter_raw())),
    "iter_text": lambda r: "".join(r.iter_text()).encode(),
    "iter_lines": lambda r: "\n".join(r.iter_lines()).encode(),
    "iter_content": lambda r: b"".join(r.iter_content(1000)),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_of_a_gzip_stream(
    scripted: Callable[..., ScriptedServer], reader: str
) -> None:
    text = b"line one\nline two\n" * 100
    srv = scripted(head_then_body(gzip.compress(text), [("Content-Encoding", "gzip")]))
    expected = text.rstrip(b"\n") if reader == "iter_lines" else text
    with gil_free(f"stream + {reader}"), nodelay.Client(timeout=TIMEOUT) as c:
        # ``content`` reads a streamed body for requests' ``stream=True``; a
        # ``client.stream(...)`` response raises ResponseNotRead before ``read()`` (httpx).
        opened = (
            c.request("GET", srv.url + "/", stream=True)
            if reader == "content"
            else c.stream("GET", srv.url + "/")
        )
        with opened as r:
            assert READERS[reader](r) == expected


def test_request_with_stream_true(scripted: Callable[..., ScriptedServer]) -> None:
    """requests' spelling: ``stream=True``, then ``content``."""
    srv = scripted(head_then_body(gzip.compress(BODY), [("Content-Encoding", "gzip")]))
    with gil_free("request(stream=True)"), nodelay.Client(timeout=TIMEOUT) as c:
        r = c.request("GET", srv.url + "/", stream=True)
        assert r.content == BODY


def test_closing_a_stream_another_thread_is_reading(
    scripted: Callable[..., ScriptedServer],
) -> None:
    """``close()`` (and ``is_closed``) wait for the body's lock, which a read in another
    thread holds while it waits on the network: they wait with the GIL released."""
    srv = scripted(head_then_body(BODY, at_once=BODY[:100]))
    with nodelay.Client(timeout=TIMEOUT) as c, c.stream("GET", srv.url + "/") as r:
        pieces = r.iter_bytes()
        assert next(pieces) == BODY[:100]
        outcome: list[object] = []

        def read_rest() -> None:
            try:
                outcome.append(b"".join(pieces))
            except nodelay.TransportError as exc:
                outcome.append(exc)

        reader = threading.Thread(target=read_rest, daemon=True)
        reader.start()
        time.sleep(0.2)  # the reader now waits for the rest
        with gil_free("close() during a read", waits=WAIT * 0.5):
            r.close()
        reader.join(timeout=10)
        assert r.is_closed
        assert outcome == [BODY[100:]]


# -- batches --------------------------------------------------------------------------------


def test_get_many_on_the_runtime(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(head_then_body(BODY))
    with gil_free("get_many"), nodelay.Client(timeout=TIMEOUT) as c:
        (r,) = c.get_many([srv.url + "/"])
        assert r.content == BODY


def test_get_many_on_threads(scripted: Callable[..., ScriptedServer]) -> None:
    """A client with a proxy runs batches on worker threads: here the proxy is a scripted
    server answering the absolute-form request itself."""
    srv = scripted(head_then_body(BODY))
    with gil_free("get_many (threads)"), nodelay.Client(timeout=TIMEOUT, proxy=srv.url) as c:
        (r,) = c.get_many(["http://example.invalid/"])
        assert r.content == BODY


def test_get_many_over_http2(h2server: H2Server) -> None:
    h2server.serve(BODY, headers=[], split=100)
    with gil_free("get_many (h2)"), nodelay.Client(http2="prior_knowledge", timeout=TIMEOUT) as c:
        (r,) = c.get_many([h2server.url + "/"])
        assert r.http_version == "HTTP/2"
        assert r.content == BODY


# -- HTTP/2, blocking face --------------------------------------------------------------------


class H2Server:
    """An h2c (prior knowledge) server in a thread of this process, speaking raw frames:
    it answers each request with a HEADERS frame and ``split`` bytes of the body at once,
    the rest of the body ``WAIT`` s later (END_STREAM on the last DATA frame)."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._stop = threading.Event()
        self._answer: tuple[bytes, list[tuple[str, str]], int] = (b"", [], 0)
        self._threads: list[threading.Thread] = []
        self._accepter = threading.Thread(target=self._accept, daemon=True)
        self._accepter.start()

    def serve(self, body: bytes, *, headers: list[tuple[str, str]], split: int = 0) -> None:
        self._answer = (body, headers, split)

    def close(self) -> None:
        self._stop.set()
        self._accepter.join(timeout=5)
        for thread in self._threads:
            thread.join(timeout=5)
        self._listener.close()

    def _accept(self) -> None:
        for sock in accepted(self._listener, self._stop):
            thread = threading.Thread(target=self._run, args=(sock,), daemon=True)
            self._threads.append(thread)
            thread.start()

    @staticmethod
    def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
        return (
            struct.pack(">I", len(payload))[1:]
            + bytes([kind, flags])
            + struct.pack(">I", stream)
            + payload
        )

    @staticmethod
    def _literal(name: str, value: str) -> bytes:
        # RFC 7541 §6.2.2: literal header field without indexing, new name, no Huffman.
        n, v = name.encode(), value.encode()
        assert len(n) < 127 and len(v) < 127
        return bytes([0, len(n)]) + n + bytes([len(v)]) + v

    def _recv_exact(self, sock: socket.socket, n: int) -> bytes:
        buf = b""
        deadline = time.monotonic() + 30
        while len(buf) < n:
            if self._stop.is_set() or time.monotonic() > deadline:
                raise OSError("stopped")
            try:
                data = sock.recv(n - len(buf))
            except TimeoutError:
                continue
            if not data:
                raise OSError("closed")
            buf += data
        return buf

    def _run(self, sock: socket.socket) -> None:
        sock.settimeout(0.05)
        try:
            self._recv_exact(sock, 24)  # the connection preface
            sock.sendall(self._frame(0x4, 0, 0))  # our SETTINGS
            while True:
                length, kind, flags, stream = struct.unpack(
                    ">IBBI", b"\0" + self._recv_exact(sock, 9)
                )
                self._recv_exact(sock, length)
                if kind == 0x4 and not flags & 0x1:  # SETTINGS: acknowledge
                    sock.sendall(self._frame(0x4, 0x1, 0))
                elif kind == 0x1:  # HEADERS of a request: answer it
                    self._respond(sock, stream & 0x7FFFFFFF)
                elif kind == 0x7:  # GOAWAY
                    return
        except OSError:
            pass
        finally:
            sock.close()

    def _respond(self, sock: socket.socket, stream: int) -> None:
        body, headers, split = self._answer
        block = self._literal(":status", "200") + b"".join(
            self._literal(n, v) for n, v in [*headers, ("content-length", str(len(body)))]
        )
        sock.sendall(
            self._frame(0x1, 0x4, stream, block) + self._frame(0x0, 0, stream, body[:split])
        )
        if self._stop.wait(WAIT):
            return
        sock.sendall(self._frame(0x0, 0x1, stream, body[split:]))


@pytest.fixture
def h2server() -> Iterator[H2Server]:
    srv = H2Server()
    yield srv
    srv.close()


def test_http2_get(h2server: H2Server) -> None:
    h2server.serve(BODY, headers=[], split=100)
    with gil_free("h2 get"), nodelay.Client(http2="prior_knowledge", timeout=TIMEOUT) as c:
        r = c.get(h2server.url + "/")
        assert r.http_version == "HTTP/2"
        assert r.content == BODY


def test_http2_stream(h2server: H2Server) -> None:
    h2server.serve(BODY, headers=[])
    with gil_free("h2 stream"), nodelay.Client(http2="prior_knowledge", timeout=TIMEOUT) as c:
        with c.stream("GET", h2server.url + "/") as r:
            assert b"".join(r.iter_bytes()) == BODY


def test_http2_gzip_stream_first_read(h2server: H2Server) -> None:
    h2server.serve(gzip.compress(BODY), headers=[("content-encoding", "gzip")])
    with gil_free("h2 gzip stream"), nodelay.Client(http2="prior_knowledge", timeout=TIMEOUT) as c:
        with c.stream("GET", h2server.url + "/") as r:
            assert r.read() == BODY


def test_http2_embedded_server_delay() -> None:
    """The embedded (Rust) server over h2c: only the pure-Python thread witnesses."""
    h2c = _core.TestServer(http2=True)
    try:
        with (
            gil_free("h2 get, embedded server"),
            nodelay.Client(http2="prior_knowledge", timeout=TIMEOUT) as c,
        ):
            assert c.get(f"{h2c.url}/delay/{int(WAIT * 1000)}").text == "delayed"
    finally:
        h2c.close()


# -- AsyncClient ----------------------------------------------------------------------------


def run_async_witnessed(what: str, make: Callable[[], Any]) -> Any:
    """Runs ``make()`` (a coroutine) on a new event loop in this thread, with a second task
    ticking on the same loop: the loop thread must keep running while the request waits."""

    async def main() -> tuple[Any, int]:
        ticks = 0
        longest = 0.0

        async def tick() -> None:
            nonlocal ticks, longest
            last = time.monotonic()
            while True:
                await asyncio.sleep(0.01)
                now = time.monotonic()
                longest = max(longest, now - last)
                last = now
                ticks += 1

        ticker = asyncio.create_task(tick())
        try:
            result = await make()
        finally:
            ticker.cancel()
        assert longest < STALL_LIMIT, f"{what}: the event loop stalled {longest:.2f} s"
        return result, ticks

    with gil_free(what):
        result, ticks = asyncio.run(main())
    assert ticks > 10, f"{what}: the event loop ticked {ticks} times during the wait"
    return result


def test_async_get(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(head_then_body(BODY))

    async def go() -> bytes:
        async with nodelay.AsyncClient(timeout=TIMEOUT) as c:
            return (await c.get(srv.url + "/")).content

    assert run_async_witnessed("AsyncClient.get", go) == BODY


def test_async_gzip_stream(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(head_then_body(gzip.compress(BODY), [("Content-Encoding", "gzip")]))

    async def go() -> bytes:
        async with nodelay.AsyncClient(timeout=TIMEOUT) as c:
            async with c.stream("GET", srv.url + "/") as r:
                return b"".join([piece async for piece in r.aiter_bytes()])

    assert run_async_witnessed("AsyncClient.stream (gzip)", go) == BODY


def test_async_upload_from_a_generator(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(slow_reader())

    async def go() -> int:
        async with nodelay.AsyncClient(timeout=UPLOAD_TIMEOUT) as c:
            return (await c.post(srv.url + "/", content=upload_pieces())).status_code

    assert run_async_witnessed("AsyncClient.post (generator body)", go) == 200
    assert len(srv.requests[0]) > UPLOAD_BYTES


def test_async_upload_from_an_async_generator(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(slow_reader())

    async def pieces() -> Any:
        for piece in upload_pieces():
            yield piece

    async def go() -> int:
        async with nodelay.AsyncClient(timeout=UPLOAD_TIMEOUT) as c:
            return (await c.post(srv.url + "/", content=pieces())).status_code

    assert run_async_witnessed("AsyncClient.post (async generator body)", go) == 200
    assert len(srv.requests[0]) > UPLOAD_BYTES


# -- uploads --------------------------------------------------------------------------------

UPLOAD_BYTES = 16 * 1024 * 1024
"""More than loopback's socket buffers hold (a few MiB each way), so the client waits for
the server to read."""

UPLOAD_PIECE = b"u" * (256 * 1024)

UPLOAD_TIMEOUT = nodelay.Timeout(30.0, write=3.0, read=10.0)
"""A held GIL stops the server from reading: a write timeout after 3 s."""


def upload_pieces() -> Iterator[bytes]:
    for _ in range(UPLOAD_BYTES // len(UPLOAD_PIECE)):
        yield UPLOAD_PIECE


def slow_reader() -> list[Step]:
    """Reads the request only ``WAIT`` s after the connection opens, then answers."""
    return [Sleep(WAIT), Recv(timeout=30), Send(response(200, b"ok")), Close()]


def test_upload_from_a_generator(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(slow_reader())
    with gil_free("post (generator body)"), nodelay.Client(timeout=UPLOAD_TIMEOUT) as c:
        assert c.post(srv.url + "/", content=upload_pieces()).status_code == 200
    assert len(srv.requests[0]) > UPLOAD_BYTES


def test_upload_from_a_file(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(slow_reader())
    with tempfile.TemporaryFile() as f:
        for piece in upload_pieces():
            f.write(piece)
        f.seek(0)
        with gil_free("post (file body)"), nodelay.Client(timeout=UPLOAD_TIMEOUT) as c:
            assert c.post(srv.url + "/", content=f).status_code == 200
    assert len(srv.requests[0]) > UPLOAD_BYTES


def test_upload_of_bytes(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted(slow_reader())
    with gil_free("post (bytes body)"), nodelay.Client(timeout=UPLOAD_TIMEOUT) as c:
        assert c.post(srv.url + "/", content=b"b" * UPLOAD_BYTES).status_code == 200


# -- connection establishment ---------------------------------------------------------------


def test_connect() -> None:
    """A listener whose accept queue is full drops the SYNs of new connections: the
    client waits in connect until its connect timeout (no server thread to starve)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        for _ in range(8):  # fill the accept queue (its length is backlog + 1)
            s = socket.socket()
            s.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                s.connect(("127.0.0.1", port))
            fillers.append(s)
        time.sleep(0.1)
        timeout = nodelay.Timeout(10.0, connect=WAIT * 1.5)
        with gil_free("connect"), pytest.raises(nodelay.ConnectTimeout):
            nodelay.get(f"http://127.0.0.1:{port}/", timeout=timeout)
    finally:
        for s in fillers:
            s.close()
        listener.close()


IN_PROCESS_WAIT = 10
"""Seconds a one-connection server in a thread of this process waits to accept, to read
and to end: generous for a loaded machine, far past any wait under test."""


@contextlib.contextmanager
def serving_one(handle: Callable[[socket.socket, threading.Event], None]) -> Iterator[int]:
    """A loopback listener whose first connection ``handle`` serves in a thread of this
    process, told by its event when the test is over: the listener's port."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(IN_PROCESS_WAIT)
    stop = threading.Event()

    def serve() -> None:
        try:
            sock, _ = listener.accept()
        except OSError:
            return
        with sock:
            handle(sock, stop)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()
        thread.join(timeout=IN_PROCESS_WAIT)


@contextlib.contextmanager
def tls_origin(ca: trustme.CA, *, handshake_delay: float) -> Iterator[int]:
    """An https origin in a thread of this process: it starts the TLS handshake only
    ``handshake_delay`` s after accepting, reads one request and answers ``BODY``."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("localhost", "127.0.0.1").configure_cert(context)

    def handle(sock: socket.socket, stop: threading.Event) -> None:
        if stop.wait(handshake_delay):
            return
        sock.settimeout(IN_PROCESS_WAIT)
        try:
            with context.wrap_socket(sock, server_side=True) as tls:
                if read_head(tls) is None:
                    return
                tls.sendall(response(200, BODY, [("Connection", "close")]))
        except (OSError, ssl.SSLError):
            return

    with serving_one(handle) as port:
        yield port


def test_tls_handshake(ca: trustme.CA, ca_file: str) -> None:
    with tls_origin(ca, handshake_delay=WAIT) as port:
        with gil_free("TLS handshake"), nodelay.Client(verify=ca_file, timeout=TIMEOUT) as c:
            assert c.get(f"https://localhost:{port}/").content == BODY


@contextlib.contextmanager
def slow_connect_proxy() -> Iterator[str]:
    """A CONNECT proxy in a thread of this process that answers the CONNECT only ``WAIT``
    s after reading it, then relays bytes both ways."""

    def handle(client: socket.socket, stop: threading.Event) -> None:
        client.settimeout(IN_PROCESS_WAIT)
        head = read_head(client)
        if head is None:
            return
        _, _, port = head.split(b" ")[1].decode().rpartition(":")
        if stop.wait(WAIT):
            return
        upstream_address = ("127.0.0.1", int(port))
        with socket.create_connection(upstream_address, timeout=IN_PROCESS_WAIT) as upstream:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            relay(client, upstream, stop)

    with serving_one(handle) as port:
        yield f"http://127.0.0.1:{port}"


def relay(a: socket.socket, b: socket.socket, stop: threading.Event) -> None:
    with selectors.DefaultSelector() as sel:
        sel.register(a, selectors.EVENT_READ, b)
        sel.register(b, selectors.EVENT_READ, a)
        while not stop.is_set():
            for key, _ in sel.select(timeout=0.05):
                data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                if not data:
                    return
                key.data.sendall(data)


def test_proxy_connect(ca: trustme.CA, ca_file: str) -> None:
    with tls_origin(ca, handshake_delay=0) as port, slow_connect_proxy() as proxy:
        with (
            gil_free("proxy CONNECT"),
            nodelay.Client(proxy=proxy, verify=ca_file, timeout=TIMEOUT) as c,
        ):
            assert c.get(f"https://localhost:{port}/").content == BODY


@contextlib.contextmanager
def slow_socks5_proxy() -> Iterator[str]:
    """A SOCKS5 proxy (no authentication, CONNECT to an IPv4 address or a name) in a thread
    of this process that answers the method selection only ``WAIT`` s after reading it,
    then relays bytes both ways."""

    def recv_exactly(sock: socket.socket, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed mid-handshake")
            data += chunk
        return data

    def handle(client: socket.socket, stop: threading.Event) -> None:
        client.settimeout(IN_PROCESS_WAIT)
        _, n_methods = recv_exactly(client, 2)
        recv_exactly(client, n_methods)
        if stop.wait(WAIT):
            return
        client.sendall(b"\x05\x00")
        _, _, _, atyp = recv_exactly(client, 4)
        if atyp == 1:
            host = socket.inet_ntoa(recv_exactly(client, 4))
        else:
            host = recv_exactly(client, recv_exactly(client, 1)[0]).decode()
        port = int.from_bytes(recv_exactly(client, 2), "big")
        with socket.create_connection((host, port), timeout=IN_PROCESS_WAIT) as upstream:
            client.sendall(b"\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00")
            relay(client, upstream, stop)

    with serving_one(handle) as port:
        yield f"socks5h://127.0.0.1:{port}"


def test_socks_proxy_handshake(ca: trustme.CA, ca_file: str) -> None:
    with tls_origin(ca, handshake_delay=0) as port, slow_socks5_proxy() as proxy:
        with (
            gil_free("SOCKS handshake"),
            nodelay.Client(proxy=proxy, verify=ca_file, timeout=TIMEOUT) as c,
        ):
            assert c.get(f"https://localhost:{port}/").content == BODY


def test_forwarding_proxy(scripted: Callable[..., ScriptedServer]) -> None:
    """An http URL through the test suite's (Python) forwarding proxy."""
    srv = scripted(late_answer())
    with ProxyServer() as proxy:
        with gil_free("forwarding proxy"), nodelay.Client(proxy=proxy.url, timeout=TIMEOUT) as c:
            assert c.get(srv.url + "/").content == BODY


# -- redirects, retries, cookies ------------------------------------------------------------


def test_redirect(scripted: Callable[..., ScriptedServer]) -> None:
    srv = scripted([Recv(), Send(response(302, b"", [("Location", "/next")])), *late_answer()])
    with gil_free("redirect"), nodelay.Client(timeout=TIMEOUT, follow_redirects=True) as c:
        r = c.get(srv.url + "/")
        assert r.content == BODY
        assert len(r.history) == 1


def test_retry_backoff_sleep(scripted: Callable[..., ScriptedServer]) -> None:
    """The backoff before a retry (Retry-After: 1) is a sleep, not a wait on the network;
    the pure-Python thread must run through it."""
    busy = response(503, b"", [("Retry-After", "1")])
    srv = scripted([Recv(), Send(busy), Recv(), Send(response(200, BODY)), Close()])
    retry = nodelay.Retry(total=1, statuses=[503], respect_retry_after=True)
    with gil_free("retry backoff"), nodelay.Client(timeout=TIMEOUT, retries=retry) as c:
        assert c.get(srv.url + "/").content == BODY


@contextlib.contextmanager
def later_in_another_process(command: str) -> Iterator[None]:
    """Runs the shell ``command`` in a child process ``WAIT`` s from now; the block must
    let it finish. On failure the child (``exec``'d, so it is the command itself) is
    killed, never left blocked on a FIFO."""
    child = subprocess.Popen(["sh", "-c", f"sleep {WAIT}; exec {command}"])
    try:
        yield
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_cookie_file_autosave(scripted: Callable[..., ScriptedServer], tmp_path: Any) -> None:
    """Autosave writes the jar to ``path`` through a temporary file next to it; made a
    FIFO here, that write waits until a reader (another process, ``WAIT`` s later) opens
    it."""
    path = tmp_path / "cookies.txt"
    jar = nodelay.CookieJar(autosave=path)
    os.mkfifo(f"{path}.tmp{os.getpid()}")
    srv = scripted([Recv(), Send(response(200, b"", [("Set-Cookie", "a=1")])), Close()])
    reader = f"cat '{path}.tmp{os.getpid()}' > '{tmp_path}/seen'"
    with later_in_another_process(reader):
        with gil_free("cookie autosave"), nodelay.Client(cookies=jar, timeout=TIMEOUT) as c:
            c.get(srv.url + "/")
    assert "\ta\t1" in (tmp_path / "seen").read_text()


def test_cookie_file_load(tmp_path: Any) -> None:
    """Loading a cookies.txt that is a FIFO waits until a writer (another process, ``WAIT``
    s later) sends it."""
    path = tmp_path / "cookies.txt"
    os.mkfifo(path)
    line = "127.0.0.1\\tFALSE\\t/\\tFALSE\\t0\\ta\\t1\\n"
    with later_in_another_process(f"printf '{line}' > '{path}'"):
        with gil_free("cookie file load"):
            jar = nodelay.CookieJar.load(path)
    assert len(jar) == 1
