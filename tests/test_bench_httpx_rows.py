"""The lab's rows of httpx's and httpx2's clients over each transport (workload k, and a, b
beside it): which workloads they run, and each one's answers from the embedded server."""

from __future__ import annotations

import asyncio

import pytest
from nodelay import _core
from nodelay_bench.clients import DEFAULT_CLIENTS, httpx_bridges, load
from nodelay_bench.results import REFERENCES
from nodelay_bench.runner import plan_rows


def test_k_runs_through_the_incumbents_clients_only() -> None:
    k_rows = {plan.client for plan in plan_rows(["k"], list(DEFAULT_CLIENTS))}
    assert {*httpx_bridges.ROWS, "httpx", "httpx-async"} <= k_rows
    assert not k_rows & {"nodelay", "nodelay-async", "aiohttp", "pycurl", "urllib3"}
    assert "nodelay-under-httpx2-async" in k_rows and "aiohttp-under-httpx2-async" in k_rows


def test_bridge_rows_run_a_b_k() -> None:
    plans = plan_rows(list("abcdefhjk"), ["nodelay-under-httpx2", "httpx", "nodelay"])
    by_client: dict[str, set[str]] = {}
    for plan in plans:
        by_client.setdefault(plan.client, set()).add(plan.workload.id)
    assert by_client["nodelay-under-httpx2"] == {"a", "b", "k"}
    assert by_client["httpx"] == set("abcdefhjk")
    assert "k" not in by_client["nodelay"]


def test_ceiling_rows_are_references() -> None:
    ceilings = {name for name in httpx_bridges.ROWS if name.startswith("ceiling-")}
    assert len(ceilings) == 4 and ceilings <= REFERENCES


@pytest.mark.parametrize("name", sorted(httpx_bridges.ROWS))
def test_row_answers(name: str, server: _core.TestServer) -> None:
    cls = load(name)
    assert cls.name == name
    url = f"{server.url}/bytes/202"
    if cls.flavour == "sync":
        adapter = cls()
        try:
            status, body = adapter.get(url)  # type: ignore[misc]
        finally:
            adapter.close()
    else:

        async def main() -> tuple[int, bytes]:
            adapter = cls()
            await adapter.setup()  # type: ignore[misc]
            try:
                return await adapter.get(url)  # type: ignore[misc, no-any-return]
            finally:
                await adapter.close()  # type: ignore[misc]

        status, body = asyncio.run(main())
    assert status == 200 and len(body) == 202


def test_requests_ceiling_row(server: _core.TestServer) -> None:
    """``ceiling-requests``: a reference row of a, b and k whose answers, after the first
    fetch of a URL, come from memory with requests' own Response and urllib3's raw."""
    assert "ceiling-requests" in REFERENCES
    plans = plan_rows(list("abcdefhjk"), ["ceiling-requests"])
    assert {plan.workload.id for plan in plans} == {"a", "b", "k"}
    adapter = load("ceiling-requests")()
    try:
        url = f"{server.url}/bytes/202"
        first = adapter.get(url)  # type: ignore[attr-defined]
        served = server.requests()
        assert adapter.get(url) == first == (200, first[1])  # type: ignore[attr-defined]
        assert len(first[1]) == 202 and server.requests() == served
        assert adapter.version() == "HTTP/1.1"  # type: ignore[attr-defined]
    finally:
        adapter.close()  # type: ignore[attr-defined]
