"""Deadlines fire on time and raise the timeout classes."""

from __future__ import annotations

import time
from collections.abc import Callable

import nodelay
import pytest
from nodelay import _core
from scripted import Recv, ScriptedServer, Send, Sleep

pytestmark = pytest.mark.both_drivers

Factory = Callable[..., ScriptedServer]


def _assert_read_timeout(exc: BaseException, url: str) -> None:
    assert isinstance(exc, nodelay.ReadTimeout)
    assert isinstance(exc, nodelay.TimeoutException)
    assert isinstance(exc, TimeoutError)
    assert isinstance(exc, nodelay.TransportError)
    assert exc.url == url
    assert exc.request is not None and exc.request.url == url


@pytest.mark.parametrize(
    "timeout",
    [nodelay.Timeout(5.0, read=0.2), 0.2, (5.0, 0.2)],
    ids=["Timeout", "float", "pair"],
)
def test_read_timeout_per_request(
    server: _core.TestServer, client: nodelay.Client, timeout: object
) -> None:
    url = f"{server.url}/delay/2000"
    start = time.monotonic()
    with pytest.raises(nodelay.ReadTimeout) as info:
        client.get(url, timeout=timeout)  # type: ignore[arg-type]
    elapsed = time.monotonic() - start
    assert 0.15 <= elapsed < 1.0, elapsed
    _assert_read_timeout(info.value, url)


def test_read_timeout_on_client(server: _core.TestServer) -> None:
    url = f"{server.url}/delay/2000"
    with nodelay.Client(timeout=nodelay.Timeout(5.0, read=0.2)) as client:
        start = time.monotonic()
        with pytest.raises(TimeoutError) as info:
            client.get(url)
        assert time.monotonic() - start < 1.0
        _assert_read_timeout(info.value, url)
        # The client is still usable (the timed-out connection is not reused).
        assert client.get(f"{server.url}/bytes/5").status_code == 200


def test_slow_but_in_time(server: _core.TestServer, client: nodelay.Client) -> None:
    r = client.get(f"{server.url}/delay/100", timeout=nodelay.Timeout(5.0, read=2.0))
    assert r.status_code == 200


def test_no_timeout_waits(server: _core.TestServer, client: nodelay.Client) -> None:
    r = client.get(f"{server.url}/delay/300", timeout=None)
    assert r.status_code == 200
    assert r.elapsed.total_seconds() >= 0.25


# -- what a timeout error says: the phase and the configured timeout (docs/hostile.md L40) ------


def test_read_timeout_names_the_head_and_the_configured_timeout(
    server: _core.TestServer, client: nodelay.Client
) -> None:
    # The main thread waits in short slices (it checks for Ctrl-C between them): the
    # message names the configured timeout, not the last slice.
    with pytest.raises(nodelay.ReadTimeout) as info:
        client.get(f"{server.url}/delay/3000", timeout=0.5)
    assert str(info.value) == "read timeout of 0.5 s while waiting for the response head"


def test_read_timeout_names_the_body(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), Sleep(5.0)])
    with pytest.raises(nodelay.ReadTimeout) as info:
        client.get(srv.url + "/", timeout=nodelay.Timeout(5.0, read=0.5))
    assert str(info.value) == "read timeout of 0.5 s while reading the response body"


def test_write_timeout_names_the_request(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Sleep(10.0)])
    body = b"x" * (64 * 1024 * 1024)  # far more than loopback socket buffers hold
    with pytest.raises(nodelay.WriteTimeout) as info:
        client.post(srv.url + "/", content=body, timeout=nodelay.Timeout(5.0, write=0.5))
    assert str(info.value) == "write timeout of 0.5 s while sending the request"


def test_pool_timeout_names_the_wait_for_a_connection(server: _core.TestServer) -> None:
    limits = nodelay.Limits(max_connections=1)
    with nodelay.Client(limits=limits) as client:
        with client.stream("GET", f"{server.url}/bytes/5"):
            with pytest.raises(nodelay.PoolTimeout) as info:
                client.get(f"{server.url}/bytes/5", timeout=nodelay.Timeout(5.0, pool=0.3))
    assert str(info.value) == "pool timeout of 0.3 s while waiting for a free connection"


def test_total_timeout_names_the_total(scripted: Factory, client: nodelay.Client) -> None:
    srv = scripted([Recv(), Sleep(5.0)])
    with pytest.raises(nodelay.ReadTimeout) as info:
        client.get(srv.url + "/", timeout=nodelay.Timeout(5.0, total=0.5))
    assert str(info.value) == "total timeout of 0.5 s exceeded while waiting for the response head"
