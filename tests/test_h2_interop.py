"""HTTP/2 against servers we did not write: nghttpd (nghttp2's reference server, Debian
package nghttp2-server) and nginx (``http2`` on its listen lines), each over h2c (prior
knowledge) and h2 by ALPN over TLS. Each server is skipped, with the reason, when it is not
installed (a fresh CI machine may have neither)."""

from __future__ import annotations

import hashlib
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nodelay
import pytest
import trustme

#: How long a server may take to start listening before the test gives up.
START_TIMEOUT_S = 5.0

#: Files the servers serve: small (one DATA frame), and larger than our 4 MiB stream
#: window so the download needs WINDOW_UPDATEs.
SMALL = b"interop " * 25
LARGE = hashlib.sha256(b"seed").digest() * (6 * 1024 * 1024 // 32)


@dataclass
class Origin:
    server: str
    url: str
    verify: str | bool


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"server did not listen on {port} within {START_TIMEOUT_S} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def site(ca: trustme.CA) -> Iterator[Path]:
    """Document root (small.txt, large.bin) plus cert.pem/key.pem/ca.pem for localhost.
    Not under pytest's tmp_path: its parents are private (0700), and nginx workers run as
    an unprivileged user when started by root."""
    root = Path(tempfile.mkdtemp(prefix="nodelay-h2interop-"))
    try:
        yield fill_site(root, ca)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fill_site(root: Path, ca: trustme.CA) -> Path:
    docs = root / "docs"
    docs.mkdir()
    (docs / "small.txt").write_bytes(SMALL)
    (docs / "large.bin").write_bytes(LARGE)
    leaf = ca.issue_cert("localhost", "127.0.0.1")
    leaf.private_key_pem.write_to_path(str(root / "key.pem"))
    leaf.cert_chain_pems[0].write_to_path(str(root / "cert.pem"))
    for extra in leaf.cert_chain_pems[1:]:
        extra.write_to_path(str(root / "cert.pem"), append=True)
    ca.cert_pem.write_to_path(str(root / "ca.pem"))
    # nginx workers drop privileges when run as root: let them read the files.
    for path in (root, docs, *docs.iterdir(), *root.glob("*.pem")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def nghttpd(site: Path, tls: bool) -> Iterator[Origin]:
    exe = shutil.which("nghttpd") or shutil.which("nghttpd", path="/usr/sbin")
    if exe is None:
        pytest.skip("nghttpd is not installed (Debian: apt-get install nghttp2-server)")
    port = free_port()
    log = site / f"nghttpd-{port}.log"
    args = [exe, "-a", "127.0.0.1", "-d", str(site / "docs"), "--echo-upload", str(port)]
    args += [str(site / "key.pem"), str(site / "cert.pem")] if tls else ["--no-tls"]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_listening(port, proc, log)
        scheme = "https" if tls else "http"
        yield Origin(
            "nghttpd", f"{scheme}://localhost:{port}", str(site / "ca.pem") if tls else False
        )
    finally:
        stop(proc)


NGINX_CONF = """
worker_processes 1;
daemon off;
error_log {root}/nginx-error.log;
pid {root}/nginx.pid;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port} {listen};
        {tls}
        root {root}/docs;
    }}
}}
"""


def nginx(site: Path, tls: bool) -> Iterator[Origin]:
    # Debian puts nginx in /usr/sbin, often not on a user's PATH.
    exe = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if exe is None:
        pytest.skip("nginx is not installed")
    port = free_port()
    conf = site / f"nginx-{port}.conf"
    tls_lines = f"ssl_certificate {site}/cert.pem; ssl_certificate_key {site}/key.pem;"
    # nginx before 1.25.1 turns HTTP/2 on per listen line; on a plain port that is h2c
    # with prior knowledge only.
    conf.write_text(
        NGINX_CONF.format(
            root=site,
            port=port,
            listen="ssl http2" if tls else "http2",
            tls=tls_lines if tls else "",
        )
    )
    log = site / f"nginx-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [exe, "-c", str(conf), "-p", str(site)], stdout=out, stderr=subprocess.STDOUT
        )
    try:
        wait_listening(port, proc, log)
        scheme = "https" if tls else "http"
        yield Origin(
            "nginx", f"{scheme}://localhost:{port}", str(site / "ca.pem") if tls else False
        )
    finally:
        stop(proc)


@pytest.fixture(
    scope="module",
    params=["nghttpd-h2c", "nghttpd-tls", "nginx-h2c", "nginx-tls"],
)
def origin(request: pytest.FixtureRequest, site: Path) -> Iterator[Origin]:
    server, mode = request.param.split("-")
    start = nghttpd if server == "nghttpd" else nginx
    yield from start(site, tls=mode == "tls")


def h2_client(origin: Origin, **kwargs: object) -> nodelay.Client:
    http2 = "prior_knowledge" if origin.url.startswith("http:") else True
    return nodelay.Client(http2=http2, verify=origin.verify, timeout=10.0, **kwargs)  # type: ignore[arg-type]


def test_small_and_large_downloads(origin: Origin) -> None:
    with h2_client(origin) as client:
        small = client.get(f"{origin.url}/small.txt")
        assert small.http_version == "HTTP/2"
        assert (small.status_code, small.content) == (200, SMALL)
        large = client.get(f"{origin.url}/large.bin")
        assert large.status_code == 200
        assert len(large.content) == len(LARGE)
        assert large.content == LARGE
        missing = client.get(f"{origin.url}/missing")
        assert missing.status_code == 404


def test_streamed_download(origin: Origin) -> None:
    with h2_client(origin) as client, client.stream("GET", f"{origin.url}/large.bin") as response:
        assert response.http_version == "HTTP/2"
        digest = hashlib.sha256()
        for chunk in response.iter_bytes():
            digest.update(chunk)
    assert digest.digest() == hashlib.sha256(LARGE).digest()


def test_threads_share_one_connection(origin: Origin) -> None:
    errors: list[BaseException] = []
    with h2_client(origin) as client:

        def worker() -> None:
            try:
                for _ in range(20):
                    r = client.get(f"{origin.url}/small.txt")
                    assert (r.status_code, r.content, r.http_version) == (200, SMALL, "HTTP/2")
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
    assert not errors, errors[:3]


def test_upload_larger_than_the_servers_window(origin: Origin) -> None:
    body = LARGE[: 1024 * 1024 + 7]
    with h2_client(origin) as client:
        r = client.post(f"{origin.url}/small.txt", content=body)
    if origin.server == "nginx":
        # nginx refuses a body over client_max_body_size (1 MiB by default) from its
        # Content-Length, before reading it: an answer while the upload is held back by
        # the window, which must end the upload, not fail or hang the request.
        assert r.status_code == 413
    else:
        # nghttpd --echo-upload sends the body back.
        assert r.status_code == 200
        assert r.content == body


def test_idle_connection_closed_by_the_client_after_expiry(origin: Origin) -> None:
    with h2_client(origin, limits=nodelay.Limits(keepalive_expiry=0.2)) as client:
        assert client.get(f"{origin.url}/small.txt").status_code == 200
        time.sleep(0.5)
        # The expired connection was closed (GOAWAY); the next request makes a new one.
        r = client.get(f"{origin.url}/small.txt")
        assert (r.status_code, r.http_version) == (200, "HTTP/2")
