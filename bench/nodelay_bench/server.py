"""The server under the benchmark, in its own process: the embedded one or a Debian nginx.

Both serve the same paths: ``/bytes/N`` (the repeating alphabet), ``/json/N`` (a JSON
document of at least N bytes with ``"ok": true``) and ``POST /echo``. The nginx flavour is
configured by the lab in a temporary directory (static files for the payloads) and only
listens on 127.0.0.1.
"""

from __future__ import annotations

import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .pinning import SERVER_CPU, pin_to
from .workloads import Workload

__all__ = ["Server", "json_document", "pattern_bytes", "start"]

READY_TIMEOUT = 30.0
ALPHABET = b"abcdefghijklmnopqrstuvwxyz0123456789"
ECHO_MODULE = Path("/usr/lib/nginx/modules/ngx_http_echo_module.so")


def pattern_bytes(n: int) -> bytes:
    """The embedded server's ``/bytes/{n}`` body."""
    return (ALPHABET * (n // len(ALPHABET) + 1))[:n]


def json_document(n: int) -> str:
    """The embedded server's ``/json/{n}`` document (crates/nodelay-server payload.rs)."""
    head, tail = '{"id": 1, "ok": true, "items": [', "]}"
    parts = [head]
    length = len(head)
    i = 0
    while length + len(tail) < n:
        item = (", " if i else "") + f'{{"i":{i},"name":"item-{i}","tags":["a","b"]}}'
        parts.append(item)
        length += len(item)
        i += 1
    parts.append(tail)
    return "".join(parts)


class Server:
    """A running server process; ``url`` has no trailing slash."""

    def __init__(
        self, kind: str, url: str, proc: subprocess.Popen[str], tmp: str | None, echo: bool
    ) -> None:
        self.kind = kind
        self.url = url
        self.proc = proc
        self.tmp = tmp
        self.echo = echo

    def unsupported(self, workload: Workload) -> str | None:
        """Why this server cannot serve ``workload`` (None: it can)."""
        if workload.check == "cookies" and self.kind != "embedded":
            return f"{self.kind} has no /login route (workload h needs the embedded server)"
        if workload.check == "echo" and not self.echo:
            return (
                "nginx needs the echo module to echo a body "
                "(apt-get install libnginx-mod-http-echo)"
            )
        return None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise RuntimeError(f"server did not start within {timeout:.0f} s")
    return proc.stdout.readline().strip()


def start_embedded(pin: bool = True) -> Server:
    code = (
        "from nodelay import _core\n"
        "_core.serve('127.0.0.1', 0, 1, on_ready=lambda u: print(u, flush=True))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=pin_to(SERVER_CPU if pin else None),
    )
    try:
        url = _read_line(proc, READY_TIMEOUT)
    except Exception:
        proc.kill()
        raise
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"unexpected server banner {url!r}")
    return Server("embedded", url, proc, None, echo=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _nginx_conf(tmp: Path, port: int, echo: bool) -> str:
    echo_location = (
        "    location = /echo { echo_read_request_body; echo_request_body; }\n" if echo else ""
    )
    load = f"load_module {ECHO_MODULE};\n" if echo else ""
    return (
        f"{load}worker_processes 1;\ndaemon off;\npid {tmp}/nginx.pid;\n"
        f"error_log {tmp}/error.log warn;\n"
        "events { worker_connections 1024; }\n"
        "http {\n"
        "  access_log off;\n  tcp_nodelay on;\n  sendfile on;\n"
        "  keepalive_requests 1000000;\n  keepalive_timeout 75s;\n"
        f"  client_body_temp_path {tmp}/body;\n  proxy_temp_path {tmp}/proxy;\n"
        f"  fastcgi_temp_path {tmp}/fastcgi;\n  uwsgi_temp_path {tmp}/uwsgi;\n"
        f"  scgi_temp_path {tmp}/scgi;\n"
        "  default_type application/octet-stream;\n"
        "  server {\n"
        f"    listen 127.0.0.1:{port};\n"
        f"    root {tmp}/www;\n"
        "    location /json/ { default_type application/json; }\n"
        f"{echo_location}"
        "  }\n}\n"
    )


def start_nginx(workloads: list[Workload], pin: bool = True) -> Server:
    binary = shutil.which("nginx") or (
        "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None
    )
    if binary is None:
        raise RuntimeError("nginx is not installed (apt-get install nginx)")
    tmp = Path(tempfile.mkdtemp(prefix="nodelay-bench-nginx-"))
    os.chmod(tmp, 0o755)  # nginx workers may run as another user
    # The document root exists even when no workload serves a file from it (e alone).
    (tmp / "www").mkdir()
    for w in workloads:
        prefix, _, size = w.path.strip("/").partition("/")
        if prefix in ("bytes", "json") and size.isdigit():
            path = tmp / "www" / prefix / size
            path.parent.mkdir(parents=True, exist_ok=True)
            data = (
                pattern_bytes(int(size)) if prefix == "bytes" else json_document(int(size)).encode()
            )
            path.write_bytes(data)
    for d in (tmp / "www", *(tmp / "www").iterdir()):
        os.chmod(d, 0o755)
    echo = ECHO_MODULE.exists()
    port = _free_port()
    (tmp / "nginx.conf").write_text(_nginx_conf(tmp, port, echo))
    proc = subprocess.Popen(
        [binary, "-c", str(tmp / "nginx.conf"), "-p", str(tmp)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=pin_to(SERVER_CPU if pin else None),
    )
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"nginx exited: {out.strip()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError("nginx did not start listening in time")
    return Server("nginx", f"http://127.0.0.1:{port}", proc, str(tmp), echo=echo)


def start(kind: str, workloads: list[Workload], pin: bool = True) -> Server:
    if kind == "nginx":
        return start_nginx(workloads, pin)
    return start_embedded(pin)
