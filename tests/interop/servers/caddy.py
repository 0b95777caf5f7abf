"""Caddy 2 (Debian package ``caddy``) on four ports, one site (and one Go http.Server) per
protocol, from a Caddyfile: ``caddy run --adapter caddyfile``, admin API off, automatic
HTTPS off, storage and Caddy's own files in the workdir, the given certificate.

- Per-port ``servers <address> { protocols ... }``: h1 ``h1``; h1tls ``h1`` (and the site's
  ``tls { alpn http/1.1 }``: ALPN offers only http/1.1); h2 ``h1 h2``; h2c ``h1 h2c``
  (prior knowledge and Upgrade). No ``h3``: no UDP listener.
- Compression: ``encode zstd gzip`` for the compressible types (Caddy 2.6 has no br
  encoder, only precompressed br files).
- ``/app/*`` → ``handle_path`` (strips the prefix) + ``reverse_proxy`` over HTTP/1.1 (idle
  upstream connections dropped after ``transport http { keepalive }``); the request body
  is streamed (Go answers ``Expect: 100-continue`` when the proxy reads the body); Caddy
  sets no body-size limit.
- Recycling: none (Go's net/http server has no requests-per-connection limit, for either
  protocol). Idle: the server's ``timeouts { idle }`` (HTTP/1.1 keep-alive and HTTP/2).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from . import webproc
from .base import SERVER_IDLE_TIMEOUT_S, Endpoint, LaunchEnv, free_port

#: Caddy server ``protocols`` per endpoint protocol.
PROTOCOLS = {"h1": "h1", "h1tls": "h1", "h2": "h1 h2", "h2c": "h1 h2c"}

#: How long Caddy waits for active requests when stopped (it waits forever by default).
GRACE_PERIOD_S = 1

GLOBAL = """\
{{
    admin off
    auto_https off
    storage file_system {work}/data
    grace_period {grace}s
{servers}
}}

(site) {{
    bind 127.0.0.1
    log {{
        output file {work}/access.log
    }}
    encode {{
        zstd
        gzip
        match {{
{encode_match}
        }}
    }}
    handle /static/* {{
        root * {site}
        file_server
    }}
    handle_path /app/* {{
        reverse_proxy {backend} {{
            transport http {{
                keepalive {upstream_idle}s
            }}
        }}
    }}
}}
"""

SERVER = """\
    servers 127.0.0.1:{port} {{
        protocols {protocols}
        timeouts {{
            idle {idle}s
        }}
    }}
"""

SITE = """
{scheme}://localhost:{port} {{
    import site
    {tls}
}}
"""


class Caddy:
    name = "caddy"
    #: Content codings the server compresses text responses with.
    encodings = frozenset({"gzip", "zstd"})
    #: Protocols on which the server closes a connection after RECYCLE_AFTER_REQUESTS.
    recycles: frozenset[str] = frozenset()
    #: Protocols on which the server closes a connection idle for SERVER_IDLE_TIMEOUT_S.
    idle_closes = frozenset({"h1", "h1tls", "h2", "h2c"})

    def unavailable(self) -> str | None:
        if webproc.find_exe("caddy") is None:
            return "Caddy is not installed (Debian: apt-get install caddy)"
        return None

    @contextlib.contextmanager
    def start(self, env: LaunchEnv) -> Iterator[list[Endpoint]]:
        exe = webproc.find_exe("caddy")
        assert exe is not None, self.unavailable()
        work = webproc.workdir(env, self.name)
        ports = {protocol: free_port() for protocol in PROTOCOLS}
        tls = {
            "h1tls": f"tls {env.cert_pem} {env.key_pem} {{\n        alpn http/1.1\n    }}",
            "h2": f"tls {env.cert_pem} {env.key_pem}",
        }
        caddyfile = GLOBAL.format(
            work=work,
            grace=GRACE_PERIOD_S,
            servers="".join(
                SERVER.format(port=port, protocols=PROTOCOLS[p], idle=SERVER_IDLE_TIMEOUT_S)
                for p, port in ports.items()
            ),
            encode_match="\n".join(
                f"            header Content-Type {t}*" for t in webproc.COMPRESSIBLE_TYPES
            ),
            site=env.site_root,
            backend=env.backend_url.rstrip("/"),
            upstream_idle=webproc.UPSTREAM_IDLE_S,
        ) + "".join(
            SITE.format(
                scheme="https" if p in webproc.TLS_PROTOCOLS else "http",
                port=port,
                tls=tls.get(p, ""),
            )
            for p, port in ports.items()
        )
        # Tabs: the indentation `caddy fmt` wants (Caddy warns about any other).
        conf = webproc.write(work / "Caddyfile", caddyfile.replace("    ", "\t"))
        # Caddy keeps its config autosave and data under $HOME / $XDG_*: point them at the
        # workdir so a run leaves nothing behind.
        caddy_env = os.environ | {
            "HOME": str(work),
            "XDG_CONFIG_HOME": str(work / "config"),
            "XDG_DATA_HOME": str(work / "data"),
        }
        argv = [exe, "run", "--config", str(conf), "--adapter", "caddyfile"]
        with webproc.daemon(argv, work / "caddy.log", list(ports.values()), env=caddy_env):
            yield [webproc.endpoint(self.name, p, port, env) for p, port in ports.items()]
