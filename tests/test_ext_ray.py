"""``nodelay.ext.ray`` on a real local Ray (``ray.init(num_cpus=2)``) against the embedded
server and a counting server: every URL once with its body, failures as records, the
per-host limit and the rate as the server sees them, Parquet output, 20,000 URLs, an
actor killed mid-run. All marked ``scale``: Ray is hundreds of MB and seconds to start, so it is
installed and run by ``make test-scale`` only."""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import expected_bytes
from counting_server import CountingServer
from nodelay import _core

pytestmark = pytest.mark.scale

ray = pytest.importorskip("ray")

from nodelay.ext import ray as nr  # noqa: E402  # after the skip


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def byte_urls(server: _core.TestServer, count: int) -> list[str]:
    return [f"{server.url}/bytes/{1 + i % 700}?i={i}" for i in range(count)]


def check_rows(rows: list[dict[str, Any]], urls: list[str]) -> None:
    assert sorted(r["url"] for r in rows) == sorted(urls), "every URL exactly once"
    for r in rows:
        size = int(r["url"].split("/bytes/")[1].split("?")[0])
        assert (r["status"], r["error"], r["http_version"]) == (200, None, "HTTP/1.1")
        assert r["content"] == expected_bytes(size)


def test_fetch_every_url_once_with_its_body(local_ray: Any, server: _core.TestServer) -> None:
    urls = byte_urls(server, 2000)
    check_rows(nr.fetch(urls, partition_size=250).take_all(), urls)


def test_fetcher_on_map_batches_keeps_input_columns(
    local_ray: Any, server: _core.TestServer
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{s.getsockname()[1]}/"
    urls = [f"{server.url}/status/503", refused, f"{server.url}/delay/3000"]
    ds = ray.data.from_items([{"url": u, "id": i} for i, u in enumerate(urls)])
    rows = ds.map_batches(
        nr.Fetcher,
        fn_constructor_kwargs={"timeout": 0.5},
        compute=ray.data.ActorPoolStrategy(size=2),
        batch_size=1,
    ).take_all()
    by_id = {r["id"]: r for r in rows}
    assert (by_id[0]["status"], by_id[0]["error"]) == (503, None)
    assert by_id[1]["error"].startswith("ConnectError: ")
    assert by_id[2]["error"].startswith("ReadTimeout: ")


def test_per_host_and_rate_seen_by_the_server(local_ray: Any) -> None:
    with CountingServer(hold=0.01) as a:
        urls = [f"{a.url}/ok/{i}" for i in range(100)]
        rows = nr.fetch(urls, per_host=2, rate=50, partition_by_host=True).take_all()
        assert sorted(r["url"] for r in rows) == sorted(urls)
        assert a.most_open == 2
        assert a.most_in_window(0.5) <= a.most_allowed_in_window(50, 10, 0.5)


def test_write_to_parquet(local_ray: Any, server: _core.TestServer, tmp_path: Any) -> None:
    import pyarrow.parquet as pq

    urls = byte_urls(server, 500)
    counts = nr.fetch(urls, partition_size=100, write_to=str(tmp_path)).take_all()
    assert sum(c["records"] for c in counts) == 500
    check_rows(pq.read_table(str(tmp_path)).to_pylist(), urls)


def test_twenty_thousand_urls_each_once(local_ray: Any, server: _core.TestServer) -> None:
    urls = byte_urls(server, 20_000)
    started = time.monotonic()
    rows = nr.fetch(urls, partition_size=1000).take_all()
    print(f"20,000 URLs, 2 Ray actors: {time.monotonic() - started:.1f} s with the rows")
    check_rows(rows, urls)


def fetcher_actor_pids() -> list[int]:
    """The processes of the actors running ``Fetcher`` (Ray titles them
    ``ray::MapWorker(MapBatches(Fetcher))...``; the state API needs the dashboard)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                title = f.read().decode(errors="replace")
        except OSError:
            continue
        if title.startswith("ray::") and "Fetcher" in title:
            pids.append(int(entry))
    return pids


def test_an_actor_killed_mid_run_and_every_url_still_once(
    local_ray: Any, server: _core.TestServer
) -> None:
    # 40 batches of 50 URLs of 50 ms each, 10 in flight: about 0.25 s a batch.
    urls = [f"{server.url}/delay/50?i={i}" for i in range(2000)]
    ds = ray.data.from_items([{"url": u} for u in urls], override_num_blocks=40)
    rows_iter = iter(
        ds.map_batches(
            nr.Fetcher,
            fn_constructor_kwargs={"concurrency": 10},
            compute=ray.data.ActorPoolStrategy(size=2),
            batch_size=50,
            max_restarts=2,
            max_task_retries=2,
        ).iter_rows()
    )
    rows = [next(rows_iter)]
    victims = fetcher_actor_pids()
    assert victims, "no Fetcher actor found"
    os.kill(victims[0], signal.SIGKILL)
    rows.extend(rows_iter)
    assert sorted(r["url"] for r in rows) == sorted(urls)
    assert all(r["status"] == 200 for r in rows)
