"""Connections that come back when ``max_keepalive_connections`` are already idle are kept
for a short grace (``SURPLUS_IDLE_GRACE`` in crates/nodelay-core/src/limits.rs, 100 ms):
a burst of requests right after a burst of answers reuses them instead of reopening them,
and when no request comes the reaper thread closes them, with no call into the client
(a server that stops accepting at a connection limit must see them close,
tests/test_server_connection_limit.py)."""

from __future__ import annotations

import asyncio
import time

import nodelay
from nodelay import _core
from test_reaping import open_sockets_to

# Requests in flight at once, and idle connections kept past the grace.
BURST = 8
KEEP = 2
# Each request lasts this long (ms), so that a burst's requests are all in flight at once.
REQUEST_MS = 50
# Bound on the wait for the reaper to close the surplus, in s (far above the grace).
CLOSED_WITHIN_S = 3.0


def test_a_burst_right_after_a_burst_reuses_the_connections_above_the_cap(
    server: _core.TestServer,
) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    url = f"{server.url}/delay/{REQUEST_MS}"
    limits = nodelay.Limits(max_keepalive_connections=KEEP)

    async def burst(client: nodelay.AsyncClient) -> None:
        rs = await asyncio.gather(*(client.get(url) for _ in range(BURST)))
        assert [r.status_code for r in rs] == [200] * BURST

    async def run() -> None:
        async with nodelay.AsyncClient(limits=limits) as client:
            before = server.connections()
            await burst(client)
            assert server.connections() - before == BURST
            await burst(client)
            assert server.connections() - before == BURST
            # No request comes: the grace ends and the surplus closes while the event
            # loop sleeps.
            deadline = time.monotonic() + CLOSED_WITHIN_S
            while len(open_sockets_to(port)) > KEEP and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert len(open_sockets_to(port)) == KEEP

    asyncio.run(run())
