"""How an async request's future is driven (docs/async.md): polled on the loop thread,
completed at once when its answer is already at hand, moved to the runtime after
``LOCAL_POLLS`` polls; cancellation drops it in either place and closes its connection.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

import nodelay
import pytest
from scripted import Recv, ScriptedServer, Send, SendSlowly, Sleep, response

T = TypeVar("T")

# More body pieces than the loop thread polls a request for before handing it to the
# runtime (LOCAL_POLLS in crates/nodelay-py/src/aio/bridge.rs is 4).
MANY_PIECES = 12
PIECE_INTERVAL = 0.02


async def suspensions(awaitable: Awaitable[T]) -> tuple[T, int]:
    """``awaitable``'s result and how many times the loop ran another task meanwhile
    (zero when it completed without suspending its task)."""
    ticks = 0
    stop = False

    async def ticker() -> None:
        nonlocal ticks
        while not stop:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)  # the ticker is running
    before = ticks
    try:
        result = await awaitable
    finally:
        stop = True
        await task
    return result, ticks - before


def test_a_read_of_bytes_already_received_completes_without_suspending() -> None:
    head_and_body = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd"
    with ScriptedServer([Recv(), Send(head_and_body), Sleep(1.0)]) as srv:

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                async with client.stream("GET", srv.url + "/") as r:
                    # The body came with the head: the read's first poll has it.
                    body, suspended = await suspensions(r.aread())
                    assert body == b"abcd" and suspended == 0

        asyncio.run(main())


def test_a_read_of_bytes_already_received_completes_without_suspending_beside_others() -> None:
    # A body read's first poll runs on the loop thread even while another request of the
    # loop is in flight (bridge::start_local): bytes that came with the head are read
    # without a trip to the runtime and back.
    head_and_body = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd"
    with (
        ScriptedServer([Recv(), Send(head_and_body), Sleep(1.0)]) as streamed,
        ScriptedServer([Recv(), Sleep(0.3), Send(response(body=b"slow"))]) as slow,
    ):

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                async with client.stream("GET", streamed.url + "/") as r:
                    beside = asyncio.ensure_future(client.get(slow.url + "/"))
                    await asyncio.sleep(0.05)  # the slow request is in flight
                    body, suspended = await suspensions(r.aread())
                    assert body == b"abcd" and suspended == 0
                    assert not beside.done()
                    assert (await beside).content == b"slow"

        asyncio.run(main())


def test_a_request_whose_answer_is_not_there_yet_waits_for_it() -> None:
    script = [Recv(), Sleep(0.2), Send(response(body=b"late"))]
    with ScriptedServer(script) as srv:

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                r, suspended = await suspensions(client.get(srv.url + "/"))
                assert r.content == b"late" and suspended > 0

        asyncio.run(main())


def test_a_body_in_many_pieces_finishes_on_the_runtime() -> None:
    body = bytes(range(65, 65 + MANY_PIECES))
    with ScriptedServer([Recv(), SendSlowly(response(body=body), PIECE_INTERVAL, 8)]) as srv:

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                r = await client.get(srv.url + "/")
                assert r.content == body
                assert client._engine.idle_connections() == 1

        asyncio.run(main())


@pytest.mark.parametrize("pieces_before_cancel", [0, MANY_PIECES])
def test_cancelling_closes_the_connection_wherever_the_request_runs(
    pieces_before_cancel: int,
) -> None:
    # 0: cancelled while the loop thread drives the request (no answer yet);
    # MANY_PIECES: after that many pieces of the head arrived one by one, so the request
    # has moved to the runtime.
    head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%02d: y\r\n" % i for i in range(MANY_PIECES))
    closed = threading.Event()

    def wait_for_close(sock: socket.socket) -> None:
        sock.settimeout(5.0)
        if sock.recv(1) == b"":
            closed.set()

    script = [Recv(), SendSlowly(head[: pieces_before_cancel * 8], PIECE_INTERVAL, 8)]
    with ScriptedServer([*script, wait_for_close]) as srv:

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                task: asyncio.Task[Any] = asyncio.ensure_future(client.get(srv.url + "/"))
                await asyncio.sleep(0.1 + pieces_before_cancel * PIECE_INTERVAL * 2)
                assert not task.done()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                assert client._engine.idle_connections() == 0
                assert await asyncio.to_thread(closed.wait, 5.0)

        asyncio.run(main())


def test_a_request_started_beside_another_runs_and_cancels_on_the_runtime() -> None:
    # The second request starts while the first is in flight, so it runs as a runtime
    # task from the start; cancelling it closes its connection, the first one finishes.
    closed = threading.Event()

    def wait_for_close(sock: socket.socket) -> None:
        sock.settimeout(5.0)
        if sock.recv(1) == b"":
            closed.set()

    first = [Recv(), Sleep(0.5), Send(response(body=b"first"))]
    with ScriptedServer(first, [Recv(), wait_for_close]) as srv:

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                one = asyncio.ensure_future(client.get(srv.url + "/1"))
                await asyncio.sleep(0.1)  # the first request's connection is accepted first
                two = asyncio.ensure_future(client.get(srv.url + "/2"))
                await asyncio.sleep(0.1)
                assert not two.done()
                two.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await two
                assert await asyncio.to_thread(closed.wait, 5.0)
                assert (await one).content == b"first"

        asyncio.run(main())


# LOOP_BODY_LIMIT in crates/nodelay-py/src/aio/bridge.rs: after a response body larger
# than this, the loop starts its next request on the runtime.
LOOP_BODY_LIMIT = 64 * 1024


@pytest.mark.parametrize(
    ("body_size", "read_suspends"), [(LOOP_BODY_LIMIT, False), (LOOP_BODY_LIMIT + 1, True)]
)
def test_after_a_large_body_the_next_request_starts_on_the_runtime(
    body_size: int, read_suspends: bool
) -> None:
    # A read of bytes that came with the head completes in its first poll when the loop
    # thread drives it; started on the runtime (after a large body), its outcome comes
    # back through the bridge's queue, so the awaiting task suspends.
    head_and_body = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd"
    with (
        ScriptedServer([Recv(), Send(head_and_body), Sleep(1.0)]) as streamed,
        ScriptedServer([Recv(), Send(response(body=b"x" * body_size))]) as large,
    ):

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                async with client.stream("GET", streamed.url + "/") as r:
                    whole = await client.get(large.url + "/")
                    assert len(whole.content) == body_size
                    body, suspended = await suspensions(r.aread())
                    assert body == b"abcd"
                    assert (suspended > 0) is read_suspends

        asyncio.run(main())


def loop_callback_running() -> str:
    """The name of the loop callback (``Handle._callback``) whose run the caller is in."""
    frame = sys._getframe(1)
    while frame is not None:
        handle = frame.f_locals.get("self") if frame.f_code.co_name == "_run" else None
        if isinstance(handle, asyncio.Handle):
            return str(getattr(handle._callback, "__name__", handle._callback))
        frame = frame.f_back
    return ""


def test_a_finished_request_resumes_its_task_in_the_drain_that_finished_it() -> None:
    # Completing an asyncio future schedules its task's wake-up for the loop's next
    # iteration; the bridge's drain resumes the task itself instead (docs/async.md).
    # The answer on a plain connection the loop's thread drives reaches the request
    # through the loop's socket watcher (`_ready`), not through a runtime thread and the
    # wake-up descriptor (`_drain`).
    script = [Recv(), Sleep(0.1), Send(response(body=b"late"))]
    with ScriptedServer(script) as srv:

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                r = await client.get(srv.url + "/")
                assert r.content == b"late"
                assert loop_callback_running() == "_ready"

        asyncio.run(main())


def test_a_keyboard_interrupt_in_a_task_the_drain_resumed_leaves_the_loop() -> None:
    script = [Recv(), Sleep(0.1), Send(response(body=b"late"))]
    with ScriptedServer(script) as srv:

        async def main() -> None:
            async with nodelay.AsyncClient() as client:
                await client.get(srv.url + "/")
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            asyncio.run(main())


def test_a_connection_kept_after_one_loop_serves_the_next_loop() -> None:
    # The loop's thread watches the plain sockets it drives (docs/async.md); a connection
    # kept idle when that loop ended is taken over by the next loop's watcher. Each answer
    # comes late, so each request waits on a watch.
    late = [Recv(), Sleep(0.05), Send(response(body=b"one"))]
    script = [*late, Recv(), Sleep(0.05), Send(response(body=b"two"))]
    with ScriptedServer(script) as srv:
        client = nodelay.AsyncClient()

        async def get() -> bytes:
            return (await client.get(srv.url + "/")).content

        assert asyncio.run(get()) == b"one"
        assert asyncio.run(get()) == b"two"
        asyncio.run(client.aclose())
        assert srv.connections == 1


def test_a_connection_moves_between_the_loop_and_the_runtime() -> None:
    # After a body larger than LOOP_BODY_LIMIT the next request starts on the runtime and
    # takes the kept connection from the loop's watcher back to tokio's reactor; the
    # request after it, driven by the loop again, takes it back.
    large = b"x" * (LOOP_BODY_LIMIT + 1)
    bodies = [b"small", large, b"runtime", b"loop"]
    script = [step for body in bodies for step in (Recv(), Sleep(0.02), Send(response(body=body)))]
    with ScriptedServer(script) as srv:

        async def main() -> list[bytes]:
            async with nodelay.AsyncClient() as client:
                return [(await client.get(srv.url + "/")).content for _ in bodies]

        assert asyncio.run(main()) == bodies
        assert srv.connections == 1
