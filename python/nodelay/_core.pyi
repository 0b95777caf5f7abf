"""Type stubs for the native module ``nodelay._core`` (crates/nodelay-py).

This file is the contract between the Rust engine and the Python layer.
Everything here is implemented in Rust; the Python modules wrap it.
"""

import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Literal, Protocol, TypedDict, final

from _typeshed import WriteableBuffer

from ._models import Request, Response

__version__: str

class _Defaults(TypedDict):
    """The one table of client defaults (crates/nodelay-front/src/defaults.rs)."""

    connect_timeout: float
    read_timeout: float
    write_timeout: float
    pool_timeout: float
    max_redirects: int
    max_connections: int
    max_keepalive: int
    keepalive_expiry: float
    user_agent: str
    accept: str
    accept_encoding: str
    """Every coding the engine decodes."""
    max_decoded_size: int
    """Cap on a decoded (decompressed) body, in bytes (``EngineOptions(max_decoded_size=)``)."""
    batch_concurrency: int

DEFAULTS: _Defaults
"""The client defaults every front reads (``nodelay._config`` names them)."""

TimeoutTuple = (
    tuple[float | None, float | None, float | None, float | None, float | None]
    | tuple[float | None, float | None, float | None, float | None, float | None, float | None]
)
"""(connect, read, write, pool, total) in seconds; None disables that deadline. A sixth item
is the configured total when ``total`` is only what is left of it (named in messages)."""

class _Changed(Protocol):
    """What ``Engine.fetch`` tells when the jar changed (``nodelay.CookieJar``)."""

    def _changed(self) -> None: ...

@final
class EngineOptions:
    """The settings of an ``Engine`` or an ``AsyncEngine``, checked once when built (a bad
    value raises ``ValueError``); both engines take one. The sizes are counts; ``None``
    is unbounded."""

    def __new__(
        cls,
        *,
        max_connections: int | None = ...,
        max_keepalive: int | None = ...,
        keepalive_expiry: float | None = ...,
        verify: bool = True,
        ca_file: str | None = None,
        ca_dir: str | None = None,
        trust_store_env: bool = True,
        cert_file: str | None = None,
        key_file: str | None = None,
        max_decoded_size: int = ...,
        http_proxy: str | None = None,
        https_proxy: str | None = None,
        no_proxy: str | None = None,
        http2: Literal["off", "negotiate", "prior_knowledge"] = "off",
        uds: str | None = None,
        local_address: str | None = None,
        max_connections_per_host: int | None = None,
        rate_per_second: float | None = None,
        rate_burst: int | None = None,
        rate_per_host: bool = True,
    ) -> EngineOptions:
        """TLS: ``verify`` checks chain and host name; ``ca_file`` (a PEM bundle) and
        ``ca_dir`` (a directory of PEM files) replace the system trust store;
        ``trust_store_env``: whether ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` replace it when
        neither is given (the Python package passes False and reads them itself, under
        ``trust_env``); ``cert_file``/``key_file`` are PEM client credentials (the key may
        sit in ``cert_file``). The TLS configuration is built on first https use.

        Proxies: ``http_proxy`` forwards http requests (absolute-form target),
        ``https_proxy`` tunnels https requests with CONNECT; URLs are
        ``http[s]://[user:password@]host[:port]`` (credentials become
        ``Proxy-Authorization: Basic``, for the proxy only). ``no_proxy`` lists the targets
        that go direct (curl's NO_PROXY syntax). Parsed when an engine is built: a bad proxy
        URL raises ``ValueError`` there (credentials masked).
        ``http2``: ``"negotiate"`` offers h2 by ALPN on https (HTTP/1.1 when the server
        declines); ``"prior_knowledge"`` also speaks h2c on http URLs.
        ``uds``: connect every request to this Unix domain socket (the URL still gives
        ``Host``, SNI and cookies); ``local_address``: the IP address TCP connections
        are bound to (``ValueError`` if it is not one).
        ``max_connections_per_host``: connections open at once to one origin (busy, idle
        and being opened); a request beyond it waits as for ``max_connections``.
        ``rate_per_second``: requests started per second, per origin when
        ``rate_per_host`` else for the whole engine, after a burst of ``rate_burst``
        (default: a fifth of a second's worth, at least 1); a request waits for its turn
        within the pool timeout (``PoolTimeout`` when its turn comes later)."""

@final
class Engine:
    """Connection pool + HTTP/1.1 driver, and shared HTTP/2 connections. Thread-safe;
    share one per Client.

    All network work runs with the GIL released: HTTP/1.1 on the calling thread, HTTP/2
    on the process runtime (the calling thread waits).
    """

    def __new__(cls, options: EngineOptions) -> Engine:
        """An engine with these settings."""
    def request(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes | Upload | None,
        timeout: TimeoutTuple,
    ) -> RawResponse:
        """Send one request and read the whole response.

        ``url`` is absolute (http or https) and already carries the query.
        ``headers`` are sent in order; ``Host`` is added when missing, and
        ``Content-Length`` when ``body`` is not None and no framing header was given.
        An ``Upload`` body is streamed: ``Content-Length`` when its size is known, else
        ``Transfer-Encoding: chunked``; an exception raised by its iterator or file is
        re-raised as is; an upload sent before that cannot start over raises
        ``StreamConsumed``.
        Bodies with a Content-Encoding the engine knows (gzip, deflate, br, zstd) are
        decoded, bounded by ``max_decoded_size`` and a ratio guard. Raises the most
        specific ``nodelay`` exception (instances of classes from ``nodelay._exceptions``
        with a ``url`` attribute), or
        ``KeyboardInterrupt`` when Ctrl-C arrives during a blocking call.
        """
    def fetch(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes | Upload | None,
        timeout: TimeoutTuple,
        jar: CookieJar,
        cookies: _Changed,
    ) -> Response:
        """``request`` plus what ``Client`` does around it, in one call: a ``Cookie``
        header with the jar's cookies for ``url`` is appended to ``headers`` (unless they
        have one), the response's Set-Cookie fields are stored in ``jar`` (then
        ``cookies._changed()`` is called), and the result is the final ``Response``
        (``request`` = ``(method, url, headers sent, body)``, built on demand). A
        ``RequestError`` gets its ``request`` filled in."""
    def open(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes | Upload | None,
        timeout: TimeoutTuple,
    ) -> RawStream:
        """Like ``request`` but return once the response head arrived; the body stays on
        the connection until ``RawStream.read`` reads it."""
    def close(self) -> None:
        """Close every idle connection; later requests open new ones."""
    def idle_connections(self) -> int:
        """Number of idle pooled connections (for tests and diagnostics)."""

@final
class Upload:
    """A request body streamed from Python objects, pulled piece by piece by the engine
    with the GIL released (taken briefly per piece)."""

    def __new__(cls, parts: list[bytes | tuple[object, int] | Iterable[bytes]]) -> Upload:
        """``parts`` in wire order: bytes; ``(binary_file, size)`` (``size`` bytes read
        with ``readinto``, or ``read`` for file-likes without it, from the position the
        file has now; a seekable file is sought back there to send the body again);
        iterables of bytes (any iterable part makes the body chunked)."""
    @property
    def length(self) -> int | None:
        """The body's size (sent as Content-Length), or None for chunked coding."""
    @property
    def replayable(self) -> bool:
        """Whether it can be sent (again): never sent yet, or every part can start over
        (bytes, seekable files, re-iterable collections; not generators)."""
    def read_all(self) -> bytes:
        """The whole body as one ``bytes`` (``Request.read()``); a body read before
        starts over, or raises ``StreamConsumed`` when it cannot."""

@final
class AsyncEngine:
    """Connection pool + HTTP/1.1 and HTTP/2 drivers for asyncio, on nodelay's tokio runtime.

    ``request``/``open`` must be called with an event loop running on the calling thread
    (asyncio or uvloop); they return awaitables (futures of that loop). Arguments are copied
    before they return; the network work runs on the runtime without the GIL. Cancelling the
    awaiting task aborts the request (its connection is closed, never pooled half-used).
    """

    def __new__(cls, options: EngineOptions) -> AsyncEngine:
        """An engine with these settings (the same ones as ``Engine``'s)."""
    def request(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes | Upload | None,
        timeout: TimeoutTuple,
    ) -> Awaitable[RawResponse]:
        """``Engine.request``, awaited. Invalid input raises at once; network failures
        raise from the awaitable. An ``Upload`` body is pulled on the runtime's blocking
        pool (never on the loop's thread); an exception it raises is re-raised as is."""
    def open(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes | Upload | None,
        timeout: TimeoutTuple,
    ) -> Awaitable[AsyncRawStream]:
        """``Engine.open``, awaited: resolves once the response head arrived."""
    def close(self) -> None:
        """Close every idle connection; later requests open new ones."""
    def idle_connections(self) -> int:
        """Number of idle pooled connections (for tests and diagnostics)."""

@final
class AsyncRawStream:
    """A response of ``AsyncEngine.open`` whose body is still on the connection."""

    status: int
    version: str
    reason: str
    url: str
    elapsed: float
    """Seconds from the start of the request to the end of the head."""
    is_closed: bool
    """True once the body was read to the end, failed, or the stream was closed."""
    @property
    def raw_bytes_read(self) -> int:
        """Bytes of the body read from the connection so far, before decoding."""
    def headers(self) -> list[tuple[str, str]]: ...
    def header(self, name: str) -> str | None: ...
    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """The header fields as received, as bytes."""
    def latin1_headers(self) -> list[tuple[str, str]]:
        """The header fields with each byte one Latin-1 character (http.client's view)."""
    def elapsed_now(self) -> float:
        """Seconds since the request started."""
    def read(
        self, max_bytes: int = 262144, min_bytes: int = 65536, decode: bool = True
    ) -> Awaitable[bytes]:
        """The next piece of the body (as ``RawStream.read``); one read at a time
        (RuntimeError otherwise)."""
    def read_all(self) -> Awaitable[bytes]:
        """The rest of the body, decoded."""
    def close(self) -> None:
        """End the stream; a body not read to the end closes its connection, a read in
        flight is cancelled."""

@final
class RawResponse:
    status: int
    version: str
    """"HTTP/1.1" or "HTTP/1.0"."""
    reason: str
    url: str
    content: bytes
    elapsed: float
    """Seconds from the start of the request to the end of the body."""
    def headers(self) -> list[tuple[str, str]]:
        """Header fields in received order, names as received (built on first call)."""
    def header(self, name: str) -> str | None:
        """First value of the named header (ASCII case-insensitive), or None."""

@final
class CookieJar:
    """The RFC 6265 cookie jar (crates/nodelay-core/src/cookies.rs); thread-safe.

    Wrapped by ``nodelay.CookieJar``. Tuples of ``get_all``/``items`` are
    ``(name, value, domain, host_only, path, secure, http_only, expires)``.
    """

    MAX_COOKIES_PER_RESPONSE: int
    """Set-Cookie fields looked at per response (the rest are ignored)."""
    MAX_COOKIES_PER_JAR: int
    """Cookies kept at most; new ones are refused when full."""
    def __new__(cls) -> CookieJar: ...
    def header_for(self, url: str) -> str | None:
        """The Cookie header value for a request to ``url``, or None (at once when empty)."""
    def request_headers(
        self,
        url: str,
        headers: list[tuple[str, str]],
        extra: Mapping[str, str] | None = None,
    ) -> list[tuple[str, str]]:
        """``headers`` plus the ``Cookie`` field a request to ``url`` gets: the jar's
        cookies, with ``extra`` (per-request cookies) replacing those of the same name;
        nothing is added when ``headers`` has its own ``Cookie`` field (the caller's
        wins). ``headers`` itself when there is nothing to add (at once for an empty jar
        and no ``extra``)."""
    def extract(self, response: RawResponse | RawStream | AsyncRawStream) -> bool:
        """Store the response's Set-Cookie fields (from its URL); True if the jar changed."""
    def store(self, url: str, set_cookie_values: list[str]) -> int:
        """Store Set-Cookie values received from ``url``; returns how many changed."""
    def set(
        self,
        name: str,
        value: str,
        domain: str = "",
        path: str = "/",
        *,
        host_only: bool = False,
        secure: bool = False,
        http_only: bool = False,
        expires: int | None = None,
    ) -> None:
        """Store one cookie (``domain=""``: sent to every host). ValueError if refused."""
    def get_all(
        self, name: str | None = None, domain: str | None = None, path: str | None = None
    ) -> list[CookieTuple]: ...
    def items(self) -> list[CookieTuple]: ...
    def delete(
        self, name: str | None = None, domain: str | None = None, path: str | None = None
    ) -> int: ...
    def clear(self, domain: str | None = None) -> None: ...
    def __len__(self) -> int: ...
    def to_netscape(self) -> str:
        """The jar as Netscape cookies.txt text (session cookies with expiry 0)."""
    def load_netscape(self, text: str) -> int:
        """Add the cookies of cookies.txt text; returns how many were stored."""
    def save(self, path: str) -> None:
        """Write cookies.txt to ``path`` atomically (OSError on failure)."""
    def load(self, path: str) -> int:
        """Add the cookies of the cookies.txt file at ``path``."""

CookieTuple = tuple[str, str, str, bool, str, bool, bool, int | None]

@final
class RawStream:
    """A response whose body is still on the connection."""

    status: int
    version: str
    reason: str
    url: str
    elapsed: float
    """Seconds from the start of the request to the end of the head."""
    is_closed: bool
    """True once the body was read to the end, failed, or the stream was closed."""
    def headers(self) -> list[tuple[str, str]]: ...
    def header(self, name: str) -> str | None: ...
    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """The header fields as received, as bytes."""
    def latin1_headers(self) -> list[tuple[str, str]]:
        """The header fields with each byte one Latin-1 character (http.client's view)."""
    def elapsed_now(self) -> float:
        """Seconds since the request started."""
    def read(self, max_bytes: int = 262144, min_bytes: int = 65536, decode: bool = True) -> bytes:
        """The next piece of the body: what has arrived, up to ``max_bytes`` (it waits only
        for the first bytes, and grows towards ``min_bytes`` only with bytes already
        there); ``b""`` at the end. ``decode=False`` on the first read keeps content
        codings."""
    def read_all(self) -> bytes:
        """The rest of the body, decoded."""
    def readinto(self, buffer: WriteableBuffer, min_bytes: int = 65536) -> int:
        """The next piece of the body, decoded, written into ``buffer`` (writable and
        C-contiguous): what has arrived, up to its size; 0 at the end."""
    @property
    def raw_bytes_read(self) -> int:
        """Bytes of the body read from the connection so far, before decoding."""
    def close(self) -> None:
        """End the stream; a body not read to the end closes its connection."""

@final
class TestServer:
    """The embedded server (crates/nodelay-server) running on background threads."""

    url: str
    """Base URL, e.g. "http://127.0.0.1:40123" (no trailing slash)."""
    port: int
    def __new__(
        cls,
        host: str = "127.0.0.1",
        port: int = 0,
        workers: int = 1,
        *,
        http2: bool = False,
        tls: bool = False,
        cert_file: str | os.PathLike[str] | None = None,
        key_file: str | os.PathLike[str] | None = None,
    ) -> TestServer:
        """``http2``: h2c next to HTTP/1.1 (or h2 by ALPN with TLS). ``tls``: HTTPS with the
        built-in localhost certificate (CA: :func:`test_ca_pem`) unless ``cert_file`` is given."""
    def connections(self) -> int:
        """TCP connections accepted since start."""
    def requests(self) -> int:
        """Requests served since start."""
    def close(self) -> None: ...

MAX_BATCH_CONCURRENCY: int
"""Most requests in flight ``request_many`` accepts."""

def request_many(
    engine: Engine,
    requests: list[tuple[str, str, list[tuple[str, str]], bytes | None]],
    timeout: TimeoutTuple,
    *,
    concurrency: int,
    jar: CookieJar | None = None,
    stop_on_error: bool = True,
) -> tuple[list[RawResponse | Exception | None], bool, bool, bool]:
    """Send every ``(method, url, headers, body)`` (as ``Engine.request`` takes them),
    ``concurrency`` (1..1024) at a time, with the GIL released until all are done: as
    tasks on the process runtime (HTTP/2 on the client's shared connection, HTTP/1.1 over
    the engine's batch pool), or from worker threads over the engine's pool when it has
    proxies. Returns ``(results, all_ok, cookies_changed, any_3xx)``: in input order, a
    ``RawResponse``, the exception a request failed with (not raised), or ``None`` for a
    request never sent because ``stop_on_error`` stopped the batch at a failure; whether
    every item is a ``RawResponse``; whether Set-Cookie fields changed ``jar``; whether
    any response has a 3xx status. ``jar`` adds its Cookie header to requests without one
    and stores every response's Set-Cookie fields.
    Ctrl-C raises ``KeyboardInterrupt`` within 50 ms; requests in flight are then
    cancelled (runtime tasks) or finish in the background and are discarded (threads)."""

def json_loads(data: bytes) -> object:
    """``json.loads(data)``: same results and errors, parsed in Rust straight to Python
    objects; what the fast path does not take (invalid JSON, UTF-16/32, lone surrogates,
    nesting deeper than 256) is handed to ``json.loads``."""

def record_connect_timings(on: bool) -> None:
    """Start (or stop) recording how long opening each connection takes (for
    ``nodelay get -v``; process-wide, off by default)."""

def take_connect_timings() -> tuple[float | None, float, float | None] | None:
    """``(dns, tcp, tls)`` seconds of the last connection opened since the previous call
    (``tls`` ``None`` for cleartext; ``dns`` ``None`` when the lookup was timed with the
    connect), or ``None`` when none was opened or recording is off."""

def form_encode(pairs: list[tuple[str, str]]) -> bytes:
    """``application/x-www-form-urlencoded`` body, byte-identical to ``urllib.parse.urlencode``."""

def form_encode_dict(data: dict[object, object]) -> bytes | None:
    """``form_encode`` of a dict's items when every key and value is exactly a ``str``;
    ``None`` for any other dict (normalise it into pairs first)."""

def use_models(
    response_type: type[Response],
    fill: Callable[
        [Response, RawResponse, tuple[str, str, list[tuple[str, str]], object], int, bytes],
        Response,
    ],
    request: Callable[[str, str, list[tuple[str, str]], object], Request],
) -> None:
    """Tell the engine how ``Engine.fetch`` builds its ``Response``: an instance of
    ``response_type`` made as ``object.__new__`` makes one (the class must keep
    ``object.__new__``), then ``fill(response, raw, request, status, content)`` with the
    request reference ``(method, url, headers, body)``; and the ``Request`` an error is
    about (``nodelay._models`` calls it once at import; later calls are ignored)."""

def whole_response(raw: RawResponse, request: object) -> Response:
    """The ``Response`` for ``raw`` and its request (a reference ``(method, url, headers,
    body)``, a ``Request`` or ``None``), made as ``Engine.fetch`` makes it."""

def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    workers: int = 1,
    on_ready: Callable[[str], None] | None = None,
    *,
    http2: bool = False,
    tls: bool = False,
    cert_file: str | os.PathLike[str] | None = None,
    key_file: str | os.PathLike[str] | None = None,
) -> None:
    """Run the embedded server until Ctrl-C; ``on_ready`` gets its base URL once bound."""

def test_ca_pem() -> str:
    """PEM of the CA that signed the server's built-in localhost test certificate."""
