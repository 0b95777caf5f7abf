"""Threads sharing a client, and a forked child using an inherited client."""

from __future__ import annotations

import threading

import nodelay
from children import forked_child_succeeds
from conftest import expected_bytes
from nodelay import _core

THREADS = 8
PER_THREAD = 200


def test_threads_share_one_client(server: _core.TestServer) -> None:
    errors: list[str] = []
    start = threading.Barrier(THREADS)

    def worker(index: int, client: nodelay.Client) -> None:
        n = 100 + index * 7
        body = expected_bytes(n)
        start.wait()
        try:
            for i in range(PER_THREAD):
                if i % 10 == 0:
                    token = f"t{index}-{i}"
                    data = client.get(f"{server.url}/anything", params={"token": token}).json()
                    if data["query"] != f"token={token}":
                        errors.append(f"thread {index}: got query {data['query']!r}")
                else:
                    r = client.get(f"{server.url}/bytes/{n}")
                    if r.status_code != 200 or r.content != body:
                        errors.append(f"thread {index}: wrong body at {i}")
        except Exception as exc:  # collected and reported by the main thread
            errors.append(f"thread {index}: {exc!r}")

    with nodelay.Client() as client:
        before = server.connections()
        threads = [threading.Thread(target=worker, args=(i, client)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert server.connections() - before <= THREADS


def test_forked_child_gets_a_fresh_pool(server: _core.TestServer) -> None:
    url = f"{server.url}/bytes/64"
    with nodelay.Client() as client:
        assert client.get(url).content == expected_bytes(64)  # a pooled connection exists

        def parent() -> None:
            for _ in range(3):
                assert client.get(url).content == expected_bytes(64)

        forked_child_succeeds(
            lambda: all(client.get(url).content == expected_bytes(64) for _ in range(3)), parent
        )
        assert client.get(url).content == expected_bytes(64)
