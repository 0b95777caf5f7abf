"""The batch API on the process runtime: HTTP/2 multiplexed on the client's one connection,
per-request timeouts against a stalling server, the batch's keep-alive pool kept across
batches and closed by ``client.close()``, no descriptor leaks, proxied clients on the
threaded path, and Ctrl-C while requests are in flight over HTTP/2."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator

import nodelay
import pytest
import trustme
from children import exit_code_after_ctrl_c, forked_child_succeeds
from conftest import expected_bytes
from nodelay import _core
from scripted import Recv, ScriptedServer, Send, Sleep, response


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def fds_settle(at_most: int, within: float = 2.0) -> int:
    """Open descriptors once they are ``at_most`` or ``within`` seconds passed: the
    embedded server runs in this process and closes its side of a connection only after
    it saw the client's close."""
    deadline = time.monotonic() + within
    while (n := open_fds()) > at_most and time.monotonic() < deadline:
        time.sleep(0.02)
    return n


@pytest.fixture
def h2c_server() -> Iterator[_core.TestServer]:
    srv = _core.TestServer(http2=True)
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """(CA file, certificate file, key file) for localhost."""
    ca = trustme.CA()
    leaf = ca.issue_cert("localhost", "127.0.0.1")
    folder = tmp_path_factory.mktemp("batchtls")
    ca_file, cert, key = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    for i, pem in enumerate(leaf.cert_chain_pems):
        pem.write_to_path(str(cert), append=i > 0)
    leaf.private_key_pem.write_to_path(str(key))
    return str(ca_file), str(cert), str(key)


@pytest.mark.parametrize("http2", [True, False])
def test_tls_batches_over_h2_by_alpn_and_http1_fallback(
    tls_files: tuple[str, str, str], http2: bool
) -> None:
    ca_file, cert, key = tls_files
    srv = _core.TestServer(http2=http2, tls=True, cert_file=cert, key_file=key)
    try:
        url = srv.url.replace("127.0.0.1", "localhost")
        with nodelay.Client(http2=True, verify=ca_file) as client:
            for _ in range(2):
                rs = client.get_many([f"{url}/bytes/{n}" for n in range(1, 41)], concurrency=8)
                assert [r.content for r in rs] == [expected_bytes(n) for n in range(1, 41)]
                assert {r.http_version for r in rs} == {"HTTP/2" if http2 else "HTTP/1.1"}
            with pytest.raises(nodelay.ConnectError):  # verification applies to batches
                nodelay.Client(http2=True).get_many([f"{url}/bytes/1"])
        # h2: one connection; HTTP/1.1: one per task (8), the first of them the one ALPN
        # made (its request goes on it); plus the one of the refused verification.
        assert srv.connections() == (1 if http2 else 8) + 1
    finally:
        srv.close()


def test_h2_batch_multiplexes_on_one_connection(h2c_server: _core.TestServer) -> None:
    with nodelay.Client(http2="prior_knowledge") as client:
        sizes = [1 + (i * 53) % 5000 for i in range(300)]
        urls = [f"{h2c_server.url}/bytes/{n}" for n in sizes]
        rs = client.get_many(urls, concurrency=32)
        for n, url, r in zip(sizes, urls, rs, strict=True):
            assert r.http_version == "HTTP/2"
            assert r.content == expected_bytes(n)
            assert r.url == url
        assert h2c_server.connections() == 1
        # A later request of the client, and a second batch, use the same connection.
        assert client.get(f"{h2c_server.url}/bytes/3").http_version == "HTTP/2"
        rs = client.get_many([f"{h2c_server.url}/bytes/10"] * 64, concurrency=64)
        assert all(r.content == expected_bytes(10) for r in rs)
        assert h2c_server.connections() == 1
    assert h2c_server.requests() == 300 + 1 + 64


def test_h2_batch_decodes_stores_cookies_and_sends_bodies(h2c_server: _core.TestServer) -> None:
    with nodelay.Client(http2="prior_knowledge") as client:
        gz, posted, cookie = client.map(
            [
                ("GET", f"{h2c_server.url}/gzip/3000"),
                ("POST", f"{h2c_server.url}/echo", {"content": b"h2 body"}),
                ("GET", f"{h2c_server.url}/cookies/set?h2batch=1"),
            ],
            concurrency=3,
        )
        assert gz.content == expected_bytes(3000)
        assert posted.content == b"h2 body"
        assert cookie.status_code == 200
        assert client.cookies.get("h2batch") == "1"
        (echoed,) = client.get_many([f"{h2c_server.url}/cookies"])
        assert echoed.json()["cookies"] == {"h2batch": "1"}


def test_h2_batch_errors_are_per_request(h2c_server: _core.TestServer) -> None:
    with nodelay.Client(http2="prior_knowledge") as client:
        rs = client.get_many(
            [f"{h2c_server.url}/delay/3000", f"{h2c_server.url}/bytes/5"],
            timeout=0.3,
            return_exceptions=True,
        )
        assert isinstance(rs[0], nodelay.ReadTimeout)
        assert isinstance(rs[1], nodelay.Response) and rs[1].content == expected_bytes(5)
        assert h2c_server.connections() == 1  # a timed-out stream does not kill the connection


def test_a_stalling_server_times_out_per_request(
    scripted: Callable[..., ScriptedServer],
) -> None:
    # Connection 0 stalls after reading the request; the others answer at once.
    srv = scripted(
        [Recv(), Sleep(5.0)],
        *[[Recv(), Send(response(200, b"ok"))] for _ in range(6)],
    )
    with nodelay.Client() as client:
        started = time.monotonic()
        rs = client.get_many(
            [f"{srv.url}/stall"] + [f"{srv.url}/{i}" for i in range(5)],
            concurrency=1,
            timeout=nodelay.Timeout(5.0, read=0.3),
            return_exceptions=True,
        )
        elapsed = time.monotonic() - started
    assert isinstance(rs[0], nodelay.ReadTimeout)
    assert rs[0].request is not None and rs[0].request.url == f"{srv.url}/stall"
    assert [r.content for r in rs[1:]] == [b"ok"] * 5
    assert elapsed < 3.0


def test_total_timeout_bounds_a_slow_body(scripted: Callable[..., ScriptedServer]) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
    srv = scripted([Recv(), Send(head + b"x" * 10), Sleep(0.2), Send(b"x" * 10), Sleep(5.0)])
    with nodelay.Client() as client:
        started = time.monotonic()
        with pytest.raises(nodelay.ReadTimeout):
            client.get_many([f"{srv.url}/slow"], timeout=nodelay.Timeout(None, total=0.5))
        assert time.monotonic() - started < 3.0


def test_the_batch_pool_is_kept_across_batches(server: _core.TestServer) -> None:
    with nodelay.Client() as client:
        before = server.connections()
        for _ in range(5):
            rs = client.get_many([f"{server.url}/bytes/20"] * 40, concurrency=8)
            assert all(r.content == expected_bytes(20) for r in rs)
        # The batches share at most 8 connections, kept between them.
        assert server.connections() - before <= 8
        # client.get uses the client's sync pool: one more connection, reused.
        for _ in range(3):
            assert client.get(f"{server.url}/bytes/2").content == b"ab"
        assert server.connections() - before <= 9


def test_max_connections_bounds_a_batch(server: _core.TestServer) -> None:
    limits = nodelay.Limits(max_connections=2)
    with nodelay.Client(limits=limits) as client:
        before = server.connections()
        rs = client.get_many([f"{server.url}/bytes/7"] * 60, concurrency=16)
        assert all(r.content == expected_bytes(7) for r in rs)
        assert server.connections() - before <= 2


def test_close_closes_the_batch_connections(server: _core.TestServer) -> None:
    with nodelay.Client() as warm:  # the process runtime's own descriptors exist from here
        warm.get_many([f"{server.url}/bytes/1"])
    client = nodelay.Client()
    fds = open_fds()
    client.get_many([f"{server.url}/bytes/1"] * 20, concurrency=4)
    assert open_fds() > fds
    client.close()
    assert fds_settle(fds) <= fds


def test_no_descriptor_leaks_over_many_batches(
    server: _core.TestServer, h2c_server: _core.TestServer
) -> None:
    with nodelay.Client() as client, nodelay.Client(http2="prior_knowledge") as h2:
        client.get_many([f"{server.url}/bytes/1"] * 16, concurrency=8)
        h2.get_many([f"{h2c_server.url}/bytes/1"] * 16, concurrency=8)
        fds = open_fds()
        for i in range(40):
            urls = [f"{server.url}/bytes/{i + 1}", "http://127.0.0.1:1/refused"] * 4
            rs = client.get_many(urls, concurrency=8, return_exceptions=True)
            assert isinstance(rs[1], nodelay.ConnectError)
            h2.get_many([f"{h2c_server.url}/bytes/{i + 1}"] * 8, concurrency=8)
            client.get_many([f"{server.url}/delay/2000"] * 2, timeout=0.05, return_exceptions=True)
        # Timed-out requests closed their connections; the rest went back to the pools.
        assert fds_settle(fds + 8) <= fds + 8


def test_a_proxied_client_keeps_the_threaded_path(server: _core.TestServer) -> None:
    from proxy_server import ProxyServer

    with ProxyServer() as proxy, nodelay.Client(proxy=proxy.url) as client:
        rs = client.get_many([f"{server.url}/bytes/{n}" for n in (1, 2, 3)] * 5, concurrency=4)
        assert [r.content for r in rs] == [expected_bytes(n) for n in (1, 2, 3)] * 5
        assert len(proxy.requests) >= 15


def test_ctrl_c_interrupts_an_h2_batch(h2c_server: _core.TestServer) -> None:
    script = textwrap.dedent(
        """
        import sys, time, nodelay
        client = nodelay.Client(http2="prior_knowledge")
        print("ready", flush=True)
        try:
            client.get_many([sys.argv[1] + "/delay/10000"] * 8, timeout=30)
        except KeyboardInterrupt:
            # The aborted streams were reset; the connection still serves requests.
            assert client.get(sys.argv[1] + "/bytes/3").content == b"abc"
            sys.exit(42)
        sys.exit(0)
        """
    )
    assert exit_code_after_ctrl_c(script, h2c_server.url) == 42


def test_forked_child_runs_batches_on_a_fresh_runtime_and_pool(
    server: _core.TestServer, h2c_server: _core.TestServer
) -> None:
    h1_urls = [f"{server.url}/bytes/64"] * 8
    h2_urls = [f"{h2c_server.url}/bytes/64"] * 8
    with nodelay.Client() as client, nodelay.Client(http2="prior_knowledge") as h2:
        # Batch connections (and the runtime's threads) exist before the fork.
        assert all(r.content == expected_bytes(64) for r in client.get_many(h1_urls))
        assert all(r.content == expected_bytes(64) for r in h2.get_many(h2_urls))

        def child() -> bool:
            ok = all(r.content == expected_bytes(64) for r in client.get_many(h1_urls))
            return ok and all(r.content == expected_bytes(64) for r in h2.get_many(h2_urls))

        def parent() -> None:
            assert all(r.content == expected_bytes(64) for r in client.get_many(h1_urls))

        forked_child_succeeds(child, parent)
        assert all(r.content == expected_bytes(64) for r in client.get_many(h1_urls))
        assert all(r.content == expected_bytes(64) for r in h2.get_many(h2_urls))


def test_a_child_dropping_an_inherited_client_leaves_the_parents_batch_pool_alone(
    server: _core.TestServer,
) -> None:
    script = textwrap.dedent(
        """
        import gc, os, sys, time, nodelay
        client = nodelay.Client()
        client.get_many([sys.argv[1]] * 8, concurrency=4)  # idle batch connections
        pid = os.fork()
        if pid == 0:
            del client  # the child lets go of its copy of the client
            gc.collect()
            os._exit(0)
        os.waitpid(pid, 0)
        started = time.monotonic()
        rs = client.get_many([sys.argv[1]] * 8, concurrency=4, timeout=3.0)
        assert all(r.content == b"abcde" for r in rs)
        print(f"{time.monotonic() - started:.3f}")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, f"{server.url}/bytes/5"],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert out.returncode == 0, out.stderr
    # The parent's reused connections still get readiness events: no read-timeout stall.
    assert float(out.stdout.strip()) < 1.0
