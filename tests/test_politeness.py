"""Per-host politeness as a server sees it: ``Limits(max_connections_per_host=)`` bounds
the connections open to one origin and ``RateLimit`` spaces the requests it receives, for
``Client`` (threads), ``AsyncClient`` and ``get_many``; the ``PoolTimeout`` each gives;
``Retry`` honours ``Retry-After`` in batches as in single requests."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import nodelay
import pytest
from counting_server import CountingServer
from nodelay import _core

# Seconds each answer is held back, so that concurrent requests overlap at the server.
HOLD = 0.02


@pytest.fixture
def hosts() -> Iterator[tuple[CountingServer, CountingServer]]:
    with CountingServer(HOLD) as a, CountingServer(HOLD) as b:
        yield a, b


def per_host(n: int) -> nodelay.Limits:
    return nodelay.Limits(max_connections_per_host=n)


def test_threads_sharing_a_client_open_at_most_the_limit_per_host(
    hosts: tuple[CountingServer, CountingServer],
) -> None:
    a, b = hosts
    with nodelay.Client(limits=per_host(2), timeout=10) as client:

        def work() -> None:
            for i in range(4):
                for server in (a, b):
                    assert client.get(f"{server.url}/ok/{i}").text == f"ok {i}"

        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert (a.most_open, b.most_open) == (2, 2)
    assert len(a.arrivals()) == 24


def test_threads_open_more_without_the_limit(hosts: tuple[CountingServer, CountingServer]) -> None:
    a, _ = hosts
    with nodelay.Client(timeout=10) as client:
        threads = [
            threading.Thread(target=lambda: [client.get(f"{a.url}/ok/x") for _ in range(3)])
            for _ in range(6)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert a.most_open > 2


def test_async_client_opens_at_most_the_limit_per_host(
    hosts: tuple[CountingServer, CountingServer],
) -> None:
    a, b = hosts

    async def main() -> list[str]:
        async with nodelay.AsyncClient(limits=per_host(3), timeout=10) as client:
            urls = [f"{s.url}/ok/{i}" for i in range(12) for s in (a, b)]
            responses = await asyncio.gather(*(client.get(u) for u in urls))
            return [r.text for r in responses]

    texts = asyncio.run(main())
    assert texts == [f"ok {i}" for i in range(12) for _ in (a, b)]
    assert (a.most_open, b.most_open) == (3, 3)


def test_get_many_opens_at_most_the_limit_per_host(
    hosts: tuple[CountingServer, CountingServer],
) -> None:
    a, b = hosts
    urls = [f"{s.url}/ok/{i}" for i in range(40) for s in (a, b)]
    with nodelay.Client(limits=per_host(2), timeout=10) as client:
        responses = client.get_many(urls, concurrency=16)
    assert [r.text for r in responses] == [f"ok {i}" for i in range(40) for _ in (a, b)]
    assert (a.most_open, b.most_open) == (2, 2)


def test_a_checkout_beyond_the_per_host_limit_times_out_naming_host_and_limit(
    hosts: tuple[CountingServer, CountingServer],
) -> None:
    a, b = hosts
    timeout = nodelay.Timeout(5, pool=0.2)
    with nodelay.Client(limits=per_host(1), timeout=timeout) as client:
        with client.stream("GET", f"{a.url}/ok/held"):
            # Another origin is not held back by a's connection.
            assert client.get(f"{b.url}/ok/free").status_code == 200
            with pytest.raises(nodelay.PoolTimeout) as caught:
                client.get(f"{a.url}/ok/more")
    assert str(caught.value) == (
        f"pool timeout of 0.2 s while waiting for a free connection to {a.url} "
        "(max_connections_per_host=1)"
    )


def rate_seen(server: CountingServer, rate: float, burst: int, count: int) -> None:
    """The server saw every request, spread at the rate: no window of half a second
    held more than the rate's worth plus the burst, and the whole took at least the
    time the rate allows after the burst."""
    arrivals = server.arrivals()
    assert len(arrivals) == count
    assert server.most_in_window(0.5) <= server.most_allowed_in_window(rate, burst, 0.5)
    assert arrivals[-1] - arrivals[0] >= (count - burst) / rate - 0.05


def test_the_rate_limit_spaces_a_clients_requests_per_host(
    hosts: tuple[CountingServer, CountingServer],
) -> None:
    a, b = hosts
    limit = nodelay.RateLimit(40, burst=2)
    started = time.monotonic()
    with nodelay.Client(rate_limit=limit, timeout=10) as client:

        def work() -> None:
            for i in range(6):
                for server in (a, b):
                    assert client.get(f"{server.url}/ok/{i}").status_code == 200

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    rate_seen(a, 40, 2, 24)
    rate_seen(b, 40, 2, 24)
    # Each host has its own budget: the two were served side by side.
    assert time.monotonic() - started < 2 * (24 - 2) / 40


def test_the_rate_limit_holds_for_async_and_get_many(
    hosts: tuple[CountingServer, CountingServer],
) -> None:
    a, b = hosts
    limit = nodelay.RateLimit(50)  # burst: a fifth of a second, 10

    async def main() -> None:
        async with nodelay.AsyncClient(rate_limit=limit, timeout=10) as client:
            responses = await asyncio.gather(*(client.get(f"{a.url}/ok/{i}") for i in range(40)))
            assert all(r.status_code == 200 for r in responses)

    asyncio.run(main())
    rate_seen(a, 50, 10, 40)
    with nodelay.Client(rate_limit=limit, timeout=10) as client:
        responses = client.get_many([f"{b.url}/ok/{i}" for i in range(40)], concurrency=32)
    assert [r.text for r in responses] == [f"ok {i}" for i in range(40)]
    rate_seen(b, 50, 10, 40)


def test_a_rate_limit_for_the_whole_client_counts_every_host(
    hosts: tuple[CountingServer, CountingServer],
) -> None:
    a, b = hosts
    limit = nodelay.RateLimit(40, burst=1, per_host=False)
    with nodelay.Client(rate_limit=limit, timeout=10) as client:
        client.get_many([f"{s.url}/ok/{i}" for i in range(10) for s in (a, b)])
    times = sorted(a.arrivals() + b.arrivals())
    assert times[-1] - times[0] >= 19 / 40 - 0.05


def test_a_turn_beyond_the_pool_timeout_fails_at_once_naming_the_rate(
    hosts: tuple[CountingServer, CountingServer],
) -> None:
    a, _ = hosts
    timeout = nodelay.Timeout(5, pool=0.2)
    with nodelay.Client(rate_limit=nodelay.RateLimit(2), timeout=timeout) as client:
        assert client.get(f"{a.url}/ok/1").status_code == 200
        started = time.monotonic()
        with pytest.raises(nodelay.PoolTimeout) as caught:
            client.get(f"{a.url}/ok/2")
        assert time.monotonic() - started < 0.2
        results = client.get_many([f"{a.url}/ok/3"], return_exceptions=True)
    assert str(caught.value) == (
        f"pool timeout of 0.2 s while waiting for the rate limit of 2 requests/s (burst 1) "
        f"to {a.url}"
    )
    assert isinstance(results[0], nodelay.PoolTimeout)
    assert len(a.arrivals()) == 1


def test_retry_after_is_honoured_in_batches_as_in_single_requests(
    hosts: tuple[CountingServer, CountingServer],
) -> None:
    a, _ = hosts
    with nodelay.Client(retries=nodelay.Retry(total=2), timeout=10) as client:
        assert client.get(f"{a.url}/flaky/single").text == "ok single"
        responses = client.get_many([f"{a.url}/flaky/x", f"{a.url}/flaky/y"])
    assert [r.text for r in responses] == ["ok x", "ok y"]
    for key in ("single", "x", "y"):
        first, second = a.arrivals(f"/flaky/{key}")
        assert second - first >= 0.95, key


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="max_connections_per_host"):
        nodelay.Limits(max_connections_per_host=0)
    with pytest.raises(ValueError, match="per_second"):
        nodelay.RateLimit(0)
    with pytest.raises(ValueError, match="per_second"):
        nodelay.RateLimit(float("nan"))
    with pytest.raises(ValueError, match="burst"):
        nodelay.RateLimit(5, burst=0)
    with pytest.raises(TypeError, match="rate_limit"):
        nodelay.Client(rate_limit=5)  # type: ignore[arg-type]
    assert nodelay.RateLimit(5, 2) == nodelay.RateLimit(5.0, burst=2, per_host=True)
    assert "max_connections_per_host=3" in repr(per_host(3))


def test_http2_streams_take_a_turn_each() -> None:
    server = _core.TestServer("127.0.0.1", 0, 1, http2=True)
    try:
        limit = nodelay.RateLimit(20, burst=1)
        with nodelay.Client(http2="prior_knowledge", rate_limit=limit, timeout=10) as client:
            started = time.monotonic()
            responses = client.get_many([f"{server.url}/bytes/10?i={i}" for i in range(6)])
            took = time.monotonic() - started
            assert {r.http_version for r in responses} == {"HTTP/2"}
            assert client.get(f"{server.url}/bytes/10").status_code == 200
        # One connection carried the 7 requests; the 6 of the batch waited their turns
        # (5 gaps of 50 ms after the first).
        assert server.connections() == 1
        assert took >= 5 * 0.05
    finally:
        server.close()
