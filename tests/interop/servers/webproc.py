"""What the web-server launchers (nginx, Apache, h2o, nghttpd, Caddy) share: finding a
Debian binary, a private world-readable config directory, the unprivileged user workers run
as under root, the content types they compress, and running a daemon in the foreground in
its own process group so that every worker it forked is stopped with it."""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from .base import Endpoint, LaunchEnv, stop, wait_listening

#: The host every endpoint's URL names: the test certificate is issued for it (and for
#: 127.0.0.1), and every server listens on 127.0.0.1 only.
HOST = "localhost"

#: The protocols spoken over TLS (the others are cleartext).
TLS_PROTOCOLS = ("h1tls", "h2")

#: Where Debian installs daemons, often not on a non-root user's PATH.
SBIN_DIRS = ("/usr/sbin", "/sbin", "/usr/local/sbin")

#: Response types a server compresses when the client asks: the site's page (text/html),
#: httpbin's JSON, and other text. Binary files (application/octet-stream) are never
#: transformed, so a static download is byte-exact even when the client accepts gzip.
COMPRESSIBLE_TYPES = (
    "text/html",
    "text/plain",
    "text/css",
    "text/xml",
    "application/json",
    "application/javascript",
    "application/xml",
)

#: The largest request body a server accepts: above the matrix's 10 MiB upload, so that
#: check meets the server's streaming, not its limit.
MAX_BODY_BYTES = 64 * 1024 * 1024

#: Seconds a proxy keeps an idle connection to the backend: less than the backend's own
#: keep-alive timeout (gunicorn's default is 2 s), so that the proxy drops it first and never
#: sends a request (a POST, which it cannot retry) on a connection the backend is closing.
UPSTREAM_IDLE_S = 1

#: File extensions of the site and their content types, for servers configured without the
#: system's MIME table (which a minimal image may lack).
MIME_TYPES = {
    "html": "text/html",
    "txt": "text/plain",
    "json": "application/json",
    "css": "text/css",
    "js": "application/javascript",
    "bin": "application/octet-stream",
}

#: How long a stopped server's process group may take to exit after the leader did
#: (workers finish their last write) before the stragglers are killed.
GROUP_EXIT_S = 3.0


def find_exe(name: str) -> str | None:
    """``name`` on PATH or in the sbin directories, or None."""
    return shutil.which(name) or shutil.which(name, path=os.pathsep.join(SBIN_DIRS))


def workdir(env: LaunchEnv, server: str) -> Path:
    """``env.workdir / server``, created world-readable: workers that dropped root read
    their config there and write temp files (nginx) into subdirectories of it."""
    path = env.workdir / server
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o755)
    return path


def worker_user() -> str | None:
    """The user a server started by root runs its workers as (None when not root: the
    workers keep the caller's user and a server must not be told to switch)."""
    if os.geteuid() != 0:
        return None
    for name in ("www-data", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    return None


def group_of(user: str) -> str:
    """The name of ``user``'s primary group (``nogroup`` for nobody on Debian)."""
    return grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o644)
    return path


@contextlib.contextmanager
def daemon(
    argv: list[str],
    log: Path,
    ports: list[int],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run a server in the foreground until the block ends, once all ``ports`` listen.

    The server leads a new process group: after the leader is stopped (SIGTERM, then
    SIGKILL), whatever is left of the group (workers the leader failed to take with it) is
    killed, so none survives a failing check or a failed start."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=None if env is None else dict(env),
            cwd=cwd,
        )
    try:
        for port in ports:
            wait_listening(port, proc, log)
        yield proc
    finally:
        stop(proc)
        _kill_group(proc.pid)


def _kill_group(pgid: int) -> None:
    """Kill what remains of process group ``pgid`` (ours: its leader was started with
    ``start_new_session``) once its members had ``GROUP_EXIT_S`` to exit by themselves."""
    deadline = time.monotonic() + GROUP_EXIT_S
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def endpoint(
    server: str, protocol: str, port: int, env: LaunchEnv, lacks: dict[str, str] | None = None
) -> Endpoint:
    """The endpoint of ``server`` speaking ``protocol`` on ``port`` of :data:`HOST`."""
    tls = protocol in TLS_PROTOCOLS
    return Endpoint(
        server=server,
        protocol=protocol,
        base_url=f"{'https' if tls else 'http'}://{HOST}:{port}",
        verify=str(env.ca_pem) if tls else True,
        lacks=dict(lacks or {}),
    )
