"""The lab's rows of wreq, pyqwest and zapros (docs/benchmarks.md, "Peers"): each one,
sync and async, answers the embedded server's GET, POST form, JSON and streamed workloads
with the status and the body the lab's checks expect, so a broken row fails here instead
of posting a figure."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from nodelay import _core
from nodelay_bench.checks import body_check
from nodelay_bench.clients import CLIENTS, DEFAULT_CLIENTS, load
from nodelay_bench.workloads import FORM, WORKLOADS, form_body

PEER_ROWS = ("wreq", "wreq-async", "pyqwest", "pyqwest-async", "zapros", "zapros-async")
STREAMED = 300_000
"""Bytes of the streamed GET: several pieces for every client."""


def test_rows_are_registered_and_run_by_default() -> None:
    assert set(PEER_ROWS) <= set(DEFAULT_CLIENTS)
    assert {CLIENTS[name][1] for name in PEER_ROWS} == {"wreq", "pyqwest", "zapros"}


def _answers(name: str, base: str) -> dict[str, Any]:
    """The row's answers to a, b (the body, parsed by the check), e and a streamed GET."""
    cls = load(name)
    urls = {w: base + WORKLOADS[w].path for w in "abe"}
    stream_url = f"{base}/bytes/{STREAMED}"
    if cls.flavour == "sync":
        adapter: Any = cls()
        try:
            return {
                "a": adapter.get(urls["a"]),
                "b": adapter.get(urls["b"]),
                "e": adapter.post_form(urls["e"], FORM, form_body()),
                "stream": adapter.stream(stream_url),
                "version": adapter.version(),
            }
        finally:
            adapter.close()

    async def main() -> dict[str, Any]:
        adapter: Any = cls()
        await adapter.setup()
        try:
            return {
                "a": await adapter.get(urls["a"]),
                "b": await adapter.get(urls["b"]),
                "e": await adapter.post_form(urls["e"], FORM, form_body()),
                "stream": await adapter.stream(stream_url),
                "version": adapter.version(),
            }
        finally:
            await adapter.close()

    return asyncio.run(main())


@pytest.mark.parametrize("name", PEER_ROWS)
def test_row_passes_the_lab_checks(name: str, server: _core.TestServer) -> None:
    pytest.importorskip(CLIENTS[name][1])
    got = _answers(name, server.url)
    for w in "abe":
        status, body = got[w]
        assert body_check(WORKLOADS[w])(status, body), (w, status, body[:80])
    assert json.loads(got["b"][1])["ok"] is True
    status, sizes = got["stream"]
    assert status == 200 and sum(sizes) == STREAMED and len(sizes) > 1
    assert got["version"] in ("HTTP/1.1", "?")


@pytest.mark.parametrize("name", PEER_ROWS)
def test_row_fails_the_check_on_a_wrong_answer(name: str, server: _core.TestServer) -> None:
    """The check sees what the row got: 201 bytes, or a 404, fail workload a's check."""
    pytest.importorskip(CLIENTS[name][1])
    cls = load(name)
    check = body_check(WORKLOADS["a"])
    urls = (f"{server.url}/bytes/201", f"{server.url}/status/404")
    if cls.flavour == "sync":
        adapter: Any = cls()
        try:
            answers = [adapter.get(url) for url in urls]
        finally:
            adapter.close()
    else:

        async def main() -> list[Any]:
            adapter: Any = cls()
            await adapter.setup()
            try:
                return [await adapter.get(url) for url in urls]
            finally:
                await adapter.close()

        answers = asyncio.run(main())
    assert [status for status, _ in answers] == [200, 404]
    assert not any(check(status, body) for status, body in answers)
