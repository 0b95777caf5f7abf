"""hypercorn (a third-party ASGI/WSGI server that speaks HTTP/2) on a loopback port, in a
thread, for the tests that check nodelay against it."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

#: How long hypercorn may take to start listening (and to stop) before the test gives up.
START_TIMEOUT_S = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def serve(app: Any, mode: str | None = None, **settings: Any) -> Iterator[int]:
    """Runs hypercorn with ``app`` (``mode`` "wsgi" for a WSGI app) and the ``Config``
    ``settings`` until the generator is closed; yields the port it listens on."""
    hypercorn_asyncio = pytest.importorskip("hypercorn.asyncio")
    hypercorn_config = pytest.importorskip("hypercorn.config")
    port = free_port()
    config = hypercorn_config.Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.errorlog = None
    for name, value in settings.items():
        setattr(config, name, value)
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    def run() -> None:
        loop.run_until_complete(
            hypercorn_asyncio.serve(app, config, shutdown_trigger=stop.wait, mode=mode)
        )

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
        yield port
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(START_TIMEOUT_S)
