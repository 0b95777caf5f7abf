"""RSS soak: is memory flat over a long run of requests? (HOSTILE.md K35, issue 5.)

    python -m nodelay.bench.soak --requests 1000000
    python -m nodelay.bench.soak --requests 200000 --mix get,post,stream,h2 --every 20000

Runs ``--requests`` requests on one thread against the embedded server (in its own process,
so only the client's memory is measured), cycling through the kinds in ``--mix``:

* ``get``: keep-alive GET of a small body (``/bytes/202``, workload a's size);
* ``post``: a small form-sized POST to ``/echo``, body checked;
* ``stream``: ``client.stream()`` of a 64 KiB body, read in pieces;
* ``h2``: GET over HTTP/2 with prior knowledge (h2c) on a second client.

Every answer is checked (status and length). After ``--warmup`` requests (caches, pools and
allocator arenas settle) the resident set size (VmRSS) becomes the baseline; it is printed
with the open fd count every ``--every`` requests, and at the end the run passes when RSS
stayed within ``--limit-mb`` of the baseline (exit status 0, else 1). The soak in
tests/soak/soak.py is the threaded, fault-injecting counterpart; this one is the plain
long-haul measurement.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

__all__ = ["KINDS", "main", "rss_kib"]

DEFAULT_REQUESTS = 1_000_000
DEFAULT_WARMUP = 20_000
"""Requests before the baseline is taken: pools, caches and malloc arenas reach their
working size in the first few thousand requests."""
DEFAULT_EVERY = 100_000
DEFAULT_LIMIT_MB = 10.0
"""issue 5: RSS flat within ± 10 MB over 1,000,000 requests."""
SERVER_READY_TIMEOUT = 30.0
SMALL_BODY = 202
STREAM_BODY = 64 * 1024
STREAM_PIECE = 16 * 1024
POST_BODY = b"name=nodelay&speed=fast&count=1000000"

KINDS = ("get", "post", "stream", "h2")


def rss_kib() -> int:
    """This process's resident set size (VmRSS), KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("VmRSS not in /proc/self/status")


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def _start_server() -> tuple[subprocess.Popen[str], str]:
    """The embedded server (HTTP/1.1 and h2c on one port) in a child process."""
    from .server import _read_line

    code = (
        "from nodelay import _core\n"
        "_core.serve('127.0.0.1', 0, 1, on_ready=lambda u: print(u, flush=True), http2=True)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        url = _read_line(proc, SERVER_READY_TIMEOUT)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        proc.wait()
        raise RuntimeError(f"unexpected server banner {url!r}")
    return proc, url


def _operations(
    url: str, kinds: Sequence[str]
) -> tuple[list[Callable[[], None]], Callable[[], None]]:
    """One checked request per kind, and the function closing their clients."""
    import nodelay

    h1 = nodelay.Client(timeout=10.0)
    h2 = nodelay.Client(timeout=10.0, http2="prior_knowledge") if "h2" in kinds else None
    small = f"{url}/bytes/{SMALL_BODY}"

    def expect(ok: bool, what: str) -> None:
        if not ok:
            raise AssertionError(f"unexpected answer to {what}")

    def get() -> None:
        r = h1.get(small)
        expect(r.status_code == 200 and len(r.content) == SMALL_BODY, "GET")

    def post() -> None:
        r = h1.post(f"{url}/echo", content=POST_BODY)
        expect(r.status_code == 200 and r.content == POST_BODY, "POST")

    def stream() -> None:
        with h1.stream("GET", f"{url}/bytes/{STREAM_BODY}") as r:
            size = sum(len(piece) for piece in r.iter_bytes(STREAM_PIECE))
        expect(r.status_code == 200 and size == STREAM_BODY, "stream")

    def get_h2() -> None:
        assert h2 is not None
        r = h2.get(small)
        expect(r.status_code == 200 and r.http_version == "HTTP/2", "h2 GET")

    table = {"get": get, "post": post, "stream": stream, "h2": get_h2}

    def close() -> None:
        h1.close()
        if h2 is not None:
            h2.close()

    return [table[k] for k in kinds], close


def _parse_mix(value: str) -> list[str]:
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"--mix takes kinds among {', '.join(KINDS)}")
    return kinds


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m nodelay.bench.soak", description="RSS soak: is memory flat over a long run?"
    )
    p.add_argument("--requests", type=int, default=DEFAULT_REQUESTS, help="%(default)s")
    p.add_argument("--mix", type=_parse_mix, default=["get"], help="kinds: get,post,stream,h2")
    p.add_argument("--warmup", type=int, default=DEFAULT_WARMUP, help="%(default)s requests")
    p.add_argument("--every", type=int, default=DEFAULT_EVERY, help="print every N requests")
    p.add_argument("--limit-mb", type=float, default=DEFAULT_LIMIT_MB, help="%(default)s MB")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.requests <= 0 or args.warmup < 0 or args.every <= 0:
        print("--requests and --every must be > 0, --warmup >= 0", file=sys.stderr)
        return 2
    warmup = min(args.warmup, args.requests // 2)
    proc, url = _start_server()
    try:
        ops, close = _operations(url, args.mix)
        try:
            return _soak(ops, args.requests, warmup, args.every, args.limit_mb, args.mix)
        finally:
            close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _soak(
    ops: list[Callable[[], None]],
    requests: int,
    warmup: int,
    every: int,
    limit_mb: float,
    mix: list[str],
) -> int:
    print(f"soak: {requests:,} requests, mix {','.join(mix)}, baseline after {warmup:,}")
    print(f"{'requests':>12} {'req/s':>9} {'RSS MB':>9} {'vs base':>9} {'fds':>5}")
    n_ops = len(ops)
    base: int | None = None
    lowest = highest = rss_kib()
    started = last = time.perf_counter()
    done_at_last = 0
    for i in range(1, requests + 1):
        ops[i % n_ops]()
        if i == warmup:
            base = lowest = highest = rss_kib()
        if i % every == 0 or i == requests or i == warmup:
            now = time.perf_counter()
            rate = (i - done_at_last) / (now - last) if now > last else 0.0
            last, done_at_last = now, i
            rss = rss_kib()
            lowest, highest = min(lowest, rss), max(highest, rss)
            delta = "" if base is None else f"{(rss - base) / 1024:+.1f}"
            mark = "  (baseline)" if i == warmup else ""
            print(f"{i:>12,} {rate:>9,.0f} {rss / 1024:>9.1f} {delta:>9} {fd_count():>5}{mark}")
    elapsed = time.perf_counter() - started
    end = rss_kib()
    reference = base if base is not None else end
    growth_mb = (end - reference) / 1024
    spread_mb = (highest - lowest) / 1024
    print(
        f"done: {requests:,} requests in {elapsed:.1f} s ({requests / elapsed:,.0f} req/s); "
        f"RSS {reference / 1024:.1f} -> {end / 1024:.1f} MB ({growth_mb:+.1f} MB), "
        f"range {lowest / 1024:.1f}-{highest / 1024:.1f} MB since the baseline"
    )
    flat = abs(growth_mb) <= limit_mb and spread_mb <= 2 * limit_mb
    print(f"RSS {'flat' if flat else 'NOT flat'} within ±{limit_mb:g} MB")
    return 0 if flat else 1


if __name__ == "__main__":
    raise SystemExit(main())
