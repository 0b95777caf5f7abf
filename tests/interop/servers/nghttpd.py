"""nghttpd (nghttp2's reference server, Debian package ``nghttp2-server``): HTTP/2 only,
static files only, one process per port.

- h2: TLS with ALPN h2 (nghttpd speaks no HTTP/1.1, so there is no h1tls); h2c:
  ``--no-tls``, prior knowledge (and the HTTP/1.1 Upgrade, which is not h1 service: no h1).
- The document root is the site root, so ``/static/<name>`` is its ``static/<name>``.
- No compression, no proxying (``app`` is lacking), no recycling and no idle timeout:
  nghttpd has no settings for them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import webproc
from .base import Endpoint, LaunchEnv, free_port

LACKS = {"app": "nghttpd serves files only"}


class Nghttpd:
    name = "nghttpd"
    #: Content codings the server compresses text responses with.
    encodings: frozenset[str] = frozenset()
    #: Protocols on which the server closes a connection after RECYCLE_AFTER_REQUESTS.
    recycles: frozenset[str] = frozenset()
    #: Protocols on which the server closes a connection idle for SERVER_IDLE_TIMEOUT_S.
    idle_closes: frozenset[str] = frozenset()

    def unavailable(self) -> str | None:
        if webproc.find_exe("nghttpd") is None:
            return "nghttpd is not installed (Debian: apt-get install nghttp2-server)"
        return None

    @contextlib.contextmanager
    def start(self, env: LaunchEnv) -> Iterator[list[Endpoint]]:
        exe = webproc.find_exe("nghttpd")
        assert exe is not None, self.unavailable()
        work = webproc.workdir(env, self.name)
        tls, clear = free_port(), free_port()
        common = [exe, "-a", "127.0.0.1", "-d", str(env.site_root)]
        with (
            webproc.daemon(
                [*common, str(tls), str(env.key_pem), str(env.cert_pem)],
                work / "nghttpd-h2.log",
                [tls],
            ),
            webproc.daemon([*common, "--no-tls", str(clear)], work / "nghttpd-h2c.log", [clear]),
        ):
            yield [
                webproc.endpoint(self.name, "h2", tls, env, LACKS),
                webproc.endpoint(self.name, "h2c", clear, env, LACKS),
            ]
