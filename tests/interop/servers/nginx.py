"""nginx (Debian package ``nginx``) on four ports, one per protocol.

- h1: ``listen PORT``; h1tls: ``listen PORT ssl`` (no ``http2``: ALPN offers only
  http/1.1); h2: ``listen PORT ssl http2`` (ALPN h2, http/1.1); h2c: ``listen PORT http2``
  (nginx before 1.25.1 turns HTTP/2 on per listen line, so a plain ``http2`` port speaks
  HTTP/2 with prior knowledge only).
- Compression: ``gzip on`` for :data:`~webproc.COMPRESSIBLE_TYPES` (nginx has no br or zstd
  without third-party modules).
- ``/app/`` → ``proxy_pass http://backend/`` over HTTP/1.1 with upstream keep-alive (idle
  upstream connections dropped after ``webproc.UPSTREAM_IDLE_S``); the trailing ``/``
  replaces the ``/app/`` prefix. ``proxy_request_buffering off`` streams the
  request body upstream as it arrives (nginx answers ``Expect: 100-continue`` itself);
  ``client_max_body_size`` admits the 10 MiB upload.
- Recycling: ``keepalive_requests 100`` closes an HTTP/1.1 connection after its 100th
  answer and, since nginx 1.19.7, sends GOAWAY on an HTTP/2 connection after 100 streams.
  Idle: ``keepalive_timeout`` (both protocols since 1.19.7).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import webproc
from .base import RECYCLE_AFTER_REQUESTS, SERVER_IDLE_TIMEOUT_S, Endpoint, LaunchEnv, free_port

#: nginx's listen-line parameters per protocol.
LISTEN = {"h1": "", "h1tls": "ssl", "h2": "ssl http2", "h2c": "http2"}

#: Worker connections: the matrix opens 200 concurrent connections (AsyncClient gather)
#: plus the upstream connection each proxied request holds.
WORKER_CONNECTIONS = 1024

#: Idle upstream connections each worker keeps to the backend.
UPSTREAM_KEEPALIVE = 16

CONF = """\
worker_processes 1;
daemon off;
{user}
error_log {work}/error.log info;
pid {work}/nginx.pid;
events {{ worker_connections {worker_connections}; }}
http {{
    types {{
{types}
    }}
    default_type application/octet-stream;
    log_format conn '$remote_addr:$remote_port c=$connection n=$connection_requests '
                    '"$request" $status $body_bytes_sent';
    access_log {work}/access.log conn;
    client_body_temp_path {work}/tmp/body;
    proxy_temp_path {work}/tmp/proxy;
    fastcgi_temp_path {work}/tmp/fastcgi;
    uwsgi_temp_path {work}/tmp/uwsgi;
    scgi_temp_path {work}/tmp/scgi;

    keepalive_requests {recycle};
    keepalive_timeout {idle}s;
    client_max_body_size {max_body};

    gzip on;
    gzip_types {gzip_types};
    gzip_vary on;

    upstream backend {{
        server {backend};
        keepalive {upstream_keepalive};
        keepalive_timeout {upstream_idle}s;
    }}
{servers}
}}
"""

SERVER = """
    server {{
        listen 127.0.0.1:{port} {listen};
        {tls}
        location /static/ {{
            root {site};
        }}
        location /app/ {{
            proxy_pass http://backend/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host:$server_port;
            proxy_request_buffering off;
        }}
    }}
"""


class Nginx:
    name = "nginx"
    #: Content codings the server compresses text responses with.
    encodings = frozenset({"gzip"})
    #: Protocols on which the server closes a connection after RECYCLE_AFTER_REQUESTS.
    recycles = frozenset({"h1", "h1tls", "h2", "h2c"})
    #: Protocols on which the server closes a connection idle for SERVER_IDLE_TIMEOUT_S.
    idle_closes = frozenset({"h1", "h1tls", "h2", "h2c"})

    def unavailable(self) -> str | None:
        if webproc.find_exe("nginx") is None:
            return "nginx is not installed (Debian: apt-get install nginx)"
        return None

    @contextlib.contextmanager
    def start(self, env: LaunchEnv) -> Iterator[list[Endpoint]]:
        exe = webproc.find_exe("nginx")
        assert exe is not None, self.unavailable()
        work = webproc.workdir(env, self.name)
        # nginx creates its temp directories below this one, owned by the worker user.
        (work / "tmp").mkdir(mode=0o755, exist_ok=True)
        ports = {protocol: free_port() for protocol in LISTEN}
        user = webproc.worker_user()
        tls = f"ssl_certificate {env.cert_pem}; ssl_certificate_key {env.key_pem};"
        servers = "".join(
            SERVER.format(
                port=port,
                listen=LISTEN[protocol],
                tls=tls if protocol in webproc.TLS_PROTOCOLS else "",
                site=env.site_root,
            )
            for protocol, port in ports.items()
        )
        conf = webproc.write(
            work / "nginx.conf",
            CONF.format(
                user=f"user {user} {webproc.group_of(user)};" if user else "",
                work=work,
                worker_connections=WORKER_CONNECTIONS,
                types="\n".join(f"        {t} {ext};" for ext, t in webproc.MIME_TYPES.items()),
                recycle=RECYCLE_AFTER_REQUESTS,
                idle=SERVER_IDLE_TIMEOUT_S,
                max_body=webproc.MAX_BODY_BYTES,
                # text/html is always compressed; nginx warns when it is listed.
                gzip_types=" ".join(t for t in webproc.COMPRESSIBLE_TYPES if t != "text/html"),
                backend=env.backend_url.removeprefix("http://").rstrip("/"),
                upstream_keepalive=UPSTREAM_KEEPALIVE,
                upstream_idle=webproc.UPSTREAM_IDLE_S,
                servers=servers,
            ),
        )
        argv = [exe, "-c", str(conf), "-p", str(work)]
        with webproc.daemon(argv, work / "nginx.log", list(ports.values())):
            yield [webproc.endpoint(self.name, p, port, env) for p, port in ports.items()]
