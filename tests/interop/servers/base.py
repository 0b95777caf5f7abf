"""What a third-party server launcher provides to the interop matrix.

Every server the matrix runs is started by a :class:`Launcher`. A launcher knows how to
configure one program (nginx, Apache httpd, Caddy, a Go net/http binary, uvicorn, ...) on
loopback, for each protocol it offers, and stops everything it started when its context
exits. The checks never know which program answers: they only see :class:`Endpoint`\\ s.

Every endpoint serves the same contract (see ``docs/interop.md``):

- ``/static/<name>``: the files of ``LaunchEnv.site_root / "static"``, byte for byte
  (see ``tests/interop/site.py`` for the names and sizes).
- ``/app/<httpbin path>``: the httpbin subset the checks use (``/app/anything``,
  ``/app/redirect-to?url=``, ``/app/cookies/set?n=v``, ``/app/cookies``,
  ``/app/status/<code>``, ``/app/delay/<seconds>``, ``/app/stream/<n>``, ``/app/gzip``,
  ``/app/etag/<etag>``, ``/app/bytes/<n>``). An application server answers them itself;
  a web server reverse-proxies ``/app/`` to ``LaunchEnv.backend_url`` (over HTTP/1.1,
  stripping the ``/app`` prefix), which is how most users run nginx, Apache or Caddy.
  A server that cannot proxy says so in ``Endpoint.lacks``.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

#: The protocols an endpoint may speak: HTTP/1.1 in clear, HTTP/1.1 over TLS, HTTP/2
#: negotiated by ALPN over TLS, HTTP/2 in clear with prior knowledge.
PROTOCOLS = ("h1", "h1tls", "h2", "h2c")

#: How long a server may take to start listening before its launch fails.
START_TIMEOUT_S = 15.0
#: How much of a server's log is printed when it exits during a run (the last lines hold
#: the fatal error; a whole access log would bury it).
LOG_TAIL_CHARS = 4000

#: Connection recycling every launcher configures where its server can (docs/hostile.md L39):
#: close a kept-alive HTTP/1.1 connection after this many requests (nginx
#: ``keepalive_requests``, Apache ``MaxKeepAliveRequests``), and send GOAWAY after this many
#: HTTP/2 streams where the server has such a limit.
RECYCLE_AFTER_REQUESTS = 100

#: Idle timeout a launcher gives its server where it can, shorter than nodelay's default
#: ``keepalive_expiry`` (5 s), so the checks meet connections the server closed while idle.
SERVER_IDLE_TIMEOUT_S = 2


@dataclass(frozen=True)
class LaunchEnv:
    """What every launcher is given."""

    #: Directory holding ``static/`` (the files the checks download byte for byte).
    site_root: Path
    #: PEM files for ``localhost`` / ``127.0.0.1`` signed by the test CA at ``ca_pem``.
    cert_pem: Path
    key_pem: Path
    ca_pem: Path
    #: ``http://127.0.0.1:PORT``: an HTTP/1.1 httpbin-subset backend for ``/app/`` proxying.
    backend_url: str
    #: A private scratch directory for configs, logs and pid files (world-readable, so
    #: servers that drop privileges can read it).
    workdir: Path


@dataclass(frozen=True)
class Endpoint:
    """One server speaking one protocol at one base URL."""

    server: str
    protocol: str
    #: No trailing slash: ``https://localhost:8443``.
    base_url: str
    #: ``LaunchEnv.ca_pem`` (as a str) for TLS endpoints, ``True`` otherwise.
    verify: str | bool
    #: Check names this endpoint cannot serve, with the reason (e.g.
    #: ``{"app": "nghttpd serves files only"}``); a lacking check is reported "n/a". A key
    #: is a check name (``python -m tests.interop --list``) or a tag of
    #: ``tests/interop/checks.py``: ``app`` covers every check under ``/app/``.
    lacks: dict[str, str] = field(default_factory=dict)


class Launcher(Protocol):
    """Starts one server program for every protocol it offers."""

    #: Short stable name used in the matrix ("nginx", "apache", "go", "uvicorn-h11", ...).
    name: str

    def unavailable(self) -> str | None:
        """``None`` when the server can run here, else why it is skipped (printed)."""

    def start(self, env: LaunchEnv) -> contextlib.AbstractContextManager[list[Endpoint]]:
        """Start the server; yield its endpoints; stop every process it started on exit."""


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Return once ``port`` accepts connections; raise if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server did not listen on {port} within {START_TIMEOUT_S} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate ``proc`` (then kill it if it lingers) and reap it."""
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def running(
    argv: list[str], log: Path, port: int, **popen: object
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` with output to ``log`` until the block ends; wait for ``port`` first."""
    with log.open("wb") as out:
        proc = subprocess.Popen(  # type: ignore[call-overload]
            argv, stdout=out, stderr=subprocess.STDOUT, **popen
        )
    try:
        wait_listening(port, proc, log)
        yield proc
    finally:
        died = proc.poll()
        stop(proc)
        if died is not None:
            # A server that exits during the run takes every later check on it down with
            # it, and its log goes with the scratch directory: print the log's tail.
            tail = log.read_text(errors="replace")[-LOG_TAIL_CHARS:]
            print(
                f"{argv[0]} exited with {died} during the run; its log ends:\n{tail}",
                file=sys.stderr,
            )
