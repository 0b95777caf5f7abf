"""Type stubs for the native module ``nodelay._core`` (crates/nodelay-py).

This file is the contract between the Rust engine and the Python layer.
Everything here is implemented in Rust; the Python modules wrap it.
"""

from collections.abc import Callable

__version__: str

TimeoutTuple = tuple[float | None, float | None, float | None, float | None, float | None]
"""(connect, read, write, pool, total) in seconds; None disables that deadline."""

class Engine:
    """Connection pool + HTTP/1.1 driver. Thread-safe; share one per Client.

    All network work runs with the GIL released, on the calling thread.
    """

    def __init__(
        self,
        *,
        max_connections: int | None = 100,
        max_keepalive: int | None = 20,
        keepalive_expiry: float | None = 5.0,
        verify: bool = True,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        max_decoded_size: int = 1 << 30,
    ) -> None:
        """TLS: ``verify`` checks chain and host name; ``ca_file`` replaces the system
        trust store; ``cert_file``/``key_file`` are PEM client credentials (the key may sit
        in ``cert_file``). The TLS configuration is built on first https use."""
    def request(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        timeout: TimeoutTuple,
    ) -> RawResponse:
        """Send one request and read the whole response.

        ``url`` is absolute (http or https) and already carries the query.
        ``headers`` are sent in order; ``Host`` is added when missing, and
        ``Content-Length`` when ``body`` is not None and no framing header was given.
        Bodies with a Content-Encoding the engine knows (gzip, deflate, br, zstd) are
        decoded, bounded by ``max_decoded_size`` and a ratio guard. Raises the most
        specific ``nodelay`` exception (instances of classes from ``nodelay._exceptions``
        with a ``url`` attribute), or
        ``KeyboardInterrupt`` when Ctrl-C arrives during a blocking call.
        """
    def close(self) -> None:
        """Close every idle connection; later requests open new ones."""
    def idle_connections(self) -> int:
        """Number of idle pooled connections (for tests and diagnostics)."""

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

class TestServer:
    """The embedded server (crates/nodelay-server) running on background threads."""

    url: str
    """Base URL, e.g. "http://127.0.0.1:40123" (no trailing slash)."""
    port: int
    def __init__(self, host: str = "127.0.0.1", port: int = 0, workers: int = 1) -> None: ...
    def connections(self) -> int:
        """TCP connections accepted since start."""
    def requests(self) -> int:
        """Requests served since start."""
    def close(self) -> None: ...

def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    workers: int = 1,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Run the embedded server until Ctrl-C; ``on_ready`` gets its base URL once bound."""
