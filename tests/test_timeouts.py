"""Deadlines fire on time and raise the timeout classes."""

from __future__ import annotations

import time

import nodelay
import pytest
from nodelay import _core


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
