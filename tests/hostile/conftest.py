"""Shared helpers of the hostile-world suite (docs/hostile.md, issue 7).

Every case states what a misbehaving server sends, byte for byte, and checks what
docs/hostile.md asks of every failure:

* the most specific exception class is raised (``type(exc) is cls``, not a base class);
* it is raised within the deadline (measured with ``time.monotonic``, slack for 2 cores);
* the affected connection is never reused: the failing connection's script would answer a
  second request with a poisoned response, and the next request must open a new
  connection (the scripted server's ``connections`` count grows) and get a fresh answer;
* no file descriptor leaks: the autouse ``fd_guard`` counts ``/proc/self/fd`` before the
  test and after every client and server of the test was closed.
"""

from __future__ import annotations

import gc
import os
import socket
import ssl
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import nodelay
import pytest
import trustme
from scripted import Recv, ScriptedServer, Send, Step, response

Factory = Callable[..., ScriptedServer]

# What a connection that should be dead answers if the client reuses it anyway.
POISON = response(body=b"POISON: a connection that had failed was reused")
# What a fresh connection answers.
FRESH_BODY = b"fresh"
FRESH = response(body=FRESH_BODY)
FRESH_SCRIPT: list[Step] = [Recv(), Send(FRESH)]

# Deadlines: generous for a loaded 2-core machine, far below any default timeout (10-30 s),
# so a hang can never pass for a slow machine.
FAST = 2.0  # failures that need no timer at all
TIMER_SLACK = 1.5  # added to a configured timeout
TIMER_EARLY = 0.1  # how much sooner than its configured time a deadline may be seen to fire
DRIP_TOTAL = 1.5  # the total deadline the cases of a dripped response set, s


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def rss_kib() -> int:
    """Resident set size now (VmRSS), KiB."""
    return _status_kib("VmRSS")


def peak_rss_kib() -> int:
    """Peak resident set size of the process so far (VmHWM), KiB."""
    return _status_kib("VmHWM")


def wait_fds_at_most(limit: int, timeout: float = 3.0) -> int:
    """Server-side sockets close asynchronously (the embedded server's tasks notice EOF a
    moment later): wait for the count to come back, return the last count."""
    deadline = time.monotonic() + timeout
    while True:
        gc.collect()
        n = fd_count()
        if n <= limit or time.monotonic() > deadline:
            return n
        time.sleep(0.02)


@pytest.fixture(scope="session", autouse=True)
def _warm_up(async_loop: object) -> None:
    """One request, and one embedded server started and stopped, before any fd baseline:
    one-time resources (lazily created statics) must not count as a leak of the first
    test. ``async_loop``: the event loop of the ``async`` runs (tests/conftest.py), for the
    same reason."""
    with ScriptedServer([Recv(), Send(FRESH)]) as srv, nodelay.Client() as c:
        c.get(srv.url + "/")
    # The embedded server keeps two fds (its runtime's) from its first start on.
    from nodelay import _core

    _core.TestServer("127.0.0.1", 0, 1).close()


@pytest.fixture(autouse=True)
def fd_guard() -> Iterator[None]:
    """No test may leak a file descriptor (set up first, so torn down last: after the
    test's clients and scripted servers are closed)."""
    gc.collect()
    before = fd_count()
    yield
    after = wait_fds_at_most(before)
    assert after <= before, f"file descriptors leaked: {before} before the test, {after} after"


@dataclass
class Failure:
    exc: BaseException
    elapsed: float
    server: ScriptedServer


Classes = type[BaseException] | tuple[type[BaseException], ...]


def expect_error(
    call: Callable[[], object],
    cls: Classes,
    within: float,
    match: str | None = None,
) -> tuple[BaseException, float]:
    """Runs ``call``, which must raise exactly ``cls`` (not a subclass, not a base; a tuple
    when the outcome legitimately depends on timing) within ``within`` seconds. Returns the
    exception and the elapsed time."""
    classes = cls if isinstance(cls, tuple) else (cls,)
    names = " or ".join(c.__name__ for c in classes)
    start = time.monotonic()
    with pytest.raises(BaseException) as info:
        call()
    elapsed = time.monotonic() - start
    exc = info.value
    assert type(exc) in classes, f"expected {names}, got {type(exc).__name__}: {exc}"
    assert elapsed < within, f"{names} after {elapsed:.2f} s (deadline {within} s)"
    if match is not None:
        import re

        assert re.search(match, str(exc)), f"{str(exc)!r} does not match {match!r}"
    return exc, elapsed


def assert_fresh_connection(client: nodelay.Client, srv: ScriptedServer, path: str = "/") -> None:
    """The next request must go out on a new connection and get the fresh answer."""
    before = srv.connections
    r = client.get(srv.url + path, timeout=nodelay.Timeout(5.0))
    assert r.content == FRESH_BODY, f"a failed connection was reused: got {r.content[:60]!r}"
    assert srv.connections == before + 1, "the next request did not open a new connection"


def hostile_case(
    scripted: Factory,
    client: nodelay.Client,
    bad: Sequence[Step],
    cls: Classes,
    within: float = FAST,
    *,
    timeout: nodelay.Timeout | None = None,
    match: str | None = None,
    method: str = "GET",
    poison: bool = True,
) -> Failure:
    """The common shape of a case: connection 0 runs ``bad`` (then, unless it closed,
    waits for a second request and would answer it with POISON), every later connection
    is healthy. The request must fail with ``cls`` within ``within`` s, and the next one
    must use a new connection."""
    script = list(bad)
    if poison:
        script += [Recv(timeout=5.0), Send(POISON)]
    srv = scripted(script, FRESH_SCRIPT)
    url = srv.url + "/hostile"
    exc, elapsed = expect_error(
        lambda: client.request(method, url, timeout=timeout or nodelay.Timeout(10.0)),
        cls,
        within,
        match,
    )
    if isinstance(exc, nodelay.RequestError):
        assert exc.url == url
    assert_fresh_connection(client, srv)
    return Failure(exc, elapsed, srv)


def stopped_by_the_total(
    scripted: Factory,
    client: nodelay.Client,
    bad: Sequence[Step],
    *,
    read: float,
    match: str | None = None,
) -> Failure:
    """A ``hostile_case`` whose response comes too slowly for the total deadline
    (``DRIP_TOTAL``) but never for the ``read`` timeout: it must fail with ``ReadTimeout``
    at the total deadline, not before."""
    failure = hostile_case(
        scripted,
        client,
        bad,
        nodelay.ReadTimeout,
        within=DRIP_TOTAL + TIMER_SLACK,
        timeout=nodelay.Timeout(5.0, read=read, total=DRIP_TOTAL),
        match=match,
        poison=False,
    )
    assert failure.elapsed >= DRIP_TOTAL - TIMER_EARLY
    return failure


def tls_step(
    cert: trustme.LeafCert, answers: Sequence[bytes], seen: list[bytes] | None = None
) -> Callable[[socket.socket], None]:
    """A scripted-server step speaking TLS (Python's ``ssl``, a ``trustme`` certificate):
    handshake, then read one request head per answer and send the answer. Received heads are
    appended to ``seen``. A refused handshake ends the step quietly (that is what the D20
    cases test)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(ctx)

    def serve(sock: socket.socket) -> None:
        sock.settimeout(5.0)
        try:
            tls = ctx.wrap_socket(sock, server_side=True)
        except (OSError, ssl.SSLError):
            return
        try:
            buf = b""
            for answer in answers:
                while b"\r\n\r\n" not in buf:
                    data = tls.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                if seen is not None:
                    seen.append(head + b"\r\n\r\n")
                tls.sendall(answer)
        except (OSError, ssl.SSLError):
            pass
        finally:
            tls.close()

    return serve
