"""docs/hostile.md K35, short: the soak (bench/nodelay_bench/soak.py) at 20,000 requests (RSS and fd
count flat, no crossed response), and 64 threads on an 8-connection pool (no error other
than ``PoolTimeout``, no crossed response). ``make soak`` runs the full 1,000,000."""

from __future__ import annotations

import pytest
from nodelay_bench import soak


def test_k35_soak_20000_mixed_requests_8_threads_one_client() -> None:
    # Strict: a stale keep-alive connection must never surface as an error (the retry
    # goes to a fresh connection; see test_h28_retry_goes_to_a_fresh_connection_...).
    # Without the h2 kind: its client starts nodelay's process-wide async runtime, whose fds
    # outlive the test and would read as a leak to this directory's fd check.
    kinds = tuple(k for k in soak.KINDS if k != "h2")
    report = soak.run_soak(
        20_000, threads=8, warmup_fraction=0.25, tolerate_stale=False, kinds=kinds
    )
    print(report.summary())
    assert report.requests == 20_000
    assert report.ops["keepalive"] > 15_000
    assert report.expected_errors["ConnectError"] > 0
    assert report.expected_errors["ReadTimeout"] > 0
    assert report.problems() == []


@pytest.mark.parametrize("pool_timeout", [0.5, 0.01], ids=["pool-0.5s", "pool-10ms"])
def test_k35_64_threads_on_an_8_connection_pool(pool_timeout: float) -> None:
    # With a 10 ms pool timeout many requests get PoolTimeout: the only error allowed.
    report = soak.run_load(
        requests_per_thread=100, threads=64, max_connections=8, pool_timeout=pool_timeout
    )
    print(report.summary())
    assert report.ok > 0
    assert report.problems() == []
