"""Node.js (``node/server.js``, built-in modules only): ``http`` (h1), ``https`` (h1tls),
``http2.createSecureServer`` with allowHTTP1 (h2) and ``http2.createServer`` (h2c).
Recycling: ``server.maxRequestsPerSocket`` on HTTP/1.1, ``Http2Session.close()`` (GOAWAY)
after ``RECYCLE_AFTER_REQUESTS`` streams on HTTP/2; idle: ``keepAliveTimeout`` and an
idle session timeout of ``SERVER_IDLE_TIMEOUT_S``."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator

from .base import (
    RECYCLE_AFTER_REQUESTS,
    SERVER_IDLE_TIMEOUT_S,
    Endpoint,
    LaunchEnv,
    free_port,
    running,
    wait_listening,
)
from .paths import NODE_SCRIPT


class NodeLauncher:
    name = "node"

    def unavailable(self) -> str | None:
        if shutil.which("node") is None:
            return "node is not on PATH"
        return None

    @contextlib.contextmanager
    def start(self, env: LaunchEnv) -> Iterator[list[Endpoint]]:
        ports = [free_port() for _ in range(4)]
        node = shutil.which("node") or "node"
        args = [
            node,
            str(NODE_SCRIPT),
            str(env.site_root),
            str(env.cert_pem),
            str(env.key_pem),
            *map(str, ports),
            str(SERVER_IDLE_TIMEOUT_S * 1000),
            str(RECYCLE_AFTER_REQUESTS),
        ]
        log = env.workdir / "node.log"
        with running(args, log, ports[0]) as proc:
            for port in ports[1:]:
                wait_listening(port, proc, log)
            h1, h1tls, h2, h2c = ports
            ca = str(env.ca_pem)
            yield [
                Endpoint(self.name, "h1", f"http://127.0.0.1:{h1}", True),
                Endpoint(self.name, "h1tls", f"https://localhost:{h1tls}", ca),
                Endpoint(self.name, "h2", f"https://localhost:{h2}", ca),
                Endpoint(self.name, "h2c", f"http://127.0.0.1:{h2c}", True),
            ]
