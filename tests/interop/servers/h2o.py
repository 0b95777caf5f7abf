"""h2o 2.2 (Debian package ``h2o``) on two ports: one cleartext, one TLS.

- h1 and h2c share the cleartext port (h2o speaks HTTP/1.1 there, and HTTP/2 to a client
  that opens with the HTTP/2 preface); h1tls and h2 share the TLS port. h2o has no setting
  to leave h2 out of a TLS listener's ALPN, so the h1tls endpoint is a client that offers
  only http/1.1 to a server offering h2 too: its endpoint lacks ``h1tls-alpn``.
- Compression: ``compress: [gzip, br]`` (h2o compresses types its MIME map marks
  compressible: text/*, JSON, JavaScript; no zstd in h2o 2.2).
- ``/app`` → ``proxy.reverse.url: http://backend/`` (the path below ``/app`` is appended to
  the URL's, which strips the prefix; upstream HTTP/1.1, idle upstream connections
  dropped after ``proxy.timeout.keepalive``); ``limit-request-body`` admits the
  10 MiB upload (h2o 2.2 reads a request body whole before it forwards it).
- Recycling: none (h2o has no requests-per-connection limit for either protocol).
  Idle: ``http1-request-timeout`` (the wait for the next request on a kept-alive HTTP/1.1
  connection) and ``http2-idle-timeout``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

from . import webproc
from .base import SERVER_IDLE_TIMEOUT_S, Endpoint, LaunchEnv, free_port

#: Event-loop threads (each accepts and serves connections).
NUM_THREADS = 2

#: Why the h1tls endpoint still offers h2 by ALPN.
NO_H1_ONLY_ALPN = "h2o offers h2 by ALPN on every TLS listener (no per-listener setting)"


def q(value: object) -> str:
    """A YAML scalar (JSON strings are valid YAML)."""
    return json.dumps(str(value))


CONF = """\
error-log: {work}/error.log
access-log: {work}/access.log
{user}
num-threads: {threads}
http1-request-timeout: {idle}
http2-idle-timeout: {idle}
limit-request-body: {max_body}
compress: [gzip, br]
file.mime.addtypes:
{types}
listen:
  host: 127.0.0.1
  port: {clear}
listen:
  host: 127.0.0.1
  port: {tls}
  ssl:
    certificate-file: {cert}
    key-file: {key}
hosts:
  default:
    paths:
      /static:
        file.dir: {static}
      /app:
        proxy.reverse.url: {backend}
        proxy.preserve-host: ON
        proxy.timeout.keepalive: {upstream_idle_ms}
"""


class H2o:
    name = "h2o"
    #: Content codings the server compresses text responses with.
    encodings = frozenset({"gzip", "br"})
    #: Protocols on which the server closes a connection after RECYCLE_AFTER_REQUESTS.
    recycles: frozenset[str] = frozenset()
    #: Protocols on which the server closes a connection idle for SERVER_IDLE_TIMEOUT_S.
    idle_closes = frozenset({"h1", "h1tls", "h2", "h2c"})

    def unavailable(self) -> str | None:
        if webproc.find_exe("h2o") is None:
            return "h2o is not installed (Debian: apt-get install h2o)"
        return None

    @contextlib.contextmanager
    def start(self, env: LaunchEnv) -> Iterator[list[Endpoint]]:
        exe = webproc.find_exe("h2o")
        assert exe is not None, self.unavailable()
        work = webproc.workdir(env, self.name)
        clear, tls = free_port(), free_port()
        user = webproc.worker_user()
        conf = webproc.write(
            work / "h2o.conf",
            CONF.format(
                work=work,
                user=f"user: {q(user)}" if user else "",
                threads=NUM_THREADS,
                idle=SERVER_IDLE_TIMEOUT_S,
                max_body=webproc.MAX_BODY_BYTES,
                types="\n".join(f"  {q(t)}: {q('.' + e)}" for e, t in webproc.MIME_TYPES.items()),
                clear=clear,
                tls=tls,
                cert=q(env.cert_pem),
                key=q(env.key_pem),
                static=q(env.site_root / "static"),
                backend=q(env.backend_url.rstrip("/") + "/"),
                upstream_idle_ms=webproc.UPSTREAM_IDLE_S * 1000,
            ),
        )
        argv = [exe, "-c", str(conf)]
        with webproc.daemon(argv, work / "h2o.log", [clear, tls]):
            yield [
                webproc.endpoint(self.name, "h1", clear, env),
                webproc.endpoint(self.name, "h1tls", tls, env, {"h1tls-alpn": NO_H1_ONLY_ALPN}),
                webproc.endpoint(self.name, "h2", tls, env),
                webproc.endpoint(self.name, "h2c", clear, env),
            ]
