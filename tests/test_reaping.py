"""Idle connections closed by their server are closed by the client at once (reaped), not
left in CLOSE-WAIT until the pool is next used (docs/hostile.md H28/L39, docs/pool.md).

Each server answers one request with keep-alive, waits 0.2 s and closes the connection.
The client's end of it must be gone within ~1.5 s while the client sits idle (no request
made meanwhile), and the next request must succeed on a new connection.
"""

from __future__ import annotations

import asyncio
import os
import time

import nodelay
from scripted import Close, Recv, ScriptedServer, Send, Sleep, response

# The server's close comes 0.2 s after its answer; the reaper acts on it at once. The
# margin is generous for a loaded machine.
SERVER_CLOSES_AFTER = 0.2
REAP_WITHIN = 1.5

OK = response(body=b"ok", headers=[("Connection", "keep-alive")])


def closing_server() -> ScriptedServer:
    """Every connection: one request answered with keep-alive, then a close 0.2 s later."""
    return ScriptedServer([Recv(), Send(OK), Sleep(SERVER_CLOSES_AFTER), Close()])


def _socket_inodes() -> set[str]:
    """Inodes of this process's sockets (from /proc/self/fd)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def open_sockets_to(port: int) -> list[str]:
    """TCP states (hex, as /proc/net/tcp shows them; 08 is CLOSE-WAIT) of this process's
    sockets whose remote port is ``port``."""
    ours = _socket_inodes()
    states = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == port and fields[9] in ours:
                states.append(fields[3])
    return states


def wait_until_gone(port: int) -> list[str]:
    """Waits up to REAP_WITHIN for this process to hold no socket to ``port``; returns
    the states of those still held."""
    deadline = time.monotonic() + SERVER_CLOSES_AFTER + REAP_WITHIN
    while True:
        held = open_sockets_to(port)
        if not held or time.monotonic() > deadline:
            return held
        time.sleep(0.05)


def test_client_reaps_an_idle_connection_its_server_closed() -> None:
    with closing_server() as srv, nodelay.Client() as client:
        assert client.get(srv.url + "/").content == b"ok"
        assert open_sockets_to(srv.port), "the connection should be kept alive first"
        assert wait_until_gone(srv.port) == []
        # The pool no longer holds it: the next request connects anew, without error.
        assert client.get(srv.url + "/").content == b"ok"
        assert srv.connections == 2


def test_async_client_reaps_while_the_loop_is_idle() -> None:
    async def main(srv: ScriptedServer) -> list[str]:
        async with nodelay.AsyncClient() as client:
            assert (await client.get(srv.url + "/")).content == b"ok"
            assert open_sockets_to(srv.port)
            # The event loop sleeps: nothing of ours runs until the check.
            await asyncio.sleep(SERVER_CLOSES_AFTER + REAP_WITHIN)
            held = open_sockets_to(srv.port)
            assert (await client.get(srv.url + "/")).content == b"ok"
            return held

    with closing_server() as srv:
        assert asyncio.run(main(srv)) == []
        assert srv.connections == 2


def test_get_many_connections_are_reaped_after_the_batch() -> None:
    with closing_server() as srv, nodelay.Client() as client:
        rs = client.get_many([srv.url + "/a", srv.url + "/b"], concurrency=2)
        assert [r.content for r in rs] == [b"ok", b"ok"]
        assert open_sockets_to(srv.port)
        assert wait_until_gone(srv.port) == []
        rs = client.get_many([srv.url + "/c"], concurrency=1)
        assert rs[0].content == b"ok"


def test_a_connection_closed_while_checked_out_is_not_pooled() -> None:
    """The close arrives while the response is still being read (the body is sent after
    the FIN would be too late, so the server closes right after a complete answer): the
    reaper's mark makes checkin drop it, and the next request uses a new connection."""
    server = ScriptedServer([Recv(), Send(OK), Close()])
    with server as srv, nodelay.Client() as client:
        with client.stream("GET", srv.url + "/") as r:
            time.sleep(0.3)  # the FIN arrives while the connection is checked out
            assert r.read() == b"ok"
        assert wait_until_gone(srv.port) == []
        assert client.get(srv.url + "/").content == b"ok"
        assert srv.connections == 2


def test_reaping_works_in_a_forked_child() -> None:
    """A forked child gets its own reaper (the parent's thread does not exist there)."""
    with closing_server() as srv, nodelay.Client() as client:
        assert client.get(srv.url + "/").content == b"ok"
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit status
            code = 1
            try:
                ok = client.get(srv.url + "/child").content == b"ok"
                code = 0 if ok and wait_until_gone(srv.port) == [] else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(status) == 0
        assert wait_until_gone(srv.port) == []
