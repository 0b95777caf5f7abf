"""PyPI's ``httpbin`` app served by ``waitress`` (a real WSGI server) on a free loopback
port, in a child process: ``with HttpbinServer() as url: ...`` (``url`` has no trailing
slash). A child process keeps the server's Python threads off the tests' GIL and lets the
server stop at once even while a slow endpoint (``/delay``) is still answering.

Fixture (registered for every module by conftest.py): ``httpbin``, one server per module.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from types import TracebackType

import pytest

SERVER_THREADS = 8
"""waitress worker threads: enough for the slow endpoints the timeout tests leave
hanging while the rest of the suite goes on."""
START_WAIT_S = 30.0
"""Most seconds for the child to import httpbin and report its port."""
STOP_WAIT_S = 5.0
"""Seconds to wait for the child after SIGTERM before killing it."""

_CHILD = f"""
import logging, sys
logging.disable(logging.WARNING)  # httpbin warns about its optional Swagger UI
import httpbin
from waitress.server import create_server
server = create_server(httpbin.app, host="127.0.0.1", port=0, threads={SERVER_THREADS})
print(server.effective_port, flush=True)
server.run()
"""


class HttpbinServer:
    """httpbin under waitress in a child process, for the duration of a ``with``."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> str:
        process = self._process = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert process.stdout is not None
        try:
            line = _readline_within(process, START_WAIT_S)
        except BaseException:
            self._stop()
            raise
        self.url = f"http://127.0.0.1:{int(line)}"
        return self.url

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop()

    def _stop(self) -> None:
        process = self._process
        if process is None:
            return
        process.terminate()
        try:
            process.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _readline_within(process: subprocess.Popen[str], seconds: float) -> str:
    import selectors

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(seconds):
            raise RuntimeError(f"httpbin did not start within {seconds} s")
    line = process.stdout.readline()
    if not line.strip():
        raise RuntimeError(f"httpbin exited at start (status {process.poll()})")
    return line


@pytest.fixture(scope="module")
def httpbin() -> Iterator[str]:
    """PyPI's httpbin under waitress, one per test module: its URL (no trailing slash).
    Skips the module's tests when httpbin is not installed."""
    pytest.importorskip("httpbin")
    with HttpbinServer() as url:
        yield url
