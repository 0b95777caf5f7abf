"""Third-party SOCKS servers on loopback, for tests.

- ``Microsocks``: microsocks (Debian ``microsocks``, a small C SOCKS5 server), with or
  without a username and password (RFC 1929). It logs each tunnel it opens as
  ``client[N] IP: connected to HOST:PORT``, HOST as the client sent it: a name for a
  domain-name address (ATYP 3), an address otherwise. ``targets()`` reads that log, so
  a test sees on the wire whether the client or the proxy resolved the name.
- ``TwistedSocks4``: Twisted's SOCKSv4 server (``twisted.protocols.socks``), which speaks
  SOCKS4 and the SOCKS4A extension (microsocks speaks SOCKS5 only).

Each runs in its own process on a free loopback port, and stops on ``close()`` (or at the
end of a ``with`` block). A missing server skips the test that asked for it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from types import TracebackType

import pytest

__all__ = ["Microsocks", "TwistedSocks4"]

_START_TIMEOUT = 10.0
"""Seconds a server has to start listening."""

_LOG_LINE = re.compile(r"connected to (.+):(\d+)$")


def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the SOCKS server exited with status {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"the SOCKS server did not listen on port {port}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Server:
    scheme = "socks5"
    process: subprocess.Popen[bytes]
    port: int

    def url(self, scheme: str | None = None, userinfo: str = "") -> str:
        """The proxy URL, e.g. ``socks5h://user:pass@127.0.0.1:1080``."""
        at = f"{userinfo}@" if userinfo else ""
        return f"{scheme or self.scheme}://{at}127.0.0.1:{self.port}"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> _Server:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Microsocks(_Server):
    """microsocks on a free port; ``auth=(user, password)`` makes it require them."""

    def __init__(self, auth: tuple[str, str] | None = None) -> None:
        binary = shutil.which("microsocks")
        if binary is None:
            pytest.skip("microsocks is not installed (Debian package microsocks; make test-python)")
        self.port = _free_port()
        args = [binary, "-i", "127.0.0.1", "-p", str(self.port)]
        if auth is not None:
            args += ["-u", auth[0], "-P", auth[1]]
        # The log goes to a file: microsocks writes it unbuffered, and a pipe nobody
        # reads could fill up.
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT)
        _wait_listening(self.port, self.process)
        # The readiness probe connected once without a handshake: not a tunnel, no line.

    def targets(self) -> list[tuple[str, int]]:
        """``(host, port)`` of every tunnel opened so far, host as the client sent it."""
        self._log.seek(0)
        found = []
        for line in self._log.read().decode(errors="replace").splitlines():
            match = _LOG_LINE.search(line)
            if match:
                found.append((match.group(1), int(match.group(2))))
        return found

    def close(self) -> None:
        super().close()
        self._log.close()


_TWISTED_MAIN = """
import sys
from twisted.internet import reactor
from twisted.protocols.socks import SOCKSv4Factory
port = reactor.listenTCP(int(sys.argv[1]), SOCKSv4Factory(None), interface="127.0.0.1")
reactor.run()
"""


class TwistedSocks4(_Server):
    """Twisted's SOCKSv4/4A server on a free port."""

    scheme = "socks4a"

    def __init__(self) -> None:
        pytest.importorskip("twisted", reason="twisted is not installed (make dev installs it)")
        self.port = _free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _TWISTED_MAIN, str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        _wait_listening(self.port, self.process)
