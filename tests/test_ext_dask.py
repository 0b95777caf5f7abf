"""``nodelay.ext.dask.fetch`` on a real local cluster (``distributed.LocalCluster``, two
worker processes) against the embedded server and a counting server: every URL once with
its body, failures as records, the per-host limit and the rate as the server sees them,
Parquet output, request dicts, no descriptors growing across jobs. The long ones
(20,000 URLs, a worker killed mid-run) are marked ``scale`` (``make test-scale``)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import expected_bytes
from counting_server import CountingServer
from nodelay import _core

dask_bag = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

from nodelay.ext import dask as nd  # noqa: E402  # after the skips
from nodelay.ext._jobs import close_worker_clients  # noqa: E402


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two worker processes with a nanny each (a killed worker is restarted), one
    thread each: what one machine's two cores run."""
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as local,
        distributed.Client(local) as client,
    ):
        yield client


def byte_urls(server: _core.TestServer, count: int) -> list[str]:
    # Each URL unique (the query), its body known from its size.
    return [f"{server.url}/bytes/{1 + i % 700}?i={i}" for i in range(count)]


def check_records(records: list[dict[str, Any]], urls: list[str]) -> None:
    assert sorted(r["url"] for r in records) == sorted(urls), "every URL exactly once"
    for r in records:
        size = int(r["url"].split("/bytes/")[1].split("?")[0])
        assert (r["status"], r["error"], r["http_version"]) == (200, None, "HTTP/1.1")
        assert r["content"] == expected_bytes(size)
        assert ("content-length", str(size)) in [(n.lower(), v) for n, v in r["headers"]]
        assert isinstance(r["elapsed"], float)


def test_every_url_once_with_its_body(cluster: Any, server: _core.TestServer) -> None:
    urls = byte_urls(server, 400)
    bag = nd.fetch(urls, partition_size=50, concurrency=8)
    assert bag.npartitions == 8
    check_records(bag.compute(), urls)


def refused_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


def test_statuses_refusals_and_timeouts_are_records(cluster: Any, server: _core.TestServer) -> None:
    urls = [f"{server.url}/status/503", refused_url(), f"{server.url}/delay/3000", "nope://x"]
    urls += byte_urls(server, 5)
    records = {r["url"]: r for r in nd.fetch(urls, timeout=0.5, partition_size=3).compute()}
    assert len(records) == len(urls)
    unavailable, refused, slow, bad = (records[u] for u in urls[:4])
    assert (unavailable["status"], unavailable["error"]) == (503, None)
    assert refused["status"] is None and refused["error"].startswith("ConnectError: ")
    assert slow["status"] is None and slow["error"].startswith("ReadTimeout: ")
    assert bad["status"] is None and bad["error"].startswith(("UnsupportedProtocol", "InvalidURL"))
    check_records([records[u] for u in urls[4:]], urls[4:])


def test_request_dicts_from_a_bag(cluster: Any, server: _core.TestServer) -> None:
    requests = [
        {"method": "POST", "url": f"{server.url}/echo", "headers": {"X-N": str(i)},
         "content": f"body {i}".encode()}
        for i in range(20)
    ]  # fmt: skip
    bag = dask_bag.from_sequence(requests, npartitions=4)
    records = nd.fetch(bag, concurrency=4).compute()
    assert sorted(r["content"] for r in records) == sorted(f"body {i}".encode() for i in range(20))
    assert all(r["status"] == 200 for r in records)


def test_partition_by_host_holds_the_per_host_limit_for_the_whole_job(cluster: Any) -> None:
    with CountingServer(hold=0.01) as a, CountingServer(hold=0.01) as b:
        urls = [f"{s.url}/ok/{i}" for i in range(60) for s in (a, b)]
        # Spread over both workers: each worker's client holds 2 per host.
        records = nd.fetch(urls, per_host=2, concurrency=8, partition_size=20).compute()
        assert sorted(r["url"] for r in records) == sorted(urls)
        assert a.most_open <= 4 and b.most_open <= 4
    with CountingServer(hold=0.01) as a, CountingServer(hold=0.01) as b:
        urls = [f"{s.url}/ok/{i}" for i in range(60) for s in (a, b)]
        # Each origin's URLs in one partition (an origin with partition_size URLs or
        # more fills one alone; smaller ones share): one worker, 2 at most.
        bag = nd.fetch(urls, per_host=2, concurrency=8, partition_by_host=True, partition_size=60)
        assert bag.npartitions == 2
        records = bag.compute()
        assert sorted(r["url"] for r in records) == sorted(urls)
        assert all(r["content"] == b"ok " + r["url"].rsplit("/", 1)[1].encode() for r in records)
        assert (a.most_open, b.most_open) == (2, 2)


def test_the_rate_per_host_seen_by_the_server(cluster: Any) -> None:
    with CountingServer() as a, CountingServer() as b:
        urls = [f"{s.url}/ok/{i}" for i in range(50) for s in (a, b)]
        records = nd.fetch(urls, rate=50, partition_by_host=True, concurrency=16).compute()
        assert len(records) == 100 and all(r["status"] == 200 for r in records)
        for server in (a, b):
            times = server.arrivals()
            assert len(times) == 50
            # burst 10, then 50/s: an unlimited client would send all 50 in a few ms.
            assert server.most_in_window(0.5) <= server.most_allowed_in_window(50, 10, 0.5)
            assert times[-1] - times[0] >= 40 / 50 - 0.05


def test_write_to_parquet_returns_counts(
    cluster: Any, server: _core.TestServer, tmp_path: Any
) -> None:
    import pyarrow.parquet as pq

    urls = [*byte_urls(server, 200), refused_url()]
    counts = nd.fetch(urls, partition_size=50, write_to=str(tmp_path)).compute()
    assert sum(c["records"] for c in counts) == 201
    assert sum(c["errors"] for c in counts) == 1
    assert sorted(os.path.basename(c["path"]) for c in counts) == sorted(os.listdir(tmp_path))
    table = pq.read_table(str(tmp_path)).to_pylist()
    ok = [r for r in table if r["error"] is None]
    for r in ok:
        r["headers"] = [tuple(pair) for pair in r["headers"]]
    check_records(ok, urls[:-1])


# The engine's pool keeps at most this many idle connections for one client once the
# surplus of a burst has closed, which it does within its grace (docs/pool.md).
MAX_IDLE_PER_WORKER = 20
SURPLUS_CLOSED_AFTER_S = 0.5


def worker_sockets_to(cluster: Any, port: int) -> dict[str, int]:
    """Each worker's TCP sockets whose peer is the test server: the descriptors the
    engine owns. Counting every descriptor would also count the scheduler's and the
    other worker's comms, which distributed opens as it pleases between jobs."""

    def count() -> int:
        import psutil

        process = psutil.Process()
        listing = getattr(process, "net_connections", None) or process.connections
        return sum(1 for c in listing(kind="tcp") if c.raddr and c.raddr.port == port)

    return cluster.run(count)  # type: ignore[no-any-return]


def test_no_descriptors_grow_across_jobs(cluster: Any, server: _core.TestServer) -> None:
    urls = byte_urls(server, 200)
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    # The earlier tests' clients (other option sets) keep their own idle connections.
    cluster.run(close_worker_clients)
    nd.fetch(urls, partition_size=25).compute()
    time.sleep(SURPLUS_CLOSED_AFTER_S)
    before = worker_sockets_to(cluster, port)
    assert all(0 < n <= MAX_IDLE_PER_WORKER for n in before.values()), before
    for _ in range(3):
        check_records(nd.fetch(urls, partition_size=25).compute(), urls)
    time.sleep(SURPLUS_CLOSED_AFTER_S)
    after = worker_sockets_to(cluster, port)
    # A job's warm connections are the next job's: none is opened beside them.
    assert all(after[w] <= before[w] for w in before), (before, after)


def test_import_nodelay_imports_neither_dask_nor_ray() -> None:
    code = (
        "import sys, nodelay, nodelay.ext.dask, nodelay.ext.ray\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', "
        "'ray', 'pyarrow')], sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_dask_names_the_extra() -> None:
    code = (
        "import sys\nsys.modules['dask'] = None\nfrom nodelay.ext import dask\n"
        "try:\n    dask.fetch(['http://x/'])\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert "pip install 'nodelay[dask]'" in out.stdout


@pytest.mark.scale
def test_twenty_thousand_urls_each_once(cluster: Any, server: _core.TestServer) -> None:
    urls = byte_urls(server, 20_000)
    started = time.monotonic()
    records = nd.fetch(urls, partition_size=1000).compute()
    print(f"20,000 URLs, 2 workers: {time.monotonic() - started:.1f} s with the records")
    check_records(records, urls)


@pytest.mark.scale
def test_a_worker_killed_mid_run_and_every_url_still_once(
    cluster: Any, server: _core.TestServer
) -> None:
    # 40 partitions of 50 URLs that each take ~0.25 s (50 ms each, 10 in flight).
    urls = [f"{server.url}/delay/50?i={i}" for i in range(2000)]
    future = cluster.compute(nd.fetch(urls, partition_size=50, concurrency=10))
    deadline = time.monotonic() + 60
    while "memory" not in cluster.run_on_scheduler(_task_states):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    victim = next(iter(cluster.run(os.getpid).values()))
    os.kill(victim, signal.SIGKILL)
    records = future.result(timeout=120)
    assert sorted(r["url"] for r in records) == sorted(urls)
    assert all(r["status"] == 200 for r in records), {r["error"] for r in records}
    assert victim not in cluster.run(os.getpid).values(), "the worker was replaced"


def _task_states(dask_scheduler: Any) -> list[str]:
    """The states of the scheduler's tasks (run on the scheduler)."""
    return [ts.state for ts in dask_scheduler.tasks.values()]
