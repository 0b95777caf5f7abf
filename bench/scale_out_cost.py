"""What the Dask integration adds per request, and what a job costs whatever its size
(docs/scale-out.md, "Cost"). Against the embedded server in this process's threads:

1. ``get_many`` in one process: CPU (user + sys) per request.
2. ``nodelay.ext._jobs.fetch_partition`` in one process (what a worker runs for a
   partition: the same batch, plus a record per response): CPU per request.
3. ``nodelay.ext.dask.fetch`` on a ``LocalCluster`` of ``--workers`` worker processes
   (2): the workers' CPU per request (their ``getrusage`` before and after), and the
   requests per second of a job.
4. The fixed cost of a job: the wall time of a 2-URL job on the warm cluster.

Usage: ``.venv/bin/python bench/scale_out_cost.py [--urls 20000] [--rounds 5]
[--workers 2]``. Prints one line per figure (medians of the rounds).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from typing import Any


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def per_request_us(run: Any, count: int, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        before = cpu()
        run()
        samples.append((cpu() - before) / count * 1e6)
    return statistics.median(samples)


def worker_cpu(client: Any) -> float:
    def used() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    return sum(client.run(used).values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2, help="Dask worker processes")
    args = parser.parse_args()

    import nodelay
    from nodelay import _core
    from nodelay.ext import _jobs
    from nodelay.ext import dask as nd

    server = _core.TestServer("127.0.0.1", 0, 2)
    urls = [f"{server.url}/bytes/200?i={i}" for i in range(args.urls)]
    size = _jobs.DEFAULT_PARTITION_SIZE
    parts = [urls[i : i + size] for i in range(0, len(urls), size)]

    with nodelay.Client() as client:
        client.get_many(urls[:size])  # warm connections
        t0 = time.monotonic()
        batch = per_request_us(
            lambda: [client.get_many(p, return_exceptions=True) for p in parts],
            len(urls),
            args.rounds,
        )
        batch_rate = len(urls) * args.rounds / (time.monotonic() - t0)
    job = _jobs.job_options({})
    _jobs.fetch_partition(urls[:size], job)
    records = per_request_us(
        lambda: [_jobs.fetch_partition(p, job) for p in parts], len(urls), args.rounds
    )
    _jobs.close_worker_clients()
    print(
        f"one process, get_many:           {batch:6.1f} us CPU per request, "
        f"{batch_rate:,.0f} requests/s"
    )
    print(f"one process, fetch_partition:    {records:6.1f} us CPU per request (records)")
    print(f"  added by the records:          {records - batch:6.1f} us")

    import distributed

    with (
        distributed.LocalCluster(
            n_workers=args.workers, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as dclient,
    ):
        started = time.monotonic()
        dclient.run(lambda: None)
        nd.fetch(urls[:size], partition_size=size // 2).compute()  # warm clients
        print(f"cluster up and warm:             {time.monotonic() - started:6.2f} s")
        cpu_samples, wall_samples = [], []
        for _ in range(args.rounds):
            before, t0 = worker_cpu(dclient), time.monotonic()
            count = nd.fetch(urls, write_to=f"/tmp/nodelay-scale-cost-{os.getpid()}")
            sum(c["records"] for c in count.compute())
            wall_samples.append(time.monotonic() - t0)
            cpu_samples.append((worker_cpu(dclient) - before) / len(urls) * 1e6)
        print(
            f"{args.workers} Dask workers, write_to: "
            f"{statistics.median(cpu_samples):6.1f} us worker "
            f"CPU per request, {len(urls) / statistics.median(wall_samples):,.0f} requests/s"
        )
        cpu_samples, wall_samples = [], []
        for _ in range(args.rounds):
            before, t0 = worker_cpu(dclient), time.monotonic()
            records_back = nd.fetch(urls).compute()
            wall_samples.append(time.monotonic() - t0)
            cpu_samples.append((worker_cpu(dclient) - before) / len(urls) * 1e6)
            assert len(records_back) == len(urls)
        print(
            f"{args.workers} Dask workers, records back: "
            f"{statistics.median(cpu_samples):6.1f} us worker "
            f"CPU per request, {len(urls) / statistics.median(wall_samples):,.0f} requests/s"
        )
        fixed = []
        for _ in range(args.rounds):
            t0 = time.monotonic()
            nd.fetch(urls[:2]).compute()
            fixed.append(time.monotonic() - t0)
        print(f"fixed cost of a job (2 URLs):    {statistics.median(fixed) * 1000:6.1f} ms wall")
    server.close()


if __name__ == "__main__":
    main()
