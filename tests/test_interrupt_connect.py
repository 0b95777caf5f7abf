"""Ctrl-C during a connect ends the request at once, not at the connect timeout.

The address that never answers is a loopback listener whose accept queue is full: Linux
drops further SYNs (``net.ipv4.tcp_abort_on_overflow = 0``), so a connect to it hangs
until the client's own timeout. A probe checks that this holds here before relying on it.
"""

from __future__ import annotations

import signal
import socket
import threading
import time
from collections.abc import Iterator

import nodelay
import pytest

# Correctness bounds, not performance: far below the 30 s connect timeout the request
# is given, far above any scheduling delay on a loaded machine.
INTERRUPTED_WITHIN = 5.0
CONNECT_TIMEOUT = 30.0
SIGNAL_AFTER = 0.2


@pytest.fixture
def blackholed() -> Iterator[str]:
    """``host:port`` whose connects hang (skips when this kernel answers them)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    addr = listener.getsockname()
    fillers = []
    try:
        for _ in range(8):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(addr)
            fillers.append(filler)
        time.sleep(0.05)
        probe = socket.socket()
        probe.settimeout(0.3)
        try:
            probe.connect(addr)
        except TimeoutError:
            pass
        else:
            pytest.skip("connects to a full accept queue do not hang on this machine")
        finally:
            probe.close()
        yield f"{addr[0]}:{addr[1]}"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


def _interrupt_main_thread_after(seconds: float) -> threading.Timer:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are delivered to the main thread")
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is not Python's default handler here")
    timer = threading.Timer(seconds, signal.pthread_kill, (threading.get_ident(), signal.SIGINT))
    timer.start()
    return timer


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_ctrl_c_ends_a_hanging_connect(blackholed: str, scheme: str) -> None:
    with nodelay.Client(timeout=nodelay.Timeout(CONNECT_TIMEOUT)) as client:
        timer = _interrupt_main_thread_after(SIGNAL_AFTER)
        start = time.monotonic()
        try:
            with pytest.raises(KeyboardInterrupt):
                client.get(f"{scheme}://{blackholed}/")
        finally:
            timer.join()
        elapsed = time.monotonic() - start
    assert SIGNAL_AFTER * 0.5 < elapsed < INTERRUPTED_WITHIN


def test_ctrl_c_ends_a_hanging_connect_with_no_timeout(blackholed: str) -> None:
    with nodelay.Client(timeout=None) as client:
        timer = _interrupt_main_thread_after(SIGNAL_AFTER)
        start = time.monotonic()
        try:
            with pytest.raises(KeyboardInterrupt):
                client.get(f"http://{blackholed}/")
        finally:
            timer.join()
    assert time.monotonic() - start < INTERRUPTED_WITHIN


def test_a_hanging_connect_still_times_out(blackholed: str) -> None:
    start = time.monotonic()
    with nodelay.Client(timeout=nodelay.Timeout(5.0, connect=0.3)) as client:
        with pytest.raises(nodelay.ConnectTimeout):
            client.get(f"http://{blackholed}/")
    assert 0.25 < time.monotonic() - start < 0.3 + 1.5


def test_ctrl_c_ends_a_hanging_tls_handshake() -> None:
    # The server accepts and never answers the ClientHello: the handshake waits in a read.
    from scripted import ScriptedServer, Sleep

    with ScriptedServer([Sleep(8.0)]) as srv:
        with nodelay.Client(timeout=nodelay.Timeout(CONNECT_TIMEOUT)) as client:
            timer = _interrupt_main_thread_after(SIGNAL_AFTER)
            start = time.monotonic()
            try:
                with pytest.raises(KeyboardInterrupt):
                    client.get(srv.url.replace("http://", "https://") + "/")
            finally:
                timer.join()
        assert srv.wait_connections(1)
    assert time.monotonic() - start < INTERRUPTED_WITHIN


def test_ctrl_c_ends_a_wait_for_a_pool_slot() -> None:
    # The only connection is busy with a slow answer; the next request waits for the slot.
    from scripted import ScriptedServer, Sleep

    limits = nodelay.Limits(max_connections=1)
    timeout = nodelay.Timeout(10.0, pool=CONNECT_TIMEOUT)
    with ScriptedServer([Sleep(8.0)]) as srv, nodelay.Client(limits=limits, timeout=timeout) as c:
        outcomes: list[BaseException] = []

        def hold_the_slot() -> None:
            try:
                c.get(srv.url + "/")
            except nodelay.HTTPError as exc:  # the server closes without answering
                outcomes.append(exc)

        busy = threading.Thread(target=hold_the_slot)
        busy.start()
        assert srv.wait_connections(1)
        timer = _interrupt_main_thread_after(SIGNAL_AFTER)
        start = time.monotonic()
        try:
            with pytest.raises(KeyboardInterrupt):
                c.get(srv.url + "/")
        finally:
            timer.join()
        assert time.monotonic() - start < INTERRUPTED_WITHIN
        srv.close()  # ends the busy request
        busy.join(10)
    assert len(outcomes) == 1
