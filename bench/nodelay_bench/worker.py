"""The measuring subprocess: one client x one workload, warm-up then R timed repetitions.

Run by the lab as ``python -m nodelay_bench.worker SPEC_JSON``; prints one JSON object on
its last stdout line: ``{"reps": [...], "protocol", "peak_rss_kb", "chunks", "note",
"latency_ms", "connect_ms", "tls_ms"}`` or
``{"skipped": reason}`` or ``{"failed": reason}`` (workload h's login or cookie file did not
work). Latency is each request's wall time, taken around the client call in every timed
repetition (two clock reads per request, the same for every client); rows that hand all
their requests to a client's own concurrency engine (CurlMulti, a batch API) have none.
Every loop is bounded by the request count; a run of
``MAX_CONSECUTIVE_ERRORS`` failures in a row ends the repetition (the rest count as errors).
"""

from __future__ import annotations

import asyncio
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlencode

from .checks import body_check, json_ok
from .clients import load
from .clients.base import AsyncAdapter, SyncAdapter
from .stats import timing_summary
from .workloads import (
    COOKIE_POST_PATH,
    FORM,
    LOGIN_FORM,
    LOGIN_PATH,
    WORKLOADS,
    Workload,
    form_body,
)

MAX_CONSECUTIVE_ERRORS = 20
CURL_TIMEOUT = 10.0
"""Seconds the real curl may take to read workload h's cookie file back (one request)."""

Op = Callable[[], tuple[bool, int]]
"""One request: (answer right?, body bytes)."""
AsyncOp = Callable[[], Awaitable[tuple[bool, int]]]


class Chunks:
    """Chunk sizes seen by streamed rows (sizes of the client's natural reads)."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0
        self.min = 0
        self.max = 0
        self.responses = 0

    def add(self, sizes: list[int]) -> None:
        if sizes:
            self.min = min(sizes) if self.count == 0 else min(self.min, *sizes)
            self.max = max(self.max, *sizes)
        self.count += len(sizes)
        self.total += sum(sizes)
        self.responses += 1

    def to_dict(self) -> dict[str, float]:
        return {
            "chunks_per_response": self.count / self.responses if self.responses else 0.0,
            "mean": self.total / self.count if self.count else 0.0,
            "min": self.min,
            "max": self.max,
        }


class Samples:
    """Per-request durations (seconds) of the timed repetitions, and the connections the
    client said it opened (TCP connect, TLS handshake seconds)."""

    def __init__(self) -> None:
        self.latency: list[float] = []
        self.tcp: list[float] = []
        self.tls: list[float] = []

    def extend(self, other: Samples) -> None:
        self.latency += other.latency
        self.tcp += other.tcp
        self.tls += other.tls

    def to_dict(self) -> dict[str, Any]:
        """The row's timing summaries, in milliseconds (None where nothing was measured)."""
        return {
            "latency_ms": timing_summary([x * 1000 for x in self.latency]),
            "connect_ms": timing_summary([x * 1000 for x in self.tcp]),
            "tls_ms": timing_summary([x * 1000 for x in self.tls]),
        }


def _rusage() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def _tally(results: list[tuple[bool, int]]) -> tuple[int, int]:
    errors = sum(1 for ok, _ in results if not ok)
    return errors, sum(size for ok, size in results if ok)


def _run_seq(op: Op, n: int, samples: Samples) -> tuple[int, int]:
    """(errors, body bytes) of ``n`` sequential requests; their durations go to ``samples``."""
    errors = nbytes = streak = 0
    clock = time.perf_counter
    latency = samples.latency
    for i in range(n):
        t0 = clock()
        try:
            ok, size = op()
        except Exception:
            ok, size = False, 0
        latency.append(clock() - t0)
        if ok:
            nbytes += size
            streak = 0
        else:
            errors += 1
            streak += 1
            if streak >= MAX_CONSECUTIVE_ERRORS:
                return errors + (n - i - 1), nbytes
    return errors, nbytes


async def _run_seq_async(op: AsyncOp, n: int, samples: Samples) -> tuple[int, int]:
    errors = nbytes = streak = 0
    clock = time.perf_counter
    latency = samples.latency
    for i in range(n):
        t0 = clock()
        try:
            ok, size = await op()
        except Exception:
            ok, size = False, 0
        latency.append(clock() - t0)
        if ok:
            nbytes += size
            streak = 0
        else:
            errors += 1
            streak += 1
            if streak >= MAX_CONSECUTIVE_ERRORS:
                return errors + (n - i - 1), nbytes
    return errors, nbytes


def _shares(n: int, parts: int) -> list[int]:
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def _sync_op(
    cls: type[SyncAdapter],
    shared: SyncAdapter,
    w: Workload,
    variant: str,
    url: str,
    chunks: Chunks,
    connects: Samples,
) -> Op:
    """The per-request callable for a sync client (``shared`` or one adapter per thread)."""
    local = threading.local()

    def adapter() -> SyncAdapter:
        if cls.thread_safe or w.concurrency == 1:
            return shared
        a: SyncAdapter | None = getattr(local, "adapter", None)
        if a is None:
            a = local.adapter = cls()
        return a

    check = body_check(w)
    if w.fresh_client:

        def fresh() -> tuple[bool, int]:
            a = cls()
            try:
                status, body = a.get(url)
                _note_connect(a.connect_time(), connects)
            finally:
                a.close()
            return check(status, body), len(body)

        return fresh
    if variant == "json()":

        def get_json() -> tuple[bool, int]:
            status, doc = adapter().get_json(url)
            return status == 200 and json_ok(doc), 0

        return get_json
    if variant == "stream":

        def stream() -> tuple[bool, int]:
            status, sizes = adapter().stream(url)
            chunks.add(sizes)
            total = sum(sizes)
            return status == 200 and total == w.expect_length, total

        return stream
    if w.method == "POST":
        body = form_body()

        def post() -> tuple[bool, int]:
            status, data = adapter().post_form(url, FORM, body)
            return check(status, data), len(data)

        return post
    if w.concurrency == 1:
        get = shared.get

        def plain_get() -> tuple[bool, int]:
            status, data = get(url)
            return check(status, data), len(data)

        return plain_get

    def threaded_get() -> tuple[bool, int]:
        status, data = adapter().get(url)
        return check(status, data), len(data)

    return threaded_get


def _note_connect(time_: tuple[float, float | None] | None, connects: Samples) -> None:
    if time_ is not None:
        tcp, tls = time_
        connects.tcp.append(tcp)
        if tls is not None:
            connects.tls.append(tls)


Run = Callable[[int, Samples], tuple[int, int]]
"""``run(n, samples)``: ``n`` requests, their timings into ``samples``; (errors, bytes)."""


def _measure(
    run: Run, n: int, warmup: int, repeat: int, samples: Samples, connects: Samples | None = None
) -> list[dict[str, Any]]:
    """The warm-up (its timings and connections dropped), then ``repeat`` timed repetitions."""
    run(warmup, Samples())
    if connects is not None:
        connects.tcp.clear()
        connects.tls.clear()
    reps = []
    for _ in range(repeat):
        u0, s0 = _rusage()
        t0 = time.perf_counter()
        errors, nbytes = run(n, samples)
        seconds = time.perf_counter() - t0
        u1, s1 = _rusage()
        reps.append(
            {
                "seconds": seconds,
                "requests": n - errors,
                "bytes": nbytes,
                "cpu_user": u1 - u0,
                "cpu_sys": s1 - s0,
                "errors": errors,
            }
        )
    return reps


def run_sync(cls: type[SyncAdapter], spec: dict[str, Any]) -> dict[str, Any]:
    w = WORKLOADS[spec["workload"]]
    url, variant = spec["url"], spec["variant"]
    chunks = Chunks()
    samples = Samples()
    connects = Samples()
    if w.fresh_client:
        cls.start_connect_timing()
    shared = cls()
    op = _sync_op(cls, shared, w, variant, url, chunks, connects)
    conc = w.concurrency
    run: Run
    if conc == 1:

        def run(n: int, into: Samples) -> tuple[int, int]:
            return _run_seq(op, n, into)

        pool = None
    else:
        pool = ThreadPoolExecutor(max_workers=conc)
        check = body_check(w)

        def run(n: int, into: Samples) -> tuple[int, int]:
            if variant == "batch":
                return _tally([(check(s, b), len(b)) for s, b in shared.run_batch(url, n, conc)])
            native = shared.run_concurrent(url, n, conc)
            if native is not None:
                return _tally([(check(s, b), len(b)) for s, b in native])
            # One sample list per thread (no lock per request), merged after.
            parts_samples = [Samples() for _ in range(conc)]
            futures = [
                pool.submit(_run_seq, op, k, parts_samples[i])
                for i, k in enumerate(_shares(n, conc))
                if k
            ]
            parts = [f.result() for f in futures]
            for part in parts_samples:
                into.extend(part)
            return sum(p[0] for p in parts), sum(p[1] for p in parts)

    try:
        reps = _measure(run, spec["n"], spec["warmup"], spec["repeat"], samples, connects)
        samples.tcp, samples.tls = connects.tcp, connects.tls
        protocol = shared.version()
        if protocol == "?":
            # Rows where the shared adapter sent nothing (j, f with one client per
            # thread) or does not record it: one untimed request tells the protocol.
            try:
                if w.method == "POST":
                    shared.post_form(url, FORM, form_body())
                else:
                    shared.get(url)
                protocol = shared.version()
            except Exception:
                pass
    finally:
        if pool is not None:
            pool.shutdown()
        shared.close()
    return {
        "reps": reps,
        "protocol": protocol,
        "chunks": chunks.to_dict() if chunks.count else None,
        **samples.to_dict(),
    }


class CookieFlowError(Exception):
    """Workload h could not log in, or its saved cookie file did not work: the row fails."""


def _login(a: SyncAdapter, origin: str) -> str:
    """POST the login form; returns the session value the server set."""
    status, body = a.post_form(
        origin + LOGIN_PATH, LOGIN_FORM, urlencode(LOGIN_FORM).encode("ascii")
    )
    try:
        session = json.loads(body)["cookies"]["session"]
    except (ValueError, KeyError, TypeError):
        session = None
    if status != 200 or not isinstance(session, str):
        raise CookieFlowError(f"login POST answered {status}: {body[:80]!r}")
    return session


Check = Callable[[int, bytes], bool]
"""``check(status, body)``: is this answer right?"""


def cookie_checks(session: str) -> tuple[Check, Check]:
    """(GET check, POST check) of workload h: the answer shows the session cookie was sent.

    ``/cookies`` echoes exactly the cookies it got (one, the session); ``/anything``
    lists the request headers, where the one Cookie header must hold the session.
    """
    get_body = json.dumps({"cookies": {"session": session}}).encode()
    needle = json.dumps(["cookie", f"session={session}"]).encode()

    def get_ok(status: int, body: bytes) -> bool:
        return status == 200 and body == get_body

    def post_ok(status: int, body: bytes) -> bool:
        return status == 200 and needle in body

    return get_ok, post_ok


def _cookie_op(a: SyncAdapter, get_url: str, post_url: str, session: str) -> Op:
    """GET and POST alternating, each checked for the session cookie."""
    get_ok, post_ok = cookie_checks(session)
    body = form_body()
    turn = [0]

    def op() -> tuple[bool, int]:
        turn[0] ^= 1
        if turn[0]:
            status, data = a.get(get_url)
            return get_ok(status, data), len(data)
        status, data = a.post_form(post_url, FORM, body)
        return post_ok(status, data), len(data)

    return op


def _check_cookie_file(cls: type[SyncAdapter], path: str, get_url: str, session: str) -> str:
    """A fresh client loads ``path`` and must send the cookie (else the row fails); whether
    the real curl ``-b`` sends it too is the returned note (docs/benchmarks.md's target for h)."""
    get_ok, _ = cookie_checks(session)
    fresh = cls()
    try:
        fresh.start_cookies(path)
        status, body = fresh.get(get_url)
    finally:
        fresh.close()
    if not get_ok(status, body):
        raise CookieFlowError(f"reloaded cookie file not sent: {status} {body[:80]!r}")
    curl = shutil.which("curl")
    if curl is None:
        return "cookie file reloaded; curl not found"
    out = subprocess.run(
        [curl, "-s", "-b", path, get_url],
        capture_output=True,
        timeout=CURL_TIMEOUT,
        check=False,
    )
    if get_ok(200, out.stdout):
        return "cookie file reloaded; curl -b sends it"
    return "cookie file reloaded; curl -b does NOT send it"


def run_cookie_flow(cls: type[SyncAdapter], spec: dict[str, Any]) -> dict[str, Any]:
    """Workload h: log in (untimed), then GET/POST alternating with the cookie (timed,
    every answer checked), then save the cookies and reload them into a fresh client."""
    w = WORKLOADS[spec["workload"]]
    get_url = spec["url"]
    origin = get_url[: -len(w.path)]
    a = cls()
    try:
        a.start_cookies(None)
        session = _login(a, origin)
        op = _cookie_op(a, get_url, origin + COOKIE_POST_PATH, session)
        samples = Samples()
        reps = _measure(
            lambda n, into: _run_seq(op, n, into),
            spec["n"],
            spec["warmup"],
            spec["repeat"],
            samples,
        )
        protocol = a.version()
        with tempfile.TemporaryDirectory(prefix="nodelay-bench-cookies-") as tmp:
            path = f"{tmp}/cookies.txt"
            a.save_cookies(path)
            a.close()  # some clients (libcurl) also write the file when closed: done here
            note = _check_cookie_file(cls, path, get_url, session)
    finally:
        a.close()
    return {"reps": reps, "protocol": protocol, "chunks": None, "note": note, **samples.to_dict()}


async def _run_async(cls: type[AsyncAdapter], spec: dict[str, Any]) -> dict[str, Any]:
    w = WORKLOADS[spec["workload"]]
    url, variant = spec["url"], spec["variant"]
    chunks = Chunks()
    samples = Samples()
    check = body_check(w)
    if w.fresh_client:
        cls.start_connect_timing()
    a = cls()
    await a.setup()

    async def op() -> tuple[bool, int]:
        if w.fresh_client:
            b = cls()
            await b.setup()
            try:
                status, body = await b.get(url)
                _note_connect(b.connect_time(), connects)
            finally:
                await b.close()
            return check(status, body), len(body)
        if variant == "json()":
            status, doc = await a.get_json(url)
            return status == 200 and json_ok(doc), 0
        if variant == "stream":
            status, sizes = await a.stream(url)
            chunks.add(sizes)
            return status == 200 and sum(sizes) == w.expect_length, sum(sizes)
        if w.method == "POST":
            status, body = await a.post_form(url, FORM, form_body())
            return check(status, body), len(body)
        status, body = await a.get(url)
        return check(status, body), len(body)

    connects = Samples()

    async def run(n: int, into: Samples) -> tuple[int, int]:
        if w.concurrency == 1:
            return await _run_seq_async(op, n, into)
        parts = await asyncio.gather(
            *(_run_seq_async(op, k, into) for k in _shares(n, w.concurrency) if k)
        )
        return sum(p[0] for p in parts), sum(p[1] for p in parts)

    await run(spec["warmup"], Samples())
    connects.tcp.clear()
    connects.tls.clear()
    reps = []
    for _ in range(spec["repeat"]):
        u0, s0 = _rusage()
        t0 = time.perf_counter()
        errors, nbytes = await run(spec["n"], samples)
        seconds = time.perf_counter() - t0
        u1, s1 = _rusage()
        reps.append(
            {
                "seconds": seconds,
                "requests": spec["n"] - errors,
                "bytes": nbytes,
                "cpu_user": u1 - u0,
                "cpu_sys": s1 - s0,
                "errors": errors,
            }
        )
    protocol = a.version()
    if protocol == "?":
        try:
            if w.method == "POST":
                await a.post_form(url, FORM, form_body())
            else:
                await a.get(url)
            protocol = a.version()
        except Exception:
            pass
    await a.close()
    samples.tcp, samples.tls = connects.tcp, connects.tls
    return {
        "reps": reps,
        "protocol": protocol,
        "chunks": chunks.to_dict() if chunks.count else None,
        **samples.to_dict(),
    }


def skip_reason(
    cls: type[SyncAdapter] | type[AsyncAdapter], w: Workload, variant: str
) -> str | None:
    """Why ``cls`` cannot run this row, or None."""
    u = cls.unsupported
    if "*" in u:
        return u["*"]
    if w.check == "cookies":
        if not issubclass(cls, SyncAdapter):
            return "the cookie flow (h) runs the sync clients"
        if not cls.has_cookies():
            return "no cookie support in this adapter"
    if variant and variant in u:
        return u[variant]
    if w.concurrency > 1 and "concurrent" in u:
        return u["concurrent"]
    return None


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one spec in this process (the worker's job); returns the result object."""
    try:
        cls = load(spec["client"])
    except ImportError as exc:
        return {"skipped": f"import failed: {exc}"}
    w = WORKLOADS[spec["workload"]]
    reason = skip_reason(cls, w, spec["variant"])
    if reason is not None:
        return {"skipped": reason}
    loop = None  # the event loop of an asyncio row, named in its note
    if issubclass(cls, AsyncAdapter):
        loop = spec.get("loop", "asyncio")
        if loop == "uvloop":
            try:
                import uvloop  # type: ignore[import-not-found,unused-ignore]
            except ImportError:
                return {"skipped": "uvloop is not installed (pip install uvloop)"}
            result = uvloop.run(_run_async(cls, spec))
        else:
            result = asyncio.run(_run_async(cls, spec))
    elif w.check == "cookies":
        assert issubclass(cls, SyncAdapter)
        try:
            result = run_cookie_flow(cls, spec)
        except CookieFlowError as exc:
            return {"failed": str(exc)}
    else:
        assert issubclass(cls, SyncAdapter)
        result = run_sync(cls, spec)
    result["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if "note" not in result:
        note = "batch API" if spec["variant"] == "batch" else cls.concurrency_note
        result["note"] = note if w.concurrency > 1 else ""
    if loop not in (None, "asyncio"):
        result["note"] = "; ".join(filter(None, (f"on {loop}", result["note"])))
    return result


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    result = measure(spec)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
