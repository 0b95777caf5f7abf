"""Go net/http (``go/main.go``): h1 and h2c on one cleartext port, h1 and h2 by ALPN on a
TLS port. Recycles connections after ``RECYCLE_AFTER_REQUESTS`` (its handler answers
``Connection: close``, which net/http turns into a close on HTTP/1.1 and GOAWAY on
HTTP/2) and closes idle ones after ``SERVER_IDLE_TIMEOUT_S`` (``IdleTimeout``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from .base import (
    RECYCLE_AFTER_REQUESTS,
    SERVER_IDLE_TIMEOUT_S,
    Endpoint,
    LaunchEnv,
    free_port,
    running,
    wait_listening,
)
from .paths import GO_BINARY

#: The backend the web servers proxy /app/ to keeps idle connections this long: longer
#: than any proxy's upstream keep-alive, so a proxy never reuses one the backend closed.
BACKEND_IDLE_S = 60


def argv(
    root: Path, plain: int, tls: int, cert: Path, key: Path, idle_s: int, recycle: int
) -> list[str]:
    return [
        str(GO_BINARY),
        f"-root={root}",
        f"-plain={plain}",
        f"-tls={tls}",
        f"-cert={cert}",
        f"-key={key}",
        f"-idle={idle_s}s",
        f"-recycle={recycle}",
    ]


class GoLauncher:
    name = "go"

    def unavailable(self) -> str | None:
        if not GO_BINARY.exists():
            return f"{GO_BINARY} is not built (make interop builds it with go build)"
        return None

    @contextlib.contextmanager
    def start(self, env: LaunchEnv) -> Iterator[list[Endpoint]]:
        plain, tls = free_port(), free_port()
        args = argv(
            env.site_root,
            plain,
            tls,
            env.cert_pem,
            env.key_pem,
            SERVER_IDLE_TIMEOUT_S,
            RECYCLE_AFTER_REQUESTS,
        )
        with running(args, env.workdir / "go.log", plain) as proc:
            wait_listening(tls, proc, env.workdir / "go.log")
            ca = str(env.ca_pem)
            yield [
                Endpoint(self.name, "h1", f"http://127.0.0.1:{plain}", True),
                Endpoint(self.name, "h1tls", f"https://localhost:{tls}", ca),
                Endpoint(self.name, "h2", f"https://localhost:{tls}", ca),
                Endpoint(self.name, "h2c", f"http://127.0.0.1:{plain}", True),
            ]


@contextlib.contextmanager
def backend(site_root: Path, workdir: Path) -> Iterator[str]:
    """The HTTP/1.1 httpbin-subset backend web servers proxy ``/app/`` to; its URL."""
    port = free_port()
    args = argv(site_root, port, 0, Path(), Path(), BACKEND_IDLE_S, 0)
    with running(args, workdir / "backend.log", port):
        yield f"http://127.0.0.1:{port}"
