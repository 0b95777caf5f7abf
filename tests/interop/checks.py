"""The checks of the interop matrix: each one a function ``(lib, endpoint)`` that returns on
success, raises :class:`NotApplicable` when the server does not offer what it checks, and
raises anything else on failure. The same code runs under every library of
``clients.py``; nothing here knows which one it is driving.

Tags name what a check needs from the server beyond ``/static/``: ``app`` (the httpbin
subset under ``/app/``). An endpoint lacking a tag (``Endpoint.lacks``) or a check name
gets "n/a" for it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import conntrack, site
from .clients import Library
from .servers.base import RECYCLE_AFTER_REQUESTS, SERVER_IDLE_TIMEOUT_S, Endpoint

#: Sequential requests the connection-reuse check sends on one client.
REUSE_REQUESTS = 5
#: The upload sizes the issue names: 10 MiB in one body; a streamed body of 16 pieces.
UPLOAD_BYTES = 10 * 1024 * 1024
STREAM_PIECE_BYTES = 64 * 1024
STREAM_PIECES = 16
#: Body sent with ``Expect: 100-continue``.
EXPECT_BYTES = 1024 * 1024
#: Lines of ``/app/stream/<n>``.
STREAM_LINES = 20
#: ``/app/bytes/<n>``: over the initial HTTP/2 window, under httpbin's 100 KiB bound.
APP_BYTES = 65_536 + 1
#: ``/app/delay/<s>`` and the read timeout that must cut it short, with the bound on how
#: long the library may take to raise (generous: the machine is loaded).
DELAY_S = 2
READ_TIMEOUT_S = 0.5
TIMEOUT_RAISED_WITHIN_S = 1.5
#: Batch and concurrency sizes of the issue.
MANY_REQUESTS = 1_000
GATHER_REQUESTS = 200
RECYCLE_REQUESTS = 2_000
RECYCLE_BATCH = RECYCLE_AFTER_REQUESTS
#: Sleep past the server's idle timeout, still under the libraries' keepalive_expiry (5 s).
IDLE_SLEEP_S = SERVER_IDLE_TIMEOUT_S + 1.0

SMALL = "small.bin"


class NotApplicable(Exception):
    """The server does not offer what the check needs (reported "n/a", not "pass")."""


class CheckFailed(AssertionError):
    pass


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[Library, Endpoint], None]
    tags: tuple[str, ...]
    doc: str
    #: Run under every library at the same time: only for a check that mostly sleeps
    #: (``idle_timeout``), where overlapping the libraries saves minutes and changes no
    #: outcome.
    libs_together: bool = False


CHECKS: list[Check] = []


def check(
    *tags: str, libs_together: bool = False
) -> Callable[[Callable[[Library, Endpoint], None]], Callable[..., None]]:
    def register(fn: Callable[[Library, Endpoint], None]) -> Callable[..., None]:
        doc = (fn.__doc__ or "").strip().splitlines()[0]
        CHECKS.append(Check(fn.__name__, fn, tags, doc, libs_together))
        return fn

    return register


# -- helpers ---------------------------------------------------------------------------------


def url(ep: Endpoint, path: str) -> str:
    return f"{ep.base_url}{path}"


def expected_version(ep: Endpoint) -> str:
    return "HTTP/2" if ep.protocol in ("h2", "h2c") else "HTTP/1.1"


def ensure(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def ok(r: Any, ep: Endpoint, status: int = 200) -> Any:
    """``r`` answered ``status`` over the endpoint's protocol."""
    ensure(r.status_code == status, f"status {r.status_code}, expected {status}")
    ensure(
        r.http_version == expected_version(ep),
        f"answered over {r.http_version}, expected {expected_version(ep)}",
    )
    return r


def same_bytes(got: bytes, want: bytes, what: str) -> None:
    if got != want:
        raise CheckFailed(
            f"{what}: {len(got)} bytes sha256 {hashlib.sha256(got).hexdigest()[:12]}, "
            f"expected {len(want)} bytes sha256 {hashlib.sha256(want).hexdigest()[:12]}"
        )


def text_payload(size: int) -> bytes:
    """ASCII bytes (echoed by httpbin as a plain string, not base64)."""
    line = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!\n"
    return (line * (size // len(line) + 1))[:size]


def echoed_data(r: Any, want: bytes) -> None:
    data = r.json()["data"]
    ensure(isinstance(data, str), f"echoed data is {type(data).__name__}")
    same_bytes(data.encode(), want, "echoed body")


# -- static files ----------------------------------------------------------------------------


def _download(lib: Library, ep: Endpoint, name: str) -> None:
    with lib.client(ep) as c:
        r = ok(c.get(url(ep, f"/static/{name}")), ep)
        same_bytes(r.content, site.file_bytes(name), name)


@check()
def static_202b(lib: Library, ep: Endpoint) -> None:
    """GET a 202-byte file: byte-exact, over the endpoint's protocol."""
    _download(lib, ep, "small.bin")


@check()
def static_16k(lib: Library, ep: Endpoint) -> None:
    """GET a file of exactly 16384 bytes (one default HTTP/2 frame)."""
    _download(lib, ep, "frame.bin")


@check()
def static_64k1(lib: Library, ep: Endpoint) -> None:
    """GET a file of 64 KiB + 1 (one byte past the initial HTTP/2 window)."""
    _download(lib, ep, "window.bin")


@check()
def static_5m(lib: Library, ep: Endpoint) -> None:
    """GET a 5 MiB file (every window and buffer crossed)."""
    _download(lib, ep, "large.bin")


@check()
def stream_5m(lib: Library, ep: Endpoint) -> None:
    """Iterate the 5 MiB file with client.stream/iter_bytes: in pieces, byte-exact."""
    with lib.client(ep) as c, c.stream("GET", url(ep, "/static/large.bin")) as r:
        ok(r, ep)
        pieces = list(r.iter_bytes())
    ensure(len(pieces) > 1, f"{len(pieces)} piece(s): not streamed")
    same_bytes(b"".join(pieces), site.file_bytes("large.bin"), "large.bin")


@check()
def head(lib: Library, ep: Endpoint) -> None:
    """HEAD of the 5 MiB file: no body, Content-Length of the file."""
    with lib.client(ep) as c:
        r = ok(c.head(url(ep, "/static/large.bin")), ep)
    ensure(r.content == b"", f"HEAD answered {len(r.content)} body bytes")
    length = r.headers.get("content-length")
    want = str(site.STATIC_FILES["large.bin"])
    ensure(length == want, f"Content-Length {length!r}, expected {want}")


@check()
def static_304(lib: Library, ep: Endpoint) -> None:
    """Conditional GET of a static file with its ETag (or Last-Modified): 304, no body."""
    with lib.client(ep) as c:
        r = ok(c.get(url(ep, f"/static/{SMALL}")), ep)
        if "etag" in r.headers:
            cond = {"If-None-Match": r.headers["etag"]}
        elif "last-modified" in r.headers:
            cond = {"If-Modified-Since": r.headers["last-modified"]}
        else:
            raise NotApplicable("no ETag nor Last-Modified on static files")
        again = ok(c.get(url(ep, f"/static/{SMALL}"), headers=cond), ep, 304)
    ensure(again.content == b"", f"304 with {len(again.content)} body bytes")


@check()
def reuse(lib: Library, ep: Endpoint) -> None:
    """5 sequential GETs on one client use one TCP connection (seen in /proc/net/tcp)."""
    if not conntrack.available():
        raise NotApplicable("/proc/net/tcp is not readable here")
    port = int(ep.base_url.rsplit(":", 1)[1])
    seen: set[int] = set()
    with lib.client(ep) as c:
        for _ in range(REUSE_REQUESTS):
            ok(c.get(url(ep, f"/static/{SMALL}")), ep)
            seen |= conntrack.established_local_ports(port)
    ensure(bool(seen), "no connection stayed open after any request (the server closes each one)")
    ensure(len(seen) == 1, f"{REUSE_REQUESTS} requests used {len(seen)} connections")


# -- content codings -------------------------------------------------------------------------


def _coded(lib: Library, ep: Endpoint, coding: str) -> None:
    with lib.client(ep) as c:
        r = ok(c.get(url(ep, f"/static/{site.PAGE}"), headers={"Accept-Encoding": coding}), ep)
    got = r.headers.get("content-encoding")
    if got is None:
        raise NotApplicable(f"the server sends no {coding} for text/html")
    ensure(got == coding, f"Content-Encoding {got!r} for Accept-Encoding {coding!r}")
    same_bytes(r.content, site.page_bytes(), f"decoded {coding} page")


@check()
def gzip(lib: Library, ep: Endpoint) -> None:
    """A ~100 KiB text/html page with Accept-Encoding: gzip, decoded byte-exact."""
    _coded(lib, ep, "gzip")


@check()
def br(lib: Library, ep: Endpoint) -> None:
    """The page with Accept-Encoding: br, decoded byte-exact."""
    _coded(lib, ep, "br")


@check()
def zstd(lib: Library, ep: Endpoint) -> None:
    """The page with Accept-Encoding: zstd, decoded byte-exact."""
    _coded(lib, ep, "zstd")


@check()
def page_default(lib: Library, ep: Endpoint) -> None:
    """The page with the library's default Accept-Encoding, decoded byte-exact."""
    with lib.client(ep) as c:
        r = ok(c.get(url(ep, f"/static/{site.PAGE}")), ep)
    same_bytes(r.content, site.page_bytes(), "page")


# -- the application (httpbin subset) --------------------------------------------------------


@check("app")
def app_gzip(lib: Library, ep: Endpoint) -> None:
    """/app/gzip: a gzip-coded JSON answer, decoded."""
    with lib.client(ep) as c:
        r = ok(c.get(url(ep, "/app/gzip")), ep)
    ensure(r.json().get("gzipped") is True, f"body {r.content[:80]!r}")


@check("app")
def chunked(lib: Library, ep: Endpoint) -> None:
    """/app/stream/20: a body of unknown length (chunked over HTTP/1.1), every line."""
    with lib.client(ep) as c:
        r = ok(c.get(url(ep, f"/app/stream/{STREAM_LINES}")), ep)
    ids = [json.loads(line)["id"] for line in r.content.splitlines() if line.strip()]
    ensure(ids == list(range(STREAM_LINES)), f"line ids {ids}")


@check("app")
def app_bytes(lib: Library, ep: Endpoint) -> None:
    """/app/bytes/65537: a generated body past the initial HTTP/2 window, full length."""
    with lib.client(ep) as c:
        r = ok(c.get(url(ep, f"/app/bytes/{APP_BYTES}")), ep)
    ensure(len(r.content) == APP_BYTES, f"{len(r.content)} bytes, expected {APP_BYTES}")


@check("app")
def form(lib: Library, ep: Endpoint) -> None:
    """POST a urlencoded form to /app/anything: echoed fields."""
    fields = {"a": "1", "b": "x y&z"}
    with lib.client(ep) as c:
        r = ok(c.post(url(ep, "/app/anything"), data=fields), ep)
    ensure(r.json()["form"] == fields, f"form echoed as {r.json()['form']}")


@check("app")
def json_body(lib: Library, ep: Endpoint) -> None:
    """POST json= to /app/anything: echoed JSON."""
    value = {"k": [1, 2, {"x": None}], "s": "é"}
    with lib.client(ep) as c:
        r = ok(c.post(url(ep, "/app/anything"), json=value), ep)
    ensure(r.json()["json"] == value, f"json echoed as {r.json()['json']}")


@check("app")
def multipart(lib: Library, ep: Endpoint) -> None:
    """POST files= + data= (multipart/form-data) to /app/anything: echoed file and field."""
    content = text_payload(100_000).decode()
    with lib.client(ep) as c:
        r = ok(
            c.post(
                url(ep, "/app/anything"),
                data={"field": "value"},
                files={"f": ("f.txt", content.encode(), "text/plain")},
            ),
            ep,
        )
    body = r.json()
    ensure(body["form"] == {"field": "value"}, f"form echoed as {body['form']}")
    got = body["files"].get("f", "")
    ensure(got == content, f"file echoed as {len(got)} chars, expected {len(content)}")


@check("app")
def upload_10m(lib: Library, ep: Endpoint) -> None:
    """POST a 10 MiB body (content=bytes) to /app/anything: echoed byte-exact."""
    payload = text_payload(UPLOAD_BYTES)
    with lib.client(ep) as c:
        r = ok(c.post(url(ep, "/app/anything"), content=payload), ep)
    echoed_data(r, payload)


@check("app")
def upload_stream(lib: Library, ep: Endpoint) -> None:
    """POST a generator body (16 x 64 KiB) to /app/anything over the endpoint's protocol."""
    payload = text_payload(STREAM_PIECE_BYTES * STREAM_PIECES)

    def pieces() -> Iterator[bytes]:
        for i in range(STREAM_PIECES):
            yield payload[i * STREAM_PIECE_BYTES : (i + 1) * STREAM_PIECE_BYTES]

    with lib.client(ep) as c:
        r = ok(c.post(url(ep, "/app/anything"), content=pieces()), ep)
    echoed_data(r, payload)


@check("app")
def expect_100(lib: Library, ep: Endpoint) -> None:
    """POST 1 MiB with Expect: 100-continue: answered, body echoed."""
    payload = text_payload(EXPECT_BYTES)
    with lib.client(ep) as c:
        r = c.post(url(ep, "/app/anything"), content=payload, headers={"Expect": "100-continue"})
    if r.status_code == 417:
        raise NotApplicable("the server answers 417 Expectation Failed")
    echoed_data(ok(r, ep), payload)


@check("app")
def status_204(lib: Library, ep: Endpoint) -> None:
    """/app/status/204: 204 with no body."""
    with lib.client(ep) as c:
        r = ok(c.get(url(ep, "/app/status/204")), ep, 204)
    ensure(r.content == b"", f"204 with {len(r.content)} body bytes")


@check("app")
def etag_304(lib: Library, ep: Endpoint) -> None:
    """/app/etag/abc with If-None-Match: "abc": 304 with no body."""
    with lib.client(ep) as c:
        r = ok(c.get(url(ep, "/app/etag/abc"), headers={"If-None-Match": '"abc"'}), ep, 304)
    ensure(r.content == b"", f"304 with {len(r.content)} body bytes")


@check("app")
def redirect(lib: Library, ep: Endpoint) -> None:
    """/app/redirect-to?url=/app/anything?r=1 followed: one hop in history, final args."""
    with lib.client(ep, follow_redirects=True) as c:
        r = ok(c.get(url(ep, "/app/redirect-to"), params={"url": "/app/anything?r=1"}), ep)
    ensure(len(r.history) == 1, f"{len(r.history)} redirect(s) in history")
    ensure(r.json()["args"] == {"r": "1"}, f"final args {r.json()['args']}")


@check("app")
def cookies(lib: Library, ep: Endpoint) -> None:
    """/app/cookies/set?n=v then /app/cookies on one client: the cookie is sent back."""
    with lib.client(ep) as c:
        ok(c.get(url(ep, "/app/cookies/set"), params={"n": "v"}), ep, 302)
        r = ok(c.get(url(ep, "/app/cookies")), ep)
    ensure(r.json()["cookies"] == {"n": "v"}, f"cookies echoed as {r.json()['cookies']}")


@check("app")
def read_timeout(lib: Library, ep: Endpoint) -> None:
    """/app/delay/2 with a 0.5 s read timeout: the library's ReadTimeout, well under 2 s."""
    with lib.client(ep) as c:
        started = time.monotonic()
        try:
            r = c.get(url(ep, f"/app/delay/{DELAY_S}"), timeout=lib.timeout(read=READ_TIMEOUT_S))
        except lib.ReadTimeout:
            took = time.monotonic() - started
            ensure(took < TIMEOUT_RAISED_WITHIN_S, f"ReadTimeout after {took:.2f} s")
            return
    raise CheckFailed(
        f"no timeout: status {r.status_code} after {time.monotonic() - started:.2f} s"
    )


# -- many requests ---------------------------------------------------------------------------


def _all_small(responses: list[Any], ep: Endpoint) -> None:
    want = site.file_bytes(SMALL)
    bad = [r for r in responses if r.status_code != 200 or r.content != want]
    if bad:
        first = bad[0]
        raise CheckFailed(
            f"{len(bad)} of {len(responses)} wrong (first: status {first.status_code}, "
            f"{len(first.content)} bytes)"
        )
    for r in responses[:1]:
        ok(r, ep)


@check()
def many_1000(lib: Library, ep: Endpoint) -> None:
    """1,000 GETs in one batch (nodelay get_many; httpx gather, 32 at a time)."""
    with lib.batcher(ep) as b:
        _all_small(b.get_many([url(ep, f"/static/{SMALL}")] * MANY_REQUESTS), ep)


@check()
def gather_200(lib: Library, ep: Endpoint) -> None:
    """AsyncClient: asyncio.gather of 200 GETs at once, default limits."""

    async def run() -> list[Any]:
        async with lib.async_client(ep) as c:
            target = url(ep, f"/static/{SMALL}")
            return list(await asyncio.gather(*(c.get(target) for _ in range(GATHER_REQUESTS))))

    _all_small(asyncio.run(run()), ep)


@check(libs_together=True)
def idle_timeout(lib: Library, ep: Endpoint) -> None:
    """GET, sleep past the server's idle timeout (under keepalive_expiry), GET: no error."""
    with lib.client(ep) as c:
        ok(c.get(url(ep, f"/static/{SMALL}")), ep)
        time.sleep(IDLE_SLEEP_S)
        ok(c.get(url(ep, f"/static/{SMALL}")), ep)


@check()
def recycle_seq(lib: Library, ep: Endpoint) -> None:
    """2,000 sequential GETs on one client (servers recycle connections): zero errors."""
    want = site.file_bytes(SMALL)
    with lib.client(ep) as c:
        for i in range(RECYCLE_REQUESTS):
            try:
                r = c.get(url(ep, f"/static/{SMALL}"))
            except Exception as exc:
                raise CheckFailed(f"request {i + 1}: {type(exc).__name__}: {exc}") from exc
            ensure(
                r.status_code == 200 and r.content == want,
                f"request {i + 1}: status {r.status_code}",
            )


@check()
def recycle_batch(lib: Library, ep: Endpoint) -> None:
    """2,000 GETs in batches of 100 on one client (connections reused past recycling)."""
    with lib.batcher(ep) as b:
        for i in range(RECYCLE_REQUESTS // RECYCLE_BATCH):
            try:
                _all_small(b.get_many([url(ep, f"/static/{SMALL}")] * RECYCLE_BATCH), ep)
            except Exception as exc:
                raise CheckFailed(f"batch {i + 1}: {type(exc).__name__}: {exc}") from exc


def by_name() -> dict[str, Check]:
    return {c.name: c for c in CHECKS}
