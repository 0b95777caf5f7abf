"""The HTTP/2 workloads g and i of docs/benchmarks.md, run by the lab's one runner
(``nodelay bench --workloads g,i``): their rows are ordinary ``Row``s of the same tables,
JSON, charts and HTML report as the HTTP/1.1 workloads. This module holds what differs:
the servers (embedded h2c and h2+TLS), the clients' ways of keeping requests in flight over
HTTP/2, and the crawl.

* **g**: 1000 x 202-byte GET, 32 in flight, over h2c (prior knowledge) and h2 over TLS
  (ALPN). nodelay: one ``Client`` shared by 32 threads (one connection); nodelay-batch:
  ``Client.get_many(urls, concurrency=32)`` (the batch API, futures on the runtime);
  nodelay-async: one ``AsyncClient`` shared by 32 asyncio tasks (one connection).
  Peers, each with its own way of keeping 32 requests in flight over HTTP/2: pycurl
  (CurlMulti, multiplexing), rnet, pyreqwest, wreq and pyqwest (threads sharing one
  client), zapros-async (asyncio tasks sharing one AsyncClient), httpx
  (threads sharing one Client; needs the ``h2`` package); ``h2load -c1 -m32`` as the
  native reference.
* **i**: crawl the embedded server's generated site from ``/site/`` (500 linked pages):
  HTTP/1.1 over 6 connections vs HTTP/2 over one, each with 6 requests in flight (6 threads
  sharing one ``Client``, and 6 asyncio tasks sharing one ``AsyncClient``), and HTTP/2 over
  one connection with 32 streams in flight (32 asyncio tasks); time, requests, and bytes on
  the wire both ways (counted by the server on its sockets, below TLS, from ``/stats``,
  minus the bytes of the ``/stats`` requests themselves).

The embedded server runs in its own process on CPU 0, every client in its own process on
CPU 1. Each run is a fresh process (warm-up, then one timed run); a row holds every run as
one repetition, and the latency of every request of its timed runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from . import child_env
from .pinning import CLIENT_CPU, SERVER_CPU, pin_to
from .results import Row
from .stats import Rep, timing_summary

__all__ = ["G_CLIENTS", "H2_WORKLOADS", "count_rows", "main", "run_rows"]

G_REQUESTS = 1000
"""Workload g: requests per run (docs/benchmarks.md)."""
G_IN_FLIGHT = 32
"""Workload g: requests in flight."""
G_SIZE = 202
"""Workload g: body bytes of each response."""
CRAWL_WORKERS = 6
"""Workload i: requests in flight of the HTTP/1.1 crawl and of the HTTP/2 crawl held to the
same count (a browser's 6 connections per host for HTTP/1.1)."""
H2_CRAWL_STREAMS = 32
"""Workload i: requests in flight of the crawl that uses HTTP/2 as it is meant to be used:
one connection is not held to a browser's 6 per host, so a crawler can keep as many streams
open as it has pages queued; 32, as in g (``h2load -m32``)."""
CRAWL_MODES: dict[str, tuple[tuple[bool, int], ...]] = {
    "threads": ((False, CRAWL_WORKERS), (True, CRAWL_WORKERS)),
    # No 32-stream crawl by threads: a sync HTTP/2 request parks its thread until its answer
    # comes, one wake-up and one GIL hand-off per request however many threads wait, so 32
    # threads on the client's one CPU crawl no faster than 6. The tasks' answers reach the
    # event loop through one queue it drains at each wake-up (crates/nodelay-py/src/aio/
    # bridge.rs), so more streams in flight share each wake-up.
    "tasks": ((False, CRAWL_WORKERS), (True, CRAWL_WORKERS), (True, H2_CRAWL_STREAMS)),
}
"""Workload i: each way of keeping the crawl's requests in flight (``threads`` sharing one
``Client``, asyncio ``tasks`` sharing one ``AsyncClient``) with its crawls, each as (over
HTTP/2, requests in flight)."""
SITE_PAGES = 500
"""Pages of the generated site (crates/nodelay-server/src/routes/site.rs)."""
TIMEOUT = 30.0
"""Seconds any request may take: a stuck server fails the row, never hangs the lab."""
H2_WORKLOADS = ("g", "i")
"""The workloads this lab runs (the main lab hands them over)."""
G_CLIENTS = (
    "nodelay",
    "nodelay-batch",
    "nodelay-async",
    "pycurl",
    "rnet",
    "pyreqwest",
    "wreq",
    "pyqwest",
    "zapros-async",
    "httpx",
    "h2load",
)
NATIVE_CLIENTS = frozenset({"h2load"})
_LINK = re.compile(rb'href="(/site/[^"]*)"')
_CLOCK = time.perf_counter
LATENCY: list[float] = []
"""The child's per-request durations, seconds (list.append is atomic: threads share it)."""


# -- the child: one client, one transport, one measurement -----------------------------


def _usage() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class _Stats:
    """The server's ``/stats`` over one kept-alive HTTP/1.1 connection."""

    def __init__(self, url: str, ca: str) -> None:
        import nodelay

        self.url = url + "/stats"
        self.client = nodelay.Client(verify=ca, limits=nodelay.Limits(keepalive_expiry=None))
        first = self.read()
        # Two reads in a row: what one read adds to the counters by itself (its answer
        # is written after its snapshot, the next request read before the next one).
        self.overhead = {k: v - first[k] for k, v in self.read().items()}

    def read(self) -> dict[str, int]:
        return {k: int(v) for k, v in self.client.get(self.url).json().items()}

    def delta(self, before: dict[str, int]) -> dict[str, int]:
        after = self.read()
        return {k: after[k] - before[k] - self.overhead[k] for k in after}


def _threads(get: Callable[[str], tuple[int, bytes, str]], url: str, n: int) -> list[Any]:
    """``n`` GETs from ``G_IN_FLIGHT`` threads; returns (status, length, version) per request."""
    out: list[Any] = []
    lock = threading.Lock()
    shares = [n // G_IN_FLIGHT + (1 if i < n % G_IN_FLIGHT else 0) for i in range(G_IN_FLIGHT)]

    def work(k: int) -> None:
        mine = []
        for _ in range(k):
            t0 = _CLOCK()
            status, body, version = get(url)
            LATENCY.append(_CLOCK() - t0)
            mine.append((status, len(body), version))
        with lock:
            out.extend(mine)

    threads = [threading.Thread(target=work, args=(k,)) for k in shares if k]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


Fetch = Callable[[Any, str], Awaitable[tuple[int, int, str]]]
"""``fetch(client, url)``: one GET through an asyncio client, as (status, length, version)."""


def _tasks_runner(
    make: Callable[[], Awaitable[Any]], fetch: Fetch
) -> Callable[[str, int], list[Any]]:
    """``run(url, n)``: ``n`` GETs from ``G_IN_FLIGHT`` asyncio tasks sharing one client
    (made once by ``make``, on one event loop, like the threads' shared client)."""
    import asyncio

    loop = asyncio.new_event_loop()
    client = loop.run_until_complete(make())

    async def many(url: str, n: int) -> list[Any]:
        out: list[Any] = []
        shares = [n // G_IN_FLIGHT + (1 if i < n % G_IN_FLIGHT else 0) for i in range(G_IN_FLIGHT)]

        async def work(k: int) -> None:
            for _ in range(k):
                t0 = _CLOCK()
                answer = await fetch(client, url)
                LATENCY.append(_CLOCK() - t0)
                out.append(answer)

        await asyncio.gather(*(work(k) for k in shares if k))
        return out

    return lambda url, n: loop.run_until_complete(many(url, n))


def _async_runner(tls: bool, ca: str) -> Callable[[str, int], list[Any]]:
    """nodelay's ``AsyncClient`` under ``_tasks_runner``."""
    import nodelay

    async def make() -> nodelay.AsyncClient:
        if tls:
            return nodelay.AsyncClient(http2=True, verify=ca, timeout=TIMEOUT)
        return nodelay.AsyncClient(http2="prior_knowledge", timeout=TIMEOUT)

    async def fetch(client: nodelay.AsyncClient, url: str) -> tuple[int, int, str]:
        r = await client.get(url)
        return r.status_code, len(r.content), r.http_version

    return _tasks_runner(make, fetch)


def _zapros_async_runner(tls: bool, ca: str) -> Callable[[str, int], list[Any]]:
    """zapros's ``AsyncClient`` under ``_tasks_runner``: its standard-library handler with
    HTTP/1.1 off speaks HTTP/2 only (prior knowledge over cleartext, ALPN "h2" over TLS; the
    CA in an ssl context on its transport, as its docs' python-std.md sets one). Its blocking
    ``Client`` has no g row: threads sharing it over one HTTP/2 connection fail ("HTTP/2
    connection terminated by peer"), so its asyncio client is the one that multiplexes."""
    import ssl

    import zapros  # type: ignore[import-untyped,import-not-found,unused-ignore]

    async def make() -> Any:
        transport = zapros.AsyncIOTransport(ssl_context=ssl.create_default_context(cafile=ca))
        handler = zapros.AsyncStdNetworkHandler(
            transport=transport,
            http1=False,
            http2=True,
            total_timeout=TIMEOUT,
            read_timeout=TIMEOUT,
        )
        return zapros.AsyncClient(handler=handler)

    async def fetch(client: Any, url: str) -> tuple[int, int, str]:
        r = await client.get(url)
        return r.status, len(await r.aread()), "HTTP/2"

    return _tasks_runner(make, fetch)


def _getter(client: str, tls: bool, ca: str) -> Callable[[str], tuple[int, bytes, str]]:
    if client == "nodelay":
        import nodelay

        c = nodelay.Client(http2=True if tls else "prior_knowledge", verify=ca, timeout=TIMEOUT)

        def get(url: str) -> tuple[int, bytes, str]:
            r = c.get(url)
            return r.status_code, r.content, r.http_version

        return get
    if client == "rnet":
        import rnet.blocking  # type: ignore[import-untyped,import-not-found,unused-ignore]

        rc = rnet.blocking.BlockingClient(http2_only=True, verify=Path(ca))

        def get_rnet(url: str) -> tuple[int, bytes, str]:
            r = rc.get(url)
            return int(r.status), r.bytes(), str(r.version).rpartition(".")[2]

        return get_rnet
    if client == "pyreqwest":
        from datetime import timedelta

        from pyreqwest.client import SyncClientBuilder  # type: ignore[import-untyped,import-not-found,unused-ignore]

        b = SyncClientBuilder().timeout(timedelta(seconds=TIMEOUT))
        b = (
            b.add_root_certificate_pem(Path(ca).read_bytes()).http2(True)
            if tls
            else b.http2_prior_knowledge()
        )
        pc = b.build()

        def get_pyreqwest(url: str) -> tuple[int, bytes, str]:
            r = pc.get(url).build().send()
            return r.status, bytes(r.bytes()), str(r.version)

        return get_pyreqwest
    if client == "wreq":
        from datetime import timedelta

        import wreq.blocking  # type: ignore[import-untyped,import-not-found,unused-ignore]

        from .clients.wreq_ import version_text

        # wreq's ClientConfig: http2_only (prior knowledge over cleartext, ALPN h2 over TLS),
        # tls_verify with the CA file's path.
        wc = wreq.blocking.Client(
            http2_only=True, tls_verify=Path(ca), timeout=timedelta(seconds=TIMEOUT)
        )

        def get_wreq(url: str) -> tuple[int, bytes, str]:
            r = wc.get(url)
            return r.status.as_int(), bytes(r.bytes()), version_text(r.version)

        return get_wreq
    if client == "pyqwest":
        import pyqwest  # type: ignore[import-untyped,import-not-found,unused-ignore]

        # Told HTTP/2, pyqwest's transport speaks nothing else (prior knowledge over
        # cleartext, h2 by ALPN over TLS), so an answer came over HTTP/2: a FullResponse
        # does not carry its version.
        transport = pyqwest.SyncHTTPTransport(
            tls_ca_cert=Path(ca).read_bytes(),
            http_version=pyqwest.HTTPVersion.HTTP2,
            timeout=TIMEOUT,
        )
        qc = pyqwest.SyncClient(transport)

        def get_pyqwest(url: str) -> tuple[int, bytes, str]:
            r = qc.get(url)
            return r.status, r.content, "HTTP/2"

        return get_pyqwest
    if client == "httpx":
        import httpx  # type: ignore[import-untyped,import-not-found,unused-ignore]

        hc = httpx.Client(
            http1=tls,
            http2=True,
            verify=ca,
            timeout=TIMEOUT,
            limits=httpx.Limits(max_connections=1),
        )

        def get_httpx(url: str) -> tuple[int, bytes, str]:
            r = hc.get(url)
            return r.status_code, r.content, r.http_version

        return get_httpx
    raise ValueError(f"unknown client {client}")


def _batch_g(tls: bool, ca: str, url: str) -> Callable[[int], list[Any]]:
    """``n`` GETs through nodelay's batch API, ``G_IN_FLIGHT`` in flight, one Client."""
    import nodelay

    c = nodelay.Client(http2=True if tls else "prior_knowledge", verify=ca, timeout=TIMEOUT)

    def run(n: int) -> list[Any]:
        rs = c.get_many([url] * n, concurrency=G_IN_FLIGHT)
        return [(r.status_code, len(r.content), r.http_version) for r in rs]

    return run


def _pycurl_g(url: str, n: int, tls: bool, ca: str) -> list[Any]:
    import pycurl  # type: ignore[import-untyped,import-not-found,unused-ignore]

    multi = pycurl.CurlMulti()
    multi.setopt(pycurl.M_PIPELINING, pycurl.PIPE_MULTIPLEX)
    multi.setopt(pycurl.M_MAX_HOST_CONNECTIONS, 1)
    version = pycurl.CURL_HTTP_VERSION_2TLS if tls else pycurl.CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
    out: list[Any] = []
    bufs: dict[int, list[bytes]] = {}
    started = 0

    def start(h: Any) -> None:
        nonlocal started
        chunks: list[bytes] = []
        bufs[id(h)] = chunks
        h.setopt(pycurl.URL, url)
        h.setopt(pycurl.WRITEFUNCTION, chunks.append)
        multi.add_handle(h)
        started += 1

    handles = []
    for _ in range(min(G_IN_FLIGHT, n)):
        h = pycurl.Curl()
        h.setopt(pycurl.HTTP_VERSION, version)
        h.setopt(pycurl.PIPEWAIT, 1)
        h.setopt(pycurl.CAINFO, ca)
        h.setopt(pycurl.TIMEOUT_MS, int(TIMEOUT * 1000))
        h.setopt(pycurl.NOSIGNAL, 1)
        handles.append(h)
        start(h)
    deadline = time.monotonic() + TIMEOUT * 2
    while len(out) < n and time.monotonic() < deadline:
        while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
            pass
        _, ok, err = multi.info_read()
        for h in ok:
            multi.remove_handle(h)
            v = h.getinfo(pycurl.INFO_HTTP_VERSION)
            ver = "HTTP/2" if v == pycurl.CURL_HTTP_VERSION_2_0 else str(v)
            out.append((h.getinfo(pycurl.RESPONSE_CODE), len(b"".join(bufs[id(h)])), ver))
            if started < n:
                start(h)
        for h, _code, _msg in err:
            multi.remove_handle(h)
            out.append((0, 0, "?"))
            if started < n:
                start(h)
        if len(out) < n:
            multi.select(1.0)
    for h in handles:
        h.close()
    multi.close()
    return out


def _crawl_limits(workers: int) -> Any:
    import nodelay

    return nodelay.Limits(max_connections=workers, max_keepalive_connections=workers)


def _http2_mode(h2: bool, tls: bool) -> Any:
    return (True if tls else "prior_knowledge") if h2 else False


def _crawl(base: str, h2: bool, tls: bool, ca: str, driver: str, workers: int) -> dict[str, Any]:
    """Crawls the site from ``/site/``, ``workers`` requests in flight: ``threads`` sharing
    one ``Client`` or asyncio ``tasks`` sharing one ``AsyncClient``."""
    if driver == "tasks":
        return _crawl_tasks(base, h2, tls, ca, workers)
    import nodelay

    client = nodelay.Client(
        http2=_http2_mode(h2, tls), verify=ca, timeout=TIMEOUT, limits=_crawl_limits(workers)
    )
    seen = {"/site/"}
    todo = ["/site/"]
    lock = threading.Condition()
    busy = 0
    fetched = 0
    versions: set[str] = set()

    def work() -> None:
        nonlocal busy, fetched
        while True:
            with lock:
                while not todo and busy:
                    lock.wait()
                if not todo:
                    lock.notify_all()
                    return
                path = todo.pop()
                busy += 1
            t0 = _CLOCK()
            r = client.get(base + path)
            LATENCY.append(_CLOCK() - t0)
            links = _LINK.findall(r.content) if r.status_code == 200 else []
            with lock:
                fetched += 1
                versions.add(r.http_version)
                for link in links:
                    p = link.decode()
                    if p not in seen:
                        seen.add(p)
                        todo.append(p)
                busy -= 1
                lock.notify_all()

    stats = _Stats(base, ca)
    before = stats.read()
    cpu0, t0 = _usage(), time.perf_counter()
    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall, cpu = time.perf_counter() - t0, _usage() - cpu0
    client.close()
    return _crawl_record(wall, cpu, fetched, len(seen), stats.delta(before), versions)


def _crawl_record(
    wall: float, cpu: float, fetched: int, pages: int, wire: dict[str, int], versions: set[str]
) -> dict[str, Any]:
    return {
        "seconds": wall,
        "cpu": cpu,
        "requests": fetched,
        "pages": pages,
        # The client's view: what it received is what the server sent.
        "bytes_in": wire["bytes_sent"],
        "bytes_out": wire["bytes_received"],
        "connections": wire["connections"],
        "versions": sorted(versions),
    }


def _crawl_tasks(base: str, h2: bool, tls: bool, ca: str, workers: int) -> dict[str, Any]:
    """The crawl of ``_crawl`` by ``workers`` asyncio tasks sharing one ``AsyncClient``."""
    import asyncio

    import nodelay

    async def crawl() -> dict[str, Any]:
        client = nodelay.AsyncClient(
            http2=_http2_mode(h2, tls), verify=ca, timeout=TIMEOUT, limits=_crawl_limits(workers)
        )
        seen = {"/site/"}
        todo = ["/site/"]
        changed = asyncio.Condition()
        busy = 0
        fetched = 0
        versions: set[str] = set()

        async def work() -> None:
            nonlocal busy, fetched
            while True:
                async with changed:
                    while not todo and busy:
                        await changed.wait()
                    if not todo:
                        changed.notify_all()
                        return
                    path = todo.pop()
                    busy += 1
                t0 = _CLOCK()
                r = await client.get(base + path)
                LATENCY.append(_CLOCK() - t0)
                links = _LINK.findall(r.content) if r.status_code == 200 else []
                async with changed:
                    fetched += 1
                    versions.add(r.http_version)
                    for link in links:
                        p = link.decode()
                        if p not in seen:
                            seen.add(p)
                            todo.append(p)
                    busy -= 1
                    changed.notify_all()

        stats = _Stats(base, ca)
        before = stats.read()
        cpu0, t0 = _usage(), time.perf_counter()
        await asyncio.gather(*(work() for _ in range(workers)))
        wall, cpu = time.perf_counter() - t0, _usage() - cpu0
        await client.aclose()
        return _crawl_record(wall, cpu, fetched, len(seen), stats.delta(before), versions)

    return asyncio.run(crawl())


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """One measurement in this (pinned) process; returns a JSON-able record."""
    base, tls, ca = spec["url"], spec["tls"], spec["ca"]
    if spec["workload"] == "i":
        from nodelay import _core

        driver, workers = spec["driver"], spec["workers"]
        _crawl(base, spec["h2"], tls, ca, driver, workers)  # warm-up: connections, caches, imports
        LATENCY.clear()
        # Each crawl has its own client: the timed one opens its connections, and the engine
        # tells how long the last of them took to connect (and to shake hands, over TLS).
        _core.record_connect_timings(True)
        _core.take_connect_timings()
        record = _crawl(base, spec["h2"], tls, ca, driver, workers)
        opened = _core.take_connect_timings()
        if opened is not None:
            dns, tcp, tls_s = opened
            record["connect"], record["tls"] = (dns or 0.0) + tcp, tls_s
        return {**record, "latency": LATENCY}
    url = base + f"/bytes/{G_SIZE}"
    client = spec["client"]
    run: Callable[[int], list[Any]]
    if client == "pycurl":

        def run(n: int) -> list[Any]:
            return _pycurl_g(url, n, tls, ca)
    elif client in ("nodelay-async", "zapros-async"):
        run_async = (_async_runner if client == "nodelay-async" else _zapros_async_runner)(tls, ca)

        def run(n: int) -> list[Any]:
            return run_async(url, n)
    elif client == "nodelay-batch":
        run = _batch_g(tls, ca, url)
    else:
        get = _getter(client, tls, ca)

        def run(n: int) -> list[Any]:
            return _threads(get, url, n)

    run(G_IN_FLIGHT * 2)  # warm-up
    LATENCY.clear()
    cpu0, t0 = _usage(), time.perf_counter()
    out = run(G_REQUESTS)
    wall, cpu = time.perf_counter() - t0, _usage() - cpu0
    bad = sum(1 for status, length, _ in out if status != 200 or length != G_SIZE)
    return {
        "seconds": wall,
        "cpu": cpu,
        "requests": len(out),
        "errors": bad + (G_REQUESTS - len(out)),
        "bytes": sum(length for status, length, _ in out if status == 200),
        "versions": sorted({v for _, _, v in out}),
        "latency": LATENCY,
    }


# -- the parent: servers and rows ---------------------------------------------------------


def _start_server(tls: bool) -> tuple[subprocess.Popen[str], str]:
    code = (
        "from nodelay import _core\n"
        f"_core.serve('127.0.0.1', 0, 1, on_ready=lambda u: print(u, flush=True), "
        f"http2=True, tls={tls})\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=pin_to(SERVER_CPU),
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"server did not start: {url!r}")
    return proc, url.replace("127.0.0.1", "localhost") if tls else url


CHILD_TIMEOUT = 600.0
"""Seconds one measuring child may take (a stuck client fails its row, not the lab)."""


def _run_child(spec: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "nodelay_bench.h2lab", "--child", json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        preexec_fn=pin_to(CLIENT_CPU),
        env=child_env(),
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _h2load(url: str) -> dict[str, Any]:
    from .native import _h2load_timings

    binary = shutil.which("h2load")
    if binary is None:
        return {"error": "h2load is not on PATH"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [binary, "-c1", f"-m{G_IN_FLIGHT}", f"-n{G_REQUESTS}", f"{url}/bytes/{G_SIZE}"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=pin_to(CLIENT_CPU),
    ).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    fin = re.search(r"finished in ([\d.]+)(us|ms|s)", out)
    ok = re.search(r"(\d+) succeeded", out)
    proto = re.search(r"Application protocol: (\S+)", out)
    if fin is None or ok is None:
        return {"error": f"unexpected h2load output: {out[-200:]!r}"}
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0}[fin.group(2)]
    timings = _h2load_timings(out)
    return {
        "seconds": float(fin.group(1)) * scale,
        "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "requests": int(ok.group(1)),
        "errors": G_REQUESTS - int(ok.group(1)),
        "bytes": int(ok.group(1)) * G_SIZE,
        "versions": [proto.group(1) if proto else "?"],
        "latency_ms": timings.latency,
        "connect_ms": timings.connect,
    }


def _row(workload: str, client: str, variant: str, runs: list[dict[str, Any]]) -> Row:
    """One row of every run of a client (each run one repetition)."""
    kind = "native" if client in NATIVE_CLIENTS else "python"
    flavour = "async" if client.endswith("-async") else ("native" if kind == "native" else "sync")
    row = Row(workload, client, kind, "req/s", variant=variant, flavour=flavour)
    good = [r for r in runs if "error" not in r]
    if not good:
        row.status = (
            "skipped"
            if "not installed" in runs[0]["error"]
            or ("No module named" in runs[0]["error"])
            or "not on PATH" in runs[0]["error"]
            else "failed"
        )
        row.reason = str(runs[0]["error"])[:200]
        return row
    row.reps = [
        Rep(
            r["seconds"],
            r["requests"],
            r.get("bytes", r.get("bytes_in", 0)),
            r["cpu"],
            0.0,
            r.get("errors", 0),
        )
        for r in good
    ]
    row.protocol = ",".join(sorted({v for r in good for v in r.get("versions", [])}))
    latency = [x * 1000 for r in good for x in r.get("latency", [])]
    row.latency_ms = timing_summary(latency) if latency else good[-1].get("latency_ms")
    row.connect_ms = good[-1].get("connect_ms")
    # The crawl (i): the last connection each timed run opened, one sample per run.
    connects = [r["connect"] * 1000 for r in good if r.get("connect") is not None]
    handshakes = [r["tls"] * 1000 for r in good if r.get("tls") is not None]
    if connects:
        row.connect_ms = timing_summary(connects)
    row.tls_ms = timing_summary(handshakes)
    conns = "/".join(map(str, sorted({r.get("connections", 0) for r in good})))
    row.note = f"{conns} conn"
    if workload == "i":
        mid = sorted(good, key=lambda r: r["seconds"])[len(good) // 2]
        row.note = (
            f"crawl {mid['seconds'] * 1000:,.1f} ms, sent {mid['bytes_out']:,} B, "
            f"got {mid['bytes_in'] / 1e6:.2f} MB, {conns} conn"
        )
    if len(good) < len(runs):
        row.reason = f"{len(runs) - len(good)} run(s) failed: {runs[0].get('error', '')}"[:200]
    return row


TRANSPORTS = (("h2c", False), ("h2+TLS", True))


def count_rows(workloads: list[str], clients: list[str]) -> int:
    """How many rows ``run_rows`` produces (for the progress bar)."""
    crawls = sum(len(modes) for modes in CRAWL_MODES.values())
    per_transport = (len(clients) if "g" in workloads else 0) + (crawls if "i" in workloads else 0)
    return per_transport * len(TRANSPORTS)


def _crawl_variant(h2: bool, workers: int, tls: bool) -> str:
    """An i row's variant: ``h1 x6`` (6 connections), ``h2 x1`` (one connection, as many
    requests in flight as h1) or ``h2 x1 m32`` (one connection, 32 streams in flight, as
    h2load's ``-m32``), then the transport."""
    if not h2:
        mode = f"h1 x{workers}"
    elif workers == CRAWL_WORKERS:
        mode = "h2 x1"
    else:
        mode = f"h2 x1 m{workers}"
    return f"{mode} {'TLS' if tls else 'cleartext'}"


def run_rows(
    workloads: list[str],
    clients: list[str],
    repeat: int,
    advance: Callable[[str], None] = lambda label: None,
) -> list[Row]:
    """Workloads ``g``/``i`` for ``clients`` (g's; i is nodelay's crawl, ``CRAWL_MODES``):
    ``advance(label)`` is called as each row starts."""
    from nodelay import _core

    with tempfile.TemporaryDirectory() as tmp:
        ca = str(Path(tmp) / "ca.pem")
        Path(ca).write_text(_core.test_ca_pem())
        servers = {tls: _start_server(tls) for tls in (False, True)}
        rows: list[Row] = []
        try:
            for transport, tls in TRANSPORTS:
                url = servers[tls][1]
                stats = _Stats(url, ca)
                if "g" in workloads:
                    for client in clients:
                        advance(f"g: {client} {transport}")
                        runs = []
                        for _ in range(repeat):
                            before = stats.read()
                            if client in NATIVE_CLIENTS:
                                run = _h2load(url)
                            else:
                                run = _run_child(
                                    {
                                        "workload": "g",
                                        "client": client,
                                        "url": url,
                                        "tls": tls,
                                        "ca": ca,
                                    }
                                )
                            run["connections"] = stats.delta(before)["connections"]
                            runs.append(run)
                        rows.append(_row("g", client, transport, runs))
                if "i" in workloads:
                    for driver, modes in CRAWL_MODES.items():
                        client = "nodelay" if driver == "threads" else "nodelay-async"
                        for h2, workers in modes:
                            variant = _crawl_variant(h2, workers, tls)
                            advance(f"i: {client} {variant}")
                            spec: dict[str, Any] = {"workload": "i", "h2": h2, "url": url}
                            spec |= {"tls": tls, "ca": ca, "driver": driver, "workers": workers}
                            runs = [_run_child(spec) for _ in range(repeat)]
                            rows.append(_row("i", client, variant, runs))
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(10)
    return rows


def main(argv: list[str] | None = None) -> int:
    """``python -m nodelay_bench.h2lab --child SPEC``: one measurement (the runner's child)."""
    parser = argparse.ArgumentParser(prog="python -m nodelay_bench.h2lab")
    parser.add_argument("--child", required=True, help="the measurement, as JSON")
    args = parser.parse_args(argv)
    print(json.dumps(child(json.loads(args.child))), flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
