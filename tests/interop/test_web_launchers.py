"""The web-server launchers (``servers/web.py``) checked against real programs, with httpx
and curl as the oracles (nodelay is not involved): every protocol a launcher offers answers
with that protocol, serves a static file byte for byte, compresses the text page, proxies
``/app/`` to a real httpbin (gunicorn) with the prefix stripped and 10 MiB, streamed and
``Expect: 100-continue`` uploads passed through, recycles connections and closes idle ones
where the launcher says it does.

Needs the interop extras (httpx[http2], httpbin, gunicorn): without them the module is
skipped; a server that is not installed is skipped with its launcher's reason.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

httpx = pytest.importorskip("httpx", reason="interop extra httpx[http2] is not installed")
h2_connection = pytest.importorskip("h2.connection", reason="httpx[http2] is not installed")
h2_events = pytest.importorskip("h2.events", reason="httpx[http2] is not installed")
pytest.importorskip("httpbin", reason="interop extra httpbin is not installed")
pytest.importorskip("gunicorn", reason="interop extra gunicorn is not installed")

from interop.servers import webproc  # noqa: E402
from interop.servers.base import (  # noqa: E402
    RECYCLE_AFTER_REQUESTS,
    SERVER_IDLE_TIMEOUT_S,
    Endpoint,
    LaunchEnv,
    free_port,
)
from interop.servers.web import WEB_SERVERS, WebLauncher  # noqa: E402

#: The site: a binary file (never compressed), and a text page gzip shrinks.
SMALL = hashlib.sha256(b"small").digest() * 7  # 224 bytes
LARGE = b"".join(hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(40_000))  # 1.2 MB
PAGE = "".join(f"<p>line {i} of the page</p>\n" for i in range(3000)).encode()

#: The upload the matrix sends through every proxy (ASCII, so httpbin echoes it as text).
UPLOAD = b"0123456789abcdef" * (10 * 1024 * 1024 // 16)
#: A streamed upload's pieces (a generator: chunked on HTTP/1.1, DATA frames on HTTP/2).
STREAM_PIECES = 3
STREAM_PIECE = b"s" * (256 * 1024)

#: Generous per-request budget: the machine is shared and loaded.
REQUEST_TIMEOUT_S = 60.0
#: How long past the server's idle timeout an idle connection may stay open.
IDLE_MARGIN_S = 10.0
#: How long curl may take for one small download.
CURL_TIMEOUT_S = 30

#: Requests after which a recycling server has closed the connection at least once: nginx
#: closes after its 100th answer, Apache after the 101st (``MaxKeepAliveRequests`` counts
#: the requests after the first).
RECYCLE_WITHIN_REQUESTS = RECYCLE_AFTER_REQUESTS + 2

HTTP_VERSION = {"h1": "HTTP/1.1", "h1tls": "HTTP/1.1", "h2": "HTTP/2", "h2c": "HTTP/2"}
CURL_FLAGS = {
    "h1": ["--http1.1"],
    "h1tls": ["--http1.1"],
    "h2": ["--http2"],
    "h2c": ["--http2-prior-knowledge"],
}
CURL_VERSION = {"h1": "1.1", "h1tls": "1.1", "h2": "2", "h2c": "2"}


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """World-readable scratch directory: workers that dropped root must read it (pytest's
    tmp_path has private parents)."""
    root = Path(tempfile.mkdtemp(prefix="nodelay-weblaunch-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def backend(scratch: Path) -> Iterator[str]:
    """httpbin under gunicorn (threaded, HTTP/1.1 keep-alive) on a free loopback port."""
    port = free_port()
    argv = [sys.executable, "-m", "gunicorn", "-b", f"127.0.0.1:{port}"]
    argv += ["-k", "gthread", "--threads", "8", "-w", "1", "httpbin:app"]
    with webproc.daemon(argv, scratch / "gunicorn.log", [port]):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def env(scratch: Path, backend: str, ca: trustme.CA) -> LaunchEnv:
    static = scratch / "site" / "static"
    static.mkdir(parents=True)
    for name, data in (("small.bin", SMALL), ("large.bin", LARGE), ("page.html", PAGE)):
        (static / name).write_bytes(data)
    tls = scratch / "tls"
    tls.mkdir()
    leaf = ca.issue_cert("localhost", "127.0.0.1")
    leaf.private_key_pem.write_to_path(str(tls / "key.pem"))
    leaf.cert_chain_pems[0].write_to_path(str(tls / "cert.pem"))
    ca.cert_pem.write_to_path(str(tls / "ca.pem"))
    work = scratch / "work"
    work.mkdir()
    for path in (scratch / "site", static, tls, work, *static.iterdir(), *tls.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return LaunchEnv(
        site_root=scratch / "site",
        cert_pem=tls / "cert.pem",
        key_pem=tls / "key.pem",
        ca_pem=tls / "ca.pem",
        backend_url=backend,
        workdir=work,
    )


@pytest.fixture(scope="module", params=WEB_SERVERS, ids=lambda launcher: launcher.name)
def launched(
    request: pytest.FixtureRequest, env: LaunchEnv
) -> Iterator[tuple[WebLauncher, dict[str, Endpoint]]]:
    launcher: WebLauncher = request.param
    reason = launcher.unavailable()
    if reason is not None:
        pytest.skip(reason)
    with launcher.start(env) as endpoints:
        yield launcher, {e.protocol: e for e in endpoints}


@pytest.fixture(params=["h1", "h1tls", "h2", "h2c"])
def endpoint(
    request: pytest.FixtureRequest, launched: tuple[WebLauncher, dict[str, Endpoint]]
) -> Endpoint:
    launcher, endpoints = launched
    if request.param not in endpoints:
        pytest.skip(f"{launcher.name} does not offer {request.param}")
    return endpoints[request.param]


def client(endpoint: Endpoint, **overrides: Any) -> Any:
    """An httpx client speaking ``endpoint``'s protocol: HTTP/2 by ALPN for h2, by prior
    knowledge (HTTP/1.1 disabled) for h2c."""
    verify = endpoint.verify
    options: dict[str, Any] = {
        "http1": endpoint.protocol != "h2c",
        "http2": endpoint.protocol in ("h2", "h2c"),
        "verify": ssl.create_default_context(cafile=verify) if isinstance(verify, str) else verify,
        "timeout": REQUEST_TIMEOUT_S,
    }
    return httpx.Client(**(options | overrides))


def test_static_file_byte_exact_over_the_claimed_protocol(endpoint: Endpoint) -> None:
    with client(endpoint) as c:
        for path, body in (("/static/small.bin", SMALL), ("/static/large.bin", LARGE)):
            r = c.get(endpoint.base_url + path, headers={"Accept-Encoding": "gzip, br, zstd"})
            assert (r.status_code, r.http_version) == (200, HTTP_VERSION[endpoint.protocol])
            assert "content-encoding" not in r.headers, "a binary file was transformed"
            assert r.content == body
        assert c.get(endpoint.base_url + "/static/missing").status_code == 404


def test_http1_tls_port_does_not_offer_h2(endpoint: Endpoint) -> None:
    if endpoint.protocol != "h1tls":
        pytest.skip("ALPN restriction concerns the h1tls port")
    if "h1tls-alpn" in endpoint.lacks:
        pytest.skip(endpoint.lacks["h1tls-alpn"])
    with client(endpoint, http2=True) as c:
        r = c.get(endpoint.base_url + "/static/small.bin")
    assert (r.http_version, r.content) == ("HTTP/1.1", SMALL)


def test_text_page_gzip(endpoint: Endpoint, launched: tuple[WebLauncher, Any]) -> None:
    if "gzip" not in launched[0].encodings:
        pytest.skip(f"{launched[0].name} does not compress")
    with client(endpoint) as c:
        r = c.get(endpoint.base_url + "/static/page.html", headers={"Accept-Encoding": "gzip"})
    assert r.headers.get("content-encoding") == "gzip"
    assert r.content == PAGE


def curl(endpoint: Endpoint, path: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("curl")
    if exe is None:
        pytest.skip("curl is not installed")
    argv = [exe, "-sS", "--max-time", str(CURL_TIMEOUT_S), "-o", str(out), "-D", "-"]
    argv += ["-w", "\nversion=%{http_version}\n", *CURL_FLAGS[endpoint.protocol], *extra]
    if isinstance(endpoint.verify, str):
        argv += ["--cacert", endpoint.verify]
    return subprocess.run(
        [*argv, endpoint.base_url + path],
        capture_output=True,
        text=True,
        timeout=CURL_TIMEOUT_S + 10,
        check=True,
    )


def test_curl_agrees(endpoint: Endpoint, launched: tuple[WebLauncher, Any], tmp_path: Path) -> None:
    out = tmp_path / "body"
    result = curl(endpoint, "/static/large.bin", out)
    assert f"version={CURL_VERSION[endpoint.protocol]}" in result.stdout
    assert out.read_bytes() == LARGE
    for coding in sorted(launched[0].encodings):
        result = curl(
            endpoint, "/static/page.html", out, "--compressed", "-H", f"Accept-Encoding: {coding}"
        )
        assert f"content-encoding: {coding}" in result.stdout.lower(), result.stdout
        assert out.read_bytes() == PAGE


def needs_app(endpoint: Endpoint) -> None:
    if "app" in endpoint.lacks:
        pytest.skip(endpoint.lacks["app"])


def test_proxy_strips_the_prefix_and_passes_204(endpoint: Endpoint) -> None:
    needs_app(endpoint)
    with client(endpoint) as c:
        r = c.get(endpoint.base_url + "/app/anything/deep?q=1")
        assert r.status_code == 200
        assert r.json()["url"].endswith("/anything/deep?q=1")
        assert r.http_version == HTTP_VERSION[endpoint.protocol]
        empty = c.get(endpoint.base_url + "/app/status/204")
        assert (empty.status_code, empty.content) == (204, b"")


def echoed(r: Any, body: bytes) -> None:
    assert r.status_code == 200, r.text[:500]
    data = r.json()["data"]
    assert len(data) == len(body)
    assert hashlib.sha256(data.encode()).digest() == hashlib.sha256(body).digest()


def test_proxy_10_mib_upload(endpoint: Endpoint) -> None:
    needs_app(endpoint)
    with client(endpoint) as c:
        echoed(c.post(endpoint.base_url + "/app/anything", content=UPLOAD), UPLOAD)


def test_proxy_streamed_upload(endpoint: Endpoint) -> None:
    needs_app(endpoint)

    def pieces() -> Iterator[bytes]:
        for _ in range(STREAM_PIECES):
            yield STREAM_PIECE

    with client(endpoint) as c:
        echoed(
            c.post(endpoint.base_url + "/app/anything", content=pieces()),
            STREAM_PIECE * STREAM_PIECES,
        )


def test_proxy_expect_100_continue(endpoint: Endpoint, tmp_path: Path) -> None:
    needs_app(endpoint)
    body = UPLOAD[: 1024 * 1024]
    with client(endpoint) as c:
        r = c.post(
            endpoint.base_url + "/app/anything", content=body, headers={"Expect": "100-continue"}
        )
    echoed(r, body)
    if not endpoint.protocol.startswith("h1"):
        return
    # httpx sends the body at once; curl holds it back until the 100 (or its timeout,
    # longer than the test's patience), so its success proves the 100 came.
    upload = tmp_path / "upload"
    upload.write_bytes(body)
    out = tmp_path / "answer"
    result = curl(
        endpoint,
        "/app/anything",
        out,
        "-v",
        "--data-binary",
        f"@{upload}",
        "-H",
        "Content-Type: application/octet-stream",
        "-H",
        "Expect: 100-continue",
        "--expect100-timeout",
        str(CURL_TIMEOUT_S * 10),
    )
    assert "HTTP/1.1 100 Continue" in result.stderr
    assert json.loads(out.read_bytes())["data"] == body.decode()


def test_connections_recycled(endpoint: Endpoint, launched: tuple[WebLauncher, Any]) -> None:
    if endpoint.protocol not in launched[0].recycles:
        pytest.skip(f"{launched[0].name} does not recycle {endpoint.protocol} connections")
    if endpoint.protocol in ("h2", "h2c"):
        sent = requests_until_goaway(endpoint, RECYCLE_WITHIN_REQUESTS)
        assert sent is not None, f"no GOAWAY after {RECYCLE_WITHIN_REQUESTS} streams"
        return
    local_ports: set[int] = set()

    def note_connection(response: Any) -> None:
        stream = response.extensions["network_stream"]
        local_ports.add(stream.get_extra_info("client_addr")[1])

    with client(endpoint, event_hooks={"response": [note_connection]}) as c:
        for _ in range(RECYCLE_WITHIN_REQUESTS):
            r = c.get(endpoint.base_url + "/static/small.bin")
            assert (r.status_code, r.content) == (200, SMALL)
    assert len(local_ports) >= 2, "every request went over one connection"


#: HTTP/2 frame types and flags the GOAWAY watcher reads (RFC 9113 section 6).
DATA, HEADERS, SETTINGS, GOAWAY = 0x0, 0x1, 0x4, 0x7
END_STREAM, ACK = 0x1, 0x1
FRAME_HEAD_BYTES = 9
DEFAULT_WINDOW, MAX_WINDOW = 65_535, 2**31 - 1


def requests_until_goaway(endpoint: Endpoint, limit: int) -> int | None:
    """Send up to ``limit`` requests one after the other on one HTTP/2 connection; return
    how many were sent when the server's GOAWAY arrived (None if it never did).

    Frames are read here rather than by the h2 package: h2 (hence httpx) refuses the
    HEADERS of a stream the server still answers after its GOAWAY, which is legal
    (RFC 9113 section 6.8) and is what nginx does on its last stream; curl 7.88 mishandles
    GOAWAY on h2c. h2 only encodes the requests (HPACK)."""
    host = endpoint.base_url.split("://")[1]
    scheme = endpoint.base_url.split(":")[0]
    conn = h2_connection.H2Connection()
    conn.initiate_connection()
    # Responses are never acknowledged by WINDOW_UPDATEs: open the connection window wide
    # enough for all of them up front (each fits its own stream's window).
    conn.increment_flow_control_window(MAX_WINDOW - DEFAULT_WINDOW)
    with connect(endpoint, "h2") as sock:
        sock.sendall(conn.data_to_send())
        buffer = bytearray()

        def frame() -> tuple[int, int, int]:
            while True:
                if len(buffer) >= FRAME_HEAD_BYTES:
                    length = int.from_bytes(buffer[:3], "big")
                    if len(buffer) >= FRAME_HEAD_BYTES + length:
                        kind, flags = buffer[3], buffer[4]
                        stream = int.from_bytes(buffer[5:9], "big") & 0x7FFF_FFFF
                        del buffer[: FRAME_HEAD_BYTES + length]
                        return kind, flags, stream
                data = sock.recv(65536)
                assert data, "the server closed the connection without GOAWAY"
                buffer.extend(data)

        for sent in range(1, limit + 1):
            sid = conn.get_next_available_stream_id()
            request = [(":method", "GET"), (":path", "/static/small.bin")]
            conn.send_headers(sid, [*request, (":scheme", scheme), (":authority", host)], True)
            sock.sendall(conn.data_to_send())
            while True:
                kind, flags, stream = frame()
                if kind == GOAWAY:
                    return sent
                if kind == SETTINGS and not flags & ACK:
                    sock.sendall(bytes([0, 0, 0, SETTINGS, ACK, 0, 0, 0, 0]))
                if stream == sid and kind in (DATA, HEADERS) and flags & END_STREAM:
                    break
    return None


def connect(endpoint: Endpoint, alpn: str) -> socket.socket:
    port = int(endpoint.base_url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT_S)
    if not isinstance(endpoint.verify, str):
        return sock
    context = ssl.create_default_context(cafile=endpoint.verify)
    context.set_alpn_protocols([alpn])
    return context.wrap_socket(sock, server_hostname=webproc.HOST)


def closed_within(sock: socket.socket, on_data: Any, seconds: float) -> bool:
    """Read until the peer closes (True) or ``seconds`` pass (False); hand data to
    ``on_data``."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            data = sock.recv(65536)
        except TimeoutError:
            return False
        except (ssl.SSLError, ConnectionResetError):
            return True
        if not data:
            return True
        on_data(data)
    return False


def test_idle_connection_closed_by_the_server(
    endpoint: Endpoint, launched: tuple[WebLauncher, Any]
) -> None:
    if endpoint.protocol not in launched[0].idle_closes:
        pytest.skip(f"{launched[0].name} has no idle timeout for {endpoint.protocol}")
    host = endpoint.base_url.split("://")[1]
    limit = SERVER_IDLE_TIMEOUT_S + IDLE_MARGIN_S
    received = bytearray()
    with connect(endpoint, "http/1.1" if endpoint.protocol.startswith("h1") else "h2") as sock:
        if endpoint.protocol.startswith("h1"):
            sock.sendall(f"GET /static/small.bin HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
            closed = closed_within(sock, received.extend, limit)
            assert received.startswith(b"HTTP/1.1 200")
            assert received.endswith(SMALL)
        else:
            conn = h2_connection.H2Connection()
            conn.initiate_connection()
            sid = conn.get_next_available_stream_id()
            scheme = endpoint.base_url.split(":")[0]
            request = [(":method", "GET"), (":path", "/static/small.bin")]
            conn.send_headers(sid, [*request, (":scheme", scheme), (":authority", host)], True)
            sock.sendall(conn.data_to_send())
            ended: list[bool] = []

            def on_data(data: bytes) -> None:
                for event in conn.receive_data(data):
                    if isinstance(event, h2_events.DataReceived):
                        received.extend(event.data)
                    ended.append(isinstance(event, h2_events.StreamEnded))
                with contextlib.suppress(OSError):  # the server may have closed already
                    sock.sendall(conn.data_to_send())

            closed = closed_within(sock, on_data, limit)
            assert any(ended) and bytes(received) == SMALL
    assert closed, f"the idle connection was still open after {limit} s"
