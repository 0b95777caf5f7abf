"""``Client.get_many`` and ``Client.map`` go where ``Client.get`` goes: to the Unix socket
or from the local address of the client's ``HTTPTransport``, and through its transport or
mounts (a ``MockTransport``, an ``HTTPTransport`` with retries), never around them."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import nodelay
import pytest


class _WhoAmI(BaseHTTPRequestHandler):
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


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@contextmanager
def _serving(server: socketserver.BaseServer) -> Iterator[socketserver.BaseServer]:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def unix_server(tmp_path: Path) -> Iterator[str]:
    path = str(tmp_path / "http.sock")
    with _serving(_UnixHTTPServer(path, _WhoAmI)):
        yield path


@pytest.fixture
def tcp_port() -> Iterator[int]:
    with _serving(ThreadingHTTPServer(("127.0.0.1", 0), _WhoAmI)) as server:
        yield server.server_address[1]  # type: ignore[attr-defined]


URLS = ["http://svc.local/a", "http://svc.local/b?x=1", "http://other:8080/c"]
ANSWERS = ["/a svc.local unix", "/b?x=1 svc.local unix", "/c other:8080 unix"]


def test_batches_go_to_the_transports_unix_socket(unix_server: str) -> None:
    with nodelay.Client(transport=nodelay.HTTPTransport(uds=unix_server)) as client:
        assert [r.text for r in client.get_many(URLS)] == ANSWERS
        assert [r.text for r in client.map([("GET", u) for u in URLS])] == ANSWERS


def test_batches_through_a_retrying_transport_or_a_mount(unix_server: str) -> None:
    # Neither transport's engine is the client's: the batch must route through them.
    retrying = nodelay.HTTPTransport(uds=unix_server, retries=1)
    with nodelay.Client(transport=retrying) as client:
        assert [r.text for r in client.get_many(URLS)] == ANSWERS
    mounts = {"http://svc.local": nodelay.HTTPTransport(uds=unix_server)}
    with nodelay.Client(mounts=mounts) as client:
        assert [r.text for r in client.get_many(URLS[:2])] == ANSWERS[:2]
        with pytest.raises(nodelay.ConnectError):
            client.get_many(URLS[2:])  # not mounted: the client's own engine, over TCP


def test_batches_from_the_transports_local_address(tcp_port: int) -> None:
    url = f"http://127.0.0.1:{tcp_port}/a"
    transport = nodelay.HTTPTransport(local_address="127.0.0.2")
    with nodelay.Client(transport=transport) as client:
        answers = [r.text for r in client.get_many([url] * 4, concurrency=2)]
    assert answers == [f"/a 127.0.0.1:{tcp_port} 127.0.0.2"] * 4


def test_batches_through_a_mock_transport(tcp_port: int) -> None:
    seen: list[str] = []

    def handler(request: nodelay.Request) -> nodelay.Response:
        seen.append(str(request.url))
        return nodelay.Response(200, text="mock")

    url = f"http://127.0.0.1:{tcp_port}/a"
    with nodelay.Client(transport=nodelay.MockTransport(handler)) as client:
        assert [r.text for r in client.get_many([url, url])] == ["mock", "mock"]
        assert [r.text for r in client.map([("POST", url, {"content": b"x"})])] == ["mock"]
    assert seen == [url] * 3
