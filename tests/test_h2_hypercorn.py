"""HTTP/2 bodies ended by an empty DATA frame carrying END_STREAM, against a real server
that ends every response that way: hypercorn (h2c, prior knowledge). The sync client's
non-streamed read used to reject them ("HTTP/2 body length differs from Content-Length:
received 16384 of 16384 bytes"). The byte-level tests of the same shapes are in
crates/nodelay-core/tests/h2_empty_data.rs; this one checks the user-visible path against
a server nobody here wrote. Skipped, with the reason, when hypercorn is not installed."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import nodelay
import pytest

hypercorn_asyncio = pytest.importorskip(
    "hypercorn.asyncio", reason="hypercorn is not installed (pip install hypercorn)"
)
hypercorn_config = pytest.importorskip("hypercorn.config")

#: How long hypercorn may take to start listening before the test gives up.
START_TIMEOUT_S = 10.0

#: A body of exactly one default-size DATA frame (Go and Caddy end these with an empty
#: frame too), and a small one.
SIZES = (16_384, 43)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def body_of(size: int) -> bytes:
    return bytes(i % 251 for i in range(size))


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """`/<n>`: n bytes with their Content-Length; `/204`: No Content."""
    if scope["type"] != "http":
        return
    name = scope["path"].strip("/")
    if name == "204":
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    body = body_of(int(name))
    headers = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def hypercorn_url() -> Iterator[str]:
    port = free_port()
    config = hypercorn_config.Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.errorlog = None
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    def run() -> None:
        loop.run_until_complete(hypercorn_asyncio.serve(app, config, shutdown_trigger=stop.wait))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"hypercorn did not listen on {port} within {START_TIMEOUT_S} s")
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(START_TIMEOUT_S)


@pytest.mark.parametrize("size", SIZES)
def test_get_of_a_body_ended_by_an_empty_data_frame(hypercorn_url: str, size: int) -> None:
    with nodelay.Client(http2="prior_knowledge", timeout=10) as client:
        response = client.get(f"{hypercorn_url}/{size}")
    assert response.http_version == "HTTP/2"
    assert response.status_code == 200
    assert response.content == body_of(size)


def test_head_and_204_ended_by_an_empty_data_frame(hypercorn_url: str) -> None:
    with nodelay.Client(http2="prior_knowledge", timeout=10) as client:
        head = client.head(f"{hypercorn_url}/16384")
        no_content = client.get(f"{hypercorn_url}/204")
    assert (head.status_code, head.headers["content-length"], head.content) == (200, "16384", b"")
    assert (no_content.status_code, no_content.content) == (204, b"")
