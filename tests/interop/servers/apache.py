"""Apache httpd 2.4 (Debian package ``apache2``, mpm_event, mod_http2) on four ports, one
virtual host per protocol, configured from scratch (none of /etc/apache2 is read).

- h1: ``Protocols http/1.1``; h1tls: ``SSLEngine on`` + ``Protocols http/1.1`` (ALPN offers
  only http/1.1); h2: ``Protocols h2 http/1.1``; h2c: ``Protocols h2c http/1.1`` (prior
  knowledge, ``H2Direct`` being on for cleartext h2c, and Upgrade).
- Compression: ``AddOutputFilterByType BROTLI_COMPRESS;DEFLATE`` for the compressible
  types: br when the client accepts it, else gzip (mod_brotli, mod_deflate). No zstd
  module exists for httpd 2.4.
- ``/app/`` → ``ProxyPass /app/ http://backend/`` (mod_proxy_http, HTTP/1.1, pooled
  connections dropped after ``ttl`` idle seconds); the request body is streamed
  (Content-Length bodies as they come, chunked ones chunked); ``LimitRequestBody`` admits
  the 10 MiB upload.
- Recycling: ``MaxKeepAliveRequests 100`` closes an HTTP/1.1 connection after its 101st
  answer (it counts the requests after the first: ``Keep-Alive: max=100`` on the first).
  HTTP/2 connections are not recycled: mod_http2 has no lifetime limit
  (``H2MaxSessionStreams`` is the concurrency limit, and no GOAWAY came after 1,500
  sequential streams with ``MaxKeepAliveRequests 100``).
  Idle: ``KeepAliveTimeout`` (HTTP/1.1 and, since mod_http2 2.0, which removed
  ``H2KeepAliveTimeout``, HTTP/2; an older mod_http2 gets ``H2KeepAliveTimeout`` too).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from . import webproc
from .base import RECYCLE_AFTER_REQUESTS, SERVER_IDLE_TIMEOUT_S, Endpoint, LaunchEnv, free_port

#: Debian's module directory.
MODULES_DIR = Path("/usr/lib/apache2/modules")

#: The modules loaded (Debian builds core, mod_so, mod_log_config, mod_unixd, ... in).
MODULES = (
    "mpm_event",
    "authz_core",
    "mime",
    "alias",
    "filter",
    "deflate",
    "brotli",
    "proxy",
    "proxy_http",
    "socache_shmcb",
    "ssl",
    "http2",
)

#: ``Protocols`` per vhost (the order is the server's ALPN preference).
PROTOCOLS = {"h1": "http/1.1", "h1tls": "http/1.1", "h2": "h2 http/1.1", "h2c": "h2c http/1.1"}

#: Worker threads: the matrix's 200 concurrent connections each hold one while active.
THREADS_PER_CHILD = 64
SERVER_LIMIT = 4

CONF = """\
ServerRoot {work}
ServerName localhost
PidFile {work}/httpd.pid
DefaultRuntimeDir {work}/run
Mutex file:{work}/run default
ErrorLog {work}/error.log
LogLevel warn
{modules}
{user}
StartServers 1
ServerLimit {server_limit}
ThreadLimit {threads}
ThreadsPerChild {threads}
MaxRequestWorkers {max_workers}
MinSpareThreads 1
MaxSpareThreads {max_workers}

TypesConfig {work}/mime.types
{types}
LogFormat "%a:%{{remote}}p k=%k \\"%r\\" %>s %b %H" conn
CustomLog {work}/access.log conn

KeepAlive On
MaxKeepAliveRequests {recycle}
KeepAliveTimeout {idle}
<IfDirective H2KeepAliveTimeout>
    H2KeepAliveTimeout {idle}
</IfDirective>
LimitRequestBody {max_body}

AddOutputFilterByType BROTLI_COMPRESS;DEFLATE {compressible}

<Directory />
    Require all denied
    AllowOverride None
</Directory>
Alias /static/ {site}/static/
<Directory {site}/static>
    Require all granted
</Directory>
ProxyPass /app/ {backend}/ ttl={upstream_idle}
ProxyPassReverse /app/ {backend}/
ProxyPreserveHost On
{vhosts}
"""

VHOST = """
Listen 127.0.0.1:{port}
<VirtualHost 127.0.0.1:{port}>
    Protocols {protocols}
    {tls}
</VirtualHost>
"""

TLS = "SSLEngine on\n    SSLCertificateFile {cert}\n    SSLCertificateKeyFile {key}"


class Apache:
    name = "apache"
    #: Content codings the server compresses text responses with.
    encodings = frozenset({"gzip", "br"})
    #: Protocols on which the server closes a connection after RECYCLE_AFTER_REQUESTS.
    recycles = frozenset({"h1", "h1tls"})
    #: Protocols on which the server closes a connection idle for SERVER_IDLE_TIMEOUT_S.
    idle_closes = frozenset({"h1", "h1tls", "h2", "h2c"})

    def unavailable(self) -> str | None:
        if webproc.find_exe("apache2") is None:
            return "Apache httpd is not installed (Debian: apt-get install apache2)"
        missing = [m for m in MODULES if not (MODULES_DIR / f"mod_{m}.so").exists()]
        if missing:
            return f"Apache modules missing from {MODULES_DIR}: {', '.join(missing)}"
        return None

    @contextlib.contextmanager
    def start(self, env: LaunchEnv) -> Iterator[list[Endpoint]]:
        exe = webproc.find_exe("apache2")
        assert exe is not None, self.unavailable()
        work = webproc.workdir(env, self.name)
        (work / "run").mkdir(exist_ok=True)
        webproc.write(work / "mime.types", "")
        ports = {protocol: free_port() for protocol in PROTOCOLS}
        user = webproc.worker_user()
        tls = TLS.format(cert=env.cert_pem, key=env.key_pem)
        vhosts = "".join(
            VHOST.format(
                port=port,
                protocols=PROTOCOLS[protocol],
                tls=tls if protocol in webproc.TLS_PROTOCOLS else "",
            )
            for protocol, port in ports.items()
        )
        conf = webproc.write(
            work / "httpd.conf",
            CONF.format(
                work=work,
                modules="\n".join(
                    f"LoadModule {m}_module {MODULES_DIR}/mod_{m}.so" for m in MODULES
                ),
                user=f"User {user}\nGroup {webproc.group_of(user)}" if user else "",
                server_limit=SERVER_LIMIT,
                threads=THREADS_PER_CHILD,
                max_workers=SERVER_LIMIT * THREADS_PER_CHILD,
                types="\n".join(f"AddType {t} .{ext}" for ext, t in webproc.MIME_TYPES.items()),
                recycle=RECYCLE_AFTER_REQUESTS,
                idle=SERVER_IDLE_TIMEOUT_S,
                max_body=webproc.MAX_BODY_BYTES,
                compressible=" ".join(webproc.COMPRESSIBLE_TYPES),
                site=env.site_root,
                backend=env.backend_url.rstrip("/"),
                upstream_idle=webproc.UPSTREAM_IDLE_S,
                vhosts=vhosts,
            ),
        )
        # -DFOREGROUND: the parent stays in the foreground (its children still drop to
        # User); SIGTERM makes it stop them and exit.
        argv = [exe, "-f", str(conf), "-DFOREGROUND"]
        with webproc.daemon(argv, work / "httpd.log", list(ports.values())):
            yield [webproc.endpoint(self.name, p, port, env) for p, port in ports.items()]
